/**
 * Do two query results denote the same answer? The rules of the two evaluators text-to-SQL work
 * reports against:
 *
 * - BIRD (evaluation.py): `set(predicted_res) == set(ground_truth_res)`: rows as tuples, column
 *   order significant, duplicates and row order ignored.
 * - Spider test-suite (taoyds/test-suite-sql-eval, exec_eval.py `result_eq`): bag semantics
 *   (duplicates count), row order significant when the gold query has ORDER BY, and columns
 *   matched up to a permutation (a query that selects `age, name` for `name, age` is right).
 *
 * Values compare as Python compares them in both: 1 == 1.0, NULL == NULL (None == None),
 * '1' != 1, text is case-sensitive. Non-integer numbers are rounded to `floatDigits`
 * significant digits first (0 = exact, as both evaluators do).
 *
 * The comparison runs on the server's event loop, in bounded slices: its work is a generator
 * that pauses every few hundred rows, and `compareResults` hands the loop back (setImmediate)
 * once a slice has run SLICE_MS, so an 8,000-row result never holds other requests for long.
 * A small result finishes within its first slice and never waits. `compareResultsSync` runs the
 * same work in one go (a single-process evaluator, the benchmark).
 */
import { bigIntDigits, type Cell } from "../../src/sql/types.js";

export interface CompareOptions {
  /** "set": duplicates ignored (BIRD); "bag": duplicates count (Spider test-suite). */
  rows: "set" | "bag";
  /** Rows must appear in the same order. */
  ordered: boolean;
  /** "any": columns may come in another order (Spider test-suite); "strict": same order (BIRD). */
  columnOrder: "any" | "strict";
  /** Significant digits non-integer numbers are rounded to before comparing; 0 compares exactly. */
  floatDigits: number;
}

export interface Comparison {
  match: boolean;
  reason: string;
  /** For a match with columnOrder "any": gold column i is the model's column permutation[i]. */
  permutation?: number[];
}

/**
 * Column assignments verified at most, when several columns hold values that no signature tells
 * apart and yet are not the same column (rare: real results that tie are duplicated columns).
 */
export const MAX_ASSIGNMENTS = 16;

/** Projections of the rows onto the columns placed so far, checked at most while pairing tied columns. */
const PROJECTION_BUDGET = 256;

/** Refinement rounds of the column signatures (each splits ties the one before left). */
const ROUNDS = 3;

/** Time a slice of comparison work may hold the event loop before it yields (ms). */
export const SLICE_MS = 8;

/** Comparison work: pauses (yields) at checkpoints; the driver decides whether to hand the loop back there. */
type Work<T> = Generator<void, T, unknown>;

/** Items (rows) between checkpoints. */
const STRIDE = 256;

/** `xs.map(f)`, pausing every STRIDE items. */
function* mapRows<T, U>(xs: readonly T[], f: (x: T, i: number) => U): Work<U[]> {
  const n = xs.length;
  const out = new Array<U>(n);
  for (let i = 0; i < n; i++) {
    if (i % STRIDE === STRIDE - 1) yield;
    out[i] = f(xs[i], i);
  }
  return out;
}

/** Runs comparison work to the end in one go. */
function runSync<T>(w: Work<T>): T {
  for (;;) {
    const s = w.next();
    if (s.done) return s.value;
  }
}

/** Runs comparison work in slices of at most about SLICE_MS, yielding to the event loop between them. */
async function runSliced<T>(w: Work<T>): Promise<T> {
  let t0 = performance.now();
  for (;;) {
    const s = w.next();
    if (s.done) return s.value;
    if (performance.now() - t0 >= SLICE_MS) {
      await new Promise<void>((r) => setImmediate(r));
      t0 = performance.now();
    }
  }
}

/** 2^53: every double at or past it is an integer, written here by its exact digits. */
const EXACT_FROM = 2 ** 53;

