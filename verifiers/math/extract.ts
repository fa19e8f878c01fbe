/**
 * Finds the final answer in a completion. Pure string work, no parsing.
 *
 * Sources, tried in the configured order (default: boxed, answer phrase, LaTeX, plain):
 * - `boxed`: the last balanced `\boxed{}` / `\fbox{}`; boxes separated only by connectors
 *   ("and", ",", `\quad`, a short `\text{}`) are joined into one list answer.
 * - `phrase`: "final answer is …", "the answer is …", "Answer: …".
 * - `latex`: the last `$…$`, `$$…$$`, `\(…\)`, `\[…\]` (inline math may not span lines).
 * - `plain`: the whole text when it is a bare expression, else its last number.
 * Inside an R1-style `<answer>…</answer>`, only the last tag's content is searched.
 */
import { afterThink, boxedSpans, dropTrailing, type Span } from "../../src/core/completion.js";

export { boxedSpans };

export type Source = "boxed" | "phrase" | "latex" | "plain";
export const DEFAULT_PRIORITY: Source[] = ["boxed", "phrase", "latex", "plain"];

export interface Extracted {
  answer: string;
  /** Whether the answer came from LaTeX (math mode or a box) or from plain text. */
  latex: boolean;
  via: Source;
}

/** Math spans: `$$…$$`, `\[…\]` (may span lines), `$…$`, `\(…\)` (one line). */
export function mathSpans(s: string): Span[] {
  const out: Span[] = [];
  // once a closer is missing from some point on, it is missing for every later opener too:
  // remembering that keeps hostile text ("\\[" repeated) linear
  const missing = new Set<string>();
  const nextClose = new Map<string, number>();
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === "\\" && (s[i + 1] === "[" || s[i + 1] === "(")) {
      const close = s[i + 1] === "[" ? "\\]" : "\\)";
      const cached = nextClose.get(close);
      const j = missing.has(close) ? -1 : cached !== undefined && cached >= i + 2 ? cached : s.indexOf(close, i + 2);
      if (j < 0) { missing.add(close); i += 2; continue; }
      nextClose.set(close, j);
      const body = s.slice(i + 2, j);
      if (close === "\\)" && body.includes("\n")) { i += 2; continue; }
      out.push({ start: i, end: j + 2, body });
      i = j + 2;
      continue;
    }
    if (c === "\\") { i += 2; continue; }
    if (c === "$") {
      const block = s[i + 1] === "$";
      if (block && missing.has("$$")) { i += 2; continue; }
      const from = i + (block ? 2 : 1);
      let j = from;
      let found = -1;
      while (j < s.length) {
        if (s[j] === "\\") { j += 2; continue; }
        if (s[j] === "$") { found = j; break; }
        if (!block && s[j] === "\n") break;
        j++;
      }
      if (found < 0) { if (block) missing.add("$$"); i = from; continue; }
      if (block && s[found + 1] !== "$") { i = from; continue; }
      out.push({ start: i, end: found + (block ? 2 : 1), body: s.slice(from, found) });
      i = found + (block ? 2 : 1);
      continue;
    }
    i++;
  }
  return out;
}

/**
 * Text between two answers that still reads as "these together are the answer", or as a hedge
 * between them ("or maybe", "possibly", "not", `/`, `\vee`): both are answers given at once, and
 * a list of them earns 0 against one value (the last box alone was paid).
 */
const CONNECTOR = /^(?:[\s,;.:$/|?()]|\\[,;!: ]|\\\\|\\vee\b|\\q?quad|\\text\{[^{}]{0,30}\}|\\textbf\{[^{}]{0,30}\}|\band\b|\bor\b|\b(?:maybe|perhaps|possibly|alternatively|otherwise|else|not)\b|[a-zA-Z](?:_\{?\w+\}?)?\s*=|\\\)|\\\(|\\\]|\\\[|[a-z]{1,12}(?=\s+(?:and|or)\b))*$/i;

const HEDGE_WORDS = /^(?:and|or|quad|qquad|vee|maybe|perhaps|possibly|alternatively|otherwise|else|not)$/i;

function connected(between: string): boolean {
  if (between.length > 60) return false;
  if (!CONNECTOR.test(between)) return false;
  // plain words other than the connectors themselves must sit next to "and"/"or" or a comma
  const words = between.replace(/\\text(?:bf)?\{[^{}]*\}/g, " ").match(/[a-z]+/gi) ?? [];
  return words.every((w) => HEDGE_WORDS.test(w)) || /\b(and|or)\b|,/.test(between);
}

