/**
 * Field-wise comparison of a JSON answer with the expected JSON, with partial credit.
 *
 * Credit is counted in leaves of the expected value (a primitive, or an empty array/object, is
 * one leaf): `matched` of `total`. Objects compare key by key (a missing key earns nothing),
 * arrays position by position or, unordered, by the pairing of elements that earns the most
 * (equal elements paired first through a hash multiset, the Hungarian algorithm for the
 * rest). Every answer element beyond the expected array's length adds one to `total`; extra
 * object keys add to it when penalised. A step budget bounds the work.
 */
import { munkres } from "munkres";

export interface CompareOptions {
  unordered_arrays: boolean;
  abs_tol: number;
  rel_tol: number;
  case_sensitive: boolean;
  trim_strings: boolean;
  extra: "ignore" | "penalize";
  max_steps: number;
}

export interface Credit {
  matched: number;
  total: number;
}

export class CompareBudgetExceeded extends Error {}

/** Options under which two values compare equal only when they are the same JSON value. */
export const EXACT: CompareOptions = { unordered_arrays: false, abs_tol: 0, rel_tol: 0, case_sensitive: true, trim_strings: false, extra: "ignore", max_steps: Infinity };

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const isObject = (v: unknown): v is Record<string, Json> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Number of leaves of an expected value. */
export function leaves(v: Json): number {
  if (Array.isArray(v)) return v.length ? v.reduce<number>((s, x) => s + leaves(x), 0) : 1;
  if (isObject(v)) {
    const ks = Object.keys(v);
    return ks.length ? ks.reduce((s, k) => s + leaves(v[k]), 0) : 1;
  }
  return 1;
}

export class Comparer {
  private steps = 0;
  constructor(private readonly o: CompareOptions) {}

  private tick(n = 1) {
    this.steps += n;
    if (this.steps > this.o.max_steps) throw new CompareBudgetExceeded(`comparison needs more than ${this.o.max_steps} steps`);
  }

  private primitive(e: Json, a: unknown): boolean {
    if (typeof e === "number") {
      if (typeof a !== "number") return false;
      return Math.abs(a - e) <= Math.max(this.o.abs_tol, this.o.rel_tol * Math.abs(e));
    }
    if (typeof e === "string") {
      if (typeof a !== "string") return false;
      let x = e, y = a;
      if (this.o.trim_strings) { x = x.trim(); y = y.trim(); }
      if (!this.o.case_sensitive) { x = x.toLowerCase(); y = y.toLowerCase(); }
      return x === y;
    }
    return e === a; // booleans and null
  }

  compare(e: Json, a: unknown): Credit {
    this.tick();
    if (Array.isArray(e)) {
      if (!Array.isArray(a)) return { matched: 0, total: leaves(e) };
      if (!e.length) return { matched: a.length === 0 ? 1 : 0, total: 1 + a.length }; // extra elements always count
      return this.o.unordered_arrays ? this.unordered(e, a) : this.ordered(e, a);
    }
    if (isObject(e)) {
      if (!isObject(a)) return { matched: 0, total: leaves(e) };
      const keys = Object.keys(e);
      let extra = 0;
      if (this.o.extra === "penalize") for (const k of Object.keys(a)) if (!Object.prototype.hasOwnProperty.call(e, k)) extra++;
      if (!keys.length) return { matched: Object.keys(a).length === 0 ? 1 : 0, total: 1 + extra };
      let matched = 0, total = extra;
      for (const k of keys) {
        if (Object.prototype.hasOwnProperty.call(a, k)) {
          const c = this.compare(e[k], a[k]);
          matched += c.matched;
          total += c.total;
        } else total += leaves(e[k]);
      }
      return { matched, total };
    }
    return { matched: this.primitive(e, a) ? 1 : 0, total: 1 };
  }

  private ordered(e: Json[], a: unknown[]): Credit {
    let matched = 0, total = 0;
    e.forEach((x, i) => {
      if (i < a.length) {
        const c = this.compare(x, a[i]);
        matched += c.matched;
        total += c.total;
      } else total += leaves(x);
    });
    if (a.length > e.length) total += a.length - e.length; // extra elements always count
    return { matched, total };
  }

