/**
 * Compares a parsed completion answer against a parsed reference, by the reference's type.
 * Asymmetric on purpose: the reference decides the shape; a completion that lists several
 * values never matches a single reference value.
 */
import type { Value, RelOp } from "./parse.js";
import { canonicalSame, symbolicZero, relationInterval, setOfCondition } from "./parse.js";
import { evalExact, evalFloat, freeVars, hasDecimal, literalPlaces, size, writtenPlaces, type Expr } from "./expr.js";
import * as R from "./rational.js";
import { labelPosition, type PromptHints } from "./prompt.js";

export type Method = "string" | "exact" | "symbolic" | "numeric" | "structure";

export interface CompareOptions {
  /** Decimal places to which a decimal answer is compared (unset: exact). */
  precision?: number;
  /** Seed of the random points for numeric tests. */
  seed: number;
  /** A reference interval also accepts an inequality in the completion. */
  allowSetRelation: boolean;
  /** Set inside a `\\approx` reference: its decimal is a rounding of any value, not only of a rational. */
  rounded?: boolean;
  /** What the item's prompt asks for (labels' order, a range, a percentage, all solutions). */
  prompt?: PromptHints;
}

/** `note`: on an acceptance, the rule that made it (said in the reason). */
export interface Verdict { equal: boolean; method: Method; why?: string; note?: string }

const yes = (method: Method): Verdict => ({ equal: true, method });
const no = (method: Method, why: string): Verdict => ({ equal: false, method, why });

