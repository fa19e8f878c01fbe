/**
 * From per-criterion verdicts to one reward, as HealthBench scores a rubric (Arora et al. 2025):
 * reward = sum(weight x met) / sum(positive weights), clamped to [0, 1]. Negative weights are
 * pitfalls (met = the mistake was made). A veto criterion that is not met makes the reward 0; a
 * veto's weight does not enter the sums. With no positive weight (vetoes and pitfalls only) the
 * reward is 1 when no pitfall is met, else 0.
 */
import type { Criterion } from "../../src/store/rubric.js";

export interface CriterionVerdict {
  criterion: Criterion;
  satisfied: boolean;
}

export interface Aggregate {
  reward: number;
  achieved: number;
  possible: number;
  /** Ids of veto criteria that were not met. */
  vetoed: string[];
}

export function weightedReward(verdicts: CriterionVerdict[]): Aggregate {
  let achieved = 0;
  let possible = 0;
  const vetoed: string[] = [];
  for (const { criterion: c, satisfied } of verdicts) {
    if (c.kind === "veto") {
      if (!satisfied) vetoed.push(c.id);
      continue;
    }
    if (c.weight > 0) possible += c.weight;
    if (satisfied) achieved += c.weight;
  }
  // No positive weight (vetoes and pitfalls only): passing the vetoes is full marks when no
  // pitfall is met, and 0 when one is (there is nothing to subtract its weight from).
  const raw = possible > 0 ? achieved / possible : achieved < 0 ? 0 : 1;
  const reward = vetoed.length ? 0 : Math.min(1, Math.max(0, raw));
  return { reward, achieved, possible, vetoed };
}

/** Majority of N votes; a tie goes to `tie`. */
export function majority(votes: boolean[], tie = false): boolean {
  const yes = votes.filter(Boolean).length * 2;
  return yes > votes.length || (yes === votes.length && tie);
}

/**
 * A criterion's verdict from its judge samples: the majority, and a tie (an even number of
 * samples, split) read the way that pays less: not met, except for a pitfall (negative weight),
 * which is met and subtracts its weight. A veto tied is not met, so it vetoes.
 */
export function criterionMet(criterion: { weight: number }, votes: boolean[]): boolean {
  return majority(votes, criterion.weight < 0);
}

/** The median of N scores (robust to one wild sample). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}
