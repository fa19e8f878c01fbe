/**
 * The one internal representation of a scalar expression: a MathJSON-shaped tree (numbers,
 * symbol names, `[operator, ...args]`). compute-engine produces it from LaTeX, and
 * `fromMathjs` converts mathjs's tree from plain ASCII into it. Exact and numeric evaluation.
 */
import type { Rat } from "./rational.js";
import * as R from "./rational.js";

export type Expr = number | string | { num: string } | { str: string } | Expr[];

export const CONSTANTS: Record<string, number> = {
  Pi: Math.PI, ExponentialE: Math.E, Half: 0.5, PositiveInfinity: Infinity, NegativeInfinity: -Infinity,
  Nothing: NaN, GoldenRatio: (1 + Math.sqrt(5)) / 2, CatalanConstant: 0.915965594177219,
  EulerGamma: 0.5772156649015329,
};

const F1: Record<string, (x: number) => number> = {
  Sqrt: Math.sqrt, Exp: Math.exp, Ln: Math.log, Lb: Math.log2, Lg: Math.log10, Abs: Math.abs,
  Sin: Math.sin, Cos: Math.cos, Tan: Math.tan, Sec: (x) => 1 / Math.cos(x), Csc: (x) => 1 / Math.sin(x),
  Cot: (x) => 1 / Math.tan(x), Arcsin: Math.asin, Arccos: Math.acos, Arctan: Math.atan,
  Arcsec: (x) => Math.acos(1 / x), Arccsc: (x) => Math.asin(1 / x), Arccot: (x) => Math.atan(1 / x),
  Sinh: Math.sinh, Cosh: Math.cosh, Tanh: Math.tanh, Arsinh: Math.asinh, Arcosh: Math.acosh, Artanh: Math.atanh,
  Floor: Math.floor, Ceil: Math.ceil, Round: Math.round, Sign: Math.sign, Square: (x) => x * x,
  Negate: (x) => -x, Factorial: factorial, Gamma: (x) => factorial(x - 1),
};

function factorial(x: number): number {
  if (!Number.isInteger(x) || x < 0) return NaN;
  if (x > 170) return Infinity;
  let r = 1;
  for (let i = 2; i <= x; i++) r *= i;
  return r;
}

export function isOp(e: Expr, op?: string): e is Expr[] {
  return Array.isArray(e) && (op === undefined || e[0] === op);
}

function numText(e: Expr): string | null {
  if (typeof e === "number") return Number.isFinite(e) ? String(e) : null;
  if (typeof e === "object" && !Array.isArray(e) && "num" in e) return e.num;
  return null;
}

/**
 * Decimal places of a tree that is one decimal literal, possibly negated (`-0.33` has 2); null
 * for anything else, and for literals without a fractional part (`2.0`).
 */
export function literalPlaces(e: Expr): number | null {
  if (isOp(e, "Negate") && e.length === 2) return literalPlaces(e[1]);
  const t = numText(e);
  if (t === null || !hasDecimal(e)) return null;
  const m = /\.(\d+)$/.exec(t);
  return m ? m[1].length : null;
}

/**
 * Decimal places written in a tree that is one number literal, possibly negated, counting
 * trailing zeros (`41.0` has 1, `41` has 0); null for anything else. What an answer given to the
 * places it is written claims: `41.0\%` is 41.0 to the tenth, not a whole 41.
 */
export function writtenPlaces(e: Expr): number | null {
  if (isOp(e, "Negate") && e.length === 2) return writtenPlaces(e[1]);
  const t = numText(e);
  if (t === null || /[eE]/.test(t)) return null;
  const m = /\.(\d*)$/.exec(t);
  return m ? m[1].length : 0;
}

/** Whether a number literal in the tree is a non-integer decimal (e.g. 0.33). */
export function hasDecimal(e: Expr): boolean {
  const t = numText(e);
  if (t !== null) return /[.eE]/.test(t) && !/^-?\d+\.0*$/.test(t);
  return Array.isArray(e) && e.slice(1).some(hasDecimal);
}

export function size(e: Expr): number {
  return Array.isArray(e) ? e.slice(1).reduce<number>((n, x) => n + size(x), 1) : 1;
}

