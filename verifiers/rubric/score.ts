/**
 * Scoring an item against a rubric with the shared judge. Pure of HTTP and of the registry: it
 * takes the judge, the rubric and the material, and returns an Outcome. A criterion the judge
 * could not answer makes the whole item an error (reward null), never a 0. A judge that refuses
 * to grade the material (a refusal, a content filter: JudgeRefusal) has answered: the criteria
 * are not met and the item scores 0, so content that trips the judge's filter is not masked.
 * A response longer than the judge's context (JudgeContextExceeded) is cut shorter, as
 * `max_chars` cuts it, and judged again: the verdict on the cut response is the reward. Only when
 * the question overflows with the response cut small is it the machinery's fault (null).
 */
import type { Outcome } from "../../src/core/types.js";
import { JudgeContextExceeded, headOf, type Judge } from "../../src/judge/client.js";
import { JudgeRefusal, type AskOptions, type JudgeQuestion, type Verdict } from "../../src/judge/types.js";
import type { Criterion } from "../../src/store/rubric.js";
import { criterionQuestion, cutTo, holisticQuestion, type Material } from "./prompt.js";
import { criterionMet, median, weightedReward } from "./aggregate.js";

export interface ScoreSettings {
  aggregation: "weighted" | "holistic";
  samples: number;
}

/** The response before any cut (after strip_think), and how many of its characters `m.response` shows (max_chars). */
export interface ResponseCut {
  response: string;
  shown: number;
}

/**
 * A response cut to this many characters that still overflows the judge's context is not the
 * response's fault: the prompt, reference answer or rubric is too long for the judge. From
 * 1,048,576 (max_chars' maximum), halving reaches it in 11 cuts.
 */
export const MIN_CONTEXT_CUT = 1_000;

interface CriterionVerdictJSON { reasoning: string; satisfied: boolean }
interface HolisticVerdictJSON { reasoning: string; score: number }

/** Token and cost totals over the calls an item made. */
function tally(verdicts: Verdict<unknown>[]) {
  let input = 0, output = 0, cached = 0, cost: number | null = null;
  for (const v of verdicts) {
    input += v.usage.input_tokens;
    output += v.usage.output_tokens;
    if (v.cached) cached++;
    if (v.cost_usd !== null) cost = (cost ?? 0) + v.cost_usd;
  }
  return {
    model: verdicts[0]?.model, calls: verdicts.length - cached, cached,
    input_tokens: input, output_tokens: output, ...(cost !== null ? { cost_usd: cost } : {}),
  };
}

const refusalOf = (reason: unknown): string | undefined => (reason instanceof JudgeRefusal ? reason.refusal : undefined);

/** The item's outcome when the judge refused to grade the response: every criterion not met, reward 0. */
function refused(refusals: string[], details: Record<string, unknown>, what: string): Outcome {
  details.refused = true;
  return {
    reward: 0,
    reason: `the judge refused to grade the response (${what}), scored as not meeting the rubric: ${firstLine(refusals[0])}`,
    details,
  };
}

const firstLine = (s: string, max = 300) => {
  const line = s.split("\n", 1)[0];
  return line.length > max ? headOf(line, max) + "…" : line;
};

/**
 * Scores the item. When the judge's context is exceeded, the response (`cut`: whole, and how much
 * of it `m.response` shows) is cut to half of what was shown, with the same note as max_chars, and
 * every question is asked again on it (after a first cut, one question first: a cut that still
 * overflows costs one call, not one per criterion), until it fits or the response shown is no
 * longer than MIN_CONTEXT_CUT.
 */
