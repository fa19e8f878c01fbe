/**
 * Open-addressing hash map from non-negative integer keys (< 2^53) to non-negative int32 values,
 * in typed arrays: the overlap verifiers' n-gram tables (verifiers/overlap/ngrams.ts) and the
 * suffix automaton's transitions (verifiers/patch/suffix-automaton.ts), both keyed by
 * `id · alphabet + symbol`. Sized once for `expected` keys at load <= 1/2; it never grows, so a
 * caller never stores more than `expected` keys. Keys below 2^31 (the usual case) use Int32Array
 * slots, larger ones Float64Array; `maxKey` says which.
 */
export class IntMap {
  private readonly keys32: Int32Array;
  private readonly keys64: Float64Array;
  private readonly vals: Int32Array;
  private readonly mask: number;
  private readonly wide: boolean;

  constructor(expected: number, maxKey: number) {
    this.wide = maxKey >= 0x7fffffff;
    let cap = 16;
    while (cap < expected * 2) cap *= 2;
    this.keys32 = this.wide ? new Int32Array(0) : new Int32Array(cap).fill(-1);
    this.keys64 = this.wide ? new Float64Array(cap).fill(-1) : new Float64Array(0);
    this.vals = new Int32Array(cap);
    this.mask = cap - 1;
  }

  /** The slot holding `key`, or the empty one where it would go (linear probing). */
  private slot(key: number): number {
    if (!this.wide) {
      const keys = this.keys32;
      let h = Math.imul(key, 0x9e3779b1);
      h ^= h >>> 15;
      for (let i = h & this.mask; ; i = (i + 1) & this.mask) {
        const k = keys[i];
        if (k === key || k === -1) return i;
      }
    }
    const keys = this.keys64;
    const lo = key >>> 0, hi = (key / 4294967296) >>> 0;
    let h = Math.imul(lo ^ Math.imul(hi, 0x27d4eb2d), 0x9e3779b1);
    h ^= h >>> 15;
    for (let i = h & this.mask; ; i = (i + 1) & this.mask) {
      const k = keys[i];
      if (k === key || k === -1) return i;
    }
  }

  /** The value of `key`, or -1 when it is absent. */
  get(key: number): number {
    if (!this.wide && key >= 0x7fffffff) return -1; // never stored in an Int32Array table
    const i = this.slot(key);
    return (this.wide ? this.keys64[i] : this.keys32[i]) === key ? this.vals[i] : -1;
  }

  /** Stores `val` for `key`, replacing any value it had. */
  set(key: number, val: number): void {
    const i = this.slot(key);
    if (this.wide) this.keys64[i] = key;
    else this.keys32[i] = key;
    this.vals[i] = val;
  }

  /** The value of `key` when present; else stores `val` for it and returns -1 (one probe). */
  getOrSet(key: number, val: number): number {
    const i = this.slot(key);
    if (this.wide) {
      if (this.keys64[i] === key) return this.vals[i];
      this.keys64[i] = key;
    } else {
      if (this.keys32[i] === key) return this.vals[i];
      this.keys32[i] = key;
    }
    this.vals[i] = val;
    return -1;
  }
}