const NOT_VARS = new Set([...Object.keys(CONSTANTS), "ImaginaryUnit", "ComplexInfinity"]);

export function freeVars(e: Expr, out = new Set<string>()): Set<string> {
  if (typeof e === "string") {
    if (!NOT_VARS.has(e)) out.add(e);
  } else if (Array.isArray(e)) {
    for (let i = 1; i < e.length; i++) freeVars(e[i], out);
  }
  return out;
}

/** Exact value when the tree is rational arithmetic on rationals; null otherwise. */
export function evalExact(e: Expr): Rat | null {
  const t = numText(e);
  if (t !== null) return R.parseDecimal(t);
  if (!Array.isArray(e)) return e === "Half" ? R.rat(1n, 2n) : null;
  const [op, ...a] = e;
  switch (op) {
    case "Rational": case "Divide": {
      if (a.length !== 2) return null;
      const x = evalExact(a[0]), y = evalExact(a[1]);
      return x && y ? R.div(x, y) : null;
    }
    case "Add": {
      let acc: Rat | null = R.rat(0n);
      for (const x of a) { const v = evalExact(x); if (!v || !acc) return null; acc = R.add(acc, v); }
      return acc;
    }
    case "Subtract": {
      if (a.length !== 2) return null;
      const x = evalExact(a[0]), y = evalExact(a[1]);
      return x && y ? R.sub(x, y) : null;
    }
    case "Negate": {
      const x = a.length === 1 ? evalExact(a[0]) : null;
      return x ? R.rat(-x.n, x.d) : null;
    }
    case "Multiply": {
      let acc: Rat | null = R.rat(1n);
      for (const x of a) { const v = evalExact(x); if (!v || !acc) return null; acc = R.mul(acc, v); }
      return acc;
    }
    case "Power": case "Square": {
      const x = evalExact(a[0]);
      const k = op === "Square" ? R.rat(2n) : a.length === 2 ? evalExact(a[1]) : null;
      if (!x || !k || k.d !== 1n) return null;
      return R.pow(x, Number(k.n));
    }
    case "Sqrt": case "Root": {
      const x = a.length ? evalExact(a[0]) : null;
      const k = op === "Sqrt" ? 2 : a.length === 2 ? evalExact(a[1]) : null;
      if (!x || !k || (typeof k !== "number" && (k.d !== 1n || k.n !== 2n))) return null;
      return exactSqrt(x);
    }
    case "Abs": {
      const x = a.length === 1 ? evalExact(a[0]) : null;
      return x ? R.rat(x.n < 0n ? -x.n : x.n, x.d) : null;
    }
    case "Delimiter": return a.length === 1 ? evalExact(a[0]) : null;
    default: return null;
  }
}

function isqrt(n: bigint): bigint | null {
  if (n < 0n) return null;
  if (n < 2n) return n;
  let x = BigInt(Math.floor(Math.sqrt(Number(n))));
  while (x * x > n) x--;
  while ((x + 1n) * (x + 1n) <= n) x++;
  return x * x === n ? x : null;
}

function exactSqrt(x: Rat): Rat | null {
  const a = isqrt(x.n), b = isqrt(x.d);
  return a !== null && b !== null ? R.rat(a, b) : null;
}

/** A deterministic stand-in value for an unknown function applied to numbers. */
function opaque(name: string, args: number[]): number {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
  const k = ((h >>> 0) % 1000) / 1000 + 0.5;
  return args.reduce((s, x, i) => s + Math.sin(k * (i + 1) * x + k), k);
}

