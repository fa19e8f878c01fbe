/**
 * Reference-overlap rewards as BLEUBERI trains with (Chang et al. 2025, arXiv:2505.11080):
 * sentence BLEU, chrF/chrF++ (sacreBLEU's definitions) and ROUGE-1/2/L F-measure (rouge-score's),
 * each divided by its maximum so the reward lies in [0, 1]. See README.md.
 */
import { Type, type TSchema } from "@sinclair/typebox";
import { defineVerifier } from "../../src/core/verifier.js";
import { afterThink } from "../../src/core/completion.js";
import { sentenceBleuWork } from "./bleu.js";
import { sentenceChrfWork } from "./chrf.js";
import { runSliced, runSync, type Work } from "./ngrams.js";
import { rougeScoreMultiWork } from "./rouge.js";

/** One reference or several (the score is taken against all, as each tool does with several). */
const Reference = Type.Union([
  Type.String({ maxLength: 100_000 }),
  Type.Array(Type.String({ maxLength: 100_000 }), { minItems: 1, maxItems: 16 }),
]);

/** Options every overlap verifier has. */
const common = {
  strip_think: Type.Boolean({ default: true, description: "score only the text after the last </think> (none, when a <think> never closes)" }),
  max_response_chars: Type.Integer({
    default: 32_768, minimum: 1, maximum: 1_000_000,
    description: "a longer response is not scored: reward 0 (bounds the work per item)",
  }),
};

function options<P extends Record<string, TSchema>>(props: P) {
  return Type.Object({ ...common, ...props }, { additionalProperties: false });
}

const refs = (r: string | string[]) => (typeof r === "string" ? [r] : r);
const unit = (score0to100: number) => Math.min(1, Math.max(0, score0to100 / 100));

/** The hypothesis to score, or the outcome for a response too long to score. */
function hypothesis(response: string, o: { strip_think: boolean; max_response_chars: number }) {
  const text = o.strip_think ? afterThink(response) : response;
  if (text.length > o.max_response_chars) {
    return { tooLong: { reward: 0, reason: `response longer than max_response_chars (${text.length} > ${o.max_response_chars})`, details: { chars: text.length } } };
  }
  return { text };
}

export const bleu = defineVerifier({
  name: "bleu",
  description: "Sentence BLEU (sacreBLEU: 13a, exp smoothing, effective order) against one or more references, /100.",
  reference: Reference,
  options: options({
    lowercase: Type.Boolean({ default: false }),
    tokenize: Type.Union([Type.Literal("13a"), Type.Literal("none")], { default: "13a", description: "sacreBLEU tokenizer" }),
    smooth_method: Type.Union([Type.Literal("exp"), Type.Literal("floor"), Type.Literal("add-k"), Type.Literal("none")], { default: "exp" }),
    smooth_value: Type.Optional(Type.Number({ minimum: 0, description: "for floor (default 0.1) and add-k (default 1)" })),
    effective_order: Type.Boolean({ default: true, description: "as sacrebleu.sentence_bleu: ignore orders the hypothesis is too short for" }),
    max_ngram_order: Type.Integer({ default: 4, minimum: 1, maximum: 8 }),
  }),
  verify(item) {
    const o = item.options;
    const h = hypothesis(item.response, o);
    if (h.tooLong) return h.tooLong;
    return then(run(sentenceBleuWork(h.text, refs(item.reference), o), h.text, item.reference), (s) => ({
      reward: unit(s.score),
      reason: `BLEU ${s.score.toFixed(2)}`,
      details: { bleu: s.score, precisions: s.precisions, counts: s.counts, totals: s.totals, bp: s.bp, sys_len: s.sys_len, ref_len: s.ref_len },
    }));
  },
});

export const chrf = defineVerifier({
  name: "chrf",
  description: "Sentence chrF (chrF++ with word_order 2), sacreBLEU's definition, against one or more references, /100.",
  reference: Reference,
  options: options({
    char_order: Type.Integer({ default: 6, minimum: 1, maximum: 10 }),
    word_order: Type.Integer({ default: 0, minimum: 0, maximum: 4, description: "0 = chrF, 2 = chrF++" }),
    beta: Type.Number({ default: 2, minimum: 0, maximum: 10 }),
    lowercase: Type.Boolean({ default: false }),
    whitespace: Type.Boolean({ default: false, description: "keep whitespace in character n-grams" }),
    eps_smoothing: Type.Boolean({ default: false, description: "chrF++.py/NLTK/Moses smoothing instead of sacreBLEU's effective order" }),
  }),
  verify(item) {
    const o = item.options;
    const h = hypothesis(item.response, o);
    if (h.tooLong) return h.tooLong;
    const name = o.word_order > 0 ? "chrF++" : "chrF";
    return then(run(sentenceChrfWork(h.text, refs(item.reference), o), h.text, item.reference), (s) => ({ reward: unit(s.score), reason: `${name} ${s.score.toFixed(2)}`, details: { chrf: s.score, reference_index: s.ref_index } }));
  },
});

export const rouge = defineVerifier({
  name: "rouge",
  description: "ROUGE-1/2/L F-measure (rouge-score's tokenizer and definitions) against one or more references.",
  reference: Reference,
  options: options({
    rouge_type: Type.Union([Type.Literal("rougeL"), Type.Literal("rouge1"), Type.Literal("rouge2"), Type.Literal("mean")], {
      default: "rougeL", description: "which F-measure is the reward (mean: of the three)",
    }),
    use_stemmer: Type.Boolean({ default: false, description: "Porter-stem tokens longer than 3 characters" }),
  }),
  verify(item) {
    const o = item.options;
    const h = hypothesis(item.response, o);
    if (h.tooLong) return h.tooLong;
    return then(run(rougeScoreMultiWork(refs(item.reference), h.text, o.use_stemmer), h.text, item.reference), (s) => {
    const reward = o.rouge_type === "mean" ? (s.rouge1.fmeasure + s.rouge2.fmeasure + s.rougeL.fmeasure) / 3 : s[o.rouge_type].fmeasure;
    return { reward, reason: `${o.rouge_type} F ${reward.toFixed(4)}`, details: { ...s } };
    });
  },
});

/**
 * A short item is scored at once and its Outcome returned as it is (the light verifiers answer
 * without a promise); a long one in slices (runSliced), the event loop turning between.
 */
const SYNC_CHARS = 32_768;
function run<T>(w: Work<T>, hypothesis: string, reference: string | string[]): T | Promise<T> {
  let chars = hypothesis.length;
  for (const r of refs(reference)) chars += r.length;
  return chars <= SYNC_CHARS ? runSync(w) : runSliced(w);
}
function then<T, U>(v: T | Promise<T>, f: (t: T) => U): U | Promise<U> {
  return v instanceof Promise ? v.then(f) : f(v);
}

export default [bleu, chrf, rouge];
