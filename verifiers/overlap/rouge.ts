/**
 * ROUGE-N and ROUGE-L as Google's `rouge-score` package computes them (`RougeScorer.score`,
 * `score_multi`; Lin 2004): its default tokenizer (lowercase, every run of characters outside
 * [a-z0-9] becomes a space, optional Porter stemming of tokens longer than 3 characters),
 * clipped n-gram overlap for ROUGE-N, longest common subsequence for ROUGE-L, precision, recall
 * and F1 for each, and for several references the score with the best F-measure.
 *
 * The LCS is computed bit-parallel (Allison & Dix 1986, Hyyrö 2004): O(n·m/32) word operations
 * and O(distinct·m/32) memory instead of rouge-score's O(n·m) table; the length is the same.
 */
import { stemmer } from "stemmer";
import { mapWork, overlap, piecesOf, RefCache, RefIndex, runSync, type Work, YIELD_MASK } from "./ngrams.js";

const cache = new RefCache<{ vocab: Map<string, number>; seqs: number[][]; index: RefIndex }>();

export interface RougeScore {
  precision: number;
  recall: number;
  fmeasure: number;
}

export type RougeType = "rouge1" | "rouge2" | "rougeL";
export const ROUGE_TYPES: RougeType[] = ["rouge1", "rouge2", "rougeL"];

const NON_ALPHANUM = /[^a-z0-9]+/g;

/** Stems seen recently: the Porter stemmer is the costliest step and words repeat a lot. */
const stems = new Map<string, string>();
function stem(t: string): string {
  let s = stems.get(t);
  if (s === undefined) {
    if (stems.size >= 100_000) stems.clear();
    stems.set(t, (s = stemmer(t)));
  }
  return s;
}

/** rouge-score's `tokenize.tokenize(text, stemmer)`. */
/**
 * rougeTokenize as Work: tokens are runs of [a-z0-9] in the lower-cased text, so pieces cut right
 * before any other character hold whole tokens.
 */
export function* rougeTokenizeWork(text: string, useStemmer: boolean): Work<string[]> {
  const out: string[] = [];
  for (const piece of piecesOf(text.toLowerCase(), (c) => !((c >= 97 && c <= 122) || (c >= 48 && c <= 57)))) {
    for (const t of piece.replace(NON_ALPHANUM, " ").split(" ")) {
      if (t === "") continue;
      out.push(useStemmer && t.length > 3 ? stem(t) : t);
    }
    yield;
  }
  return out;
}

export function rougeTokenize(text: string, useStemmer: boolean): string[] {
  const tokens = text.toLowerCase().replace(NON_ALPHANUM, " ").split(" ");
  const out: string[] = [];
  for (const t of tokens) {
    if (t === "") continue;
    out.push(useStemmer && t.length > 3 ? stem(t) : t);
  }
  return out;
}

function fmeasure(p: number, r: number): number {
  return p + r > 0 ? (2 * p * r) / (p + r) : 0;
}

/** rouge-score's `_score_ngrams` from the two texts' n-gram id lists. */
function scoreNgrams(target: Int32Array, prediction: Int32Array, scratch: Int32Array): RougeScore {
  const inter = overlap(prediction, target, scratch);
  const precision = inter / Math.max(prediction.length, 1);
  const recall = inter / Math.max(target.length, 1);
  return { precision, recall, fmeasure: fmeasure(precision, recall) };
}

/** Length of the longest common subsequence of two token sequences (bit-parallel). */
export function lcsLength<T>(x: readonly T[], y: readonly T[]): number {
  return runSync(lcsLengthWork(x, y));
}

