/**
 * N-gram counting over integer ids, shared by BLEU, chrF and ROUGE.
 *
 * Each distinct symbol (token or character) gets a small integer id; each distinct n-gram gets an
 * id from the id of its (n−1)-gram prefix and its last symbol (`prefix·A + symbol`, exact while
 * below 2^53, which holds for any input these verifiers accept), kept in an open-addressing table
 * of typed arrays instead of building a string per n-gram: the same counts, several times faster.
 * References are indexed once and cached, since a GRPO group scores many completions against one.
 */
import { IntMap } from "../../src/core/int-map.js";
import { slices } from "../../src/core/slices.js";

/** Dense ids 0, 1, 2, ... for n-gram keys (< 2^53), in first-seen order (src/core/int-map.ts). */
class IdTable {
  private readonly map: IntMap;
  size = 0;

  /** Room for `expected` distinct keys, each below `maxKey`. */
  constructor(expected: number, maxKey: number) {
    this.map = new IntMap(expected, maxKey);
  }

  id(key: number): number {
    const had = this.map.getOrSet(key, this.size);
    return had >= 0 ? had : this.size++;
  }

  /** The id of `key`, or -1 when it was never added (adds nothing). */
  get(key: number): number {
    return this.map.get(key);
  }
}

/**
 * The references' n-grams, indexed once and reused for every hypothesis scored against them (a
 * GRPO group scores many completions against one reference). Hypothesis n-grams are looked up
 * without being added: one that no reference has gets id -1, which can never match.
 */
export class RefIndex {
  /** refIds[r][n-1][i]: id of reference r's n-gram at i. */
  readonly refIds: Int32Array[][];
  /** distinct[n-1]: number of ids of order n. */
  readonly distinct: number[];
  /** Zeroed scratch counts per order (returned zeroed by `overlap`/`overlapMax`). */
  readonly scratch: Int32Array[];
  readonly scratch2: Int32Array[];
  private readonly tables: (IdTable | null)[];


  constructor(refSeqs: ArrayLike<number>[], alphabet: number, maxOrder: number) {
    const built = runSync(RefIndex.build(refSeqs, alphabet, maxOrder));
    this.alphabet = built.alphabet;
    this.maxOrder = built.maxOrder;
    this.tables = built.tables;
    this.refIds = built.refIds;
    this.distinct = built.distinct;
    this.scratch = built.scratch;
    this.scratch2 = built.scratch2;
  }
  private readonly alphabet: number;
  private readonly maxOrder: number;

  /** The index, built as Work: it yields every YIELD_EVERY symbols (see runSliced). */
  static *build(refSeqs: ArrayLike<number>[], alphabet: number, maxOrder: number): Work<RefIndex> {
    const A = Math.max(alphabet, 1);
    let total = 0;
    for (const seq of refSeqs) total += seq.length;
    // One table an order, a turn between: each is two typed arrays of twice `total` slots (16 MB
    // for 16 references of 50K characters), all of them at once were 0.2 s in one block.
    const tables: (IdTable | null)[] = [];
    for (let i = 0; i < maxOrder; i++) {
      tables.push(i === 0 ? null : new IdTable(total, (total + 1) * A));
      yield;
    }
    const refIds: Int32Array[][] = [];
    for (const seq of refSeqs) {
      const out: Int32Array[] = [];
      for (let n = 1; n <= maxOrder; n++) {
        const len = Math.max(0, seq.length - n + 1);
        const cur = new Int32Array(len);
        if (n === 1) for (let i = 0; i < len; i++) cur[i] = seq[i];
        else {
          const prev = out[n - 2], table = tables[n - 1]!;
          for (let i = 0; i < len; i++) {
            cur[i] = table.id(prev[i] * A + seq[i + n - 1]);
            if ((i & YIELD_MASK) === YIELD_MASK) yield;
          }
        }
        out.push(cur);
        yield;
      }
      refIds.push(out);
    }
    const distinct = tables.map((t) => (t === null ? A : t.size));
    const index: RefIndex = Object.create(RefIndex.prototype);
    Object.assign(index, {
      alphabet, maxOrder, tables, refIds, distinct,
      scratch: distinct.map((d) => new Int32Array(d)),
      scratch2: distinct.map((d) => new Int32Array(d)),
    });
    return index;
  }

  /** Ids of a hypothesis' n-grams (symbols: ids in the references' alphabet, -1 for unknown). */
  lookup(hyp: ArrayLike<number>): Int32Array[] {
    return runSync(this.lookupWork(hyp));
  }

