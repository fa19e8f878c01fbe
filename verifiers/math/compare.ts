/**
 * Compares a parsed completion answer against a parsed reference, by the reference's type.
 * Asymmetric on purpose: the reference decides the shape; a completion that lists several
 * values never matches a single reference value.
 */
import type { Value, RelOp } from "./parse.js";
import { canonicalSame, symbolicZero } from "./parse.js";
import { evalExact, evalFloat, freeVars, hasDecimal, size, type Expr } from "./expr.js";
import * as R from "./rational.js";

export type Method = "string" | "exact" | "symbolic" | "numeric" | "structure";

export interface CompareOptions {
  /** Decimal places to which a decimal answer is compared (unset: exact). */
  precision?: number;
  /** Seed of the random points for numeric tests. */
  seed: number;
  /** A reference interval also accepts an inequality in the completion. */
  allowSetRelation: boolean;
}

export interface Verdict { equal: boolean; method: Method; why?: string }

const yes = (method: Method): Verdict => ({ equal: true, method });
const no = (method: Method, why: string): Verdict => ({ equal: false, method, why });

/** The label of `lhs = rhs` when lhs names the answer: `x`, `f(x)`, `a_3`, `(p,q)`, `|AB|`, `A:B`. */
export function labelOf(v: Value, src: string): string | null {
  const s = src.replace(/\s+/g, "");
  if (v.t === "expr") {
    const e = v.e;
    if (typeof e === "string") return s;
    if (Array.isArray(e) && !hasNumber(e) && !/[+\-]/.test(s)) return s;
    if (Array.isArray(e) && /^[a-zA-Z](?:_\{?\w+\}?)?\([a-z,]+\)$|^\\?[a-zA-Z]+_\{?\w+\}?$/.test(s)) return s;
    return null;
  }
  if (v.t === "list" && (v.kind === "tuple" || v.kind === "ratio")) {
    return v.items.every((x) => x.t === "expr" && typeof x.e === "string") ? s : null;
  }
  return null;
}

function hasNumber(e: Expr): boolean {
  if (typeof e === "number") return true;
  if (typeof e === "object" && !Array.isArray(e)) return "num" in e;
  return Array.isArray(e) && e.slice(1).some(hasNumber);
}

function isConstant(v: Value): boolean {
  return v.t === "expr" && freeVars(v.e).size === 0;
}

/** Reduces a relation to what the answer "is", when it is an assignment or a chain. */
function answerOf(v: Value): Value {
  if (v.t !== "rel" || !v.ops.every((o) => o === "=")) return v;
  const last = v.parts[v.parts.length - 1];
  if (v.parts.length > 2) return last;
  const lhs = v.parts[0];
  if (labelOf(lhs, v.srcs[0]) !== null) return last;
  if (isConstant(lhs) && isConstant(last)) return last;
  return v;
}

export function compare(gold: Value, pred: Value, o: CompareOptions): Verdict {
  // relations: unwrap assignments when only one side is a relation
  if (gold.t === "rel" || pred.t === "rel") {
    if (gold.t === "rel" && pred.t === "rel") return compareRelations(gold, pred, o);
    if (gold.t === "rel") {
      const iv = toInterval(gold);
      if (iv && (pred.t === "interval" || (pred.t === "list" && pred.kind === "tuple" && pred.items.length === 2))) return compare(iv, pred, o);
      const g = answerOf(gold);
      return g === gold ? no("structure", "the reference is an equation or inequality; the answer is not") : compare(g, pred, o);
    }
    const p = answerOf(pred as Value);
    if (p === pred) {
      const iv = toInterval(pred as Extract<Value, { t: "rel" }>);
      const pairLike = gold.t === "interval" || (gold.t === "list" && gold.kind === "tuple" && gold.items.length === 2);
      if (iv && pairLike && o.allowSetRelation) return compare(gold, iv, o);
      return no("structure", "the answer is an equation or inequality; the reference is not");
    }
    return compare(gold, p, o);
  }

  if (gold.t === "list" || pred.t === "list") {
    if (gold.t === "list" && pred.t === "list") return compareLists(gold, pred, o);
    if (gold.t === "interval" && pred.t === "list" && pred.kind === "tuple" && pred.items.length === 2 && gold.loOpen && gold.hiOpen) {
      return compareAll([gold.lo, gold.hi], pred.items, o);
    }
    if (gold.t === "list" && gold.kind === "tuple" && gold.items.length === 2 && pred.t === "interval" && pred.loOpen && pred.hiOpen) {
      return compareAll(gold.items, [pred.lo, pred.hi], o);
    }
    if (pred.t === "list" && gold.t !== "text") return no("structure", `the answer lists ${pred.items.length} values; the reference is one`);
    if (gold.t === "list") return no("structure", `the reference has ${gold.items.length} values; the answer gives one`);
  }

  if (gold.t === "interval") {
    if (pred.t !== "interval") return no("structure", "the reference is an interval; the answer is not");
    if (gold.loOpen !== pred.loOpen || gold.hiOpen !== pred.hiOpen) return no("structure", "interval ends differ in openness");
    return compareAll([gold.lo, gold.hi], [pred.lo, pred.hi], o);
  }
  if (gold.t === "union") {
    if (pred.t !== "union") return no("structure", "the reference is a union; the answer is not");
    return compareSets(gold.items, pred.items, o);
  }
  if (gold.t === "matrix") {
    if (pred.t !== "matrix") return no("structure", "the reference is a matrix; the answer is not");
    if (gold.rows.length !== pred.rows.length || gold.rows.some((r, i) => r.length !== pred.rows[i].length)) return no("structure", "matrix shapes differ");
    return compareAll(gold.rows.flat(), pred.rows.flat(), o);
  }
  if (gold.t === "text" || pred.t === "text") {
    const a = gold.t === "text" ? gold.s : (gold as { src?: string }).src ?? "";
    const b = pred.t === "text" ? pred.s : (pred as { src?: string }).src ?? "";
    return a.toLowerCase() === b.toLowerCase() && a !== "" ? yes("string") : no("string", "the text differs");
  }
  if (gold.t === "expr" && pred.t === "expr") return compareScalars(gold.e, pred.e, o);
  return no("structure", `a ${pred.t} cannot equal a ${gold.t}`);
}

