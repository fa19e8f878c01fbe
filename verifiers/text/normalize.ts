/** String normalisation shared by the text verifiers. */

export interface NormalizeOptions {
  caseSensitive?: boolean;
  /** Collapse runs of whitespace to one space and trim (default true). */
  whitespace?: boolean;
  /** Drop leading/trailing punctuation such as a final period (default false). */
  stripPunctuation?: boolean;
}

const EDGE_PUNCT = /^[\p{P}\p{S}\s]+|[\p{P}\p{S}\s]+$/gu;

export function normalize(s: string, o: NormalizeOptions = {}): string {
  let t = s.normalize("NFKC");
  if (o.whitespace !== false) t = t.replace(/\s+/gu, " ").trim();
  if (o.stripPunctuation) t = t.replace(EDGE_PUNCT, "");
  if (!o.caseSensitive) t = t.toLowerCase();
  return t;
}

/** Content of the last `\boxed{...}` or `\fbox{...}` with balanced braces, or null. */
export function lastBoxed(s: string): string | null {
  const re = /\\(?:boxed|fbox)\s*\{/g;
  let last: number | null = null;
  for (let m = re.exec(s); m; m = re.exec(s)) last = m.index + m[0].length;
  if (last === null) return null;
  let depth = 1;
  for (let i = last; i < s.length; i++) {
    const c = s[i];
    if (c === "\\" ) { i++; continue; }
    if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return s.slice(last, i);
  }
  return null;
}

export function asList<T>(x: T | T[]): T[] {
  return Array.isArray(x) ? x : [x];
}
