/**
 * combine: one reward from several verifiers. Each part is scored through the registry (the
 * same checks, outcome rules and deadline as any item) via ctx.scorePart, concurrently, and the
 * parts' rewards are aggregated. Presets (verifiers/compose/preset.ts) are stored combinations.
 */
import { Type, type Static } from "@sinclair/typebox";
import { InvalidItemError, MachineryError, type Outcome, type RewardResult } from "../../src/core/types.js";
import { defineVerifier, type VerifyContext, type PartItem } from "../../src/core/verifier.js";

export const AGGREGATES = ["sum", "mean", "min", "max", "product", "gate"] as const;
export type Aggregate = (typeof AGGREGATES)[number];

export const Part = Type.Object(
  {
    verifier: Type.String({ minLength: 1, maxLength: 200, description: "any verifier name, preset:<name> or custom:<name>" }),
    reference: Type.Optional(Type.Unknown({ description: "the part's reference; absent: the combination's shared reference" })),
    options: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    weight: Type.Optional(Type.Number({ minimum: -1000, maximum: 1000, description: "sum/mean weight (default 1)" })),
    optional: Type.Optional(Type.Boolean({ description: "an error in this part is left out instead of making the whole an error (a gate part's error only when another gate failed)" })),
    gate: Type.Optional(Type.Boolean({ description: "aggregate gate: this part must pass for the others to count" })),
    name: Type.Optional(Type.String({ maxLength: 100, description: "label in details" })),
  },
  { additionalProperties: false },
);
export type PartSpec = Static<typeof Part>;

export const Parts = Type.Array(Part, { minItems: 1, maxItems: 32 });

export const CombineReference = Type.Union([
  Parts,
  Type.Object(
    {
      parts: Parts,
      reference: Type.Optional(Type.Unknown({ description: "shared reference for parts that give none" })),
    },
    { additionalProperties: false },
  ),
]);

export const CombineOptions = Type.Object(
  {
    aggregate: Type.Union(AGGREGATES.map((a) => Type.Literal(a)), { default: "sum", description: "sum (weighted), mean (weighted), min, max, product, gate" }),
    gate_threshold: Type.Number({ default: 1, description: "gate: a gate part passes when its reward is at least this" }),
    gate_fail_reward: Type.Number({ default: 0, description: "gate: the reward when a gate part fails" }),
  },
  { additionalProperties: false },
);
export type CombineOpts = Static<typeof CombineOptions>;

interface PartOutcome {
  name: string;
  verifier: string;
  weight: number;
  optional: boolean;
  gate: boolean;
  status: RewardResult["status"] | "skipped";
  reward: number | null;
  reason: string;
  details: Record<string, unknown>;
}

function labelOf(p: PartSpec, i: number): string {
  return `part ${i} (${p.name ?? p.verifier})`;
}

/**
 * Why these parts and options cannot be combined, or undefined: `gate: true` means something only
 * under aggregate "gate" (elsewhere the part would be summed like any other and the gate silently
 * ignored: a misconfigured reward, trained on for a run), and a gate needs a part that is not one.
 * Checked on every item and when a preset is saved.
 */
export function combinationProblem(parts: PartSpec[], opts: CombineOpts): string | undefined {
  if (opts.aggregate !== "gate") {
    const stray = parts.findIndex((p) => p.gate);
    return stray < 0 ? undefined : `${labelOf(parts[stray], stray)} has gate: true, but aggregate is "${opts.aggregate}"; set options.aggregate to "gate", or drop gate`;
  }
  const gates = parts.filter((p) => p.gate).length || 1;
  return gates === parts.length ? `aggregate "gate" needs at least one part that is not a gate` : undefined;
}