  /** `lookup` as Work. */
  *lookupWork(hyp: ArrayLike<number>): Work<Int32Array[]> {
    const A = Math.max(this.alphabet, 1);
    const out: Int32Array[] = [];
    for (let n = 1; n <= this.maxOrder; n++) {
      const len = Math.max(0, hyp.length - n + 1);
      const cur = new Int32Array(len);
      if (n === 1) for (let i = 0; i < len; i++) cur[i] = hyp[i];
      else {
        const prev = out[n - 2], table = this.tables[n - 1]!;
        for (let i = 0; i < len; i++) {
          const p = prev[i], c = hyp[i + n - 1];
          cur[i] = p < 0 || c < 0 ? -1 : table.get(p * A + c);
          if ((i & YIELD_MASK) === YIELD_MASK) yield;
        }
      }
      out.push(cur);
      yield;
    }
    return out;
  }
}

/**
 * Work that may be cut into slices: a generator that yields wherever the event loop may be let
 * run (after at most YIELD_MASK + 1 symbols of work), and returns its result. `runSync` runs it
 * in one go (the same result as before it was cut), `runSliced` lets the event loop turn once a
 * slice has run its milliseconds: sentence scores against 16 references of 60K characters, or a
 * 1 MB hypothesis, were 0.5-2 s in one block.
 */
export type Work<T> = Generator<void, T, void>;
export const YIELD_MASK = 0x3fff;
export function runSync<T>(w: Work<T>): T {
  for (;;) {
    const r = w.next();
    if (r.done) return r.value;
  }
}
export async function runSliced<T>(w: Work<T>, ms = 15): Promise<T> {
  const slice = slices(ms);
  for (;;) {
    const r = w.next();
    if (r.done) return r.value;
    const p = slice.pause();
    if (p) await p;
  }
}

/** Maps each of `xs` by `f` as Work. */
export function* mapWork<A, B>(xs: readonly A[], f: (x: A) => B): Work<B[]> {
  const out = new Array<B>(xs.length);
  for (let i = 0; i < xs.length; i++) {
    out[i] = f(xs[i]!);
    if ((i & YIELD_MASK) === YIELD_MASK) yield;
  }
  return out;
}

/**
 * `text` cut into pieces of about `size` characters, each ending right before a character for
 * which `cut(code)` holds (or at the end of the text).
 */
export function* piecesOf(text: string, cut: (c: number) => boolean, size = 16_384): Generator<string, void, void> {
  for (let from = 0; from < text.length; ) {
    let to = Math.min(text.length, from + size);
    while (to < text.length && !cut(text.charCodeAt(to))) to++;
    yield text.slice(from, to);
    from = to;
  }
}

export class RefCache<T> {
  private readonly entries = new Map<string, T>();
  constructor(private readonly max = 64, private readonly maxChars = 50_000) {}
  get(settings: string, refs: string[], make: () => T): T {
    return runSync(this.getWork(settings, refs, function* () { return make(); }));
  }

  /** `get` as Work. */
  *getWork(settings: string, refs: string[], make: () => Work<T>): Work<T> {
    let chars = 0;
    for (const r of refs) chars += r.length;
    if (chars > this.maxChars) return yield* make(); // big references: not kept
    const key = settings + "\u0000" + JSON.stringify(refs);
    let v = this.entries.get(key);
    if (v !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, v);
      return v;
    }
    v = yield* make();
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, v);
    return v;
  }
}

/**
 * Clipped overlap statistics of `hyp` against `ref` (id lists of one order): the hypothesis
 * count, the reference count and Σ min(hyp count, ref count) over n-grams. `scratch` is a
 * zeroed Int32Array of at least `distinct` entries, returned zeroed.
 */
export function overlap(hyp: Int32Array, ref: Int32Array, scratch: Int32Array): number {
  for (let i = 0; i < ref.length; i++) scratch[ref[i]]++;
  let match = 0;
  for (let i = 0; i < hyp.length; i++) {
    const id = hyp[i];
    if (id >= 0 && scratch[id] > 0) { scratch[id]--; match++; }
  }
  for (let i = 0; i < ref.length; i++) scratch[ref[i]] = 0;
  return match;
}

/**
 * Σ over n-grams of min(hyp count, max over refs of the ref's count): BLEU's clipped matches
 * with several references. `a` and `b` are zeroed scratch arrays, returned zeroed.
 */
export function overlapMax(hyp: Int32Array, refs: Int32Array[], a: Int32Array, b: Int32Array): number {
  for (const ref of refs) {
    for (let i = 0; i < ref.length; i++) b[ref[i]]++;
    for (let i = 0; i < ref.length; i++) { const id = ref[i]; if (b[id] > a[id]) a[id] = b[id]; }
    for (let i = 0; i < ref.length; i++) b[ref[i]] = 0;
  }
  let match = 0;
  for (let i = 0; i < hyp.length; i++) {
    const id = hyp[i];
    if (id >= 0 && a[id] > 0) { a[id]--; match++; }
  }
  for (const ref of refs) for (let i = 0; i < ref.length; i++) a[ref[i]] = 0;
  return match;
}
