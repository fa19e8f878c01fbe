/** String normalisation shared by the text verifiers. */

import { spellRaised } from "../../src/core/raised.js";
import { slices } from "../../src/core/slices.js";

export interface NormalizeOptions {
  caseSensitive?: boolean;
  /** Collapse runs of whitespace to one space and trim (default true). */
  whitespace?: boolean;
  /** Drop a final period and other sentence punctuation, and quotes or brackets enclosing the text (default false); never a sign or symbol. */
  stripPunctuation?: boolean;
}

/** Sentence punctuation dropped from the end: . , ; : ! ? and the ideographic full stop. */
function isTrailing(c: number): boolean {
  return c === 46 || c === 44 || c === 59 || c === 58 || c === 33 || c === 63 || c === 0x3002;
}
/** Each opening quote or emphasis mark and its closing one: dropped only as a pair enclosing the whole text. */
const PAIRED = new Map(
  [
    ['"', '"'], ["'", "'"], ["`", "`"], ["*", "*"], ["_", "_"],
    ["\u201c", "\u201d"], ["\u2018", "\u2019"], ["\u00ab", "\u00bb"], ["\u201e", "\u201c"], ["\u201a", "\u2018"], ["\u2039", "\u203a"], ["\u300c", "\u300d"], ["\u300e", "\u300f"],
  ].map(([o, c]) => [o!.charCodeAt(0), c!.charCodeAt(0)]),
);
/** A bracket's partner: ( ) [ ] { } (40 41, 91 93, 123 125); 0 for any other character. */
function closerOf(c: number): number {
  return c === 40 ? 41 : c === 91 ? 93 : c === 123 ? 125 : 0;
}

/** For each opening bracket of `t`, the index of the closing bracket it matches (-1: none). One pass with a stack. */
function bracketMatches(t: string): Int32Array {
  const match = new Int32Array(t.length).fill(-1);
  const stack = new Int32Array(t.length);
  let top = 0;
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (closerOf(c)) stack[top++] = i;
    else if ((c === 41 || c === 93 || c === 125) && top > 0 && closerOf(t.charCodeAt(stack[top - 1]!)) === c) match[stack[--top]!] = i;
  }
  return match;
}

/**
 * Drops, from the ends, what never changes an answer: whitespace, sentence punctuation at the end
 * ("Paris." "yes!"), and quotes, emphasis or brackets that enclose the whole text ('"Paris"',
 * "**B**", "(B)"; a bracket only with its own partner: "(a) and (b)" keeps both), repeatedly:
 * '("Paris".)' is "Paris". Never a sign or a symbol: "-5", "+5", "−5", "5%", "$5", "C++", "A+"
 * and ".5" keep theirs. Linear: each step drops a character or stops, brackets are matched by
 * one pass over the char codes, and no regex runs over the text.
 */
function stripEdges(t: string): string {
  let a = 0;
  let b = t.length;
  let brackets: Int32Array | null = null;
  for (;;) {
    for (let c = t.charCodeAt(b - 1); b > a && (isSpaceCode(c) || isTrailing(c)); c = t.charCodeAt(--b - 1));
    while (a < b && isSpaceCode(t.charCodeAt(a))) a++;
    if (b - a < 2) break;
    const open = t.charCodeAt(a);
    const close = t.charCodeAt(b - 1);
    const paired = PAIRED.get(open) === close || (closerOf(open) === close && (brackets ??= bracketMatches(t))[a] === b - 1);
    if (!paired) break;
    a++;
    b--;
  }
  return t.slice(a, b);
}

/**
 * Every maximal run of whitespace (`\s`) becomes one space. Only runs that change are matched
 * (a lone space is left alone), so ordinary prose costs one native scan rather than a
 * replacement per word: about 10x less CPU on a 1 MiB completion.
 */
const CHANGING_WHITESPACE = /[^\S ]\s*| \s+/g;

/** Any character outside ASCII: NFKC leaves pure ASCII as it is, so only such a text needs it. */
const NON_ASCII = /[^\x00-\x7f]/;

export function normalize(s: string, o: NormalizeOptions = {}): string {
  let t = s;
  if (NON_ASCII.test(s)) {
    checkMarkRuns(s);
    t = spellRaised(s, "text").normalize("NFKC");
  }
  if (o.whitespace !== false) t = t.replace(CHANGING_WHITESPACE, " ").trim();
  if (o.stripPunctuation) t = stripEdges(t);
  if (!o.caseSensitive) t = t.toLowerCase();
  return t;
}

