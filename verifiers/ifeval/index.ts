/**
 * ifeval: instruction-following constraints as IFEval (Zhou et al. 2023, arXiv:2311.07911;
 * google-research instruction_following_eval) and Tulu 3's RLVR-IFeval (open-instruct) define them.
 * The reward is the fraction of the item's instructions the response follows (or 1 only when all
 * are followed), checked strictly or with IFEval's "loose" variants of the response.
 */
import { Type, type Static } from "@sinclair/typebox";
import { defineVerifier } from "../../src/core/verifier.js";
import { afterThink } from "../../src/core/completion.js";
import { Facts } from "./instructions.js";
import { openInstructAnswer } from "./open_instruct.js";
import { parseReference } from "./reference.js";
import { pyStrip } from "./text.js";
import { useSentenceModel } from "./punkt.js";
import { langdetectLanguages } from "./langdetect.js";

const Options = Type.Object(
  {
    profile: Type.Union([Type.Literal("rl"), Type.Literal("benchmark")], {
      default: "rl",
      description:
        "rl: the safer defaults for training (strip <think>, 65,536-character cap, an empty answer follows nothing); benchmark: the reference scorers' verdicts (IFEval's official scorer, open-instruct's verifiers) with only a 262,144-character safety cap: see the verifier's README",
    }),
    mode: Type.Union([Type.Literal("strict"), Type.Literal("loose")], {
      default: "strict",
      description: "IFEval's strict check, or loose: followed if any of 8 variants of the response (first/last line dropped, asterisks removed) follows",
    }),
    reward: Type.Union([Type.Literal("fraction"), Type.Literal("all")], {
      default: "fraction",
      description: "fraction of the instructions followed (instruction-level), or 1 only when all are (prompt-level)",
    }),
    strip_think: Type.Optional(
      Type.Boolean({
        description:
          "score only the text after the last </think>; unset: yes, except in the benchmark profile on IFEval rows (IFEval's scorer strips nothing; open-instruct's verifiers always cut at </think>)",
      }),
    ),
  },
  { additionalProperties: false },
);
export type IfevalOptions = Static<typeof Options>;

/**
 * IFEval's {instruction_id_list, kwargs} (or open-instruct's {instruction_id, kwargs}), RLVR-IFeval's
 * {func_name, ...kwargs}, a one-element list of either, or a JSON string of any of these. The
 * shapes inside are checked by parseReference, which names what is wrong.
 */
const Reference = Type.Union([
  Type.String({ minLength: 1, maxLength: 1_048_576 }),
  Type.Object({}, { additionalProperties: true }),
  Type.Array(Type.Unknown(), { minItems: 1, maxItems: 1 }),
]);

/** Responses longer than this (characters, after the </think> cut) score 0: see README "Limits". */
export const MAX_RESPONSE_CHARS = 65_536;
/** The benchmark profile's host safety cap (the reference scorers have none): see README "Limits". */
export const BENCHMARK_MAX_CHARS = 262_144;

/**
 * evaluation_lib.test_instruction_following_loose: the response, with its first line removed,
 * its last line removed, both, and each of those with every "*" removed.
 */
export function looseVariants(response: string): string[] {
  const r = response.split("\n");
  const first = pyStrip(r.slice(1).join("\n"));
  const last = pyStrip(r.slice(0, -1).join("\n"));
  const both = pyStrip(r.slice(1, -1).join("\n"));
  const noStar = (s: string) => s.replaceAll("*", "");
  return [response, noStar(response), first, last, both, noStar(first), noStar(last), noStar(both)];
}

export const ifeval = defineVerifier({
  name: "ifeval",
  description: "IFEval / RLVR-IFeval instruction following: fraction (or all) of the reference's instructions the response follows.",
  reference: Reference,
  options: Options,
  async init(ctx) {
    useSentenceModel(ctx.services.config.ifeval.punktDir);
    langdetectLanguages(); // loads langdetect's 55 profiles (about 0.5 s) here, not in a request
  },
  verify(item, ctx) {
    useSentenceModel(ctx.services.config.ifeval.punktDir); // ASSAY_IFEVAL_PUNKT_DIR, read once
    const o = item.options;
    const mode = o.mode;
    const profile = o.profile;
    const benchmark = profile === "benchmark";
    const parsed = parseReference(item.reference, item.prompt);
    const strip = o.strip_think ?? !(benchmark && parsed.format === "ifeval");
    // IFEval's rows are scored on the response as written; open-instruct's on remove_thinking_section's answer.
    // afterThink: "" for a <think> never closed (a completion cut off while it reasoned); rl
    // gives open-instruct's rows the same rule, where remove_thinking_section keeps the reasoning
    const text = parsed.format === "ifeval" ? (strip ? afterThink(item.response) : item.response)
      : openInstructAnswer(strip && !benchmark && afterThink(item.response) === "" ? "" : item.response, strip);
    const kwargsOf = (i: number) => parsed.items[i].kwargs;
    const none = (extra: Record<string, unknown>, reason: string) => ({
      reward: 0,
      reason,
      details: {
        format: parsed.format,
        mode,
        profile,
        ...extra,
        instructions: parsed.items.map((it, i) => ({ id: it.id, followed: false, kwargs: kwargsOf(i) })),
      },
    });

    const cap = benchmark ? BENCHMARK_MAX_CHARS : MAX_RESPONSE_CHARS;
    if (text.length > cap) {
      return none({ too_long: true }, `response is ${text.length} characters, over the ${cap} scored; no instruction counts as followed`);
    }
    // IFEvalVerifier: `if len(prediction) == 0 or len(answer) == 0: return 0.0`.
    if (parsed.format === "ifevalg" && text.length === 0) {
      return none({ empty: true }, "the answer is empty (after open-instruct's answer cleaning); no instruction counts as followed");
    }
    // IFEval: `response.strip() and check_following(response)`; IFEvalVerifierOld calls the function
    // even on an empty answer (benchmark), where the rl profile counts nothing as followed.
    const emptyFollows = benchmark && parsed.format === "open-instruct";

    // Loose mode's 8 variants often coincide (no "*" in the text, a single line): a check depends
    // on the text alone, so each distinct variant is checked once, with one Facts (its counts,
    // sentences and language found once) shared by every instruction of the item.
    const texts = mode === "loose" ? [...new Set(looseVariants(text))] : [text];
    const facts = texts.map((t) => new Facts(t));
    const followed = parsed.items.map((it) =>
      facts.some((f) => {
        if (!pyStrip(f.text) && !emptyFollows) return false;
        return parsed.format !== "open-instruct" ? (it.check as (f: Facts) => boolean)(f) : (it.check as (t: string) => boolean)(f.text);
      }),
    );
    const n = followed.filter(Boolean).length;
    const total = followed.length;
    const reward = o.reward === "all" ? (n === total ? 1 : 0) : n / total;
    const failed = parsed.items.filter((_, i) => !followed[i]).map((it) => it.id);
    return {
      reward,
      reason: failed.length === 0 ? `followed all ${total} instruction(s) (${mode}, ${profile})` : `followed ${n}/${total} (${mode}, ${profile}); not followed: ${failed.join(", ")}`,
      details: {
        format: parsed.format,
        mode,
        profile,
        instructions: parsed.items.map((it, i) => ({ id: it.id, followed: followed[i], kwargs: kwargsOf(i) })),
      },
    };
  },
});

export default [ifeval];