/** Every pair in order; the weakest method that decided is reported. */
function compareAll(gs: Value[], ps: Value[], o: CompareOptions): Verdict {
  if (gs.length !== ps.length) return no("structure", `${ps.length} values where ${gs.length} are expected`);
  let method: Method = "exact";
  const rank: Method[] = ["string", "exact", "structure", "symbolic", "numeric"];
  for (let i = 0; i < gs.length; i++) {
    const v = compare(gs[i], ps[i], o);
    if (!v.equal) return { ...v, why: `item ${i + 1}: ${v.why}` };
    if (rank.indexOf(v.method) > rank.indexOf(method)) method = v.method;
  }
  return yes(method);
}

/** Set equality: each reference value is matched by some answer value and vice versa. */
function compareSets(gs: Value[], ps: Value[], o: CompareOptions): Verdict {
  let method: Method = "exact";
  const matched = new Array(ps.length).fill(false);
  for (const g of gs) {
    let hit = -1;
    for (let j = 0; j < ps.length && hit < 0; j++) {
      const v = compare(g, ps[j], o);
      if (v.equal) { hit = j; if (v.method === "numeric" || v.method === "symbolic") method = v.method; }
    }
    if (hit < 0) return no("structure", "a reference value is missing from the answer");
    matched[hit] = true;
    for (let j = 0; j < ps.length; j++) if (!matched[j] && compare(g, ps[j], o).equal) matched[j] = true;
  }
  const extra = matched.indexOf(false);
  if (extra >= 0) {
    // a repeated answer value is fine; a value the reference lacks is not
    if (!gs.some((g) => compare(g, ps[extra], o).equal)) return no("structure", "the answer has a value the reference lacks");
  }
  return yes(method);
}

type ListValue = Extract<Value, { t: "list" }>;

function allLabelled(v: ListValue): string[] | null {
  const labels: string[] = [];
  for (const x of v.items) {
    if (x.t !== "rel" || x.ops.length !== 1 || x.ops[0] !== "=") return null;
    const l = labelOf(x.parts[0], x.srcs[0]);
    if (l === null) return null;
    labels.push(l);
  }
  return new Set(labels).size === labels.length ? labels : null;
}

function compareLists(g: ListValue, p: ListValue, o: CompareOptions): Verdict {
  if (g.kind === "ratio" || p.kind === "ratio") {
    if (g.kind !== p.kind) return no("structure", "a ratio against a non-ratio");
    return compareAll(g.items, p.items, o);
  }
  const gl = allLabelled(g), pl = allLabelled(p);
  if (gl && !pl && p.kind !== "set") return compareAll(g.items, p.items, o); // x=1, y=2 vs 1, 2
  if (pl && !gl && g.kind !== "set") return compareAll(g.items, p.items, o);
  if (g.kind === "tuple" || p.kind === "tuple") {
    if (g.kind === "set" || p.kind === "set") return no("structure", "a tuple against a set");
    return compareAll(g.items, p.items, o);
  }
  return compareSets(g.items, p.items, o);
}

type RelValue = Extract<Value, { t: "rel" }>;

