/**
 * calibrated: RLCR's calibration reward (Damani et al., "Beyond Binary Rewards: Training LMs to
 * Reason About Their Uncertainty", arXiv:2507.16806, eq. for R_RLCR):
 *
 *     R = 1[y = y*] - (q - 1[y = y*])^2
 *
 * the correctness indicator from an inner verifier plus the Brier score of the confidence q the
 * completion states. The confidence is read with an RE2 pattern (re2js: linear time).
 */
import { RE2JS } from "re2js";
import { Type, type Static } from "@sinclair/typebox";
import { InvalidItemError, MachineryError, type Outcome } from "../../src/core/types.js";
import { defineVerifier } from "../../src/core/verifier.js";

export const DEFAULT_PATTERN = "<confidence>\\s*([0-9]*\\.?[0-9]+)\\s*</confidence>";
/** Confidence is looked for in the completion's last this-many characters (a stated confidence ends it). */
const TAIL = 64 * 1024;

const cache = new Map<string, RE2JS>();
function compile(pattern: string): RE2JS {
  let re = cache.get(pattern);
  if (!re) {
    try {
      re = RE2JS.compile(pattern, RE2JS.DOTALL | RE2JS.CASE_INSENSITIVE);
    } catch (e) {
      throw new InvalidItemError(`options.pattern does not compile as RE2: ${(e as Error).message}`, "options");
    }
    if (re.groupCount() < 1) throw new InvalidItemError("options.pattern needs a capture group around the number", "options");
    if (cache.size >= 256) cache.delete(cache.keys().next().value!);
    cache.set(pattern, re);
  }
  return re;
}

const DECIMAL = /^(?:\d{1,20}(?:\.\d{0,20})?|\.\d{1,20})$/;

/** The last stated confidence, scaled to [0, 1]; null when absent, not a decimal number, or out of range. */
export function statedConfidence(text: string, pattern: string, scale: number): { q: number | null; raw: string | null } {
  const tail = text.length > TAIL ? text.slice(-TAIL) : text;
  const m = compile(pattern).matcher(tail);
  // RE2 finds each match from where the last one ended: all of them cost one linear pass over
  // the tail, so every match is read and the last one wins (a cap on the count kept an earlier one)
  let last: string | null = null;
  while (m.find()) last = m.group(1);
  if (last === null) return { q: null, raw: null };
  // a decimal number: an empty capture (`confidence: ` and nothing) is no confidence, not 0
  const t = last.trim();
  const q = DECIMAL.test(t) ? Number(t) / scale : NaN;
  return { q: Number.isFinite(q) && q >= 0 && q <= 1 ? q : null, raw: last.slice(0, 100) };
}

/** R_RLCR = c - (q - c)^2 with c in {0, 1}; a missing confidence scores as the worst Brier, 1. */
export function rlcr(correct: number, q: number | null): { reward: number; brier: number } {
  const brier = q === null ? 1 : (q - correct) ** 2;
  return { reward: correct - brier, brier };
}

export const Inner = Type.Object(
  {
    verifier: Type.String({ minLength: 1, maxLength: 200 }),
    reference: Type.Optional(Type.Unknown()),
    options: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

export const CalibratedOptions = Type.Object(
  {
    pattern: Type.String({ default: DEFAULT_PATTERN, minLength: 1, maxLength: 1000, description: "RE2 pattern whose first group is the confidence; the last match counts" }),
    scale: Type.Number({ default: 1, exclusiveMinimum: 0, description: "divide the stated number by this (100 for percentages)" }),
    correct_at: Type.Number({ default: 1, description: "the inner reward at or above which the answer counts as correct" }),
  },
  { additionalProperties: false },
);

export const calibrated = defineVerifier({
  name: "calibrated",
  description: "RLCR calibration reward: correctness - (stated confidence - correctness)^2, correctness from an inner verifier.",
  reference: Inner,
  options: CalibratedOptions,
  partsOf: (ref) => (ref && typeof ref === "object" ? [ref] : []),
  async verify(item, ctx): Promise<Outcome> {
    const o: Static<typeof CalibratedOptions> = item.options;
    compile(o.pattern); // a bad pattern is the item's fault before anything runs
    if (!ctx.scorePart) throw new MachineryError("this context cannot score parts (no ctx.scorePart)");
    const inner = await ctx.scorePart({ verifier: item.reference.verifier, response: item.response, prompt: item.prompt, reference: item.reference.reference, options: item.reference.options });
    if (inner.status === "invalid") throw new InvalidItemError(`reference (inner verifier ${item.reference.verifier}): ${inner.reason}`, "reference");
    if (inner.status !== "ok") return { reward: null, reason: `inner verifier ${item.reference.verifier} failed: ${inner.reason}`, details: { inner } };
    const correct = (inner.reward as number) >= o.correct_at ? 1 : 0;
    const { q, raw } = statedConfidence(item.response, o.pattern, o.scale);
    const { reward, brier } = rlcr(correct, q);
    const details = { correct, confidence: q, brier, format_ok: q !== null, ...(q === null && raw !== null ? { stated: raw } : {}), inner };
    if (q === null) {
      const why = raw === null ? "no stated confidence" : `stated confidence ${JSON.stringify(raw)} is outside [0, 1] after dividing by ${o.scale}`;
      return { reward, reason: `format failure: ${why}; scored as the worst Brier score (1): ${correct} - 1 = ${reward}`, details };
    }
    return { reward, reason: `${correct ? "correct" : "wrong"} at confidence ${q}: ${correct} - (${q} - ${correct})^2 = ${round(reward)}`, details };
  },
});

const round = (x: number) => Math.round(x * 1e6) / 1e6;
