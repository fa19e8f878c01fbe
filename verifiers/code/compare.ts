/** Output comparison for stdin/stdout tests and function results. */
export type CompareMode = "exact" | "lines" | "tokens" | "float";

/** "lines": trailing whitespace on each line and trailing blank lines do not count. */
function lines(s: string): string[] {
  const l = s.replace(/\r\n?/g, "\n").split("\n").map((x) => x.replace(/\s+$/, ""));
  while (l.length && l[l.length - 1] === "") l.pop();
  return l;
}

function tokens(s: string): string[] {
  const t = s.trim();
  return t ? t.split(/\s+/) : [];
}

function numClose(a: number, b: number, tol: number): boolean {
  if (a === b) return true;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  return Math.abs(a - b) <= tol * Math.max(1, Math.abs(a), Math.abs(b));
}

const NUM = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

export function outputsMatch(actual: string, expected: string, mode: CompareMode, tol = 1e-6): boolean {
  switch (mode) {
    case "exact":
      return actual === expected;
    case "lines": {
      const a = lines(actual);
      const e = lines(expected);
      return a.length === e.length && a.every((x, i) => x === e[i]);
    }
    case "tokens": {
      const a = tokens(actual);
      const e = tokens(expected);
      return a.length === e.length && a.every((x, i) => x === e[i]);
    }
    case "float": {
      const a = tokens(actual);
      const e = tokens(expected);
      return a.length === e.length && a.every((x, i) => x === e[i] || (NUM.test(x) && NUM.test(e[i]) && numClose(Number(x), Number(e[i]), tol)));
    }
  }
}

/** Deep equality of JSON values; numbers within `tol` when either is not an integer. */
export function valuesMatch(a: unknown, b: unknown, tol = 1e-6): boolean {
  if (typeof a === "number" && typeof b === "number") {
    return Number.isInteger(a) && Number.isInteger(b) ? a === b : numClose(a, b, tol);
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => valuesMatch(x, b[i], tol));
  if (a && b && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b)) {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    return ka.length === kb.length && ka.every((k, i) => k === kb[i] && valuesMatch((a as any)[k], (b as any)[k], tol));
  }
  return a === b;
}

/** A short first-difference note for details (never the whole output). */
export function shortDiff(actual: string, expected: string, max = 120): string {
  const a = lines(actual);
  const e = lines(expected);
  for (let i = 0; i < Math.max(a.length, e.length); i++) {
    if (a[i] !== e[i]) {
      const clip = (s: string | undefined) => (s === undefined ? "<no line>" : JSON.stringify(s.length > max ? s.slice(0, max) + "…" : s));
      return `line ${i + 1}: got ${clip(a[i])}, expected ${clip(e[i])}`;
    }
  }
  return actual === expected ? "" : "differs only in whitespace";
}