/** lcsLength as Work: it yields every few thousand words of bit vectors. */
export function* lcsLengthWork<T>(x: readonly T[], y: readonly T[]): Work<number> {
  // `a` indexes the bits; the shorter side keeps the bit vectors small.
  const [a, b] = x.length <= y.length ? [x, y] : [y, x];
  const m = a.length;
  if (m === 0) return 0;
  const inB = new Set(b);
  const row = new Map<T, number>();
  for (const t of a) if (inB.has(t) && !row.has(t)) row.set(t, row.size);
  if (row.size === 0) return 0;
  const W = (m + 31) >>> 5;
  const masks = new Uint32Array(row.size * W);
  for (let i = 0; i < m; i++) {
    const r = row.get(a[i]);
    if (r !== undefined) masks[r * W + (i >>> 5)] |= 1 << (i & 31);
  }
  const V = new Uint32Array(W).fill(0xffffffff);
  let work = 0;
  for (const t of b) {
    const r = row.get(t);
    if (r === undefined) continue;
    if ((work += W) > YIELD_MASK) {
      work = 0;
      yield;
    }
    const off = r * W;
    let carry = 0;
    for (let w = 0; w < W; w++) {
      const v = V[w];
      const mk = masks[off + w];
      // V' = (V + (V & M)) | (V & ~M), with the carry rippling across 32-bit words.
      const sum = v + ((v & mk) >>> 0) + carry;
      carry = sum > 0xffffffff ? 1 : 0;
      V[w] = ((sum >>> 0) | (v & ~mk)) >>> 0;
    }
  }
  let ones = 0;
  for (let w = 0; w < W; w++) {
    let v = V[w];
    v = v - ((v >>> 1) & 0x55555555);
    v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
    ones += (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
  }
  return W * 32 - ones;
}

/** rouge-score's `_score_lcs`. */
function* scoreLcsWork(target: number[], prediction: number[]): Work<RougeScore> {
  if (!target.length || !prediction.length) return { precision: 0, recall: 0, fmeasure: 0 };
  const l = yield* lcsLengthWork(target, prediction);
  const precision = l / prediction.length;
  const recall = l / target.length;
  return { precision, recall, fmeasure: fmeasure(precision, recall) };
}

export function rougeScore(target: string, prediction: string, useStemmer: boolean): Record<RougeType, RougeScore> {
  return rougeScoreMulti([target], prediction, useStemmer);
}

export function rougeScoreMulti(targets: string[], prediction: string, useStemmer: boolean): Record<RougeType, RougeScore> {
  return runSync(rougeScoreMultiWork(targets, prediction, useStemmer));
}

/** rougeScoreMulti as Work (runSliced lets the event loop turn while it runs). */
export function* rougeScoreMultiWork(targets: string[], prediction: string, useStemmer: boolean): Work<Record<RougeType, RougeScore>> {
  const refs = yield* cache.getWork(String(useStemmer), targets, function* () {
    const vocab = new Map<string, number>();
    const id = (t: string) => { let v = vocab.get(t); if (v === undefined) vocab.set(t, (v = vocab.size)); return v; };
    const seqs: number[][] = [];
    for (const t of targets) seqs.push(yield* mapWork(yield* rougeTokenizeWork(t, useStemmer), id));
    return { vocab, seqs, index: yield* RefIndex.build(seqs, vocab.size, 2) };
  });
  const p = yield* mapWork(yield* rougeTokenizeWork(prediction, useStemmer), (t) => refs.vocab.get(t) ?? -1);
  const pg = yield* refs.index.lookupWork(p);
  const all: Record<RougeType, RougeScore>[] = [];
  for (let i = 0; i < refs.seqs.length; i++) {
    const t = refs.seqs[i]!;
    const rouge1 = scoreNgrams(refs.index.refIds[i][0], pg[0], refs.index.scratch[0]);
    const rouge2 = scoreNgrams(refs.index.refIds[i][1], pg[1], refs.index.scratch[1]);
    yield;
    all.push({ rouge1, rouge2, rougeL: yield* scoreLcsWork(t, p) });
  }
  const out = {} as Record<RougeType, RougeScore>;
  for (const k of ROUGE_TYPES) {
    let best = all[0][k];
    for (const s of all) if (s[k].fmeasure > best.fmeasure) best = s[k];
    out[k] = best;
  }
  return out;
}
