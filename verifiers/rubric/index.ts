/**
 * rubric: an LLM judge checks the response against weighted criteria (a stored, versioned rubric
 * or an inline one). See README.md.
 */
import { Type, type Static } from "@sinclair/typebox";
import { defineVerifier } from "../../src/core/verifier.js";
import type { Services } from "../../src/core/services.js";
import { InvalidItemError } from "../../src/core/types.js";
import { afterThink } from "../../src/core/completion.js";
import { OPENAPI } from "../../src/core/contract.js";
import { contentOf, rubricProblem, RubricNotFound, type Criterion } from "../../src/store/index.js";
import { STRUCTURED_MODES } from "../../src/judge/types.js";
import { scoreWithRubric } from "./score.js";
import { cutTo } from "./prompt.js";

// The rubric's shapes are the contract's (openapi.yaml), used here as they are.
const S = OPENAPI.components.schemas as Record<string, object>;
const CriterionSchema = Type.Unsafe<Criterion>(S.Criterion);
const RubricIdSchema = Type.Unsafe<string>(S.RubricId);
const Text = (description: string) => Type.String({ maxLength: 1_048_576, description });

const Reference = Type.Union([
  Type.Object(
    {
      rubric_id: RubricIdSchema,
      version: Type.Optional(Type.Integer({ minimum: 1, description: "Pin a version; the latest when absent." })),
      reference_answer: Type.Optional(Text("An expert answer the judge may compare against.")),
    },
    { additionalProperties: false, description: "A stored rubric (POST /rubrics)." },
  ),
  Type.Object(
    {
      title: Type.Optional(Type.String({ maxLength: 256 })),
      description: Type.Optional(Type.String({ maxLength: 65_536 })),
      criteria: Type.Array(CriterionSchema, { minItems: 1, maxItems: 64 }),
      reference_answer: Type.Optional(Text("An expert answer the judge may compare against.")),
    },
    { additionalProperties: false, description: "An inline rubric." },
  ),
]);

/** Temperature used when samples > 1 and none is given: votes among identical samples mean nothing. */
export const VOTING_TEMPERATURE = 0.7;

const Options = Type.Object(
  {
    aggregation: Type.Union([Type.Literal("weighted"), Type.Literal("holistic")], {
      default: "weighted",
      description: "weighted: one judge call per criterion, reward = sum(weight x met) / sum(positive weights), vetoes zero it; holistic: one call sees the whole rubric and gives 0-10.",
    }),
    samples: Type.Integer({ minimum: 1, maximum: 15, default: 1, description: "Judge samples per criterion (majority vote; a tie pays less: not met, but met for a pitfall) or per item (median score)." }),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2, description: `Judge temperature; default ASSAY_JUDGE_TEMPERATURE, or ${VOTING_TEMPERATURE} when samples > 1.` })),
    strip_think: Type.Boolean({ default: true, description: "Grade only the text after the last </think> (none, when a <think> never closes)." }),
    max_chars: Type.Integer({
      minimum: 1, maximum: 1_048_576, default: 100_000,
      description: "Prompt, response and reference answer are each cut to this many characters before the judge sees them (the response shorter still when the judge's context is exceeded).",
    }),
    judge: Type.Optional(
      Type.Object(
        {
          base_url: Type.Optional(Type.String({ pattern: "^https?://", maxLength: 2048 })),
          model: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
          api_key: Type.Optional(Type.String({ maxLength: 4096 })),
          max_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 65_536 })),
          structured: Type.Optional(Type.Union(STRUCTURED_MODES.map((m) => Type.Literal(m)))),
        },
        { additionalProperties: false, description: "This item's judge endpoint, over ASSAY_JUDGE_*." },
      ),
    ),
  },
  { additionalProperties: false },
);

export const rubric = defineVerifier({
  name: "rubric",
  description: "An LLM judge checks the response against weighted criteria (stored rubric or inline); reward = met weight / positive weight, vetoes zero it.",
  reference: Reference,
  options: Options,
  async verify(item, ctx) {
    if (typeof item.prompt !== "string") {
      throw new InvalidItemError("the rubric verifier needs the item's prompt: the judge grades the response as an answer to it", "prompt");
    }
    const o = item.options;
    const ref = item.reference;
    const { criteria, details } = await resolveRubric(ref, ctx.services);
    const truncated: string[] = [];
    const cap = (name: string, s: string) => {
      if (s.length <= o.max_chars) return s;
      truncated.push(name);
      return cutTo(s, o.max_chars);
    };
    const response = o.strip_think ? afterThink(item.response) : item.response;
    const material = {
      prompt: cap("prompt", item.prompt),
      response: cap("response", response),
      ...(ref.reference_answer !== undefined ? { reference_answer: cap("reference_answer", ref.reference_answer) } : {}),
    };
    if (truncated.length) details.truncated = truncated;
    details.aggregation = o.aggregation;
    const j = o.judge ?? {};
    return scoreWithRubric(
      await ctx.services.judge(),
      criteria,
      material,
      { aggregation: o.aggregation, samples: o.samples },
      {
        override: {
          baseURL: j.base_url, model: j.model, apiKey: j.api_key, maxTokens: j.max_tokens, structured: j.structured,
          temperature: o.temperature ?? (o.samples > 1 ? VOTING_TEMPERATURE : undefined),
        },
        signal: ctx.signal,
        deadline: ctx.deadline,
      },
      details,
      { response, shown: Math.min(response.length, o.max_chars) },
    );
  },
});

/** The criteria to judge: a stored rubric (latest or pinned version) or the inline one. */
async function resolveRubric(ref: Static<typeof Reference>, services: Services): Promise<{ criteria: Criterion[]; details: Record<string, unknown> }> {
  if ("rubric_id" in ref) {
    try {
      const r = await (await services.store()).rubrics.get(ref.rubric_id, ref.version);
      return { criteria: r.criteria, details: { rubric: { id: r.id, version: r.version } } };
    } catch (err) {
      if (err instanceof RubricNotFound) throw new InvalidItemError(`reference: ${err.message}; see GET /rubrics`, "reference.rubric_id");
      throw err;
    }
  }
  const problem = rubricProblem(ref, "reference/criteria");
  if (problem) throw new InvalidItemError(problem.replace(/^at \//, "at "), "reference.criteria");
  return { criteria: contentOf({ title: "", criteria: ref.criteria }).criteria, details: { rubric: { inline: true } } };
}

export default [rubric];