/** Floating-point value with symbols bound by `env` (NaN when undefined or unsupported). */
export function evalFloat(e: Expr, env: Map<string, number>): number {
  if (typeof e === "number") return e;
  if (typeof e === "string") {
    if (e in CONSTANTS) return CONSTANTS[e];
    const v = env.get(e);
    return v === undefined ? NaN : v;
  }
  if (!Array.isArray(e)) return "num" in e ? Number(e.num.replace(/^\+/, "")) : NaN;
  const op = e[0];
  if (typeof op !== "string") return NaN;
  const a = e.slice(1);
  switch (op) {
    case "Add": return a.reduce<number>((s, x) => s + evalFloat(x, env), 0);
    case "Subtract": return evalFloat(a[0], env) - evalFloat(a[1], env);
    case "Multiply": return a.reduce<number>((s, x) => s * evalFloat(x, env), 1);
    case "Divide": case "Rational": return evalFloat(a[0], env) / evalFloat(a[1], env);
    case "Power": {
      const b = evalFloat(a[0], env), k = evalFloat(a[1], env);
      if (b < 0 && !Number.isInteger(k)) {
        // real odd roots of negatives: (-8)^(1/3)
        const inv = 1 / k;
        if (Number.isInteger(Math.round(inv)) && Math.abs(inv - Math.round(inv)) < 1e-9 && Math.round(inv) % 2 !== 0) return -Math.pow(-b, k);
        return NaN;
      }
      return Math.pow(b, k);
    }
    case "Root": {
      const x = evalFloat(a[0], env), n = evalFloat(a[1], env);
      if (x < 0 && Number.isInteger(n) && n % 2 !== 0) return -Math.pow(-x, 1 / n);
      return Math.pow(x, 1 / n);
    }
    case "Log": return a.length === 2 ? Math.log(evalFloat(a[0], env)) / Math.log(evalFloat(a[1], env)) : Math.log10(evalFloat(a[0], env));
    case "Binomial": {
      const n = evalFloat(a[0], env), k = evalFloat(a[1], env);
      return factorial(n) / (factorial(k) * factorial(n - k));
    }
    case "Max": return Math.max(...a.map((x) => evalFloat(x, env)));
    case "Min": return Math.min(...a.map((x) => evalFloat(x, env)));
    case "Delimiter": return a.length === 1 ? evalFloat(a[0], env) : NaN;
    case "Hold": return a.length === 1 ? evalFloat(a[0], env) : NaN;
    default: {
      const f = F1[op];
      if (f && a.length === 1) return f(evalFloat(a[0], env));
      if (/^[a-zA-Z](_\w+)?$/.test(op) && a.length >= 1) return opaque(op, a.map((x) => evalFloat(x, env)));
      return NaN;
    }
  }
}

/** mathjs node (from `parse(...)`) to the internal tree. */
export function fromMathjs(n: any): Expr {
  switch (n.type) {
    case "ConstantNode":
      return typeof n.value === "number" ? { num: String(n.value) } : NaN;
    case "SymbolNode":
      return ({ pi: "Pi", e: "ExponentialE", Infinity: "PositiveInfinity", inf: "PositiveInfinity", i: "ImaginaryUnit" } as Record<string, string>)[n.name] ?? n.name;
    case "ParenthesisNode": return fromMathjs(n.content);
    case "OperatorNode": {
      const a = n.args.map(fromMathjs);
      const map: Record<string, string> = { add: "Add", subtract: "Subtract", multiply: "Multiply", divide: "Divide", pow: "Power", unaryMinus: "Negate", factorial: "Factorial", dotMultiply: "Multiply", dotDivide: "Divide", dotPow: "Power" };
      if (n.fn === "unaryPlus") return a[0];
      const op = map[n.fn];
      if (!op) throw new Error(`unsupported operator ${n.op}`);
      return [op, ...a];
    }
    case "FunctionNode": {
      const name: string = n.fn?.name ?? n.name;
      const a = n.args.map(fromMathjs);
      const known: Record<string, string> = {
        sqrt: "Sqrt", exp: "Exp", ln: "Ln", log: "Ln", log10: "Lg", log2: "Lb", abs: "Abs", sin: "Sin", cos: "Cos", tan: "Tan",
        sec: "Sec", csc: "Csc", cot: "Cot", asin: "Arcsin", acos: "Arccos", atan: "Arctan", arcsin: "Arcsin", arccos: "Arccos",
        arctan: "Arctan", sinh: "Sinh", cosh: "Cosh", tanh: "Tanh", floor: "Floor", ceil: "Ceil", cbrt: "Cbrt",
      };
      if (name === "cbrt") return ["Root", a[0], 3];
      if (name === "log" && a.length === 2) return ["Log", a[0], a[1]];
      return [known[name] ?? name, ...a];
    }
    default:
      throw new Error(`unsupported ${n.type}`);
  }
}