/** Characters of whitespace collapsing done between two turns of the event loop. */
export const NORMALIZE_SLICE = 16 * 1024;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** `\s` as a char-code test (the same set: checked against the regex over the whole BMP in the tests). */
export function isSpaceCode(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || (c >= 0xa0 && (c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff));
}

/**
 * `normalize` for texts that may be long (a completion is up to 1 MiB): the same result, with
 * whitespace collapsed by one pass over the char codes into a preallocated buffer, a slice of
 * NORMALIZE_SLICE at a time with a turn of the event loop between slices, so a server scoring
 * several megabytes of completions keeps answering. A regex replacement costs an allocation
 * per whitespace run (8x the CPU on text that is mostly runs, all of it in one turn); this costs
 * the same per character whatever the text. NFKC, trimming and lower-casing are single native
 * passes.
 */
export async function normalizeSliced(s: string, o: NormalizeOptions = {}): Promise<string> {
  return (await normalizeSlicedWithin(s, o, Infinity))!;
}

/**
 * `normalizeSliced`, or null as soon as the result is sure to be longer than `maxLength`: NFKC
 * stops once its output holds more than `maxLength` characters that no later step removes
 * (whitespace goes, and with stripPunctuation so may punctuation, quotes and brackets at the
 * ends; lower-casing never shortens a text, checked over every code point in the tests). An
 * answer that cannot equal any reference need not be normalised whole: U+FDFA alone is 18
 * characters under NFKC, and 1 Mi of them made 18 Mi characters whose joining alone held the
 * event loop 0.3 s.
 */
export async function normalizeSlicedWithin(s: string, o: NormalizeOptions, maxLength: number): Promise<string | null> {
  if (s.length <= NORMALIZE_SLICE) {
    const t = normalize(s, o);
    return t.length > maxLength ? null : t;
  }
  let t: string | null = s;
  if (NON_ASCII.test(s)) t = await nfkcSliced(s, maxLength, o.stripPunctuation === true);
  if (t === null) return null;
  if (o.whitespace !== false) {
    // Slices end where a whitespace run ends, so no run crosses two slices. A slice with no run
    // to change (prose: single spaces) is kept as it is after one native scan; any other is
    // collapsed by one pass over its char codes (a regex would allocate per run: 8x the CPU on
    // text that is all runs). Extending a slice is one linear scan.
    const pieces: string[] = [];
    for (let from = 0; from < t.length; ) {
      let to = Math.min(t.length, from + NORMALIZE_SLICE);
      while (to < t.length && isSpaceCode(t.charCodeAt(to))) to++;
      const slice = t.slice(from, to);
      pieces.push(HAS_CHANGING_WHITESPACE.test(slice) ? collapse(slice) : slice);
      from = to;
      if (from < t.length) await turn();
    }
    t = pieces.join("").trim();
  }
  if (o.stripPunctuation) t = stripEdges(t);
  if (!o.caseSensitive) t = await lowerSliced(t);
  return t;
}

/**
 * Lower-casing a slice at a time. A slice ends right before an ASCII whitespace character:
 * whitespace is neither cased nor case-ignorable, so the one context-dependent mapping (Greek
 * final sigma) never looks across it, and the pieces join to `t.toLowerCase()`.
 */
async function lowerSliced(t: string): Promise<string> {
  if (t.length <= NORMALIZE_SLICE) return t.toLowerCase();
  const pieces: string[] = [];
  for (let from = 0; from < t.length; ) {
    let to = Math.min(t.length, from + NORMALIZE_SLICE);
    for (let c = t.charCodeAt(to); to < t.length && !(c === 32 || (c >= 9 && c <= 13)); c = t.charCodeAt(++to));
    pieces.push(t.slice(from, to).toLowerCase());
    from = to;
    if (from < t.length) await turn();
  }
  return pieces.join("");
}

/**
 * The longest run of characters with no normalisation boundary before them (combining marks,
 * conjoining jamo) that is normalised. NFKC's canonical reordering is quadratic in such a run
 * (V8/ICU: "e" and 1 Mi alternating marks took 350 s of CPU); 1024 marks cost well under a
 * millisecond, and no written language stacks that many on one letter.
 */
export const MAX_MARK_RUN = 1024;

/** A text holding a run of more than MAX_MARK_RUN combining characters: not normalised. */
export class MarkRunError extends Error {
  constructor(readonly run: number) {
    super(`a run of more than ${MAX_MARK_RUN} combining characters`);
  }
}