/**
 * A value's comparison key: equal keys exactly when the values are equal under the rules above.
 * Integers compare exactly, as Python compares int and float: an integer beyond 2^53 (an exact
 * INT_TAG cell) and a double are written by their exact digits, so 2^63-1 differs from the
 * double 2^63 and from 2^63-2, and 2^62 as an integer equals 2^62 as a real.
 */
export function cellKey(c: Cell, floatDigits: number): string {
  if (c === null) return "N";
  if (typeof c === "number") {
    if (Number.isFinite(c) && Math.abs(c) >= EXACT_FROM) return `n${BigInt(c)}`;
    if (Number.isInteger(c) || !Number.isFinite(c) || floatDigits <= 0) return `n${c === 0 ? 0 : c}`;
    return `n${Number(c.toPrecision(floatDigits))}`;
  }
  const digits = bigIntDigits(c);
  return digits === null ? `s${c}` : `n${digits}`;
}

/** Row key from cell keys, in the order given by `perm` (length-prefixed, so no separator can collide). */
function rowKey(keys: string[], perm: number[] | null): string {
  let s = "";
  const n = keys.length;
  for (let i = 0; i < n; i++) {
    const k = keys[perm ? perm[i] : i];
    s += `${k.length}:${k}`;
  }
  return s;
}

function* sameCollection(gold: string[], pred: string[], o: CompareOptions): Work<boolean> {
  if (o.ordered) {
    if (gold.length !== pred.length) return false;
    for (let i = 0; i < gold.length; i++) {
      if (i % STRIDE === STRIDE - 1) yield;
      if (gold[i] !== pred[i]) return false;
    }
    return true;
  }
  if (o.rows === "set") {
    const g = new Set<string>();
    const p = new Set<string>();
    for (let i = 0; i < gold.length; i++) {
      if (i % STRIDE === STRIDE - 1) yield;
      g.add(gold[i]);
    }
    for (let i = 0; i < pred.length; i++) {
      if (i % STRIDE === STRIDE - 1) yield;
      p.add(pred[i]);
    }
    if (g.size !== p.size) return false;
    let i = 0;
    for (const k of p) {
      if (i++ % STRIDE === STRIDE - 1) yield;
      if (!g.has(k)) return false;
    }
    return true;
  }
  if (gold.length !== pred.length) return false;
  const g = new Map<string, number>();
  for (let i = 0; i < gold.length; i++) {
    if (i % STRIDE === STRIDE - 1) yield;
    g.set(gold[i], (g.get(gold[i]) ?? 0) + 1);
  }
  for (let i = 0; i < pred.length; i++) {
    if (i % STRIDE === STRIDE - 1) yield;
    const n = g.get(pred[i]);
    if (!n) return false;
    g.set(pred[i], n - 1);
  }
  return true;
}

/**
 * Compares on the event loop in bounded slices (at most about SLICE_MS each, then the loop runs
 * whatever else waits); a result that fits in one slice never waits.
 */
export function compareResults(gold: Cell[][], pred: Cell[][], o: CompareOptions): Promise<Comparison> {
  return runSliced(compare(gold, pred, o));
}

/** The same comparison in one go, holding the thread until done. */
export function compareResultsSync(gold: Cell[][], pred: Cell[][], o: CompareOptions): Comparison {
  return runSync(compare(gold, pred, o));
}

