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
 * '1' != 1, text is case-sensitive. With `floatDigits` d > 0, two numbers that are not both
 * integers are equal when they differ by at most 10^-d of the larger in magnitude (float noise:
 * 0.1+0.2 for 0.3); two integers always compare exactly, and d = 0 compares every number
 * exactly, as both evaluators do (`goldNumbers`, `tolerantKey`).
 *
 * The comparison runs on the server's event loop, in bounded slices: its work is a generator
 * that pauses every few hundred rows, and `compareResults` hands the loop back (setImmediate)
 * once a slice has run SLICE_MS, so an 8,000-row result never holds other requests for long.
 * A small result finishes within its first slice and never waits. `compareResultsSync` runs the
 * same work in one go (a single-process evaluator, the benchmark).
 */
import { cellKey, resultDigest, rowKey, type DigestRule } from "../../src/sql/digest.js";
import type { Cell } from "../../src/sql/types.js";

export { cellKey };

export interface CompareOptions {
  /** "set": duplicates ignored (BIRD); "bag": duplicates count (Spider test-suite). */
  rows: "set" | "bag";
  /** Rows must appear in the same order. */
  ordered: boolean;
  /** "any": columns may come in another order (Spider test-suite); "strict": same order (BIRD). */
  columnOrder: "any" | "strict";
  /** Float tolerance: numbers (not both integers) within 10^-floatDigits of each other, relative, are equal; 0 compares exactly. */
  floatDigits: number;
}

export interface Comparison {
  match: boolean;
  reason: string;
  /** For a match with columnOrder "any": gold column i is the model's column permutation[i]. */
  permutation?: number[];
}

/**
 * Cells of colour-refinement work the column pairing may spend (each round touches every cell of
 * both results twice) before it gives up: about 1 s of CPU, reached only by results built to
 * defeat refinement (matchColumns).
 */
export const REFINE_BUDGET = 16_000_000;

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

/** The digest rule of a comparison (src/sql/digest.ts): what the model's result is digested under. */
export function digestRule(o: CompareOptions): DigestRule {
  return { rows: o.rows, ordered: o.ordered };
}

/** Gold digests, kept with the gold's rows array (the gold cache shares it) per rule: computed once a group. */
const goldDigestCache = new WeakMap<readonly Cell[][], Map<string, string>>();

/** The gold result's digest under `o` (src/sql/digest.ts resultDigest), computed once per rows array and rule. */
export function goldDigest(gold: Cell[][], o: CompareOptions): string {
  const rule = digestRule(o);
  const key = rule.ordered ? "ordered" : rule.rows;
  let byRule = goldDigestCache.get(gold);
  let d = byRule?.get(key);
  if (d === undefined) {
    d = resultDigest(gold, rule);
    if (!byRule) goldDigestCache.set(gold, (byRule = new Map()));
    byRule.set(key, d);
  }
  return d;
}

/**
 * The comparison's verdict on a model result whose digest equals the gold's (its rows were not
 * sent): the same as compareResults gives those rows, a match in the gold's column order.
 */
export function digestMatch(goldRows: number, predRows: number, o: CompareOptions): Comparison {
  return goldRows === 0 && predRows === 0 ? { match: true, reason: BOTH_EMPTY } : { match: true, reason: matchReason(o, goldRows) };
}

const BOTH_EMPTY = "both results are empty";

function* compare(gold: Cell[][], pred: Cell[][], o: CompareOptions): Work<Comparison> {
  // Both evaluators call two empty results equal whatever their columns.
  if (gold.length === 0 && pred.length === 0) return { match: true, reason: BOTH_EMPTY };
  if (gold.length === 0 || pred.length === 0) {
    return { match: false, reason: gold.length === 0 ? `gold result is empty, model's has ${pred.length} rows` : `model's result is empty, gold has ${gold.length} rows` };
  }
  const ncols = gold[0].length;
  if (pred[0].length !== ncols) return { match: false, reason: `different number of columns: model ${pred[0].length}, gold ${ncols}` };
  if (o.rows === "bag" || o.ordered) {
    if (gold.length !== pred.length) return { match: false, reason: `different number of rows: model ${pred.length}, gold ${gold.length}` };
  }
  const plain = (r: string[]) => rowKey(r, null);
  const tol = o.floatDigits > 0 ? 10 ** -o.floatDigits : 0;
  const { gk, gPlain, numbers } = yield* goldKeys(gold, tol);
  const keys = numbers ? (r: Cell[]) => r.map((c) => tolerantKey(c, numbers, tol)) : (r: Cell[]) => r.map((c) => cellKey(c));
  const pk = yield* mapRows(pred, keys);
  // The columns as they come first (strict order, and the common right answer under "any"):
  // one pass with hashed row keys, before any column pairing is tried.
  if (yield* sameCollection(gPlain, yield* mapRows(pk, plain), o)) return { match: true, reason: matchReason(o, gold.length) };
  if (o.columnOrder === "strict") return { match: false, reason: yield* mismatchReason(gk, pk, o, null) };

  // Quick rejection (exec_eval.py quick_rej): rows with their values sorted must already agree.
  const sortedKey = (r: string[]) => rowKey([...r].sort(), null);
  if (!(yield* sameCollection(yield* mapRows(gk, sortedKey), yield* mapRows(pk, sortedKey), o))) return { match: false, reason: yield* mismatchReason(gk, pk, o, null) };

  const m = yield* matchColumns(gk, pk, o);
  if (m.perm) {
    const p = m.perm;
    const identity = p.every((v, i) => v === i);
    return { match: true, reason: matchReason(o, gold.length) + (identity ? "" : " (columns in another order)"), permutation: identity ? undefined : p };
  }
  if (m.exhausted) return { match: false, reason: `columns holding the same values could not be paired within ${REFINE_BUDGET.toLocaleString("en")} cells of search (scored as a mismatch)` };
  // quick rejection passed: every row's values agree, yet no one column order makes the rows equal
  return { match: false, reason: "each row holds the gold's values, but no one column order matches every row" };
}

