/**
 * Output comparison for stdin/stdout tests and function results. Everything here runs on the
 * host over what a hostile program printed, so each step is linear (native trims and splits, no
 * regex that can backtrack). Integers compare exactly, as text or BigInt, never as doubles: two
 * 20-digit integers that differ by one are different, and no tolerance turns 1000000000 into
 * 1000000007. Tolerance applies only when a number has a fraction or an exponent.
 */
import { parse as parseLossless, stringify as stringifyLossless, isInteger, isSafeNumber } from "lossless-json";
import { hasLongDigitRun } from "../../src/core/digit-run.js";

export type CompareMode = "exact" | "lines" | "tokens" | "float";

/**
 * "lines": whitespace around each line and blank lines before and after the output do not count,
 * as in LiveCodeBench's grade_stdio (and SandboxFusion's, PRIME's, open-r1's checkers): each
 * strips every line and the whole output.
 */
function lines(s: string): string[] {
  // trim, not /\s+$/: that regex is quadratic on a long run of spaces inside a line.
  const l = s.replace(/\r\n?/g, "\n").split("\n").map((x) => x.trim());
  let from = 0;
  while (from < l.length && l[from] === "") from++;
  while (l.length > from && l[l.length - 1] === "") l.pop();
  return from ? l.slice(from) : l;
}

const WS = /\s/;
/** Whether the code unit at `i` is whitespace as /\s/ reads it (ASCII answered without a regex). */
function isSpace(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  if (c < 128) return c === 32 || (c >= 9 && c <= 13);
  return WS.test(s[i]);
}

/**
 * Walks the whitespace-separated tokens of two texts side by side, without splitting either
 * into an array (a 1 MB output is 250,000 tokens): `same` decides each pair given as ranges.
 * True when both have as many tokens and every pair is the same.
 */
function tokensAgree(a: string, b: string, same: (a: string, as: number, ae: number, b: string, bs: number, be: number) => boolean): boolean {
  let i = 0;
  let j = 0;
  for (;;) {
    while (i < a.length && isSpace(a, i)) i++;
    while (j < b.length && isSpace(b, j)) j++;
    if (i >= a.length || j >= b.length) return i >= a.length && j >= b.length;
    let ie = i;
    let je = j;
    while (ie < a.length && !isSpace(a, ie)) ie++;
    while (je < b.length && !isSpace(b, je)) je++;
    if (!same(a, i, ie, b, j, je)) return false;
    i = ie;
    j = je;
  }
}

function rangeEqual(a: string, as: number, ae: number, b: string, bs: number, be: number): boolean {
  if (ae - as !== be - bs) return false;
  for (let k = 0; k < ae - as; k++) if (a.charCodeAt(as + k) !== b.charCodeAt(bs + k)) return false;
  return true;
}

function numClose(a: number, b: number, tol: number): boolean {
  if (a === b) return true;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  return Math.abs(a - b) <= tol * Math.max(1, Math.abs(a), Math.abs(b));
}

// Unambiguous (no two ways to split a run of digits), so a long digit string fails in one pass.
const NUM = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const INT = /^[+-]?\d+$/;
/** Longest token read as a number; past it, tokens compare as text. */
const NUM_MAX = 400;

/**
 * A numeric token's exact value as sign, significant digits and a power of ten (`1.50e2`, `150`
 * and `+150.0` all give ["", "15", 1n]; zero is ["", "0", 0n] whatever its sign). Null for a
 * token that is not a number (NUM) or is longer than NUM_MAX. One pass over the token.
 */
function decimal(t: string): [string, string, bigint] | null {
  if (t.length > NUM_MAX || !NUM.test(t)) return null;
  const sign = t[0] === "-" ? "-" : "";
  const body = t[0] === "-" || t[0] === "+" ? t.slice(1) : t;
  const e = body.search(/[eE]/);
  const mant = e < 0 ? body : body.slice(0, e);
  const dot = mant.indexOf(".");
  const frac = dot < 0 ? "" : mant.slice(dot + 1);
  let digits = (dot < 0 ? mant : mant.slice(0, dot)) + frac;
  let exp = (e < 0 ? 0n : BigInt(body.slice(e + 1))) - BigInt(frac.length);
  let a = 0;
  while (a < digits.length && digits[a] === "0") a++;
  let b = digits.length;
  while (b > a && digits[b - 1] === "0") b--;
  exp += BigInt(digits.length - b);
  digits = digits.slice(a, b);
  return digits ? [sign, digits, exp] : ["", "0", 0n];
}

/** Two tokens with the same numeric value, exactly (`1.0` and `1`, `1e5` and `100000`, `-0` and `0`), as Python's Decimal compares them. */
function sameNumber(x: string, e: string): boolean {
  const a = decimal(x);
  const b = decimal(e);
  return a !== null && b !== null && a[0] === b[0] && a[1] === b[1] && a[2] === b[2];
}

/**
 * Two lines alike, or both numbers only and equal by value token for token: LiveCodeBench's
 * grade_stdio, which compares a line that differs as a list of Decimals (`1.0 2` is `1  2.00`;
 * `a 1.0` is not `a 1`).
 */
function sameLine(x: string, e: string): boolean {
  return x === e || tokensAgree(x, e, (a, as, ae, b, bs, be) => ae - as <= NUM_MAX && be - bs <= NUM_MAX && sameNumber(a.slice(as, ae), b.slice(bs, be)));
}

