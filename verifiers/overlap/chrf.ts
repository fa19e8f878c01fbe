/**
 * Sentence chrF / chrF++ as sacreBLEU 2.x computes it (`sacrebleu.sentence_chrf`,
 * `CHRF.sentence_score`; Popović 2015, 2017): character n-grams up to `char_order` (6) over the
 * text with whitespace removed, word n-grams up to `word_order` (0 = chrF, 2 = chrF++) after
 * sacreBLEU's punctuation split, F-beta with beta 2 over the precision and recall averaged over
 * the orders that exist on both sides (sacreBLEU's default, not eps smoothing), and for several
 * references the statistics of the reference with the best F (first on ties).
 */
import { isPyWhitespace, pyRemoveWhitespace, pySplit } from "./pystr.js";
import { overlap, piecesOf, RefCache, RefIndex, runSync, type Work } from "./ngrams.js";

export interface ChrfSettings {
  char_order: number;
  word_order: number;
  beta: number;
  lowercase: boolean;
  /** Keep whitespace inside character n-grams (sacreBLEU `whitespace=True`). */
  whitespace: boolean;
  eps_smoothing: boolean;
}

export interface ChrfScore {
  /** 0..100, as sacreBLEU prints it. */
  score: number;
  /** [hyp, ref, match] counts per order: char orders first, then word orders. */
  stats: number[];
  /** Index of the reference whose statistics were used. */
  ref_index: number;
}

const PUNCTS = new Set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~');

/** sacreBLEU's `CHRF._remove_punctuation`: one leading or trailing ASCII punctuation split off. */
function removePunctuation(sent: string): string[] {
  const out: string[] = [];
  for (const w of pySplit(sent)) {
    const cps = Array.from(w);
    if (cps.length === 1) out.push(w);
    else if (PUNCTS.has(cps[cps.length - 1])) out.push(cps.slice(0, -1).join(""), cps[cps.length - 1]);
    else if (PUNCTS.has(cps[0])) out.push(cps[0], cps.slice(1).join(""));
    else out.push(w);
  }
  return out;
}

/** The references' character (and word) n-grams, with the alphabets that index them. */
interface ChrfRefs {
  chars: Map<number, number>;
  charIndex: RefIndex;
  words: Map<string, number> | null;
  wordIndex: RefIndex | null;
}

const cache = new RefCache<ChrfRefs>();

/**
 * The code points of the text chrF reads (whitespace removed unless kept), each mapped by `f`,
 * as Work: pieces cut right before a whitespace character (a surrogate pair is never split).
 */
function* charSymbolsWork(text: string, s: ChrfSettings, f: (cp: number) => number): Work<number[]> {
  const out: number[] = [];
  for (const piece of piecesOf(text, isPyWhitespace)) {
    const t = s.whitespace ? piece : pyRemoveWhitespace(piece);
    for (let i = 0; i < t.length; i++) {
      const cp = t.codePointAt(i)!;
      out.push(f(cp));
      if (cp > 0xffff) i++;
    }
    yield;
  }
  return out;
}

/** removePunctuation then `f` on each word, as Work: pieces cut right before whitespace hold whole words. */
function* wordSymbolsWork(text: string, f: (w: string) => number): Work<number[]> {
  const out: number[] = [];
  for (const piece of piecesOf(text, isPyWhitespace)) {
    for (const w of removePunctuation(piece)) out.push(f(w));
    yield;
  }
  return out;
}

function* indexRefsWork(refs: string[], s: ChrfSettings): Work<ChrfRefs> {
  const chars = new Map<number, number>();
  const id = (cp: number) => { let v = chars.get(cp); if (v === undefined) chars.set(cp, (v = chars.size)); return v; };
  const charSeqs: number[][] = [];
  for (const r of refs) charSeqs.push(yield* charSymbolsWork(r, s, id));
  const charIndex = yield* RefIndex.build(charSeqs, chars.size, s.char_order);
  if (s.word_order <= 0) return { chars, charIndex, words: null, wordIndex: null };
  const words = new Map<string, number>();
  const wid = (w: string) => { let v = words.get(w); if (v === undefined) words.set(w, (v = words.size)); return v; };
  const wordSeqs: number[][] = [];
  for (const r of refs) wordSeqs.push(yield* wordSymbolsWork(r, wid));
  return { chars, charIndex, words, wordIndex: yield* RefIndex.build(wordSeqs, words.size, s.word_order) };
}

