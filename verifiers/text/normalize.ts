/** String normalisation shared by the text verifiers. */
import { dropTrailing } from "../../src/core/completion.js";

export interface NormalizeOptions {
  caseSensitive?: boolean;
  /** Collapse runs of whitespace to one space and trim (default true). */
  whitespace?: boolean;
  /** Drop leading/trailing punctuation such as a final period (default false). */
  stripPunctuation?: boolean;
}

/** The leading run of punctuation, symbols and spaces; and the last character that is none of them. */
const LEADING_EDGE = /^[\p{P}\p{S}\s]+/u;
const LAST_INNER = /[^\p{P}\p{S}\s][\p{P}\p{S}\s]*$/u;

/**
 * Drops punctuation, symbols and spaces from both ends. Two linear regex scans: the trailing
 * run is found from the last character that is not an edge (dropTrailing), never with /[…]+$/,
 * which retries from every position and is quadratic on a long run of punctuation inside the
 * text; and never Array.from (a million strings for 1 MiB).
 */
function stripEdges(t: string): string {
  const a = LEADING_EDGE.exec(t)?.[0].length ?? 0;
  if (a === t.length) return "";
  // a < t.length: some character is not an edge, so the kept part holds it
  return dropTrailing(t, LAST_INNER).slice(a);
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
  let t = NON_ASCII.test(s) ? s.normalize("NFKC") : s;
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
  if (s.length <= NORMALIZE_SLICE) return normalize(s, o);
  let t = s.normalize("NFKC");
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
  if (!o.caseSensitive) t = t.toLowerCase();
  return t;
}

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