/**
 * An output token `x` against the expected token `e`: an expected integer exactly, by value
 * (`1000000007.0` is 1000000007; `1000000000.0` is not, however close); anything else within
 * `tol`; past a double's range (both read as Infinity, `1e400` and `2e400`) by exact value,
 * never as equal infinities.
 */
function tokensClose(x: string, e: string, tol: number): boolean {
  if (x === e) return true;
  if (x.length > NUM_MAX || e.length > NUM_MAX || !NUM.test(x) || !NUM.test(e)) return false;
  if (INT.test(e)) return INT.test(x) ? BigInt(x) === BigInt(e) : sameNumber(x, e);
  const a = Number(x);
  const b = Number(e);
  if (!Number.isFinite(a) || !Number.isFinite(b)) return sameNumber(x, e);
  return numClose(a, b, tol);
}

export function outputsMatch(actual: string, expected: string, mode: CompareMode, tol = 1e-6): boolean {
  switch (mode) {
    case "exact":
      return actual === expected;
    case "lines": {
      const a = lines(actual);
      const e = lines(expected);
      return a.length === e.length && a.every((x, i) => sameLine(x, e[i]));
    }
    case "tokens":
      return tokensAgree(actual, expected, rangeEqual);
    case "float":
      return tokensAgree(actual, expected, (a, as, ae, b, bs, be) =>
        rangeEqual(a, as, ae, b, bs, be) || (ae - as <= NUM_MAX && be - bs <= NUM_MAX && tokensClose(a.slice(as, ae), b.slice(bs, be), tol)));
  }
}

/**
 * A function's set result as the call harness sends it (`{"$set": [...]}`): Python's `==` never
 * equals a set to a list (nor to anything a JSON reference can hold), so it matches nothing.
 */
export function isSetResult(x: unknown): boolean {
  if (!x || typeof x !== "object" || Array.isArray(x)) return false;
  const keys = Object.keys(x);
  return keys.length === 1 && keys[0] === "$set" && Array.isArray((x as Record<string, unknown>)["$set"]);
}

/**
 * Deep equality of a function's result `a` with the expected JSON value `b`, as Python's `==`
 * sees them, with a tolerance for floats: two non-integers within `tol` relative (absolute near
 * zero); an integer against a non-integer only within `tol` absolute, so float noise passes
 * (`1.9999999999999998` for 2) but `777778088.1` never does for 777777777 (Python: False). Two
 * integers exactly; integers may arrive as BigInt (beyond 2^53, see exactJson) and compare
 * exactly with each other and with whole doubles. A bool equals 0 or 1 (`True == 1` in Python).
 * A set result (isSetResult) equals nothing.
 */
export function valuesMatch(a: unknown, b: unknown, tol = 1e-6): boolean {
  // Python's bool is an int: True == 1, False == 0.0; never a string, a list or None.
  if (typeof a === "boolean" && (typeof b === "number" || typeof b === "bigint")) a = a ? 1 : 0;
  else if (typeof b === "boolean" && (typeof a === "number" || typeof a === "bigint")) b = b ? 1 : 0;
  if (typeof a === "bigint" || typeof b === "bigint") {
    // A whole double is an exact integer (a reference's 10**18 parsed as a number): compared exactly.
    const big = (x: unknown) => (typeof x === "bigint" ? x : typeof x === "number" && Number.isInteger(x) ? BigInt(x) : null);
    const [x, y] = [big(a), big(b)];
    return x !== null && y !== null && x === y;
  }
  if (typeof a === "number" && typeof b === "number") {
    const ia = Number.isInteger(a);
    const ib = Number.isInteger(b);
    if (ia && ib) return a === b;
    if (ia !== ib) return Number.isFinite(a) && Number.isFinite(b) && Math.abs(a - b) <= tol;
    return numClose(a, b, tol);
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => valuesMatch(x, b[i], tol));
  if (isSetResult(a)) return false;
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

/**
 * JSON.parse that keeps integers exact: an integer beyond 2^53 becomes a BigInt instead of the
 * nearest double, and the function-call harness's `{"$int": "digits"}` (how it sends such an
 * int) becomes that BigInt too. Throws like JSON.parse on bad input. A text with neither (no
 * `"$int"`, no run of 16 digits) is JSON.parse's: the same values, and a megabyte of a
 * program's return value costs the event loop ~5 ms, not lossless-json's 25-150 ms.
 */
export function exactJson(text: string): unknown {
  if (!text.includes('"$int"') && !hasLongDigitRun(text)) return JSON.parse(text);
  return parseLossless(
    text,
    (_key, value) => {
      if (value && typeof value === "object" && !Array.isArray(value)) {
        const keys = Object.keys(value);
        const digits = (value as Record<string, unknown>)["$int"];
        if (keys.length === 1 && typeof digits === "string" && /^-?\d{1,5000}$/.test(digits)) return BigInt(digits);
      }
      return value;
    },
    (n: string) => (isInteger(n) && !isSafeNumber(n) ? BigInt(n) : parseFloat(n)),
  );
}

/** JSON.stringify that writes a BigInt (exactJson's big integers) as its digits: arguments for the function-call harness, whose json.loads reads them exactly. */
export function stringifyExact(value: unknown): string {
  try {
    return JSON.stringify(value); // native and fast; throws only on a BigInt
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    return stringifyLossless(value) ?? "null";
  }
}
