/**
 * The few Python string operations that sacreBLEU and rouge-score rely on, with Python's exact
 * semantics, so that token boundaries (and so the scores) agree with the reference tools.
 */

/** The characters for which Python's `str.isspace()` is true (what `str.split()` splits on). */
const PY_WS_CLASS = "\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const PY_WS_RUN = new RegExp(`[${PY_WS_CLASS}]+`, "g");
const PY_WS_TRAIL = new RegExp(`[${PY_WS_CLASS}]+$`);

/** Python's `s.split()` with no argument: runs of whitespace separate, no empty fields. */
/** Whether a char code is Python's whitespace (str.split's separators). */
const PY_WS_ONE = new RegExp(`[${PY_WS_CLASS}]`);
export function isPyWhitespace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x1f) || (c >= 0x85 && PY_WS_ONE.test(String.fromCharCode(c)));
}

export function pySplit(s: string): string[] {
  const out = s.split(PY_WS_RUN);
  if (out.length && out[0] === "") out.shift();
  if (out.length && out[out.length - 1] === "") out.pop();
  return out;
}

/** Python's `s.rstrip()`: trailing whitespace removed (linear: the class is a single char). */
export function pyRstrip(s: string): string {
  let end = s.length;
  while (end > 0 && PY_WS_TRAIL.test(s[end - 1])) end--;
  return s.slice(0, end);
}

/** Python's `''.join(s.split())`: all whitespace removed. */
export function pyRemoveWhitespace(s: string): string {
  return s.replace(PY_WS_RUN, "");
}

/** The code points of `s` (Python indexes strings by code point, JavaScript by UTF-16 unit). */
export function codePoints(s: string): string[] {
  return Array.from(s);
}

/** Counts of the items of `xs`. */
export function counter<T>(xs: Iterable<T>): Map<T, number> {
  const m = new Map<T, number>();
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
  return m;
}