/**
 * A gold result's numbers under a float tolerance `tol` (10^-float_digits), in groups: sorted and
 * distinct, each in a group of numbers equal within the tolerance. Groups are formed from the
 * smallest number up: a number joins the current group when it is within `tol` of the group's
 * first (smallest) number, relative to the larger magnitude, and is not a second integer (two
 * integers are never equal unless they are the same number); so a group spans at most `tol`.
 * Every number of a group has the group's key (its smallest number's).
 */
interface GoldNumbers {
  sorted: Float64Array;
  /** The group of sorted[i]. */
  group: Int32Array;
  /** Each group's smallest and largest number, whether it holds an integer, and its key. */
  min: number[];
  max: number[];
  hasInt: boolean[];
  key: string[];
  /** Each number's position in `sorted`. */
  at: Map<number, number>;
}

/** a and b are within `tol` of each other, relative to the larger magnitude. */
const within = (a: number, b: number, tol: number) => Math.abs(a - b) <= tol * Math.max(Math.abs(a), Math.abs(b));

function goldNumbers(gold: Cell[][], tol: number): GoldNumbers {
  const seen = new Set<number>();
  for (const r of gold) for (const c of r) if (typeof c === "number" && Number.isFinite(c)) seen.add(c === 0 ? 0 : c);
  const sorted = Float64Array.from(seen).sort();
  const group = new Int32Array(sorted.length);
  const min: number[] = [];
  const max: number[] = [];
  const hasInt: boolean[] = [];
  const key: string[] = [];
  const at = new Map<number, number>();
  for (let i = 0; i < sorted.length; i++) {
    const v = sorted[i];
    const int = Number.isInteger(v);
    const g = min.length - 1;
    if (g >= 0 && within(v, min[g], tol) && !(int && hasInt[g])) {
      max[g] = v;
      hasInt[g] ||= int;
    } else {
      min.push(v);
      max.push(v);
      hasInt.push(int);
      key.push(cellKey(v));
    }
    group[i] = min.length - 1;
    at.set(v, i);
  }
  return { sorted, group, min, max, hasInt, key, at };
}

/**
 * The key of a value under a float tolerance `tol`, given the gold's numbers in groups
 * (goldNumbers): a gold number has its group's key; any other finite number the key of the group
 * of the nearest gold number below or above it (the nearer that qualifies) when it is within
 * `tol` of every number of that group (of its smallest and its largest) and is not an integer
 * where the group holds one (two integers compare exactly, however large); anything else its own
 * key. So a match found through these keys pairs every model number with a gold number within
 * the tolerance. O(log n) a number (binary search).
 */
export function tolerantKey(c: Cell, n: GoldNumbers, tol: number): string {
  if (typeof c !== "number" || !Number.isFinite(c)) return cellKey(c);
  const i = n.at.get(c === 0 ? 0 : c);
  if (i !== undefined) return n.key[n.group[i]];
  const a = n.sorted;
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < c) lo = mid + 1;
    else hi = mid;
  }
  const int = Number.isInteger(c);
  let best = -1;
  let bestGap = Infinity;
  for (let j = lo - 1; j <= lo; j++) {
    if (j < 0 || j >= a.length) continue;
    const g = n.group[j];
    const gap = Math.abs(a[j] - c);
    if (gap < bestGap && !(int && n.hasInt[g]) && within(c, n.min[g], tol) && within(c, n.max[g], tol)) {
      best = g;
      bestGap = gap;
    }
  }
  return best < 0 ? cellKey(c) : n.key[best];
}