/**
 * 1 where NFKC (after spellRaised) of a text split right before this BMP character equals the
 * concatenation of NFKC of the two parts: the character's compatibility decomposition starts
 * with a starter that composes with nothing before it (not a mark, not a conjoining jamo), it is
 * not a surrogate, and spellRaised leaves it alone (a raised run or a fraction after a digit
 * reads its neighbours). Checked against whole-text normalisation over every code point in the
 * tests. Filled in as characters are met (0: not yet known, 1: a boundary, 2: none).
 */
let boundaryTable: Uint8Array | null = null;
const MARK_OR_JAMO = /^[\p{M}\u1160-\u11ff]/u;
function boundaryCp(cp: number): boolean {
  const ch = String.fromCodePoint(cp);
  if (cp >= 0xd800 && cp <= 0xdfff) return false;
  if (spellRaised(ch, "text") !== ch) return false;
  return !MARK_OR_JAMO.test(ch.normalize("NFKD"));
}
function boundaryBefore(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  if (c < 0x80) return true;
  if (c >= 0xd800 && c <= 0xdbff) {
    const d = s.charCodeAt(i + 1);
    return d >= 0xdc00 && d <= 0xdfff && boundaryCp(((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000);
  }
  boundaryTable ??= new Uint8Array(0x10000);
  let v = boundaryTable[c]!;
  if (v === 0) boundaryTable[c] = v = boundaryCp(c) ? 1 : 2;
  return v === 1;
}

/** Throws MarkRunError when `s` holds more than MAX_MARK_RUN characters in a row with no boundary before them. */
function checkMarkRuns(s: string): void {
  let run = 0;
  for (let i = 0; i < s.length; i++) {
    if (boundaryBefore(s, i)) run = 0;
    else if (++run > MAX_MARK_RUN) throw new MarkRunError(run);
  }
}

/**
 * spellRaised then NFKC, a slice at a time: slices are cut only right before a character with a
 * boundary before it (boundaryBefore), so the pieces join to the whole text's normalisation, and
 * the event loop turns between slices (U+FDFA alone becomes 18 characters: 1 Mi of them was
 * 0.7-1.6 s in one block). Throws MarkRunError on a run of over MAX_MARK_RUN marks.
 */
export async function nfkcSliced(s: string, maxKept = Infinity, strip = false): Promise<string | null> {
  const pieces: string[] = [];
  let from = 0;
  let run = 0;
  const slice = slices(10);
  let kept = 0;
  const take = (piece: string) => {
    pieces.push(piece);
    if (maxKept !== Infinity) for (let k = 0; k < piece.length && kept <= maxKept; k++) if (!removable(piece.charCodeAt(k), strip)) kept++;
  };
  for (let i = 0; i < s.length; i++) {
    if (boundaryBefore(s, i)) {
      run = 0;
      if (i - from >= NORMALIZE_SLICE / 4) {
        take(spellRaised(s.slice(from, i), "text").normalize("NFKC"));
        from = i;
        if (kept > maxKept) return null;
        await slice.pause();
      }
    } else if (++run > MAX_MARK_RUN) throw new MarkRunError(run);
    if ((i & 1023) === 1023) await slice.pause();
  }
  take(spellRaised(s.slice(from), "text").normalize("NFKC"));
  if (kept > maxKept) return null;
  return pieces.join("");
}

/** A character some later step of `normalize` may drop: whitespace, and with `strip` what stripEdges drops at the ends. */
function removable(c: number, strip: boolean): boolean {
  return isSpaceCode(c) || (strip && (isTrailing(c) || PAIRED.has(c) || CLOSERS.has(c) || closerOf(c) !== 0 || c === 41 || c === 93 || c === 125));
}
const CLOSERS = new Set(PAIRED.values());

const HAS_CHANGING_WHITESPACE = /[^\S ]| \s/;

/** Every maximal whitespace run of `s` as one space, by one pass over its char codes. */
function collapse(s: string): string {
  const out = new Uint16Array(s.length);
  let n = 0;
  let inSpace = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!isSpaceCode(c)) {
      out[n++] = c;
      inSpace = false;
    } else if (!inSpace) {
      out[n++] = 32;
      inSpace = true;
    }
  }
  // Back to a string in pieces (fromCharCode keeps lone surrogates as they are, as the regex did).
  const pieces: string[] = [];
  for (let i = 0; i < n; i += 8192) pieces.push(String.fromCharCode.apply(null, out.subarray(i, Math.min(n, i + 8192)) as unknown as number[]));
  return pieces.join("");
}

export function asList<T>(x: T | T[]): T[] {
  return Array.isArray(x) ? x : [x];
}