/** `a < x < b`, `x >= a` as an interval over a labelled middle. */
function toInterval(v: RelValue): Extract<Value, { t: "interval" }> | null {
  const inf = (sign: 1 | -1): Value => ({ t: "expr", e: sign > 0 ? "PositiveInfinity" : "NegativeInfinity", src: "" });
  if (v.parts.length === 3 && labelOf(v.parts[1], v.srcs[1]) !== null) {
    const [a, b] = v.ops;
    if ((a === "<" || a === "<=") && (b === "<" || b === "<=")) return { t: "interval", lo: v.parts[0], hi: v.parts[2], loOpen: a === "<", hiOpen: b === "<" };
    if ((a === ">" || a === ">=") && (b === ">" || b === ">=")) return { t: "interval", lo: v.parts[2], hi: v.parts[0], loOpen: b === ">", hiOpen: a === ">" };
  }
  if (v.parts.length === 2) {
    const [l, r] = v.parts, op = v.ops[0];
    if (labelOf(l, v.srcs[0]) !== null && isConstant(r)) {
      if (op === "<" || op === "<=") return { t: "interval", lo: inf(-1), hi: r, loOpen: true, hiOpen: op === "<" };
      if (op === ">" || op === ">=") return { t: "interval", lo: r, hi: inf(1), loOpen: op === ">", hiOpen: true };
    }
  }
  return null;
}

function compareRelations(g: RelValue, p: RelValue, o: CompareOptions): Verdict {
  // assignment chains: compare first lhs with last rhs (x = 5+5+1 = 11)
  const squash = (v: RelValue): RelValue =>
    v.ops.length > 1 && v.ops.every((x) => x === "=") ? { t: "rel", ops: ["="], parts: [v.parts[0], v.parts[v.parts.length - 1]], srcs: [v.srcs[0], v.srcs[v.srcs.length - 1]] } : v;
  g = squash(g); p = squash(p);
  if (g.ops.length === 1 && p.ops.length === 1) {
    const gop = g.ops[0], pop = p.ops[0];
    if (gop === "=" && pop === "=") {
      const gl = labelOf(g.parts[0], g.srcs[0]), pl = labelOf(p.parts[0], p.srcs[0]);
      if (gl !== null && gl === pl) return compare(g.parts[1], p.parts[1], o);
      if (gl !== null && pl !== null && !(g.parts[1].t === "expr" && p.parts[1].t === "expr")) return no("structure", `answers for ${pl}, not ${gl}`);
    }
    const eqLike = (x: RelOp) => x === "=" || x === "!=";
    if (eqLike(gop) !== eqLike(pop)) return no("structure", "an equation against an inequality");
    if (eqLike(gop)) {
      if (gop !== pop) return no("structure", "= against ≠");
      return proportional(g, p, o, "any");
    }
    const strict = (x: RelOp) => x === "<" || x === ">";
    if (strict(gop) !== strict(pop)) return no("structure", "strict against non-strict inequality");
    // normalise to lhs - rhs < 0 (or <= 0)
    return proportional(g, p, o, "positive");
  }
  const gi = toInterval(g), pi = toInterval(p);
  if (gi && pi) return compare(gi, pi, o);
  if (g.ops.length !== p.ops.length || g.ops.some((x, i) => x !== p.ops[i])) return no("structure", "the relations differ");
  return compareAll(g.parts, p.parts, o);
}

/** lhs - rhs of both relations differ by a constant factor (positive for inequalities). */
function proportional(g: RelValue, p: RelValue, o: CompareOptions, sign: "any" | "positive"): Verdict {
  const [gl, gr] = g.parts, [pl, pr] = p.parts;
  if (gl.t !== "expr" || gr.t !== "expr" || pl.t !== "expr" || pr.t !== "expr") {
    if (g.ops[0] === p.ops[0]) return compareAll(g.parts, p.parts, o);
    return no("structure", "the relations differ");
  }
  const flip = (op: RelOp) => op === ">" || op === ">=";
  const dg: Expr = flip(g.ops[0]) ? ["Subtract", gr.e, gl.e] : ["Subtract", gl.e, gr.e];
  const dp: Expr = flip(p.ops[0]) ? ["Subtract", pr.e, pl.e] : ["Subtract", pl.e, pr.e];
  if (JSON.stringify(dg) === JSON.stringify(dp)) return yes("symbolic");
  const vars = [...new Set([...freeVars(dg), ...freeVars(dp)])];
  const rnd = mulberry32(o.seed);
  let ratio: number | null = null, ok = 0;
  for (let tries = 0; tries < 40 && ok < 8; tries++) {
    const env = new Map(vars.map((v) => [v, point(rnd)]));
    const a = evalFloat(dg, env), b = evalFloat(dp, env);
    if (!Number.isFinite(a) || !Number.isFinite(b)) continue;
    if (Math.abs(b) < 1e-12) { if (Math.abs(a) < 1e-12) continue; return no("numeric", "the relations differ at a sample point"); }
    const r = a / b;
    if (ratio === null) ratio = r;
    else if (!close(r, ratio, 1e-8)) return no("numeric", "the relations differ at a sample point");
    ok++;
  }
  if (ratio === null || ok < 3) return canonicalSame(dg, dp) ? yes("symbolic") : no("numeric", "could not evaluate the relations");
  if (Math.abs(ratio) < 1e-12) return no("numeric", "degenerate relation");
  if (sign === "positive" && ratio < 0) return no("numeric", "the inequality points the other way");
  return yes("numeric");
}

