/**
 * Sentence BLEU as sacreBLEU 2.x computes it (`sacrebleu.sentence_bleu`, `BLEU.sentence_score`):
 * the `13a` tokeniser (mteval-v13a, the WMT standard), n-gram clipping against the maximum count
 * over all references, the closest reference length for the brevity penalty (shorter wins ties),
 * smoothing `exp` (Chen & Cherry 2014 method 3, the NIST one) by default, and effective order
 * (orders past the longest the hypothesis has are ignored) as `sentence_bleu` turns on.
 *
 * Every regex here is a single character class (or a class followed by one literal), so each pass
 * is linear in the input; callers cap the input length before calling.
 */
import { isPyWhitespace, pyRstrip, pySplit } from "./pystr.js";
import { mapWork, overlapMax, piecesOf, RefCache, RefIndex, type Work, runSync } from "./ngrams.js";

export type SmoothMethod = "exp" | "floor" | "add-k" | "none";
export type BleuTokenizer = "13a" | "none";

export interface BleuSettings {
  lowercase: boolean;
  tokenize: BleuTokenizer;
  smooth_method: SmoothMethod;
  /** For `floor` (default 0.1) and `add-k` (default 1); ignored by the others. */
  smooth_value?: number;
  effective_order: boolean;
  max_ngram_order: number;
}

export const SMOOTH_DEFAULTS: Record<SmoothMethod, number | undefined> = { floor: 0.1, "add-k": 1, exp: undefined, none: undefined };

export interface BleuScore {
  /** 0..100, as sacreBLEU prints it. */
  score: number;
  counts: number[];
  totals: number[];
  precisions: number[];
  bp: number;
  sys_len: number;
  ref_len: number;
}

