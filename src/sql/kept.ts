/**
 * Gold results kept in a SQLite process (sqlite-worker.ts) for the model queries sent after them
 * (issue 35: the cold path's gold rows stay in the process that ran them, and the server holds
 * only how many there are; a model result is digested against them there, and only on a mismatch
 * do the gold's rows go to the server). An LRU bounded in bytes and in entries.
 */
import type { Cell } from "./types.js";

/**
 * Gold results kept for the model's query sent after them (QueryTask.keep, digest.of), by
 * database, version and text, with their digests by rule: least recently used first out, at most
 * KEPT_BYTES of rows in all (each at most KEEP_BYTES) and KEPT entries.
 */
export const KEEP_BYTES = 1 << 20;
export const KEPT_BYTES = 16 << 20;
export const KEPT = 1_024;
/** A gold that ran longer than this (ms) is not left only here: its rows go back to the server. */
export const STAY_MS = 20;

export interface KeptGold {
  rows: Cell[][];
  bytes: number;
  /** Its rows are here only (the server holds its digest, not its rows). */
  stayed: boolean;
  digests: Map<string, string>;
}

/** Kept gold results, bounded in entries and in bytes (each entry's rows as sizeOf counts them, plus its key). */
export class KeptGolds {
  private readonly map = new Map<string, KeptGold>();
  bytes = 0;
  constructor(readonly maxBytes = KEPT_BYTES, readonly maxEntries = KEPT) {}
  get size(): number {
    return this.map.size;
  }
  private static cost(key: string, k: KeptGold): number {
    return k.bytes + key.length * 2 + 64;
  }
  get(key: string): KeptGold | undefined {
    const k = this.map.get(key);
    if (k) {
      this.map.delete(key); // LRU: re-insert at the end
      this.map.set(key, k);
    }
    return k;
  }
  /** Keeps it when it fits at all (one entry at most KEEP_BYTES), evicting the least recently used. */
  set(key: string, k: KeptGold): boolean {
    const old = this.map.get(key);
    if (old) {
      this.map.delete(key);
      this.bytes -= KeptGolds.cost(key, old);
    }
    const c = KeptGolds.cost(key, k);
    if (k.bytes > KEEP_BYTES || c > this.maxBytes) return false;
    this.map.set(key, k);
    this.bytes += c;
    for (const [ek, ev] of this.map) {
      if (this.bytes <= this.maxBytes && this.map.size <= this.maxEntries) break;
      this.map.delete(ek);
      this.bytes -= KeptGolds.cost(ek, ev);
    }
    return true;
  }
}