/** The label of `lhs = rhs` when lhs names the answer: `x`, `f(x)`, `a_3`, `(p,q)`, `|AB|`, `A:B`. */
export function labelOf(v: Value, src: string): string | null {
  if (v.t === "text") return v.s; // `Minimum: 1`
  const s = src.replace(/\s+/g, "");
  if (v.t === "expr") {
    const e = v.e;
    if (typeof e === "string") return s;
    // no number in it: `x`, `xy`, and a sum of letters (`m+n = 17`, the AIME form)
    if (Array.isArray(e) && !hasNumber(e)) return s;
    if (Array.isArray(e) && /^[a-zA-Z](?:_\{?\w+\}?)?(?:\^\{?-1\}?)?\([a-z,]+\)$|^\\?[a-zA-Z]+_\{?\w+\}?$/.test(s)) return s;
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
  // rounded values: an answer `\sqrt2 \approx 1.41` is its exact part; a reference `\sqrt2 \approx
  // 1.414` accepts its exact part, or any value that rounds to its decimal
  if (pred.t === "approx") return compare(gold, pred.exact ?? pred.approx, o);
  if (gold.t === "approx") {
    if (gold.exact) {
      const v = compare(gold.exact, pred, o);
      if (v.equal) return v;
    }
    return compare(gold.approx, pred, { ...o, rounded: true });
  }

  // inequalities joined by "or" (`x < -1 \text{ or } x > 2`) are the union of their intervals,
  // against an answer written as intervals (two lists of inequalities compare as lists)
  const gu = unionOfConditions(gold);
  if (gu && (pred.t === "union" || pred.t === "interval")) return compare(gu, pred, o);
  const pu = unionOfConditions(pred);
  if (pu && o.allowSetRelation && (gold.t === "union" || gold.t === "interval")) return compare(gold, pu, o);

  // relations: unwrap assignments when only one side is a relation
  if (gold.t === "rel" || pred.t === "rel") {
    if (gold.t === "rel" && pred.t === "rel") return compareRelations(gold, pred, o);
    if (gold.t === "rel") {
      const iv = toInterval(gold);
      if (iv && (pred.t === "interval" || (pred.t === "list" && pred.kind === "tuple" && pred.items.length === 2))) return compare(iv, pred, o);
      const g = answerOf(gold);
      if (g === gold) return no("structure", "the reference is an equation or inequality; the answer is not");
      return compare(g, renamed(pred, boundVariable(gold), g), o);
    }
    const p = answerOf(pred as Value);
    if (p === pred) {
      const iv = toInterval(pred as Extract<Value, { t: "rel" }>);
      const pairLike = gold.t === "interval" || (gold.t === "list" && gold.kind === "tuple" && gold.items.length === 2);
      if (iv && pairLike && o.allowSetRelation) return compare(gold, iv, o);
      return no("structure", "the answer is an equation or inequality; the reference is not");
    }
    return compare(gold, renamed(p, boundVariable(pred as Extract<Value, { t: "rel" }>), gold), o);
  }

  // a ratio is the quotient of its two terms: 3:2 is 3/2 is 1.5
  if (gold.t === "list" && gold.kind === "ratio" && gold.items.length === 2 && pred.t === "expr") return compare(quotient(gold), pred, o);
  if (pred.t === "list" && pred.kind === "ratio" && pred.items.length === 2 && gold.t === "expr") return compare(gold, quotient(pred), o);

  // a row or column vector is the tuple of its entries: (1, 2, 3), ⟨1, 2, 3⟩
  const gv = vectorOf(gold), pv = vectorOf(pred);
  if (gv && pred.t === "list" && pred.kind === "tuple") return compareAll(gv, pred.items, o);
  if (pv && gold.t === "list" && gold.kind === "tuple") return compareAll(gold.items, pv, o);

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
  if (gold.t === "expr" && pred.t === "expr") return compareUnits(gold, pred, o);
  return no("structure", `a ${pred.t} cannot equal a ${gold.t}`);
}

type ExprValue = Extract<Value, { t: "expr" }>;

/**
 * Two values, one written with a degree or percent sign the other lacks: equal as written
 * (`90^\circ` and 90, `28\%` and 28), or after converting the marked one (`120^\circ` is 2π/3,
 * `25\%` is 0.25). Without any sign, 50 is never 0.5.
 */
function compareUnits(g: ExprValue, p: ExprValue, o: CompareOptions): Verdict {
  p = renameParameter(g, p);
  const v = undecidedOnImplicit(g, p, compareScalars(g.e, p.e, o));
  if (v.equal || g.unit === p.unit) return v;
  const conv = (x: ExprValue): Expr => (x.unit === "pct" ? ["Divide", x.e, { num: "100" }] : x.unit === "deg" ? ["Divide", ["Multiply", x.e, "Pi"], { num: "180" }] : x.e);
  const w = compareScalars(conv(g), conv(p), o);
  if (w.equal) return p.unit === "pct" && w.method === "numeric" && o.precision !== undefined ? { ...w, note: `a percentage, to ${o.precision} places (the precision option)` } : w;
  // a percentage where the prompt asks for one: read to the places it is written (41.4% is
  // √2 − 1 to the tenth of a percent); 42% or 41.5% is not
  if (p.unit === "pct" && g.unit === undefined && o.prompt?.percent) {
    const places = writtenPlaces(p.e) ?? 0;
    const a = evalFloat(g.e, new Map()), b = evalFloat(conv(p), new Map());
    if (Number.isFinite(a) && Number.isFinite(b) && roundsEqual(a, b, places + 2)) {
      return { equal: true, method: "numeric", note: `the prompt asks for a percentage: ${places ? `${places} decimal place${places > 1 ? "s" : ""} of a percent` : "a whole percent"}, as written` };
    }
  }
  return v;
}

/**
 * A numeric disproof rests on how both sides were read. A letter before a bracket read as a
 * product (`a(b+c)`) may have been meant as a function: when the points say "differs", only a
 * symbolic proof decides, and otherwise the verdict is "undecided" (0 with that reason).
 */
function undecidedOnImplicit(g: ExprValue, p: ExprValue, v: Verdict): Verdict {
  if (v.equal || v.method !== "numeric" || v.why !== "differs at a sample point") return v;
  const letter = p.implicit ?? g.implicit;
  if (letter === undefined) return v;
  if (size(g.e) + size(p.e) < SYMBOLIC_MAX_SIZE && symbolicZero(g.e, p.e)) return yes("symbolic");
  return no("numeric", `undecided: \`${letter}(…)\` was read as a product, which the writer may not have meant, and no numeric disproof rests on a reading that may be wrong`);
}

const PARAMETERS = ["k", "n", "m"];
/**
 * The integer parameter of a family renamed: `2m\pi` against `2k\pi`. Only when each side has
 * one of k, n, m that the other lacks, and both hold π (a periodic family), so that `n^2` is
 * never read as `k^2`.
 */
function renameParameter(g: ExprValue, p: ExprValue): ExprValue {
  const gv = freeVars(g.e), pv = freeVars(p.e);
  const gp = PARAMETERS.filter((x) => gv.has(x)), pp = PARAMETERS.filter((x) => pv.has(x));
  if (gp.length !== 1 || pp.length !== 1 || gp[0] === pp[0] || gv.has(pp[0]) || pv.has(gp[0])) return p;
  if (!hasPi(g.e) || !hasPi(p.e)) return p;
  return { ...p, e: substitute(p.e, pp[0], gp[0]) };
}

function hasPi(e: Expr): boolean {
  return e === "Pi" || (Array.isArray(e) && e.slice(1).some(hasPi));
}

/** A bare list of inequalities in one variable (the "or" of them) as a union of intervals. */
function unionOfConditions(v: Value): Value | null {
  // (a point among them, `x = 3`, is the set {3})
  if (v.t !== "list" || v.kind !== "bare" || !v.items.every((x) => x.t === "rel" && x.ops.every((op) => op !== "!="))) return null;
  if (!v.items.some((x) => (x as RelValue).ops.some((op) => op !== "="))) return null;
  const names = new Set(v.items.flatMap((x) => (x as RelValue).parts.filter((p) => p.t === "expr" && typeof p.e === "string" && !/^(?:Pi|ExponentialE|\w*Infinity)$/.test(p.e)).map((p) => (p as ExprValue).e as string)));
  if (names.size !== 1) return null;
  return setOfCondition(v, [...names][0]);
}

function quotient(v: ListValue): Value {
  const [a, b] = v.items;
  if (a.t !== "expr" || b.t !== "expr") return v;
  return { t: "expr", e: ["Divide", a.e, b.e], src: v.src };
}

/** The entries of a one-row or one-column matrix of two or more entries. */
function vectorOf(v: Value): Value[] | null {
  if (v.t !== "matrix") return null;
  if (v.rows.length === 1 && v.rows[0].length >= 2) return v.rows[0];
  if (v.rows.length >= 2 && v.rows.every((r) => r.length === 1)) return v.rows.map((r) => r[0]);
  return null;
}

/** `t` of a function definition `g(t) = …`; null for anything else. */
function boundVariable(v: RelValue): string | null {
  if (v.ops.length !== 1 || v.ops[0] !== "=") return null;
  const m = /^\\?[a-zA-Z]+(?:_\{?\w+\}?)?(?:\^\{?-1\}?)?\(([a-zA-Z])\)$/.exec(v.srcs[0].replace(/\s+/g, ""));
  return m ? m[1] : null;
}

/**
 * `other` with its one variable renamed to the one variable of `body`, when one of the two is the
 * bound variable of a function definition: `3x+1` against `g(t) = 3t+1` is read as `3t+1`, and
 * the body `3t+1` of an answer `g(t) = 3t+1` against `3x+1` as `3x+1`. Each side must have
 * exactly one variable: `3x+y` is never renamed.
 */
function renamed(other: Value, bound: string | null, body: Value): Value {
  if (bound === null || other.t !== "expr" || body.t !== "expr") return other;
  const ov = [...freeVars(other.e)], bv = [...freeVars(body.e)];
  if (ov.length !== 1 || bv.length !== 1 || ov[0] === bv[0] || (bv[0] !== bound && ov[0] !== bound)) return other;
  return { ...other, e: substitute(other.e, ov[0], bv[0]) };
}

function substitute(e: Expr, from: string, to: string): Expr {
  if (e === from) return to;
  return Array.isArray(e) ? e.map((x, i) => (i === 0 ? x : substitute(x, from, to))) : e;
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
    const v = compareAll(g.items, p.items, o);
    // terms in the same proportion: 6:4 is 3:2 (each term over the first; never with a zero term:
    // 12:00 is not 1:00)
    const nonzero = (x: Value) => x.t === "expr" && evalFloat(x.e, new Map()) !== 0 && !Number.isNaN(evalFloat(x.e, new Map()));
    if (v.equal || g.items.length !== p.items.length || ![...g.items, ...p.items].every(nonzero)) return v;
    const over = (xs: Value[], i: number): Value => ({ t: "expr", e: ["Divide", (xs[i] as ExprValue).e, (xs[0] as ExprValue).e], src: "" });
    for (let i = 1; i < g.items.length; i++) if (!compare(over(g.items, i), over(p.items, i), o).equal) return v;
    return yes("exact");
  }
  const gl = allLabelled(g), pl = allLabelled(p);
  if (gl && !pl && p.kind !== "set") return compareAll(g.items, p.items, o); // x=1, y=2 vs 1, 2
  if (pl && !gl && g.kind !== "set") {
    // labels the prompt names are put in its order ("the smallest and the largest": gold 4, 9
    // against `largest = 9, smallest = 4`); otherwise written order, unless order is not
    // meaningful (the prompt asks for all solutions): then the values as a multiset
    const at = o.prompt ? pl.map((l) => labelPosition(o.prompt!, l)) : [];
    if (at.length && at.every((x) => x >= 0) && new Set(at).size === at.length && g.kind !== "tuple") {
      const order = at.map((x, i) => [x, i]).sort((a, b) => a[0] - b[0]).map(([, i]) => p.items[i]);
      return compareAll(g.items, order, o);
    }
    // (labels of one unknown only, x_1 and x_2: `x = 2, y = 1` names two unknowns, in order)
    const unknowns = new Set(pl.map((l) => l.replace(/_\{?\w+\}?$/, "")));
    if (o.prompt?.unordered && g.kind === "bare" && unknowns.size === 1) return compareSets(g.items, p.items, o);
    return compareAll(g.items, p.items, o);
  }
  if (g.kind === "tuple" || p.kind === "tuple") {
    if (g.kind === "set" || p.kind === "set") return no("structure", "a tuple against a set");
    return compareAll(g.items, p.items, o);
  }
  return compareSets(g.items, p.items, o);
}