  /**
   * A canonical text of `v` (object keys sorted, strings normalised as `primitive` compares
   * them, elements of nested arrays sorted since they compare unordered too): two elements with
   * the same key compare as fully equal, and alike with any third. Null when `v` holds a number
   * and numbers match within a tolerance: "within tolerance" is not transitive, so such elements
   * are left to the optimal assignment. Ticks once per node. Under EXACT it is JSON's own
   * equality (the schema's uniqueItems, in index.ts).
   */
  key(v: unknown): string | null {
    this.tick();
    if (typeof v === "string") {
      let x = v;
      if (this.o.trim_strings) x = x.trim();
      if (!this.o.case_sensitive) x = x.toLowerCase();
      return JSON.stringify(x);
    }
    if (typeof v === "number") return this.o.abs_tol === 0 && this.o.rel_tol === 0 ? JSON.stringify(v) : null;
    if (v === null || typeof v === "boolean") return String(v);
    if (Array.isArray(v)) {
      const parts: string[] = [];
      for (const x of v) {
        const k = this.key(x);
        if (k === null) return null;
        parts.push(k);
      }
      // Unordered, every nested array compares as a multiset: its key is too.
      if (this.o.unordered_arrays) parts.sort();
      return `[${parts.join(",")}]`;
    }
    if (typeof v === "object") {
      const o = v as Record<string, unknown>;
      const parts: string[] = [];
      for (const k of Object.keys(o).sort()) {
        const kv = this.key(o[k]);
        if (kv === null) return null;
        parts.push(`${JSON.stringify(k)}:${kv}`);
      }
      return `{${parts.join(",")}}`;
    }
    return null;
  }

  /**
   * The pairing of elements that earns the most credit. Elements with the same `key` are
   * paired first, in one pass through a hash multiset: pairing an expected element with an
   * answer element equal to it earns all of its leaves and never lowers the best total (the
   * credit any element loses between two answers is at most what they differ by, since exact
   * matching is transitive; with a tolerance it is not, hence no key for numbers then). The
   * Hungarian algorithm then pairs what is left, each pair compared once.
   */
  private unordered(e: Json[], a: unknown[]): Credit {
    let matched = 0, total = 0;
    const free = new Map<string, number[]>();
    for (let j = a.length - 1; j >= 0; j--) {
      const k = this.key(a[j]);
      if (k === null) continue;
      const js = free.get(k);
      if (js) js.push(j);
      else free.set(k, [j]);
    }
    const paired = new Uint8Array(a.length);
    const restE: number[] = [];
    e.forEach((x, i) => {
      const k = this.key(x);
      const j = k === null ? undefined : free.get(k)?.pop();
      if (j === undefined) { restE.push(i); return; }
      paired[j] = 1;
      const n = leaves(x);
      matched += n;
      total += n;
    });
    const restA: number[] = [];
    for (let j = 0; j < a.length; j++) if (!paired[j]) restA.push(j);
    for (const i of restE) total += leaves(e[i]);
    if (restE.length && restA.length) {
      // Every pair below costs at least one step: refuse before doing any of them.
      if (this.steps + restE.length * restA.length > this.o.max_steps) {
        throw new CompareBudgetExceeded(`comparison needs more than ${this.o.max_steps} steps (${restE.length} × ${restA.length} unpaired array elements)`);
      }
      const credit = restE.map((i) => restA.map((j) => this.compare(e[i], a[j])));
      let top = 0;
      for (const row of credit) for (const c of row) top = Math.max(top, c.matched);
      for (const [r, q] of munkres(credit.map((row) => row.map((c) => top - c.matched)))) {
        const c = credit[r][q];
        matched += c.matched;
        total += c.total - leaves(e[restE[r]]); // a paired element may add extras
      }
    }
    if (a.length > e.length) total += a.length - e.length; // extra elements always count
    return { matched, total };
  }
}
