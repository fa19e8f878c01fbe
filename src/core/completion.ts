/**
 * Small helpers over a model's completion that any verifier may use. Each is linear in the
 * completion's length: they run on the event loop over text a hostile policy wrote.
 */

/**
 * The answer part of a reasoning completion: the text after the last `</think>` (or `</tag>`);
 * all of it when there is no think block; "" when a `<think>` is still open there (opened and
 * never closed, or opened again after the last close). That is a completion cut off while it
 * reasoned (its token limit), and a draft inside it is not an answer: read as one, a truncated
 * completion was paid for what it tried on the way. A `<think>` that is quoted (`'<think>'`,
 * `"<think>"`, `` `<think>` ``) or inside a fenced code block is text that names the tag
 * (`print('<think>')`) and takes nothing away.
 */
export function afterThink(s: string, tag = "think"): string {
  const close = `</${tag}>`;
  const i = s.lastIndexOf(close);
  const rest = i < 0 ? s : s.slice(i + close.length);
  if (!rest.includes(`<${tag}>`)) return rest;
  return opensThink(rest, `<${tag}>`) ? "" : rest;
}

/**
 * Whether `s` opens a think block: an `open` tag not between two of the same quote or backtick
 * and not inside a ``` fence (an odd number of fence lines before it); with `lineStart`, only a
 * tag that starts a line (after spaces or tabs) counts: a reasoning model opens its block there,
 * and prose that names the tag mid-sentence does not open one. One pass over the tags and the
 * fences, in order: linear (the blanks walked back over before each tag are its own).
 */
export function opensThink(s: string, open: string, lineStart = false): boolean {
  const fence = /(?:^|\n)[ \t]*(?:```|~~~)/g;
  let fences = 0;
  let nextFence = fence.exec(s);
  for (let at = s.indexOf(open); at >= 0; at = s.indexOf(open, at + open.length)) {
    while (nextFence && nextFence.index < at) {
      fences++;
      nextFence = fence.exec(s);
    }
    const before = s[at - 1];
    const quoted = (before === "'" || before === '"' || before === "`") && s[at + open.length] === before;
    if (fences % 2 !== 0 || quoted) continue;
    if (!lineStart) return true;
    let b = at - 1;
    while (b >= 0 && (s[b] === " " || s[b] === "\t")) b--;
    if (b < 0 || s[b] === "\n" || s[b] === "\r") return true;
  }
  return false;
}

/**
 * `s` up to and including the last character that `lastKept` (a `/[^X][X]*$/` regex: a character
 * that is not X, then X to the end) finds: `s` without its trailing run of X, "" when it is all
 * X. Linear, where `/[X]+$/` retries from every character of a run of X inside the text and is
 * quadratic on it. With the `u` flag the kept character may be astral (two code units).
 */
export function dropTrailing(s: string, lastKept: RegExp): string {
  const m = lastKept.exec(s);
  return m ? s.slice(0, m.index + (s.codePointAt(m.index)! > 0xffff ? 2 : 1)) : "";
}

export interface Span {
  start: number;
  end: number;
  body: string;
}

/** For each `{` (unescaped), the index of its matching `}`; one linear pass. */
function braceMatches(s: string): Map<number, number> {
  const match = new Map<number, number>();
  const stack: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === "\\") {
      i++;
      continue;
    }
    if (c === "{") stack.push(i);
    else if (c === "}" && stack.length) match.set(stack.pop()!, i);
  }
  return match;
}

/**
 * Every balanced `\boxed{…}` / `\fbox{…}` (and `\boxed 5`), outermost only, in order. The one
 * `\boxed` scanner: the text verifiers and the math extractor both read boxes through it.
 */
export function boxedSpans(s: string): Span[] {
  const out: Span[] = [];
  const re = /\\(?:boxed|fbox)\s*(\{|[^\s{\\])/g;
  let matches: Map<number, number> | null = null;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    if (m[1] !== "{") {
      // `\boxed 5`: one token up to whitespace or `$`
      const tail = /^[^\s$]+/.exec(s.slice(m.index + m[0].length - 1, m.index + m[0].length + 200));
      const body = tail ? tail[0] : m[1];
      out.push({ start: m.index, end: m.index + m[0].length - 1 + body.length, body });
      continue;
    }
    matches ??= braceMatches(s);
    const open = m.index + m[0].length - 1;
    const close = matches.get(open);
    if (close === undefined) continue; // unbalanced: not an answer
    out.push({ start: m.index, end: close + 1, body: s.slice(open + 1, close) });
    re.lastIndex = close + 1;
  }
  return out;
}

/** Content of the last balanced `\boxed{…}` / `\fbox{…}`, or null. */
export function lastBoxed(s: string): string | null {
  const spans = boxedSpans(s);
  return spans.length ? spans[spans.length - 1].body : null;
}

export interface PairedFence {
  /** The info string after the opening fence, trimmed and lower-cased. */
  lang: string;
  /** Between the opening fence's line and the next ```. */
  body: string;
  /** Where `body` starts in the text. */
  bodyStart: number;
}

/**
 * The ``` fences of a text paired in order, each opener with the next ``` after its line: the
 * simple reading the json and patch verifiers use (the code verifier reads fences line by line,
 * CommonMark-style, in verifiers/code/extract.ts). Linear: each ``` is found once.
 */
export function pairedFences(text: string): PairedFence[] {
  const out: PairedFence[] = [];
  let from = 0;
  for (;;) {
    const open = text.indexOf("```", from);
    if (open < 0) break;
    const lineEnd = text.indexOf("\n", open + 3);
    if (lineEnd < 0) break;
    const close = text.indexOf("```", lineEnd + 1);
    if (close < 0) break;
    out.push({ lang: text.slice(open + 3, lineEnd).trim().toLowerCase(), body: text.slice(lineEnd + 1, close), bodyStart: lineEnd + 1 });
    from = close + 3;
  }
  return out;
}
