/**
 * Reading a judge's reply as a verdict object, from the judge's own words only.
 *
 * A judge that "thinks out loud" may quote the material it grades, and the response in it may
 * hold its own `{"satisfied": true}` or unbalanced JSON. So:
 *
 * 0. A reply that is one JSON object as a whole (trimmed, or inside one ``` fence; up to
 *    MAX_WHOLE_CHARS) is that object, and nothing else is looked at: this is what json_schema and
 *    tool calls give, and their strings quote the response (JSON-escaped, with its markers, its
 *    `<think>`, its own objects), which is text there. This comes first, on the raw reply: before
 *    the markers, `</think>` or the length cap could cut into it and leave a quotation to be read
 *    as the judge's words. With `structured` (json_schema and tool modes) a reply that starts as
 *    an object and is not one whole (cut off, or malformed) has no verdict: nothing inside it is
 *    scanned or repaired. A structured-mode reply in prose (an endpoint that ignores the schema)
 *    is read as text, steps 1-4.
 * 1. When the question's markers are known (its nonce), the quoted material is taken out of the
 *    reply first: what lies between an opening marker `<<<NAME-nonce>>>` and its closing one
 *    `<<<END-NAME-nonce>>>`, and everything before a closing marker whose opening one is missing
 *    (cut off, or never written). A reply that ends inside an opened block has no verdict (the
 *    client retries it, then gives up: null). This comes before the rest, on the whole reply, so
 *    that neither a `</think>` inside a quotation nor the length cap can cut a marker away.
 * 2. Of the judge's own words, only the text after its think block's `</think>` counts, and only
 *    its last MAX_REPLY_CHARS (the verdict comes last); nothing counts when a `<think>` that
 *    starts a line never closes (cut off while it reasoned: a `{"satisfied": true}` there is a
 *    draft, or a quote). The block's close is the last `</think>` that no balanced object
 *    encloses: one inside an object's string is the response's, quoted (a judge that writes
 *    its JSON by hand, after prose). A `<think>` named mid-sentence opens nothing.
 * 3. What is left that is one JSON object as a whole (after a think block) is that object.
 * 4. Otherwise the candidates are the objects that start at each of the last MAX_STARTS `{` and
 *    at the last MAX_STARTS top-level ones (found in one forward pass, so that braces quoted
 *    inside the verdict cannot push its own start out of the window), each running to its
 *    balanced `}` (braces inside strings skipped) or, unbalanced, to the end. They are read
 *    latest-ending first, an enclosing object before what it encloses, each with JSON.parse,
 *    then through jsonrepair (trailing commas, single quotes, unquoted keys, a missing closing
 *    brace), up to MAX_REPAIR_CHARS. jsonrepair is not given an object that opens with an
 *    escaped quote (`{\"`): that is a quotation inside a string, which jsonrepair would unescape.
 *    What a balanced object encloses is never read on its own once the object has been read:
 *    a well-formed one offers its nested objects (its strings are text); a malformed one is
 *    most often the judge's verdict with the response pasted into a string unescaped, and the
 *    response's own `{"satisfied": true}` inside it is not the judge's. Likewise a balanced
 *    object inside an unclosed one that opens as JSON does counts only when no `"` or `}`
 *    follows it (objectSpans). A judge that pastes the response unescaped can still be made to
 *    write a well-formed verdict that is not its own (the response closes the string and the
 *    object for it); json_schema and tool modes, which `structured: "auto"` tries first, are the
 *    defence against that.
 *
 * The verdict is the first candidate that names one of the verdict's keys (verdictOf): the
 * judge's last verdict-like object. When it fails the schema the reply has no verdict: an
 * earlier object is never read instead, since that is where a quotation of the response sits
 * when the judge quotes without the markers. Objects without any of the keys (`{1, 2}` in prose)
 * are passed over. Only a plain object is a candidate: jsonrepair turns any prose into
 * *something*, so prose is never read whole. Work is linear in the reply, plus the capped text
 * times MAX_STARTS.
 */
import { jsonrepair } from "jsonrepair";
import { opensThink } from "../core/completion.js";

