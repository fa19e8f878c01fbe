/**
 * Scoring an item against a rubric with the shared judge. Pure of HTTP and of the registry: it
 * takes the judge, the rubric and the material, and returns an Outcome. A criterion the judge
 * could not answer makes the whole item an error (reward null), never a 0. A judge that refuses
 * to grade the material (a refusal, a content filter: JudgeRefusal) has answered: the criteria
 * are not met and the item scores 0, so content that trips the judge's filter is not masked.
 */
import type { Outcome } from "../../src/core/types.js";
import type { Judge } from "../../src/judge/client.js";
import { JudgeRefusal, type AskOptions, type Verdict } from "../../src/judge/types.js";
import type { Criterion } from "../../src/store/rubric.js";
import { criterionQuestion, holisticQuestion, type Material } from "./prompt.js";
import { majority, median, weightedReward } from "./aggregate.js";

export interface ScoreSettings {
  aggregation: "weighted" | "holistic";
  samples: number;
}

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
  return line.length > max ? line.slice(0, max) + "…" : line;
};

export async function scoreWithRubric(
  judge: Judge, criteria: Criterion[], m: Material, s: ScoreSettings, ask: AskOptions, details: Record<string, unknown>,
): Promise<Outcome> {
  const samples = Array.from({ length: s.samples }, (_, i) => i);
  if (s.aggregation === "holistic") {
    const settled = await Promise.allSettled(samples.map((i) => judge.ask<HolisticVerdictJSON>(holisticQuestion(criteria, m, i), ask)));
    const failed = settled.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    const ok = settled.filter((r): r is PromiseFulfilledResult<Verdict<HolisticVerdictJSON>> => r.status === "fulfilled").map((r) => r.value);
    details.judge = tally(ok);
    const refusals = failed.map((r) => refusalOf(r.reason)).filter((x): x is string => x !== undefined);
    if (refusals.length) {
      details.refusal = refusals[0];
      return refused(refusals, details, "holistic");
    }
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

  const perCriterion = await Promise.all(
    criteria.map(async (c) => {
      const settled = await Promise.allSettled(samples.map((i) => judge.ask<CriterionVerdictJSON>(criterionQuestion(c, m, i), ask)));
      const ok = settled.filter((r): r is PromiseFulfilledResult<Verdict<CriterionVerdictJSON>> => r.status === "fulfilled").map((r) => r.value);
      const rejected = settled.filter((r): r is PromiseRejectedResult => r.status === "rejected");
      const refusal = rejected.map((r) => refusalOf(r.reason)).find((x) => x !== undefined);
      const err = rejected[0];
      return { c, ok, refusal, error: err ? String(err.reason?.message ?? err.reason) : undefined };
    }),
  );
  details.judge = tally(perCriterion.flatMap((p) => p.ok));
  const refusedOnes = perCriterion.filter((p) => p.refusal !== undefined);
  if (refusedOnes.length) {
    // The refusal is about the response: it decides the item, whatever else failed.
    details.criteria = perCriterion.map(({ c, ok, refusal, error }) =>
      refusal !== undefined
        ? { id: c.id, weight: c.weight, kind: c.kind ?? "score", satisfied: false, refusal }
        : error !== undefined
          ? { id: c.id, error }
          : { id: c.id, weight: c.weight, kind: c.kind ?? "score", satisfied: majority(ok.map((v) => v.value.satisfied)), reason: ok[0].value.reasoning },
    );
    return refused(refusedOnes.map((p) => p.refusal!), details, `${refusedOnes.length === 1 ? "criterion" : "criteria"} ${refusedOnes.map((p) => p.c.id).join(", ")}`);
  }
  const failed = perCriterion.filter((p) => p.error !== undefined);
  if (failed.length) {
    details.criteria = perCriterion.map(({ c, ok, error }) =>
      error !== undefined ? { id: c.id, error } : { id: c.id, satisfied: majority(ok.map((v) => v.value.satisfied)), reason: ok[0].value.reasoning },
    );
    return {
      reward: null,
      reason: `judge could not answer ${failed.length} of ${criteria.length} criteria (${failed.map((f) => f.c.id).join(", ")}): ${firstLine(failed[0].error!)}`,
      details,
    };
  }
  const verdicts = perCriterion.map(({ c, ok }) => {
    const votes = ok.map((v) => v.value.satisfied);
    const satisfied = majority(votes);
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