// sacrebleu/tokenizers/tokenizer_re.py: the four substitutions of mteval-v13a, in order.
const RE_PUNCT = /([{-~[-` -&(-+:-@/])/g;
const RE_PERIOD_COMMA_AFTER_NONDIGIT = /([^0-9])([.,])/g;
const RE_PERIOD_COMMA_BEFORE_NONDIGIT = /([.,])([^0-9])/g;
const RE_DASH_AFTER_DIGIT = /([0-9])(-)/g;

/** sacreBLEU's `Tokenizer13a`. */
export function tokenize13a(line: string): string {
  return rules13a(unescape13a(line));
}

/** The substitutions of 13a that read more than two characters: on the whole line, first. */
function unescape13a(line: string): string {
  line = line.replaceAll("<skipped>", "").replaceAll("-\n", "").replaceAll("\n", " ");
  if (line.includes("&")) {
    line = line.replaceAll("&quot;", '"').replaceAll("&amp;", "&").replaceAll("&lt;", "<").replaceAll("&gt;", ">");
  }
  return line;
}

/**
 * The tokens of `tokenize13a(line)`, as Work: after the whole-line substitutions, the four
 * rules run on pieces cut right before a whitespace character. Each rule reads at most two
 * adjacent characters, treats every whitespace character alike (none is a digit, "." "," or
 * "-"), and turns whitespace into whitespace, and each piece is padded with spaces as the line
 * is: so the pieces' tokens are the line's (checked against tokenize13a in the tests).
 */
export function* tokens13aWork(line: string): Work<string[]> {
  const out: string[] = [];
  for (const piece of piecesOf(unescape13a(line), isPyWhitespace)) {
    for (const t of pySplit(rules13a(piece))) out.push(t);
    yield;
  }
  return out;
}

function rules13a(line: string): string {
  line = ` ${line} `;
  line = line.replace(RE_PUNCT, " $1 ");
  line = line.replace(RE_PERIOD_COMMA_AFTER_NONDIGIT, "$1 $2 ");
  line = line.replace(RE_PERIOD_COMMA_BEFORE_NONDIGIT, " $1 $2");
  line = line.replace(RE_DASH_AFTER_DIGIT, "$1 $2 ");
  return pySplit(line).join(" ");
}

/** sacreBLEU's `_get_closest_ref_len`. */
function closestRefLen(hypLen: number, refLens: number[]): number {
  let closestDiff = -1;
  let closestLen = -1;
  for (const refLen of refLens) {
    const diff = Math.abs(hypLen - refLen);
    if (closestDiff === -1 || diff < closestDiff) {
      closestDiff = diff;
      closestLen = refLen;
    } else if (diff === closestDiff && refLen < closestLen) {
      closestLen = refLen;
    }
  }
  return closestLen;
}

const myLog = (x: number) => (x === 0 ? -9999999999 : Math.log(x));

/** sacreBLEU's `BLEU.compute_bleu` from sufficient statistics. */
export function computeBleu(
  correctIn: number[], totalIn: number[], sysLen: number, refLen: number, s: BleuSettings,
): BleuScore {
  const correct = [...correctIn];
  const total = [...totalIn];
  const order = s.max_ngram_order;
  const smoothValue = s.smooth_value ?? SMOOTH_DEFAULTS[s.smooth_method] ?? 0;
  let bp = 1.0;
  if (sysLen < refLen) bp = sysLen > 0 ? Math.exp(1 - refLen / sysLen) : 0.0;
  const precisions = new Array<number>(order).fill(0);
  const result = (score: number): BleuScore =>
    ({ score, counts: correct, totals: total, precisions, bp, sys_len: sysLen, ref_len: refLen });
  if (!correct.some((c) => c !== 0)) return result(0);
  let smoothMteval = 1;
  let effOrder = order;
  for (let n = 1; n <= order; n++) {
    if (s.smooth_method === "add-k" && n > 1) {
      correct[n - 1] += smoothValue;
      total[n - 1] += smoothValue;
    }
    if (total[n - 1] === 0) break;
    if (s.effective_order) effOrder = n;
    if (correct[n - 1] === 0) {
      if (s.smooth_method === "exp") {
        smoothMteval *= 2;
        precisions[n - 1] = 100 / (smoothMteval * total[n - 1]);
      } else if (s.smooth_method === "floor") {
        precisions[n - 1] = (100 * smoothValue) / total[n - 1];
      }
    } else {
      precisions[n - 1] = (100 * correct[n - 1]) / total[n - 1];
    }
  }
  let sum = 0;
  for (let i = 0; i < effOrder; i++) sum += myLog(precisions[i]);
  return result(bp * Math.exp(sum / effOrder));
}

/** The references' word n-grams and lengths, with the vocabulary that indexes them. */
interface BleuRefs {
  vocab: Map<string, number>;
  index: RefIndex;
  lens: number[];
}

const cache = new RefCache<BleuRefs>();

export function sentenceBleu(hypothesis: string, references: string[], s: BleuSettings): BleuScore {
  return runSync(sentenceBleuWork(hypothesis, references, s));
}

/** The tokens of `preprocess(sent, s)`, split, as Work. */
function* tokensWork(sent: string, s: BleuSettings): Work<string[]> {
  if (s.lowercase) sent = sent.toLowerCase();
  sent = pyRstrip(sent);
  if (s.tokenize !== "13a") return yield* pySplitWork(sent);
  return yield* tokens13aWork(sent);
}

/** pySplit as Work, on pieces cut right before a whitespace character. */
export function* pySplitWork(text: string): Work<string[]> {
  const out: string[] = [];
  for (const piece of piecesOf(text, isPyWhitespace)) {
    for (const t of pySplit(piece)) out.push(t);
    yield;
  }
  return out;
}

function* indexRefsWork(references: string[], s: BleuSettings): Work<BleuRefs> {
  const vocab = new Map<string, number>();
  const id = (t: string) => { let v = vocab.get(t); if (v === undefined) vocab.set(t, (v = vocab.size)); return v; };
  const seqs: number[][] = [];
  for (const r of references) seqs.push(yield* mapWork(yield* tokensWork(r, s), id));
  return { vocab, index: yield* RefIndex.build(seqs, vocab.size, s.max_ngram_order), lens: seqs.map((x) => x.length) };
}

/** sentenceBleu as Work (runSliced lets the event loop turn while it runs). */
export function* sentenceBleuWork(hypothesis: string, references: string[], s: BleuSettings): Work<BleuScore> {
  const order = s.max_ngram_order;
  const refs = yield* cache.getWork(`${s.lowercase}|${s.tokenize}|${order}`, references, () => indexRefsWork(references, s));
  const tokens = yield* tokensWork(hypothesis, s);
  const hyp = yield* refs.index.lookupWork(yield* mapWork(tokens, (t) => refs.vocab.get(t) ?? -1));
  const refLen = closestRefLen(tokens.length, refs.lens);
  const correct = new Array<number>(order).fill(0);
  const total = new Array<number>(order).fill(0);
  for (let n = 0; n < order; n++) {
    total[n] = hyp[n].length;
    correct[n] = overlapMax(hyp[n], refs.index.refIds.map((r) => r[n]), refs.index.scratch[n], refs.index.scratch2[n]);
    yield;
  }
  return computeBleu(correct, total, tokens.length, refLen, s);
}