export async function scoreWithRubric(
  judge: Judge, criteria: Criterion[], m: Material, s: ScoreSettings, ask: AskOptions, details: Record<string, unknown>,
  cut: ResponseCut = { response: m.response, shown: m.response.length },
): Promise<Outcome> {
  const spent: Verdict<unknown>[] = [];
  let shown = cut.shown;
  for (let probe = false; ; probe = true) {
    const out = await scoreOnce(judge, criteria, m, s, ask, details, spent, probe);
    if (!(out instanceof JudgeContextExceeded)) {
      if (shown < cut.shown) out.reason = `${out.reason}; response cut to ${shown} of ${cut.response.length} characters to fit the judge's context`;
      return out;
    }
    if (shown <= MIN_CONTEXT_CUT) {
      const cutNote = shown < cut.response.length ? `even with the response cut to ${shown} characters` : `with the response whole (${shown} characters)`;
      return {
        reward: null,
        reason: `the judge's context is exceeded ${cutNote}: the prompt, reference answer or rubric is too long for this judge: ${firstLine(out.message)}`,
        details,
      };
    }
    shown = Math.floor(shown / 2);
    m = { ...m, response: cutTo(cut.response, shown) };
    const truncated = (details.truncated ??= []) as string[];
    if (!truncated.includes("response")) truncated.push("response");
    details.context_cut = { response_chars: shown, of: cut.response.length };
  }
}

/**
 * Asks every question. With `probe`, the first alone before the others: when it overflows the
 * judge's context, that is the answer (the others are as long), without asking them.
 */
async function settle<T>(judge: Judge, qs: JudgeQuestion[], ask: AskOptions, probe: boolean): Promise<PromiseSettledResult<Verdict<T>>[] | JudgeContextExceeded> {
  if (probe && qs.length > 1) {
    const [first] = await Promise.allSettled([judge.ask<T>(qs[0], ask)]);
    if (first.status === "rejected" && first.reason instanceof JudgeContextExceeded) return first.reason;
    return [first, ...(await Promise.allSettled(qs.slice(1).map((q) => judge.ask<T>(q, ask))))];
  }
  return Promise.allSettled(qs.map((q) => judge.ask<T>(q, ask)));
}

/**
 * One scoring of the item on `m`; the JudgeContextExceeded when a question overflowed the judge's
 * context and none was refused (a refusal decides the item).
 */
