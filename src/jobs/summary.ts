/**
 * What a finished (or running) job adds up to: mean reward, a reward histogram, status counts,
 * the slowest items, and for datasets with several samples per prompt, pass@k and per-prompt
 * mean reward. Read from the store's running counts and a few grouped queries.
 */
import type { JobRow, JobStore } from "../store/index.js";
import type { RewardResult } from "../core/types.js";

/**
 * The unbiased pass@k estimator of Chen et al. 2021 ("Evaluating Large Language Models Trained
 * on Code", eq. 1 and its numerically stable form in Figure 3): with n samples of which c are
 * correct, 1 - C(n-c, k) / C(n, k) = 1 - prod_{i=n-c+1}^{n} (1 - k/i). Needs k <= n.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (!(k >= 1 && k <= n && c >= 0 && c <= n)) throw new RangeError(`pass@k needs 1 <= k <= n and 0 <= c <= n (n=${n}, c=${c}, k=${k})`);
  if (n - c < k) return 1;
  let prod = 1;
  for (let i = n - c + 1; i <= n; i++) prod *= 1 - k / i;
  return 1 - prod;
}

export interface JobOptions {
  verifier?: string;
  deadline_ms?: number;
  group_by?: string;
  k?: number[];
  pass_threshold?: number;
}

export const DEFAULT_K = [1, 5, 10];
/** Per-group rows listed in a summary at most (the counts cover every group). */
export const MAX_GROUPS_LISTED = 1000;
const SLOWEST = 5;
/** A group's label in the summary is cut to this many characters (a prompt may be a megabyte). */
const GROUP_LABEL = 200;

export async function summarize(store: JobStore, job: JobRow) {
  const opts = JSON.parse(job.options) as JobOptions;
  const bins = Array.from({ length: 10 }, (_, i) => ({ from: i / 10, to: (i + 1) / 10, count: 0 }));
  let below = 0, above = 0;
  for (const { b, n } of await store.histogram(job.id)) {
    if (b < 0) below += n;
    else if (b > 9) above += n;
    else bins[b].count += n;
  }
  const slowest = (await store.slowest(job.id, SLOWEST)).map(({ idx, result }) => {
    const r = JSON.parse(result) as RewardResult;
    return { index: idx, id: r.id ?? null, verifier: r.verifier, status: r.status, elapsed_ms: r.elapsed_ms };
  });
  return {
    mean_reward: job.n_ok ? job.reward_sum / job.n_ok : null,
    counts: { ok: job.n_ok, error: job.n_error, invalid: job.n_invalid },
    histogram: { bins, below_0: below, above_1: above },
    slowest,
    groups: await groupSummary(store, job, opts),
  };
}

/**
 * pass@k over groups (the `group_by` field, else `prompt`) when some group has more than one
 * sample. Only scored samples count (an `error` or `invalid` one is neither right nor wrong);
 * a sample passes when its reward is at least `pass_threshold` (default 1). pass@k is the mean
 * over the groups with at least k scored samples; `groups` says how many those were.
 */
async function groupSummary(store: JobStore, job: JobRow, opts: JobOptions) {
  const threshold = opts.pass_threshold ?? 1;
  const tally = await store.groupTally(job.id, threshold);
  if (!tally.some((t) => t.max_n > 1)) return null;
  const ks = [...new Set(opts.k ?? DEFAULT_K)].sort((a, b) => a - b);
  const pass_at_k: Record<string, { value: number | null; groups: number }> = {};
  for (const k of ks) {
    let sum = 0, m = 0;
    for (const t of tally) {
      if (t.scored < k) continue;
      sum += t.groups * passAtK(t.scored, t.passed, k);
      m += t.groups;
    }
    pass_at_k[String(k)] = { value: m ? sum / m : null, groups: m };
  }
  const count = tally.reduce((n, t) => n + t.groups, 0);
  const rows = await store.groups(job.id, threshold, MAX_GROUPS_LISTED, GROUP_LABEL + 1);
  return {
    field: opts.group_by ?? "prompt",
    pass_threshold: threshold,
    count,
    pass_at_k,
    per_group: rows.map((g) => ({
      group: g.grp.length > GROUP_LABEL ? `${g.grp.slice(0, GROUP_LABEL)}…` : g.grp,
      samples: g.n,
      scored: g.scored,
      passed: g.passed,
      mean_reward: g.scored ? g.reward_sum / g.scored : null,
    })),
    per_group_truncated: count > MAX_GROUPS_LISTED,
  };
}