/** Most answers joined into one list (a longer run is a list of options, not an answer). */
const MAX_JOINED = 64;

/** The last span, joined with the spans before it while only connectors separate them. */
function lastGroup(s: string, spans: Span[]): string {
  let k = spans.length - 1;
  const parts = [spans[k].body];
  while (k > 0 && parts.length < MAX_JOINED && connected(s.slice(spans[k - 1].end, spans[k].start))) {
    k--;
    parts.unshift(spans[k].body);
  }
  return parts.length === 1 ? parts[0] : parts.map((p) => p.trim()).join(", ");
}

/**
 * "final answer is", "the answer is", "Answer:", and GSM8K's "#### 18" at the start of a line.
 * The space before `####` excludes line breaks: `^\s*` retried at every line start of a run of
 * blank lines, each try scanning the rest of the run (quadratic: 32K newlines took ~1.5 s, 1 MiB
 * would outlast any deadline and end as null).
 */
const PHRASE = /(?:final\s+answer\s*(?:is|:)|\b(?:the|my|our|correct|right)\s+answer\s+is|\banswer\s*:|^[^\S\n\r\u2028\u2029]*####)\s*:?\s*/gim;

/** Where the first sentence after an answer phrase ends: a full stop after a non-digit, a full stop before a capital, a line break. */
const SENTENCE_END = /(?<=[^\d\s])\.(?:\s|$)|\.\s+(?=[A-Z])|\n/;
/** The last character of a sentence that is not a full stop, space, asterisk or quote. */
const SENTENCE_LAST = /[^.\s*"'][.\s*"']*$/;

/**
 * The answer after the last answer phrase; null also when that phrase begins at or before `boxAt`
 * (the last box's start, -1 for none): a box after the phrase is the later answer and wins, so
 * the text after the phrase is not read.
 */
function fromPhrase(s: string, boxAt = -1): (PhraseAnswer & { at: number }) | null {
  const r = fromPhraseInner(s, boxAt);
  return r && { ...r.x, at: r.at };
}

type PhraseAnswer = Extracted & { loose?: true; refused?: true; denied?: string };

function fromPhraseInner(s: string, boxAt: number): { x: PhraseAnswer; at: number } | null {
  let last: RegExpExecArray | null = null;
  for (let m = PHRASE.exec(s); m; m = PHRASE.exec(s)) last = m;
  PHRASE.lastIndex = 0;
  if (!last || last.index <= boxAt) return null;
  const at = last.index;
  const wrap = (x: PhraseAnswer | null) => (x ? { x, at } : null);
  let rest = s.slice(last.index + last[0].length);
  const nl = rest.indexOf("\n\n");
  if (nl >= 0) rest = rest.slice(0, nl);
  rest = rest.replace(/^[*\s"']+/, "");
  // "the answer is not 4" (not "… is not unique": a box before it still counts)
  if (/^not\s*(?:[-−$\d]|\\[([]|equal)/i.test(rest)) return wrap({ ...REFUSED, denied: FIRST_NUMBER.exec(rest)?.[0] ?? "" });
  const spans = mathSpans(rest);
  // The answer is the math right after the phrase ("… is $x$. I hope …").
  if (spans.length && spans[0].start === 0) {
    let k = 0;
    while (k + 1 < spans.length && connected(rest.slice(spans[k].end, spans[k + 1].start))) k++;
    return wrap({ answer: lastGroup(rest, spans.slice(0, k + 1)), latex: true, via: "phrase" });
  }
  // Otherwise the first sentence.
  const end = SENTENCE_END.exec(rest);
  const sentence = dropTrailing((end ? rest.slice(0, end.index) : rest).trim(), SENTENCE_LAST);
  if (!sentence) return null;
  const inner = mathSpans(sentence);
  if (inner.length && inner[inner.length - 1].end >= sentence.length - 1) return wrap({ answer: lastGroup(sentence, inner), latex: true, via: "phrase" });
  if (PLAIN_EXPR.test(sentence) && !isProse(sentence)) return wrap({ answer: sentence, latex: false, via: "phrase" });
  // In prose, a `not` after the first number starts what the answer is not ("4, not 3" is 4);
  // "either 3 or 4" and "3 (or maybe 4)" are two answers, graded as a list (the last number
  // paid either hedge). Linear: one search for a digit, one for the word.
  const digit = sentence.search(/\d/);
  const not = digit < 0 ? null : /\bnot\b/i.exec(sentence.slice(digit));
  const said = not ? sentence.slice(0, digit + not.index) : sentence;
  const hedged = hedgedNumbers(said);
  if (hedged) return wrap({ answer: hedged.join(", "), latex: false, via: "phrase" });
  const n = lastNumber(answerClause(said));
  // a phrase whose sentence does not begin with its value ("the answer is consistent since 12 +
  // 3 = 15") does not overrule a box before it
  const loose = !/^(?:that\s+)?(?:[a-zA-Z]\s*(?:=|equals\b|is\b)\s*)?[-−+$\\([\d.]/i.test(sentence);
  if (n !== null) return wrap({ answer: n, latex: false, via: "phrase", ...(loose ? { loose } : {}) });
  if (inner.length) return wrap({ answer: lastGroup(sentence, inner), latex: true, via: "phrase" });
  return null;
}

/** Where the clause that states an answer ends, after its first number: "12 because …", "18 dollars, since …", "12 (from 5 + 7)", "12 and the remainder …". */
const CLAUSE_BREAK = /,\s(?![-−]?\d)|;|\s\(|\b(?:because|since|as|which|where|from|but|and(?!\s*[-−]?\d)|so|per|for|when|if|given|while|with)\b/i;
/** A computation in the clause so far, which the text after the break may carry on to its result ("3 times 4, which is 12"). */
const OPERATOR = /[+*×÷/=]|\s[-−]\s|\b(?:times|plus|minus|divided|multiplied|over)\b/i;
const CHAIN = /^\s*,?\s*(?:=|equals\b|which\s+(?:is|gives|equals|makes)\b|giving\b|that\s+is\b|so\s+(?:we\s+get|it\s+is)\b)/i;

/**
 * The part of an answer phrase's sentence that states the answer: up to the first clause break
 * after its first number ("The answer is 12 because there are 3 groups of 4" is 12, not 4),
 * carried past a break that continues a computation to its result. At most 8 breaks are
 * examined, each with one search: linear.
 */
function answerClause(s: string): string {
  const first = FIRST_NUMBER.exec(s);
  if (!first) return s;
  let from = first.index + first[0].length;
  for (let k = 0; k < 8; k++) {
    const b = CLAUSE_BREAK.exec(s.slice(from));
    if (!b) return s;
    const at = from + b.index;
    if ((k === 0 && !OPERATOR.test(s.slice(0, at))) || !CHAIN.test(s.slice(at, at + 40))) return s.slice(0, at);
    from = at + b[0].length;
  }
  return s;
}

/** What an answer phrase followed by `not` names: no answer, and no later source is read for one. */
const REFUSED: Extracted & { refused: true; denied?: string } = { answer: "", latex: false, via: "phrase", refused: true };
/** Numbers joined by `or` in prose (`either 3 or 4`, `3 (or maybe 4)`): every number of `s`, else null. Linear: one pass for `or`, one for numbers. */
function hedgedNumbers(s: string): string[] | null {
  const or = /\bor\b/i.exec(s);
  if (!or) return null;
  const nums = [...s.matchAll(NUMBER)];
  if (!nums.some((m) => m.index! < or.index) || !nums.some((m) => m.index! > or.index)) return null;
  return nums.map((m) => m[0]);
}

/** A whole string that reads as a bare expression or answer list (no prose). */
const PLAIN_EXPR = /^[\s\d.,;:+\-*/^()[\]{}<>=!%|a-zA-Z_'\\·×÷−√πθ∞≤≥≠°€£¥₹]*$/;
/**
 * A number in prose: a mixed number (`1 1/2`), a fraction, digits grouped by thousands, a decimal; with its power when it
 * has one (`2^10`, `10^{-3}`). Digits right after `^` or `_` are an exponent or an index, not a
 * number (`5 cm^2` is 5, not 2; `a_3`).
 */
const NUMBER = /(?<![\w.^_]|[\^_]\{)[-−]?(?:\d{1,9} \d{1,9}\s*\/\s*\d{1,9}(?![\d.,]\d)|\d+\s*\/\s*\d+(?![\d.,]\d)|\d{1,3}(?:[, ]\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?|\.\d+)(?:\^(?:\{[-−]?\d{1,4}\}|[-−]?\d{1,4}))?(?![\d.,]\d)(?!\.?[a-zA-Z]*\d)/g;
/** NUMBER without the g flag: the first number of a text, compiled once. */
const FIRST_NUMBER = new RegExp(NUMBER.source);

/**
 * A minus written apart from its number, at the end of the text before it: `- 34`, `-\,34`,
 * `-(34)` (its `)` checked after the number and a percent sign), `–34` (an en dash),
 * `negative 34`, `minus 34`; after a space or `=:,;([{`, so that a hyphen (`COVID-19`) is not
 * one. Fixed-width but for the words' `\s+`, and run on a bounded slice (SIGN_WINDOW): linear in
 * the text.
 */
const SIGN_BEFORE = /[\s=:,;([{](?:[-−–](?:\s|\\[,;:!])?|[-−]\s?\(\s?|[Nn]egative\s+|[Mm]inus\s+)$/;
/** What before such a sign (and its space) makes it a binary minus: a digit, a closing bracket or a lone letter (`3 - 5`, `x - 5`). */
const OPERAND_BEFORE = /(?:[\d)\]}]|(?<![a-zA-Z\\])[a-zA-Z])$/;
const SIGN_WINDOW = 24;

/** What before a number says the text is not that number: `3 and not 4`, `3, not 4`, `not equal to 4`. Run on a bounded slice (NOT_WINDOW). */
const NOT_BEFORE = /\bnot\s+(?:equal\s+to\s+|be\s+)?$/i;
const NOT_WINDOW = 20;

/** The last number of `s` that the text does not deny (`It is 3 and not 4` is 3; `It is not 4` has none). */
function lastNumber(s: string): string | null {
  let last: RegExpMatchArray | null = null;
  for (const m of s.matchAll(NUMBER)) if (!NOT_BEFORE.test(s.slice(Math.max(0, m.index! - NOT_WINDOW), m.index!))) last = m;
  if (!last) return null;
  const at = last.index!, end = at + last[0].length;
  let n = last[0];
  if (n[0] !== "-" && n[0] !== "−") {
    // a sign apart from the digits is still the number's (`we get - 34` is -34, not 34)
    const from = Math.max(0, at - SIGN_WINDOW);
    const before = (from === 0 ? " " : "") + s.slice(from, at);
    const sign = SIGN_BEFORE.exec(before);
    if (sign && !OPERAND_BEFORE.test(before.slice(0, sign.index + (/\s/.test(sign[0][0]) ? 0 : 1))) && (!sign[0].slice(1).includes("(") || /^\s?(?:\\?%\s?)?\)/.test(s.slice(end, end + 5)))) n = `-${n}`;
  }
  // a percent sign or word after it stays with it ("40 percent" is 40% against 0.4)
  const pct = /^\s?(?:\\?%|percent\b)/.exec(s.slice(end, end + 9));
  if (pct) return `${n}%`;
  // so does a word that changes its value: "2.5 million" is 2500000, "12 squared" 144, and
  // "5 tenths" or "3 doubled" is not the number before the word
  const word = VALUE_AFTER.exec(s.slice(end, end + 24));
  if (!word) return n;
  const w = word[1].toLowerCase();
  return w === "squared" ? `${n}^2` : w === "cubed" ? `${n}^3` : `${n} ${word[1]}`;
}

/** A word right after a number in prose that changes its value (a scale, a power, a fraction's denominator, an operation). */
const VALUE_AFTER = /^\s{1,3}((?:thousand|million|billion|trillion)s?|squared|cubed|(?:four|fif|six|seven|eigh|nin|ten|eleven|twelf|twentie|hundred|thousand|million|billion|trillion)ths?|doubled|tripled|quadrupled|halved|negated|inverted|reciprocal|inverse|factorial|dozens?)\b/i;

const MATH_WORDS = /^(?:sin|cos|tan|sec|csc|cot|arcsin|arccos|arctan|sinh|cosh|tanh|ln|log|exp|sqrt|cbrt|abs|pi|inf|infty|infinity|and|or|percent|percentage|pct)$/i;

/** Text with a word of two or more letters that is not a function, a constant or a connector. */
function isProse(s: string): boolean {
  for (const m of s.replace(/\\[a-zA-Z]+/g, " ").matchAll(/[a-zA-Z]{2,}/g)) if (!MATH_WORDS.test(m[0])) return true;
  return false;
}

/** A fraction or root written in LaTeX outside math mode (`the probability is \frac{3}{8}`). Bounded groups: linear. */
const BARE_LATEX = /[-−]?\\[dt]?frac\s*\{[^{}]{1,64}\}\s*\{[^{}]{1,64}\}|[-−]?\\sqrt\s*(?:\[[^\]]{1,8}\])?\s*\{[^{}]{1,64}\}/g;
/** Between the last two numbers of a text, a hedge: "12 or 13", "12, or maybe 13". */
const HEDGE_BETWEEN = /^\s*,?\s*or\s+(?:(?:maybe|possibly|perhaps|probably|even)\s+)?$/i;

function fromPlain(s: string): Extracted | null {
  const t = s.trim();
  if (!t) return null;
  if (t.length <= 200 && PLAIN_EXPR.test(t) && !isProse(t)) return { answer: t, latex: false, via: "plain" };
  // LaTeX after the last number: its digits are the fraction's or the root's, not the answer
  let bare: RegExpMatchArray | null = null;
  for (const m of t.matchAll(BARE_LATEX)) bare = m;
  if (bare && !FIRST_NUMBER.test(t.slice(bare.index! + bare[0].length))) return { answer: bare[0], latex: true, via: "plain" };
  // "It could be 12 or 13." hedges between two answers: a list (the last number paid the hedge)
  let prev: RegExpMatchArray | null = null;
  let last: RegExpMatchArray | null = null;
  for (const m of t.matchAll(NUMBER)) (prev = last), (last = m);
  if (prev && last) {
    const between = t.slice(prev.index! + prev[0].length, last.index!);
    if (between.length <= 24 && HEDGE_BETWEEN.test(between)) return { answer: `${prev[0]}, ${last[0]}`, latex: false, via: "plain" };
  }
  const n = lastNumber(t);
  return n === null ? null : { answer: n, latex: false, via: "plain" };
}

export interface ExtractOptions {
  priority?: Source[];
  /** Ignore everything before the last `</think>` (default true). */
  stripThink?: boolean;
}

/** The final answer of `text`, or null when none of the sources finds one. */
export function extractAnswer(text: string, o: ExtractOptions = {}): Extracted | null {
  let s = o.stripThink === false ? text : afterThink(text);
  // an R1-style <answer>…</answer> holds the answer: search inside the last one
  const tag = s.lastIndexOf("<answer>");
  if (tag >= 0) {
    const end = s.indexOf("</answer>", tag);
    const inner = s.slice(tag + 8, end < 0 ? undefined : end);
    if (inner.trim()) s = inner;
  }
  const priority = o.priority ?? DEFAULT_PRIORITY;
  for (let k = 0; k < priority.length; k++) {
    const src = priority[k];
    if (src === "boxed" || src === "phrase") {
      // a box and an answer phrase rank together: the later one in the text wins
      const both = priority[k + 1] === (src === "boxed" ? "phrase" : "boxed");
      const spans = src === "boxed" || both ? boxedSpans(s) : [];
      const boxAt = spans.length ? spans[spans.length - 1].start : -1;
      const phrase = src === "phrase" || both ? fromPhrase(s, boxAt) : null;
      if (both) k++;
      const box = spans.length ? { answer: lastGroup(s, spans), latex: true, via: "boxed" as const, at: boxAt } : null;
      const pick = box && phrase ? (phrase.at > box.at && !("loose" in phrase) ? phrase : box) : box ?? phrase;
      if (pick && "refused" in pick) {
        // "the answer is not 15" after \boxed{12} keeps the box; after \boxed{15}, or with no box, there is no answer
        return box && box.answer.trim() !== pick.denied ? { answer: box.answer, latex: true, via: "boxed" } : null;
      }
      if (pick) return { answer: pick.answer, latex: pick.latex, via: pick.via };
    } else if (src === "latex") {
      const spans = mathSpans(s).filter((x) => x.body.trim() !== "");
      if (spans.length) {
        // a plain number written after the last formula is the later answer ("… increases by 100%.")
        if (priority.includes("plain")) {
          const tail = s.slice(spans[spans.length - 1].end);
          const n = lastNumber(tail);
          if (n !== null) return { answer: n, latex: false, via: "plain" };
        }
        return { answer: lastGroup(s, spans), latex: true, via: "latex" };
      }
    } else {
      const r = fromPlain(s);
      if (r) return r;
    }
  }
  return null;
}