function close(a: number, b: number, tol: number): boolean {
  if (a === b) return true;
  return Math.abs(a - b) <= tol * Math.max(1, Math.abs(a), Math.abs(b));
}

export function mulberry32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Sample points away from 0 and from small integers, where identities fail by accident. */
function point(rnd: () => number): number {
  const v = 0.13 + rnd() * 2.7;
  return rnd() < 0.3 ? -v : v;
}

function roundsEqual(a: number, b: number, places: number): boolean {
  const ra = R.parseDecimal(a.toFixed(Math.min(places + 4, 20))), rb = R.parseDecimal(b.toFixed(Math.min(places + 4, 20)));
  if (!ra || !rb) return close(a, b, 10 ** -places);
  return R.eq(R.roundTo(ra, places), R.roundTo(rb, places));
}

/** Largest pair of trees (in nodes) handed to compute-engine's simplify(). */
const SYMBOLIC_MAX_SIZE = 120;

export function compareScalars(g: Expr, p: Expr, o: CompareOptions): Verdict {
  const decimal = hasDecimal(g) || hasDecimal(p);
  const gx = evalExact(g), px = evalExact(p);
  if (gx && px) {
    if (R.eq(gx, px)) return yes("exact");
    if (decimal && o.precision !== undefined && R.eq(R.roundTo(gx, o.precision), R.roundTo(px, o.precision))) return yes("numeric");
    return no("exact", `${R.show(px)} ≠ ${R.show(gx)}`);
  }
  const vars = [...new Set([...freeVars(g), ...freeVars(p)])];
  // symbolic, cheapest first: identical trees, then compute-engine's canonical forms
  if (JSON.stringify(g) === JSON.stringify(p)) return yes("symbolic");
  const canonical = () => size(g) + size(p) < 400 && canonicalSame(g, p);
  if (vars.length === 0) {
    const a = evalFloat(g, new Map()), b = evalFloat(p, new Map());
    if (!Number.isFinite(a) || !Number.isFinite(b)) {
      // Two floats that are both Infinity say nothing: 1/0, 10^{400} and e^{1001} overflow to the
      // same Infinity as \infty. Only a symbolic check may call such values equal.
      if (canonical()) return yes("symbolic");
      // complex or unknown to our evaluator (e^{i\pi}): ask compute-engine
      if (size(g) + size(p) < SYMBOLIC_MAX_SIZE && symbolicZero(g, p)) return yes("symbolic");
      return no("numeric", "the value could not be evaluated");
    }
    if (decimal && o.precision !== undefined) return roundsEqual(a, b, o.precision) ? yes("numeric") : no("numeric", `${b} ≠ ${a} to ${o.precision} places`);
    // without a precision option a decimal must be the value itself, up to float rounding:
    // 0.5\sqrt{2} is \frac{\sqrt{2}}{2}, but 1.41421356237 is not \sqrt{2}
    return close(a, b, decimal ? 1e-14 : 1e-10) ? yes("numeric") : no("numeric", `${b} ≠ ${a}`);
  }
  // free variables: when the trees are not the same ("unknown"), seeded random points decide,
  // of both signs (|x| is not x). Points where one side is undefined are skipped (domains of
  // ln(3x) - ln x and ln 3 differ). compute-engine's canonical form and simplify() (1-40 ms a
  // call) are the last resort, for trees the points cannot evaluate.
  const rnd = mulberry32(o.seed);
  let ok = 0;
  const tol = decimal ? (o.precision !== undefined ? 10 ** -o.precision : 1e-12) : 1e-9;
  for (let tries = 0; tries < 60 && ok < 8; tries++) {
    const env = new Map(vars.map((v) => [v, point(rnd)]));
    const a = evalFloat(g, env), b = evalFloat(p, env);
    if (Number.isNaN(a) || Number.isNaN(b)) continue;
    if (!Number.isFinite(a) || !Number.isFinite(b)) continue; // overflow or a pole: no evidence either way
    if (!close(a, b, tol)) return no("numeric", "differs at a sample point");
    ok++;
  }
  if (ok >= 4) return yes("numeric");
  if (canonical()) return yes("symbolic");
  if (size(g) + size(p) < SYMBOLIC_MAX_SIZE && symbolicZero(g, p)) return yes("symbolic");
  return no("numeric", "could not evaluate the expressions");
}