/** Of a reply that is not one whole JSON object, only this much (its end) is read; the rest is never parsed. */
export const MAX_REPLY_CHARS = 64 * 1024;
/** The longest reply read as one whole JSON object (JSON.parse is linear; a verdict is far shorter). */
export const MAX_WHOLE_CHARS = 1024 * 1024;
/** How many of the last `{` in a reply may start a verdict. */
export const MAX_STARTS = 32;
/** How many candidates may go through jsonrepair (the costlier reading). */
const MAX_REPAIRS = 4;
/** The longest candidate given to jsonrepair, whose time grows faster than its input's length (a verdict is far shorter). */
export const MAX_REPAIR_CHARS = 8 * 1024;

type Obj = Record<string, unknown>;

/** A candidate: the object, and whether the reply ended inside it or inside an object around it. */
export interface Candidate {
  value: Obj;
  /** Read from a span that never closed, or from one enclosed by such a span. */
  unclosed: boolean;
}

/**
 * The reply as one whole JSON object (step 0 of the file's comment): `whole` when it parses to a
 * plain object; `object` when it starts as one (then it was meant as one: a structured reply).
 * One JSON.parse of the trimmed reply (or of the inside of one ``` fence around it): linear.
 */
export function wholeObject(text: string): { whole?: Obj; object: boolean } {
  let t = text.trim();
  if (t.startsWith("```") && t.endsWith("```") && t.length >= 6) {
    const nl = t.indexOf("\n");
    if (nl >= 0 && nl < t.length - 3) t = t.slice(nl + 1, t.length - 3).trim();
  }
  if (!t.startsWith("{")) return { object: false };
  return { whole: t.length <= MAX_WHOLE_CHARS ? strict(t) : undefined, object: true };
}

/**
 * The candidate verdict objects of a reply, latest first; see the file's comment. Lazy.
 * `structured`: the reply came from json_schema or a tool call: a reply that is meant as an
 * object is read whole or not at all.
 */
