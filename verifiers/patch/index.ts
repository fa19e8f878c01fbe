/** patch: SWE-RL's patch-similarity reward. See README.md. */
import { Type } from "@sinclair/typebox";
import { defineVerifier } from "../../src/core/verifier.js";
import { InvalidItemError } from "../../src/core/types.js";
import { afterThink } from "../../src/core/completion.js";
import { oracleFiles, searchReplaceReward, unifiedDiffReward, type PatchReward } from "./swerl.js";

/** Characters of search/replace application allowed per comparison step of max_compare_steps. */
export const APPLY_CHARS_PER_STEP = 16;

const Files = Type.Record(Type.String({ maxLength: 4096 }), Type.String({ maxLength: 1_000_000 }), { description: "path -> file content" });

export const patch = defineVerifier({
  name: "patch",
  description: "SWE-RL: difflib similarity of the predicted edit to the oracle's, -1 when the completion has no well-formed edit.",
  reference: Type.Union([
    Type.String({ maxLength: 1_000_000, description: "the oracle patch (unified diff); the completion answers with a diff" }),
    Type.Object(
      {
        code_context: Files,
        oracle_new_content: Files,
      },
      { additionalProperties: false, description: "SWE-RL's form: original files and the oracle's new contents; the completion answers with search/replace edits" },
    ),
  ]),
  options: Type.Object(
    {
      strip_think: Type.Boolean({ default: true, description: "unified-diff form: look for the patch after the last </think> (none, when a <think> never closes)" }),
      max_response_chars: Type.Integer({ default: 262_144, minimum: 1, maximum: 1_048_576, description: "a longer completion is -1" }),
      max_change_chars: Type.Integer({
        default: 65_536, minimum: 1, maximum: 1_048_576,
        description: "a file whose normalised change (either side) is longer counts similarity 0, uncompared",
      }),
      max_compare_steps: Type.Integer({
        default: 1_000_000, minimum: 1, maximum: 1_000_000_000,
        description: "work budget of one SequenceMatcher comparison; a file past it counts similarity 0 (applying search/replace edits may read and copy 16 characters a step, all edits together; past that the reward is -1)",
      }),
    },
    { additionalProperties: false },
  ),
  async verify(item) {
    const o = item.options;
    const ref = item.reference;
    if (item.response.length > o.max_response_chars) {
      return { reward: -1, reason: `completion longer than max_response_chars (${item.response.length} > ${o.max_response_chars})`, details: {} };
    }
    let r: PatchReward;
    // Applying edits costs ~4 ns a character read and copied, a comparison step ~20-40 ns: the
    // same budget, counted as 16 characters a step (default 16M, about 70 ms).
    const limits = { steps: o.max_compare_steps, chars: o.max_change_chars, applyChars: APPLY_CHARS_PER_STEP * o.max_compare_steps };
    if (typeof ref === "string") {
      let files: number;
      try {
        files = oracleFiles(ref).size;
      } catch (e) {
        throw new InvalidItemError(`reference is not a unified diff: ${(e as Error).message}`);
      }
      if (files === 0) throw new InvalidItemError("reference patch has no hunks");
      r = unifiedDiffReward(o.strip_think ? afterThink(item.response) : item.response, ref, limits);
    } else {
      r = searchReplaceReward(ref.code_context, ref.oracle_new_content, item.response, limits);
    }
    return {
      reward: r.reward,
      reason: r.reason,
      details: { similarities: r.similarities.slice(0, 64), form: typeof ref === "string" ? "unified_diff" : "search_replace" },
    };
  },
});

export default [patch];