/** Scores parts and aggregates them; shared by combine and presets. */
export async function scoreCombination(
  parts: PartSpec[],
  shared: { response: string; prompt?: string; reference?: unknown },
  opts: CombineOpts,
  ctx: VerifyContext,
  where = "reference",
): Promise<Outcome> {
  const scorePart = ctx.scorePart;
  if (!scorePart) throw new MachineryError("this context cannot score parts (no ctx.scorePart)");
  const run = (p: PartSpec, i: number): Promise<PartOutcome> => {
    const item: PartItem = { verifier: p.verifier, response: shared.response };
    if (shared.prompt !== undefined) item.prompt = shared.prompt;
    const ref = p.reference !== undefined ? p.reference : shared.reference;
    if (ref !== undefined) item.reference = ref;
    if (p.options !== undefined) item.options = p.options;
    return scorePart(item).then((r) => ({
      name: p.name ?? p.verifier,
      verifier: p.verifier,
      weight: p.weight ?? 1,
      optional: p.optional ?? false,
      gate: false,
      status: r.status,
      reward: r.reward,
      reason: r.reason,
      details: (r.details ?? {}) as Record<string, unknown>,
    })).then((o) => {
      if (o.status === "invalid") {
        const field = typeof o.details.field === "string" ? `.${o.details.field}` : "";
        throw new InvalidItemError(`${where}: ${labelOf(p, i)}${field}: ${o.reason}`, "reference");
      }
      return o;
    });
  };

  const problem = combinationProblem(parts, opts);
  if (problem) throw new InvalidItemError(`${where}: ${problem}`, "reference");
  let gates: number[] = [];
  if (opts.aggregate === "gate") {
    gates = parts.flatMap((p, i) => (p.gate ? [i] : []));
    if (gates.length === 0) gates = [0];
  }
  const results: PartOutcome[] = new Array(parts.length);
  let gateFailed: string | null = null;
  if (gates.length) {
    const g = await Promise.all(gates.map((i) => run(parts[i], i)));
    gates.forEach((i, k) => (results[i] = { ...g[k], gate: true }));
    // A gate that could not be scored (error: our machinery, not the completion) is never passed
    // over, optional or not: the others count only when every gate was scored and passed. An
    // optional gate's error is left out only where it changes nothing, i.e. another gate was
    // scored and failed (then gate_fail_reward stands); otherwise the item is null.
    let unscored: number | null = null;
    for (const i of gates) {
      const r = results[i];
      if (r.status !== "ok") {
        if (!r.optional) return errorOf(parts, i, r, results, opts);
        unscored ??= i;
      } else if ((r.reward as number) < opts.gate_threshold) {
        gateFailed ??= `${labelOf(parts[i], i)} did not pass (${r.reward} < ${opts.gate_threshold}): ${r.reason}`;
      }
    }
    if (!gateFailed && unscored !== null) {
      const r = results[unscored];
      const all = parts.map((p, k) => results[k] ?? skipped(p));
      return {
        reward: null,
        reason: `${labelOf(parts[unscored], unscored)} failed: ${r.reason} (a gate that could not be scored lets nothing through, even when optional)`,
        details: detailsOf(opts, all),
      };
    }
  }
  const rest = parts.map((_, i) => i).filter((i) => !gates.includes(i));
  if (gateFailed) {
    for (const i of rest) results[i] = skipped(parts[i]);
    const left = gates.filter((i) => results[i].status !== "ok").length;
    const note = left ? ` (${left} optional gate part${left === 1 ? "" : "s"} failed to score and left out)` : "";
    return { reward: opts.gate_fail_reward, reason: `gate: ${gateFailed}${note}`, details: detailsOf(opts, results) };
  }
  const done = await Promise.all(rest.map((i) => run(parts[i], i)));
  rest.forEach((i, k) => (results[i] = done[k]));
  for (const i of rest) {
    const r = results[i];
    if (r.status === "error" && !r.optional) return errorOf(parts, i, r, results, opts);
  }
  const counted = rest.map((i) => results[i]).filter((r) => r.status === "ok");
  if (counted.length === 0) {
    return { reward: null, reason: "every part that counts was an optional part that failed; nothing to aggregate", details: detailsOf(opts, results) };
  }
  const reward = aggregate(opts.aggregate, counted.map((r) => ({ reward: r.reward as number, weight: r.weight })));
  const left = results.filter((r) => r.status === "error").length;
  if (!Number.isFinite(reward)) {
    // With every part scored, weights that sum to 0 are the combination's own mistake; when an
    // optional part's failure (our machinery) left the rest summing to 0, the item is unscored
    if (left) return { reward: null, reason: `${opts.aggregate} of what is left after ${left} optional part${left === 1 ? "" : "s"} failed is not a finite number (the rest's weights sum to 0)`, details: detailsOf(opts, results) };
    throw new InvalidItemError(`${where}: aggregate ${opts.aggregate} is not a finite number (weights sum to 0?)`, "reference");
  }
  const reason = `${opts.aggregate} of ${counted.length} part${counted.length === 1 ? "" : "s"}${left ? ` (${left} optional part${left === 1 ? "" : "s"} failed and left out)` : ""}: ${counted.map((r) => `${r.name}=${round(r.reward as number)}`).join(", ")}`;
  return { reward, reason, details: detailsOf(opts, results) };
}

/** The aggregation itself (exported for tests). sum and mean are weighted; the rest ignore weights. */
export function aggregate(how: Aggregate, xs: { reward: number; weight: number }[]): number {
  switch (how) {
    case "sum":
    case "gate":
      return xs.reduce((a, x) => a + x.weight * x.reward, 0);
    case "mean": {
      const w = xs.reduce((a, x) => a + x.weight, 0);
      return xs.reduce((a, x) => a + x.weight * x.reward, 0) / w;
    }
    case "min":
      return Math.min(...xs.map((x) => x.reward));
    case "max":
      return Math.max(...xs.map((x) => x.reward));
    case "product":
      return xs.reduce((a, x) => a * x.reward, 1);
  }
}

function skipped(p: PartSpec): PartOutcome {
  return { name: p.name ?? p.verifier, verifier: p.verifier, weight: p.weight ?? 1, optional: p.optional ?? false, gate: false, status: "skipped", reward: null, reason: "not scored: a gate part failed", details: {} };
}

function errorOf(parts: PartSpec[], i: number, r: PartOutcome, results: PartOutcome[], opts: CombineOpts): Outcome {
  const all = parts.map((p, k) => results[k] ?? skipped(p));
  return { reward: null, reason: `${labelOf(parts[i], i)} failed: ${r.reason}`, details: detailsOf(opts, all) };
}

function detailsOf(opts: CombineOpts, results: PartOutcome[]): Record<string, unknown> {
  return { aggregate: opts.aggregate, parts: results.map(({ gate, ...r }) => (gate ? { ...r, gate } : r)) };
}

const round = (x: number) => Math.round(x * 1e4) / 1e4;

export const combine = defineVerifier({
  name: "combine",
  description: "Scores several verifiers on the same completion and aggregates them (sum, mean, min, max, product, gate).",
  reference: CombineReference,
  options: CombineOptions,
  partsOf: (ref) => {
    const parts = Array.isArray(ref) ? ref : ref && typeof ref === "object" ? (ref as { parts?: unknown }).parts : undefined;
    return Array.isArray(parts) ? parts : [];
  },
  async verify(item, ctx) {
    const ref = item.reference;
    const [parts, shared] = Array.isArray(ref) ? [ref, undefined] : [ref.parts, ref.reference];
    return scoreCombination(parts, { response: item.response, prompt: item.prompt, reference: shared }, item.options, ctx);
  },
});