export function* candidates(text: string, nonce?: string, structured = false): Generator<Candidate> {
  // A reply that is one JSON object is the judge's answer: what its strings hold is text.
  const w = wholeObject(text);
  if (w.whole) {
    yield { value: w.whole, unclosed: false };
    return;
  }
  if (structured && w.object) return; // a structured reply that is not one whole object: never scanned
  const own = nonce === undefined ? text : ownWords(text, nonce);
  if (own === undefined) return; // ends inside quoted material (a `</think>` there is the material's)
  // After a think block, a reply that is one JSON object is that object.
  const afterAll = afterOwnThink(text);
  const all = afterAll?.text.trim();
  if (all?.startsWith("{")) {
    const whole = strict(all);
    if (whole) {
      yield { value: whole, unclosed: false };
      return;
    }
  }
  const after = own === text ? afterAll : afterOwnThink(own);
  if (after === undefined) return; // a think block still open: cut off while the judge reasoned
  const t = after.text.trim();
  let repairs = 0;
  // Balanced spans already read (parsed, repaired, or failed): what they enclose is never read on its own.
  const read: Span[] = [];
  for (const c of objectSpans(t, after.inObject)) {
    if (read.some((r) => r.start < c.start && c.end <= r.end)) continue;
    const text = t.slice(c.start, c.end);
    if (c.balanced) read.push(c);
    const v = strict(text);
    if (v) {
      // Well-formed: its strings are text, and only its own nested objects may hold a verdict.
      for (const o of objectsIn(v)) yield { value: o, unclosed: c.unclosed };
    } else if (repairs < MAX_REPAIRS && text.length <= MAX_REPAIR_CHARS && !/^\{\s*\\/.test(text)) {
      repairs++;
      const r = repaired(text);
      if (r) yield { value: r, unclosed: c.unclosed };
    }
  }
}

/** How many objects nested in a well-formed candidate may be offered as the verdict, besides it. */
const MAX_NESTED = 64;

/** `v` then the plain objects nested in it (in arrays too), latest first, each before what it holds; at most MAX_NESTED more. No recursion. */
function* objectsIn(v: Obj): Generator<Obj> {
  yield v;
  const stack: unknown[] = Object.values(v).slice(-MAX_NESTED);
  for (let n = 0; stack.length && n < MAX_NESTED; ) {
    const x = stack.pop();
    if (Array.isArray(x)) stack.push(...x.slice(-MAX_NESTED));
    else if (isObject(x)) {
      n++;
      yield x;
      stack.push(...Object.values(x).slice(-MAX_NESTED));
    }
  }
}

const CLOSE_THINK = "</think>";

/**
 * The judge's words after its think block, of their last MAX_REPLY_CHARS (step 2 of the file's
 * comment); undefined when a think block is still open. The block's close is the last
 * `</think>` that no balanced object encloses: one inside an object (a well-formed one's
 * string, or a malformed one that quotes the response) is the response's, quoted. `inObject`:
 * an unclosed object that opens as JSON does starts before that close, so what follows may be
 * inside it (objectSpans). A `<think>` opens a block only at the start of a line: prose that
 * names the tag mid-sentence does not. Linear in s, plus the spans' scan of the capped text.
 */
function afterOwnThink(s: string): { text: string; inObject: boolean } | undefined {
  const base = Math.max(0, s.length - MAX_REPLY_CHARS);
  const t = s.slice(base);
  let at = t.lastIndexOf(CLOSE_THINK);
  let inObject = false;
  if (at >= 0) {
    const { balanced, open } = scanSpans(t);
    while (at >= 0 && balanced.some((c) => c.start < at && c.end >= at + CLOSE_THINK.length)) at = at > 0 ? t.lastIndexOf(CLOSE_THINK, at - 1) : -1;
    inObject = open.some((o) => o < at && opensAsJson(t, o));
  }
  // No own close in the capped text: one before it (whose block then ended long before the verdict), or none.
  const close = at >= 0 ? base + at : base > 0 ? s.lastIndexOf(CLOSE_THINK, base - 1) : -1;
  const rest = close >= 0 ? s.slice(close + CLOSE_THINK.length) : s;
  if (rest.includes("<think>") && opensThink(rest, "<think>", true)) return undefined;
  return { text: rest.length > MAX_REPLY_CHARS ? rest.slice(rest.length - MAX_REPLY_CHARS) : rest, inObject };
}

/** The candidate verdict objects of a reply, latest first (candidates, without the flag). */
export function* verdictCandidates(text: string, nonce?: string, structured = false): Generator<Obj> {
  for (const c of candidates(text, nonce, structured)) yield c.value;
}

/**
 * The reply's verdict: its first candidate that names one of `keys` (all candidates count when
 * `keys` is empty); undefined when there is none, or when `cut` (the judge stopped at its token
 * limit) and the reply ended inside that object or one around it: a number there may be half
 * written (`"score": 1` of 10). The caller checks it against the schema, and takes no other.
 * `structured`: json_schema or tool mode (see candidates).
 */
export function verdictOf(text: string, nonce: string | undefined, keys: readonly string[], cut = false, structured = false): Obj | undefined {
  for (const c of candidates(text, nonce, structured)) {
    if (keys.length && !keys.some((k) => Object.hasOwn(c.value, k))) continue;
    return cut && c.unclosed ? undefined : c.value;
  }
  return undefined;
}

/** The first candidate verdict of a reply (no schema, no markers): tolerant JSON reading. */
export function parseJsonReply(text: string, nonce?: string): Obj | undefined {
  return verdictOf(text, nonce, []);
}

/** At most this many characters between `<<<` and the nonce: a marker's name. */
const MAX_NAME = 64;

/**
 * The reply without the material it quotes (step 1 of the file's comment), its own words joined
 * by line breaks; undefined when it ends inside an opened block. One pass over the markers of
 * this nonce, each looked at within MAX_NAME characters: linear.
 */
export function ownWords(t: string, nonce: string): string | undefined {
  const tail = `-${nonce}>>>`;
  const parts: string[] = [];
  let from = 0;
  let inside = false;
  for (let at = t.indexOf(tail); at >= 0; at = t.indexOf(tail, at + tail.length)) {
    const near = t.slice(Math.max(0, at - MAX_NAME), at);
    const open = near.lastIndexOf("<<<");
    if (open < 0) continue;
    const name = near.slice(open + 3);
    if (!/^[A-Za-z_-]+$/.test(name)) continue;
    const start = at - (near.length - open);
    if (name.startsWith("END-")) {
      if (!inside) parts.length = 0; // a closing marker without its opening: what came before is material
      inside = false;
      from = at + tail.length;
    } else if (!inside) {
      parts.push(t.slice(from, start));
      inside = true;
    }
  }
  if (inside) return undefined;
  parts.push(t.slice(from));
  return parts.join("\n");
}

const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function strict(s: string): Obj | undefined {
  try {
    const v = JSON.parse(s);
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function repaired(s: string): Obj | undefined {
  try {
    const v = JSON.parse(jsonrepair(s));
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** An object's span in a text: [start, end), and whether the reply ended inside it (objectSpans). */
export interface Span {
  start: number;
  /** Past its closing `}`; the text's length when it never closes. */
  end: number;
  balanced: boolean;
  /** The reply ended inside it or inside an unclosed span that starts before it. */
  unclosed: boolean;
}

/**
 * The objects starting at the last MAX_STARTS `{` of t and at its last MAX_STARTS top-level ones
 * (so that quoted braces cannot push a verdict's own start out of the window), in the order
 * they are read: balanced ones by their end, latest first (for one end, the outermost first, so
 * an object is read before what it encloses), then unbalanced ones (running to the end), latest
 * start first. A balanced object inside an unclosed one that opens as JSON does (`{"`; with
 * `inObject`, one that starts before t) is left out unless no `"` or `}` follows it: an object
 * the judge wrote with the response quoted unescaped inside it loses its balance, and the
 * response's own object inside it is followed by the rest of the judge's (its string's end, its
 * last keys, its `}`); the judge's verdict after a quotation that opened an object and never
 * closed it is the reply's last.
 */
export function objectSpans(t: string, inObject = false): Span[] {
  const { balanced, open } = scanSpans(t);
  const firstJsonOpen = inObject ? -1 : Math.min(...open.filter((s) => opensAsJson(t, s)));
  const firstOpen = Math.min(...open);
  const lastQuoteOrBrace = Math.max(t.lastIndexOf('"'), t.lastIndexOf("}"));
  return [
    ...balanced
      .filter((c) => c.start < firstJsonOpen || c.end > lastQuoteOrBrace)
      .map((c) => ({ ...c, unclosed: firstOpen < c.start }))
      .sort((a, b) => b.end - a.end || a.start - b.start),
    ...open.sort((a, b) => b - a).map((s) => ({ start: s, end: t.length, balanced: false, unclosed: true })),
  ];
}

/** The balanced objects and the unclosed starts among the `{` that objectSpans looks at. */
function scanSpans(t: string): { balanced: Span[]; open: number[] } {
  const starts = new Set<number>(topLevelStarts(t));
  for (let i = t.lastIndexOf("{"), n = 0; i >= 0 && n < MAX_STARTS; i = i > 0 ? t.lastIndexOf("{", i - 1) : -1, n++) starts.add(i);
  const balanced: Span[] = [];
  const open: number[] = [];
  for (const s of starts) {
    const e = balancedEnd(t, s);
    if (e >= 0) balanced.push({ start: s, end: e + 1, balanced: true, unclosed: false });
    else open.push(s);
  }
  return { balanced, open };
}

/** Whether the `{` at i is followed, after blanks, by a quote: an object's first key. */
function opensAsJson(t: string, i: number): boolean {
  let j = i + 1;
  while (j < t.length && /\s/.test(t[j])) j++;
  return t[j] === '"' || t[j] === "'";
}

/**
 * The last MAX_STARTS `{` of t that open an object at the top level: one forward pass that
 * counts braces, skips strings inside objects (a quote in prose opens none), and takes a `{`
 * outside every object only when it opens as JSON does (a `{` in prose does not hold the rest
 * of the reply inside it). Linear.
 */
function topLevelStarts(t: string): number[] {
  const out: number[] = [];
  let depth = 0;
  let inString = false;
  for (let i = 0; i < t.length; i++) {
    const ch = t.charCodeAt(i);
    if (depth === 0) {
      if (ch === 123 /* { */ && opensAsJson(t, i)) {
        if (out.length === MAX_STARTS) out.shift();
        out.push(i);
        depth = 1;
      }
    } else if (inString) {
      if (ch === 92 /* \ */) i++;
      else if (ch === 34 /* " */) inString = false;
    } else if (ch === 34) inString = true;
    else if (ch === 123) depth++;
    else if (ch === 125 /* } */) depth--;
  }
  return out;
}

/** The index of the `}` that closes the `{` at start, skipping braces inside strings; -1 when none. One pass. */
function balancedEnd(t: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < t.length; i++) {
    const ch = t.charCodeAt(i);
    if (inString) {
      if (ch === 92 /* \ */) i++;
      else if (ch === 34 /* " */) inString = false;
    } else if (ch === 34) inString = true;
    else if (ch === 123 /* { */) depth++;
    else if (ch === 125 /* } */ && --depth === 0) return i;
  }
  return -1;
}