function matchStats(hyp: Int32Array, ref: Int32Array, scratch: Int32Array): [number, number, number] {
  return [ref.length ? hyp.length : 0, ref.length, overlap(hyp, ref, scratch)];
}

/** sacreBLEU's `CHRF._compute_f_score`, 0..100. */
export function chrfFromStats(stats: number[], s: ChrfSettings): number {
  const eps = 1e-16;
  const order = s.char_order + s.word_order;
  const factor = s.beta ** 2;
  let score = 0;
  let effectiveOrder = 0;
  let avgPrec = 0;
  let avgRec = 0;
  for (let i = 0; i < order; i++) {
    const [nHyp, nRef, nMatch] = stats.slice(3 * i, 3 * i + 3);
    const prec = nHyp > 0 ? nMatch / nHyp : eps;
    const rec = nRef > 0 ? nMatch / nRef : eps;
    const denom = factor * prec + rec;
    score += denom > 0 ? ((1 + factor) * prec * rec) / denom : eps;
    if (nHyp > 0 && nRef > 0) {
      avgPrec += prec;
      avgRec += rec;
      effectiveOrder++;
    }
  }
  if (s.eps_smoothing) return (100 * score) / order;
  if (effectiveOrder === 0) {
    avgPrec = avgRec = 0;
  } else {
    avgPrec /= effectiveOrder;
    avgRec /= effectiveOrder;
  }
  if (avgPrec + avgRec) return (100 * ((1 + factor) * avgPrec * avgRec)) / (factor * avgPrec + avgRec);
  return 0;
}

/** `sacrebleu.sentence_chrf(hypothesis, references, ...)` */
export function sentenceChrf(hypothesis: string, references: string[], s: ChrfSettings): ChrfScore {
  return runSync(sentenceChrfWork(hypothesis, references, s));
}

/** sentenceChrf as Work (runSliced lets the event loop turn while it runs). */
export function* sentenceChrfWork(hypothesis: string, references: string[], s: ChrfSettings): Work<ChrfScore> {
  const prep = (t: string) => (s.lowercase ? t.toLowerCase() : t);
  const settings = `${s.char_order}|${s.word_order}|${s.lowercase}|${s.whitespace}`;
  const refs = yield* cache.getWork(settings, references, () => indexRefsWork(references.map(prep), s));
  const text = prep(hypothesis);
  const hyp = yield* refs.charIndex.lookupWork(yield* charSymbolsWork(text, s, (cp) => refs.chars.get(cp) ?? -1));
  const scratch = [...refs.charIndex.scratch];
  const refGrams = refs.charIndex.refIds.map((x) => [...x]);
  if (refs.wordIndex && refs.words) {
    const words = refs.words;
    hyp.push(...(yield* refs.wordIndex.lookupWork(yield* wordSymbolsWork(text, (w) => words.get(w) ?? -1))));
    scratch.push(...refs.wordIndex.scratch);
    refs.wordIndex.refIds.forEach((x, i) => refGrams[i].push(...x));
  }
  let best: ChrfScore = { score: -1, stats: [], ref_index: -1 };
  for (let idx = 0; idx < refGrams.length; idx++) {
    const ref = refGrams[idx]!;
    const stats: number[] = [];
    for (let i = 0; i < hyp.length; i++) {
      stats.push(...matchStats(hyp[i], ref[i], scratch[i]));
      yield;
    }
    const f = chrfFromStats(stats, s);
    if (f > best.score) best = { score: f, stats, ref_index: idx };
  }
  return best;
}