/** The keys of a gold result's cells and rows under a float tolerance (0: exact), and its numbers in groups. */
type GoldKeys = { gk: string[][]; gPlain: string[]; numbers: GoldNumbers | null };

/**
 * A gold result's keys, per float tolerance, kept with the result (the gold cache hands every
 * item of a GRPO group the same rows array): computed once, not once per item.
 */
const goldKeyCache = new WeakMap<readonly Cell[][], Map<number, GoldKeys>>();

function* goldKeys(gold: Cell[][], tol: number): Work<GoldKeys> {
  let byTol = goldKeyCache.get(gold);
  const hit = byTol?.get(tol);
  if (hit) return hit;
  const numbers = tol > 0 ? goldNumbers(gold, tol) : null;
  const key = numbers ? (c: Cell) => tolerantKey(c, numbers, tol) : cellKey;
  const gk = yield* mapRows(gold, (r) => r.map((c) => key(c)));
  const gPlain = yield* mapRows(gk, (r) => rowKey(r, null));
  if (!byTol) goldKeyCache.set(gold, (byTol = new Map()));
  const v = { gk, gPlain, numbers };
  byTol.set(tol, v);
  return v;
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
 * The column order under which the model's rows equal the gold's, exactly: a match is found
 * whenever one exists, and a mismatch is only reported when none does.
 *
 * With ordered rows a column's signature is its values in row order: columns pair by equal
 * sequences, and columns with equal sequences are interchangeable (any pairing is right).
 *
 * Otherwise the rows are a bag (or a set) and the question is whether two 2-colored bipartite
 * structures (rows x columns, cells the values) are isomorphic with rows free and columns
 * permuted; it is answered by individualization-refinement, the method of graph-isomorphism
 * tools (McKay's nauty, bliss). Colour refinement: a row's colour becomes its old colour with the
 * multiset of (column colour, value) over its cells, a column's its old colour with the multiset
 * of (row colour, value) over its cells, computed for both results with shared colour names,
 * until no class splits; any right column order maps each gold column to a model column of the
 * same colour, so differing colour counts are a proof of mismatch. When columns are still tied,
 * the first tied gold column is individualised (a colour of its own) against each model column
 * of its class in turn (one per distinct content: identical columns are interchangeable), refined
 * again, and so on; when every column has its own colour the one pairing left is verified on all
 * rows. Every branch that could hold a right order is tried, so the answer is exact. Cost: a
 * refinement round is O(rows x columns x log rows); real results (and the symmetric ones in the
 * tests: Latin squares, orthogonal arrays, Paley graphs' incidence, the [8,4] Hamming code)
 * need a handful of branches, whatever their number of column orders. A result built to defeat
 * refinement (Cai-Fürer-Immerman-style) could need exponentially many branches: the search stops
 * after REFINE_BUDGET cells of refinement work and says so (scored 0 with that reason).
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
  /** `f(c)` for every column, pausing after each (a column's work is O(rows log rows)). */
  const perColumn = function* <T>(f: (c: number) => T): Work<T[]> {
    const out = new Array<T>(ncols);
    for (let c = 0; c < ncols; c++) {
      out[c] = f(c);
      yield;
    }
    return out;
  };
  const goldRows = yield* mapRows(g, (r) => r.join(","));
  const bag: CompareOptions = { ...o, rows: "bag" };
  /** Whether the model's rows, columns taken in `perm`'s order, are the gold's rows. */
  const verify = function* (perm: number[]): Work<boolean> {
    return yield* sameCollection(goldRows, yield* mapRows(p, (r) => perm.map((c) => r[c]).join(",")), bag);
  };
  /** Pairs gold and model columns of equal colour, ties in index order. */
  const pairUp = (gCol: number[], pCol: number[]): number[] | null => {
    const byColour = new Map<number, number[]>();
    for (let c = ncols - 1; c >= 0; c--) {
      const list = byColour.get(pCol[c]);
      if (list) list.push(c);
      else byColour.set(pCol[c], [c]);
    }
    const perm = new Array<number>(ncols);
    for (let c = 0; c < ncols; c++) {
      const m = byColour.get(gCol[c])?.pop();
      if (m === undefined) return null;
      perm[c] = m;
    }
    return perm;
  };

  if (o.ordered) {
    const colIds = new Ids();
    const seq = (rows: number[][], c: number) => rows.map((r) => r[c]).join(",");
    const gCol = yield* perColumn((c) => colIds.id(seq(g, c)));
    const pCol = yield* perColumn((c) => colIds.id(seq(p, c)));
    const perm = pairUp(gCol, pCol);
    return perm && (yield* verify(perm)) ? { perm, exhausted: false } : no;
  }

  let work = 0;
  let exhausted = false;
  const nvalues = values.size;
  /** One side's colouring: of its rows and of its columns. */
  type Colours = { rows: number[]; cols: number[] };
  /** Colour counts agree on both sides (a right order preserves them). */
  const sameCounts = (a: number[], b: number[]) => {
    const n = new Map<number, number>();
    for (const x of a) n.set(x, (n.get(x) ?? 0) + 1);
    for (const x of b) {
      const k = n.get(x);
      if (!k) return false;
      n.set(x, k - 1);
    }
    return true;
  };
  const classes = (a: number[], b: number[]) => new Set(a).size + new Set(b).size;
  /**
   * Refines both colourings together until stable. Returns false when they stop agreeing (no
   * right order extends the pairing so far) or when the work budget is spent.
   */
  const refine = function* (gc: Colours, pc: Colours): Work<boolean> {
    let before = classes(gc.rows, gc.cols);
    for (;;) {
      work += 2 * nrows * ncols;
      if (work > REFINE_BUDGET) {
        exhausted = true;
        return false;
      }
      // rows: (old colour, multiset of (column colour, value))
      const rowIds = new Ids();
      const ncolColours = Math.max(...gc.cols, ...pc.cols) + 2;
      const rowSig = (cols: number[], rows: number[][], colours: number[]) => (r: number[], i: number) => {
        const a = new Float64Array(ncols);
        for (let c = 0; c < ncols; c++) a[c] = r[c] * ncolColours + cols[c] + 1;
        return rowIds.id(`${colours[i]}|${a.sort().join(",")}`);
      };
      const gRows = yield* mapRows(g, rowSig(gc.cols, g, gc.rows));
      const pRows = yield* mapRows(p, rowSig(pc.cols, p, pc.rows));
      if (!sameCounts(gRows, pRows)) return false;
      // columns: (old colour, multiset of (row colour, value))
      const colIds = new Ids();
      const nrowColours = rowIds.size;
      const exact = Number.isSafeInteger(nvalues * nrowColours);
      const colSig = (rows: number[][], rowColours: number[], colours: number[]) => (c: number) => {
        if (exact) {
          const a = new Float64Array(nrows);
          for (let r = 0; r < nrows; r++) a[r] = rows[r][c] * nrowColours + rowColours[r];
          return colIds.id(`${colours[c]}|${a.sort().join(",")}`);
        }
        return colIds.id(`${colours[c]}|${rows.map((row, r) => `${row[c]}:${rowColours[r]}`).sort().join(",")}`);
      };
      const gCols = yield* perColumn(colSig(g, gRows, gc.cols));
      const pCols = yield* perColumn(colSig(p, pRows, pc.cols));
      if (!sameCounts(gCols, pCols)) return false;
      gc.rows = gRows;
      gc.cols = gCols;
      pc.rows = pRows;
      pc.cols = pCols;
      const after = classes(gRows, gCols);
      if (after === before) return true;
      before = after;
    }
  };
  const contents = new Ids();
  const content = yield* perColumn((c) => contents.id(p.map((r) => r[c]).join(",")));
  /** The search: refine; pair when every column has its own colour; else branch on the first tied gold column. */
  const search = function* (gc: Colours, pc: Colours): Work<number[] | null> {
    if (!(yield* refine(gc, pc))) return null;
    const size = new Map<number, number>();
    for (const c of gc.cols) size.set(c, (size.get(c) ?? 0) + 1);
    const a = gc.cols.findIndex((c) => size.get(c)! > 1);
    if (a < 0) {
      const perm = pairUp(gc.cols, pc.cols);
      return perm && (yield* verify(perm)) ? perm : null;
    }
    const seen = new Set<number>();
    const own = -1; // refinement names colours 0, 1, ...: -1 is nobody's
    for (let b = 0; b < ncols; b++) {
      if (pc.cols[b] !== gc.cols[a] || seen.has(content[b])) continue;
      seen.add(content[b]);
      const g2 = { rows: gc.rows, cols: gc.cols.map((x, c) => (c === a ? own : x)) };
      const p2 = { rows: pc.rows, cols: pc.cols.map((x, c) => (c === b ? own : x)) };
      const found = yield* search(g2, p2);
      if (found || exhausted) return found;
    }
    return null;
  };
  const zeros = (n: number) => new Array<number>(n).fill(0);
  const perm = yield* search({ rows: zeros(nrows), cols: zeros(ncols) }, { rows: zeros(nrows), cols: zeros(ncols) });
  return perm ? { perm, exhausted: false } : { perm: null, exhausted };
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
