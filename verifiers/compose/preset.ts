/**
 * preset: answers `preset:<name>[@<version>]` (a namespace verifier): loads the stored preset
 * (POST /presets), checks its parts and options against combine's declarations, and scores it
 * as a combination whose shared reference is the item's reference.
 */
import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { InvalidItemError, MachineryError } from "../../src/core/types.js";
import { defineVerifier } from "../../src/core/verifier.js";
import { storedName } from "../../src/core/stored-name.js";
import { NotFound } from "../../src/store/index.js";
import { CombineOptions, Parts, combinationProblem, scoreCombination, type CombineOpts, type PartSpec } from "./combine.js";
import type { KnownVerifiers } from "../../src/core/verifier.js";

/**
 * Why a preset's content ({parts, options}) could never score an item, or undefined: its parts
 * and options against combine's declarations, each part's verifier (known here, not the preset
 * itself) and its options (against that verifier's), and the gate rules.
 */
export function presetProblem(name: string, content: unknown, known: KnownVerifiers): { field: string; message: string } | undefined {
  const read = readPreset(content);
  if ("message" in read) return read;
  const { parts, opts } = read;
  for (const [i, p] of parts.entries()) {
    if (p.verifier.startsWith("preset:") && storedName(p.verifier).name === name) return { field: `parts/${i}/verifier`, message: `parts/${i}: the preset ${name} cannot include itself` };
    const unknown = known.unknownVerifier(p.verifier);
    if (unknown) return { field: `parts/${i}/verifier`, message: `parts/${i}: ${unknown}` };
    const bad = known.optionsProblem(p.verifier, p.options);
    if (bad) return { field: `parts/${i}/options`, message: `parts/${i} (${p.verifier}): ${bad}` };
  }
  const problem = combinationProblem(parts, opts);
  return problem ? { field: "parts", message: problem } : undefined;
}

/** A stored preset's parts, and its options with combine's defaults, checked against combine's declarations; or the field and why not. */
function readPreset(content: unknown): { parts: PartSpec[]; opts: CombineOpts } | { field: string; message: string } {
  const c = (content ?? {}) as { parts?: unknown; options?: unknown };
  if (!Value.Check(Parts, c.parts)) {
    const e = [...Value.Errors(Parts, c.parts)][0];
    return { field: "parts", message: `parts${e?.path ?? ""} ${e?.message ?? "do not match the combine verifier's declaration"}` };
  }
  const opts = Value.Default(CombineOptions, { ...((c.options as object) ?? {}) }) as CombineOpts;
  if (!Value.Check(CombineOptions, opts)) {
    const e = [...Value.Errors(CombineOptions, opts)][0];
    return { field: "options", message: `options${e?.path ?? ""} ${e?.message ?? "do not match the combine verifier's options"}` };
  }
  return { parts: c.parts, opts };
}

export const preset = defineVerifier({
  name: "preset",
  namespace: true,
  description: "A stored reward preset, called as preset:<name> or preset:<name>@<version>; the reference goes to parts that give none.",
  reference: Type.Unknown({ description: "shared reference for the preset's parts" }),
  options: Type.Object({}, { additionalProperties: false }),
  checkStored: presetProblem,
  async verify(item, ctx) {
    const { name, version } = storedName(item.verifier);
    let stored;
    try {
      stored = await (await ctx.services.store()).presets.get(name, version);
    } catch (err) {
      if (err instanceof NotFound) throw new InvalidItemError(`${err.message}; GET /presets lists them`, "verifier");
      throw new MachineryError(`preset store: ${(err as Error).message}`);
    }
    const where = `preset ${name} version ${stored.version}`;
    const read = readPreset(stored);
    if ("message" in read) throw new InvalidItemError(`${where}: ${read.message}`, "verifier");
    const out = await scoreCombination(read.parts, { response: item.response, prompt: item.prompt, reference: item.reference }, read.opts, ctx, where);
    return { ...out, details: { ...(out.details ?? {}), preset: name, version: stored.version } };
  },
});