async function scoreOnce(
  judge: Judge, criteria: Criterion[], m: Material, s: ScoreSettings, ask: AskOptions, details: Record<string, unknown>,
  spent: Verdict<unknown>[], probe: boolean,
): Promise<Outcome | JudgeContextExceeded> {
  const samples = Array.from({ length: s.samples }, (_, i) => i);
  const overflow = (rejected: PromiseRejectedResult[]) => rejected.map((r) => r.reason).find((e): e is JudgeContextExceeded => e instanceof JudgeContextExceeded);
  if (s.aggregation === "holistic") {
    const settled = await settle<HolisticVerdictJSON>(judge, samples.map((i) => holisticQuestion(criteria, m, i)), ask, probe);
    if (settled instanceof JudgeContextExceeded) return settled;
    const failed = settled.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    const ok = settled.filter((r): r is PromiseFulfilledResult<Verdict<HolisticVerdictJSON>> => r.status === "fulfilled").map((r) => r.value);
    spent.push(...ok);
    details.judge = tally(spent);
    const refusals = failed.map((r) => refusalOf(r.reason)).filter((x): x is string => x !== undefined);
    if (refusals.length) {
      details.refusal = refusals[0];
      return refused(refusals, details, "holistic");
    }
    const exceeded = overflow(failed);
    if (exceeded) return exceeded;
    if (failed.length) {
      return { reward: null, reason: `judge could not score the rubric: ${firstLine(String(failed[0].reason?.message ?? failed[0].reason))}`, details };
    }
    const scores = ok.map((v) => v.value.score);
    const score = median(scores);
    details.score = score;
    if (s.samples > 1) details.scores = scores;
    details.reasoning = ok[0].value.reasoning;
    return { reward: score / 10, reason: `holistic score ${score}/10`, details };
  }

  const all = await settle<CriterionVerdictJSON>(judge, criteria.flatMap((c) => samples.map((i) => criterionQuestion(c, m, i))), ask, probe);
  if (all instanceof JudgeContextExceeded) return all;
  const perCriterion = criteria.map((c, k) => {
    const settled = all.slice(k * s.samples, (k + 1) * s.samples);
    const ok = settled.filter((r): r is PromiseFulfilledResult<Verdict<CriterionVerdictJSON>> => r.status === "fulfilled").map((r) => r.value);
    const rejected = settled.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    const refusal = rejected.map((r) => refusalOf(r.reason)).find((x) => x !== undefined);
    const err = rejected[0];
    return { c, ok, refusal, exceeded: overflow(rejected), error: err ? String(err.reason?.message ?? err.reason) : undefined };
  });
  spent.push(...perCriterion.flatMap((p) => p.ok));
  details.judge = tally(spent);
  const refusedOnes = perCriterion.filter((p) => p.refusal !== undefined);
  if (refusedOnes.length) {
    // The refusal is about the response: it decides the item, whatever else failed.
    details.criteria = perCriterion.map(({ c, ok, refusal, error }) =>
      refusal !== undefined
        ? { id: c.id, weight: c.weight, kind: c.kind ?? "score", satisfied: false, refusal }
        : error !== undefined
          ? { id: c.id, error }
          : { id: c.id, weight: c.weight, kind: c.kind ?? "score", satisfied: criterionMet(c, ok.map((v) => v.value.satisfied)), reason: ok[0].value.reasoning },
    );
    return refused(refusedOnes.map((p) => p.refusal!), details, `${refusedOnes.length === 1 ? "criterion" : "criteria"} ${refusedOnes.map((p) => p.c.id).join(", ")}`);
  }
  const exceeded = perCriterion.find((p) => p.exceeded)?.exceeded;
  if (exceeded) return exceeded;
  const failed = perCriterion.filter((p) => p.error !== undefined);
  if (failed.length) {
    details.criteria = perCriterion.map(({ c, ok, error }) =>
      error !== undefined ? { id: c.id, error } : { id: c.id, satisfied: criterionMet(c, ok.map((v) => v.value.satisfied)), reason: ok[0].value.reasoning },
    );
    return {
      reward: null,
      reason: `judge could not answer ${failed.length} of ${criteria.length} criteria (${failed.map((f) => f.c.id).join(", ")}): ${firstLine(failed[0].error!)}`,
      details,
    };
  }
  const verdicts = perCriterion.map(({ c, ok }) => {
    const votes = ok.map((v) => v.value.satisfied);
    const satisfied = criterionMet(c, votes);
    // The reason shown is from a sample that agrees with the majority.
    const reason = ok.find((v) => v.value.satisfied === satisfied)!.value.reasoning;
    return { criterion: c, satisfied, reason, votes };
  });
  const agg = weightedReward(verdicts);
  details.criteria = verdicts.map(({ criterion: c, satisfied, reason, votes }) => ({
    id: c.id, weight: c.weight, kind: c.kind ?? "score", satisfied, reason, ...(s.samples > 1 ? { votes } : {}),
  }));
  details.achieved = agg.achieved;
  details.possible = agg.possible;
  if (agg.vetoed.length) details.vetoed = agg.vetoed;
  const met = verdicts.filter((v) => v.satisfied && v.criterion.kind !== "veto" && v.criterion.weight > 0).length;
  const positives = verdicts.filter((v) => v.criterion.kind !== "veto" && v.criterion.weight > 0).length;
  const pitfalls = verdicts.filter((v) => v.satisfied && v.criterion.kind !== "veto" && v.criterion.weight < 0).map((v) => v.criterion.id);
  const reason = agg.vetoed.length
    ? `vetoed: ${agg.vetoed.join(", ")} not met`
    : `${met} of ${positives} criteria met (${round(agg.achieved)} of ${round(agg.possible)} points${pitfalls.length ? `; pitfalls: ${pitfalls.join(", ")}` : ""})`;
  return { reward: agg.reward, reason, details };
}

const round = (x: number) => Math.round(x * 1000) / 1000;
