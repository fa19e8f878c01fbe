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
import { CombineOptions, Parts, scoreCombination, type CombineOpts } from "./combine.js";

export const preset = defineVerifier({
  name: "preset",
  namespace: true,
  description: "A stored reward preset, called as preset:<name> or preset:<name>@<version>; the reference goes to parts that give none.",
  reference: Type.Unknown({ description: "shared reference for the preset's parts" }),
  options: Type.Object({}, { additionalProperties: false }),
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
    if (!Value.Check(Parts, stored.parts)) {
      const e = [...Value.Errors(Parts, stored.parts)][0];
      throw new InvalidItemError(`${where}: parts${e?.path ?? ""} ${e?.message ?? "do not match the combine verifier's declaration"}`, "verifier");
    }
    const opts = Value.Default(CombineOptions, { ...(stored.options ?? {}) }) as CombineOpts;
    if (!Value.Check(CombineOptions, opts)) {
      const e = [...Value.Errors(CombineOptions, opts)][0];
      throw new InvalidItemError(`${where}: options${e?.path ?? ""} ${e?.message ?? "do not match the combine verifier's options"}`, "verifier");
    }
    const out = await scoreCombination(stored.parts, { response: item.response, prompt: item.prompt, reference: item.reference }, opts, ctx, where);
    return { ...out, details: { ...(out.details ?? {}), preset: name, version: stored.version } };
  },
});