type RelValue = Extract<Value, { t: "rel" }>;

/** `a < x < b`, `x >= a` as an interval over a labelled middle. */
function toInterval(v: RelValue): Extract<Value, { t: "interval" }> | null {
  return labelledInterval(v) ?? relationInterval(v);
}

function labelledInterval(v: RelValue): Extract<Value, { t: "interval" }> | null {
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
      // the same function under another bound variable: g(t) = 3t+1 and g(x) = 3x+1
      const gb = boundVariable(g), pb = boundVariable(p);
      if (gb !== null && pb !== null && gl !== null && pl !== null && gl.slice(0, gl.lastIndexOf("(")) === pl.slice(0, pl.lastIndexOf("("))) {
        return compare(g.parts[1], renamed(p.parts[1], gb, g.parts[1]), o);
      }
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
  const gDec = hasDecimal(g), pDec = hasDecimal(p);
  const decimal = gDec || pDec;
  const gx = evalExact(g), px = evalExact(p);
  if (gx && px) {
    if (R.eq(gx, px)) return yes("exact");
    // rounded numbers: see roundedMatch (a decimal answer to 6 places against an exact
    // reference, a decimal reference against the exact answer it rounds)
    const gPlaces = literalPlaces(g);
    if (decimal && R.roundedMatch(gx, px, gDec, gPlaces, pDec, o.precision)) return yes("numeric");
    // a decimal reference inside `\approx` is a rounding of a decimal answer too
    if (o.rounded && gPlaces !== null && pDec && R.eq(R.roundTo(px, gPlaces), gx)) return yes("numeric");
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
    // a decimal answer against an exact (irrational) reference: both to 6 places, as Math-Verify
    // (1.414214 is \sqrt2; 1.41 and 3.14 are not \sqrt2 and \pi)
    if (pDec && !gDec) return roundsEqual(a, b, R.DEFAULT_PLACES) ? yes("numeric") : no("numeric", `${b} ≠ ${a} to ${R.DEFAULT_PLACES} places`);
    // a decimal reference is a rounding of an irrational answer only inside `\approx`: a bare
    // 2.83 is not \sqrt 8 (a rational answer may round to it, see roundedMatch)
    const gPlaces = literalPlaces(g);
    if (o.rounded && gPlaces !== null) return roundsEqual(b, a, gPlaces) ? yes("numeric") : no("numeric", `${b} does not round to ${a}`);
    // otherwise a decimal must be the value itself, up to float rounding: 0.5\sqrt{2} is \frac{\sqrt{2}}{2}
    return close(a, b, decimal ? 1e-14 : 1e-10) ? yes("numeric") : no("numeric", `${b} ≠ ${a}`);
  }
  // free variables: when the trees are not the same ("unknown"), seeded random points decide,
  // of both signs (|x| is not x). Points where one side is undefined are skipped (domains of
  // ln(3x) - ln x and ln 3 differ). compute-engine's canonical form and simplify() (1-40 ms a
  // call) are the last resort, for trees the points cannot evaluate.
  const rnd = mulberry32(o.seed);
  let ok = 0;
  // a decimal answer against an exact reference is read to 6 places (or the precision option)
  const tol = decimal ? (o.precision !== undefined ? 10 ** -o.precision : pDec && !gDec ? 10 ** -R.DEFAULT_PLACES : 1e-12) : 1e-9;
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