function* compare(gold: Cell[][], pred: Cell[][], o: CompareOptions): Work<Comparison> {
  // Both evaluators call two empty results equal whatever their columns.
  if (gold.length === 0 && pred.length === 0) return { match: true, reason: "both results are empty" };
  if (gold.length === 0 || pred.length === 0) {
    return { match: false, reason: gold.length === 0 ? `gold result is empty, model's has ${pred.length} rows` : `model's result is empty, gold has ${gold.length} rows` };
  }
  const ncols = gold[0].length;
  if (pred[0].length !== ncols) return { match: false, reason: `different number of columns: model ${pred[0].length}, gold ${ncols}` };
  if (o.rows === "bag" || o.ordered) {
    if (gold.length !== pred.length) return { match: false, reason: `different number of rows: model ${pred.length}, gold ${gold.length}` };
  }
  const keys = (r: Cell[]) => r.map((c) => cellKey(c, o.floatDigits));
  const gk = yield* mapRows(gold, keys);
  const pk = yield* mapRows(pred, keys);

  if (o.columnOrder === "strict") {
    const plain = (r: string[]) => rowKey(r, null);
    const ok = yield* sameCollection(yield* mapRows(gk, plain), yield* mapRows(pk, plain), o);
    return ok ? { match: true, reason: matchReason(o, gold.length) } : { match: false, reason: yield* mismatchReason(gk, pk, o, null) };
  }

  // Quick rejection (exec_eval.py quick_rej): rows with their values sorted must already agree.
  const sortedKey = (r: string[]) => rowKey([...r].sort(), null);
  if (!(yield* sameCollection(yield* mapRows(gk, sortedKey), yield* mapRows(pk, sortedKey), o))) return { match: false, reason: yield* mismatchReason(gk, pk, o, null) };

  const m = yield* matchColumns(gk, pk, o);
  if (m.perm) {
    const p = m.perm;
    const identity = p.every((v, i) => v === i);
    return { match: true, reason: matchReason(o, gold.length) + (identity ? "" : " (columns in another order)"), permutation: identity ? undefined : p };
  }
  if (m.exhausted) return { match: false, reason: `columns holding the same values could not be paired within ${MAX_ASSIGNMENTS} checks (scored as a mismatch)` };
  // quick rejection passed: every row's values agree, yet no one column order makes the rows equal
  return { match: false, reason: "each row holds the gold's values, but no one column order matches every row" };
}

/** Interns strings as small integers. */
class Ids {
  private readonly m = new Map<string, number>();
  id(s: string): number {
    let v = this.m.get(s);
    if (v === undefined) this.m.set(s, (v = this.m.size));
    return v;
  }
  get size(): number {
    return this.m.size;
  }
}

/**
 * The column order under which the model's rows equal the gold's, found without searching over
 * orders. Each column gets a signature that any valid pairing must preserve: with ordered rows,
 * its values in row order; otherwise the multiset of (value, the row's class) pairs, where a row's
 * class starts as its values sorted (what quick rejection compares) and is refined from the
 * column signatures a few rounds. Gold and model columns are paired class by class, ties in index
 * order (so a result in the gold's order keeps the identity); that one assignment is verified
 * against all rows. Only when a class holds columns with different contents are further
 * assignments tried, at most MAX_ASSIGNMENTS in all. Cost: O(rows x columns x log rows) for the
 * signatures plus at most MAX_ASSIGNMENTS verifications of O(rows x columns), whatever the number
 * of column orders.
 */
function* matchColumns(gk: string[][], pk: string[][], o: CompareOptions): Work<{ perm: number[] | null; exhausted: boolean }> {
  const no = { perm: null, exhausted: false };
  const ncols = gk[0].length;
  const values = new Ids();
  const valueIds = (r: string[]) => r.map((k) => values.id(k));
  let g = yield* mapRows(gk, valueIds);
  let p = yield* mapRows(pk, valueIds);
  if (!o.ordered && o.rows === "set") {
    // distinct rows stay distinct under any column order: compare the distinct rows as bags
    const distinct = function* (rows: number[][]): Work<number[][]> {
      const seen = new Set<string>();
      const out: number[][] = [];
      for (let i = 0; i < rows.length; i++) {
        if (i % STRIDE === STRIDE - 1) yield;
        const k = rows[i].join(",");
        if (!seen.has(k)) (seen.add(k), out.push(rows[i]));
      }
      return out;
    };
    g = yield* distinct(g);
    p = yield* distinct(p);
    if (g.length !== p.length) return no;
  }
  const nrows = g.length;

  // column classes, shared by both sides
  const colIds = new Ids();
  /** `f(c)` for every column, pausing after each (a column's work is O(rows log rows)). */
  const perColumn = function* <T>(f: (c: number) => T): Work<T[]> {
    const out = new Array<T>(ncols);
    for (let c = 0; c < ncols; c++) {
      out[c] = f(c);
      yield;
    }
    return out;
  };
  let gCol: number[];
  let pCol: number[];
  if (o.ordered) {
    const seq = (rows: number[][], c: number) => rows.map((r) => r[c]).join(",");
    gCol = yield* perColumn((c) => colIds.id(seq(g, c)));
    pCol = yield* perColumn((c) => colIds.id(seq(p, c)));
  } else {
    const rowIds = new Ids();
    const sortedRow = (r: number[]) => rowIds.id([...r].sort((a, b) => a - b).join(","));
    let gRow = yield* mapRows(g, sortedRow);
    let pRow = yield* mapRows(p, sortedRow);
    let nRowClasses = rowIds.size;
    const sig = (rows: number[][], rowClass: number[], c: number, classes: Ids) => {
      if (Number.isSafeInteger(values.size * nRowClasses)) {
        const a = new Float64Array(nrows);
        for (let r = 0; r < nrows; r++) a[r] = rows[r][c] * nRowClasses + rowClass[r];
        return classes.id(a.sort().join(","));
      }
      return classes.id(rows.map((row, r) => `${row[c]}:${rowClass[r]}`).sort().join(","));
    };
    for (let round = 0; ; round++) {
      const ids = new Ids();
      const gr = gRow;
      const pr = pRow;
      gCol = yield* perColumn((c) => sig(g, gr, c, ids));
      pCol = yield* perColumn((c) => sig(p, pr, c, ids));
      if (new Set(gCol).size === ncols || round + 1 >= ROUNDS) break; // no ties left, or enough rounds
      // refine the rows: a row's class is now its (column class, value) pairs, sorted
      const refined = new Ids();
      const rowSig = (r: number[], cols: number[]) => refined.id(r.map((v, c) => `${cols[c]}:${v}`).sort().join(","));
      const gc = gCol;
      const pc = pCol;
      gRow = yield* mapRows(g, (r) => rowSig(r, gc));
      pRow = yield* mapRows(p, (r) => rowSig(r, pc));
      nRowClasses = refined.size;
    }
  }
  gCol = gCol!;
  pCol = pCol!;

  // pair the classes: each must hold as many model columns as gold ones
  const byClass = new Map<number, { gold: number[]; model: number[] }>();
  for (let c = 0; c < ncols; c++) {
    let e = byClass.get(gCol[c]);
    if (!e) byClass.set(gCol[c], (e = { gold: [], model: [] }));
    e.gold.push(c);
  }
  for (let c = 0; c < ncols; c++) {
    const e = byClass.get(pCol[c]);
    if (!e) return no;
    e.model.push(c);
  }
  for (const e of byClass.values()) if (e.model.length !== e.gold.length) return no;

  const perm = new Array<number>(ncols).fill(-1);
  const tied: number[] = [];
  for (const e of byClass.values()) {
    if (e.gold.length === 1) perm[e.gold[0]] = e.model[0];
    else tied.push(...e.gold);
  }
  const goldRows = yield* mapRows(g, (r) => r.join(","));
  const bag: CompareOptions = { ...o, rows: "bag" };
  const verify = function* (): Work<boolean> {
    return yield* sameCollection(goldRows, yield* mapRows(p, (r) => perm.map((c) => r[c]).join(",")), bag);
  };
  if (!tied.length) return (yield* verify()) ? { perm, exhausted: false } : no;

  // Tied classes (columns no signature told apart): a depth-first pairing, gold columns in index
  // order, each trying its class's unused model columns in index order (one per distinct content:
  // identical columns are interchangeable), pruned by projections (the rows cut down to the
  // columns placed so far must agree as a multiset, as they do under any right order). Bounded:
  // at most MAX_ASSIGNMENTS full verifications and PROJECTION_BUDGET projections (past it, only
  // verification decides), whatever the number of orders.
  tied.sort((x, y) => x - y);
  const contents = new Ids();
  const content = yield* perColumn((c) => contents.id(p.map((r) => r[c]).join(",")));
  let projectionsLeft = PROJECTION_BUDGET;
  let verifications = 0;
  let exhausted = false;
  const placed = () => perm.flatMap((m, c) => (m >= 0 ? [c] : []));
  /** Whether gold and model rows agree on the placed columns (hashed; a collision only prunes less). */
  const projectionsAgree = function* (): Work<boolean> {
    if (projectionsLeft-- <= 0) return true;
    const cols = placed();
    const counts = new Map<number, number>();
    const hash = (r: number[], map: (c: number) => number) => {
      let h1 = 0x811c9dc5;
      let h2 = 0x01000193;
      for (const c of cols) {
        const v = r[map(c)] + 1;
        h1 = Math.imul(h1 ^ v, 0x01000193);
        h2 = Math.imul(h2 + v, 0x5bd1e995) ^ (h2 >>> 15);
      }
      return (h1 >>> 0) * 0x200000 + (h2 & 0x1fffff);
    };
    for (let i = 0; i < g.length; i++) {
      if (i % STRIDE === STRIDE - 1) yield;
      const h = hash(g[i], (c) => c);
      counts.set(h, (counts.get(h) ?? 0) + 1);
    }
    for (let i = 0; i < p.length; i++) {
      if (i % STRIDE === STRIDE - 1) yield;
      const h = hash(p[i], (c) => perm[c]);
      const n = counts.get(h);
      if (!n) return false;
      counts.set(h, n - 1);
    }
    return true;
  };
  const used = new Array<boolean>(ncols).fill(false);
  for (let c = 0; c < ncols; c++) if (perm[c] >= 0) used[perm[c]] = true;
  const dfs = function* (t: number): Work<boolean> {
    if (t === tied.length) {
      if (verifications++ >= MAX_ASSIGNMENTS) {
        exhausted = true;
        return false;
      }
      return yield* verify();
    }
    const gc = tied[t];
    const seen = new Set<number>();
    for (const mc of byClass.get(gCol[gc])!.model) {
      if (used[mc] || seen.has(content[mc])) continue;
      seen.add(content[mc]);
      perm[gc] = mc;
      used[mc] = true;
      if ((t + 1 === tied.length || (yield* projectionsAgree())) && (yield* dfs(t + 1))) return true;
      perm[gc] = -1;
      used[mc] = false;
      if (exhausted) return false;
    }
    return false;
  };
  if (yield* dfs(0)) return { perm, exhausted: false };
  return { perm: null, exhausted };
}


function matchReason(o: CompareOptions, n: number): string {
  return `results match (${o.ordered ? "ordered" : o.rows}, ${n} row${n === 1 ? "" : "s"})`;
}

function* mismatchReason(gk: string[][], pk: string[][], o: CompareOptions, perm: number[] | null): Work<string> {
  const key = (r: string[]) => rowKey(o.columnOrder === "any" ? [...r].sort() : r, perm);
  if (o.ordered) {
    // same rows, wrong order?
    const un = { ...o, ordered: false };
    if (yield* sameCollection(yield* mapRows(gk, key), yield* mapRows(pk, key), un)) return "same rows in a different order (the gold query has ORDER BY)";
  }
  if (o.rows === "bag") {
    const asSet = { ...o, rows: "set" as const, ordered: false };
    if (yield* sameCollection(yield* mapRows(gk, key), yield* mapRows(pk, key), asSet)) return "same distinct rows, different duplicates";
  }
  return "different rows";
}
