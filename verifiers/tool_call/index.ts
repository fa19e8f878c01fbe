/** tool_call: ToolRL's format + correctness reward for function calls. See README.md. */
import { Type } from "@sinclair/typebox";
import { defineVerifier } from "../../src/core/verifier.js";
import { InvalidItemError } from "../../src/core/types.js";
import { readCalls, toolrlReward, type ToolCall } from "./toolrl.js";
import { DEFAULT_LIMITS } from "../json/parse.js";

const Call = Type.Object(
  {
    name: Type.String({ maxLength: 1024 }),
    arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "ToolRL's spelling of arguments" })),
  },
  { additionalProperties: false },
);

export const toolCall = defineVerifier({
  name: "tool_call",
  description: "ToolRL's tool-call reward: format (0/1) + correctness of names, parameter names and values ([-3, 3]).",
  reference: Type.Union([
    Type.String({ maxLength: 100_000, description: "ToolRL ground truth: <think>…</think> then <tool_call> JSON lines and/or <response>" }),
    Type.Array(Call, { maxItems: 64, description: "the expected calls; [] when none is expected" }),
  ]),
  options: Type.Object(
    {
      format_max: Type.Number({ default: 1, description: "format reward when the layout is right (ToolRL: 1)" }),
      format_min: Type.Number({ default: 0, description: "format reward otherwise (ToolRL: 0)" }),
      correct_max: Type.Number({ default: 3, description: "correctness for a perfect match (ToolRL: 3)" }),
      correct_min: Type.Number({ default: -3, description: "correctness for unreadable calls / no overlap (ToolRL: -3)" }),
      name_weight: Type.Number({ default: 1, minimum: 0 }),
      param_name_weight: Type.Number({ default: 1, minimum: 0 }),
      value_weight: Type.Number({ default: 1, minimum: 0 }),
      matching: Type.Union([Type.Literal("optimal"), Type.Literal("greedy")], {
        default: "optimal", description: "pair calls by optimal assignment, or greedily in order as ToolRL's code does",
      }),
      format_rule: Type.Union([Type.Literal("auto"), Type.Literal("toolrl"), Type.Literal("parsed")], {
        default: "auto", description: "toolrl: ToolRL's <think>/<tool_call>/<response> layout; parsed: the calls could be read; auto: toolrl for a ToolRL ground-truth string reference, parsed for a list of calls (the reference decides, never the completion)",
      }),
      normalize: Type.Boolean({ default: false, description: "map [format_min+correct_min, format_max+correct_max] onto [0, 1]" }),
      max_response_chars: Type.Integer({ default: 262_144, minimum: 1, maximum: 1_048_576 }),
    },
    { additionalProperties: false },
  ),
  verify(item) {
    const o = item.options;
    let expected: ToolCall[];
    let wantResponse = false;
    // A ToolRL string is parsed here, so its big integers can stay exact (as Python's json reads
    // them) and the completion's are read alike; a list of calls came through the request's
    // JSON.parse, already rounded to doubles, so the completion's numbers are read as doubles too.
    const exactIntegers = typeof item.reference === "string";
    if (typeof item.reference === "string") {
      wantResponse = item.reference.includes("<response>");
      if (item.reference.includes("<tool_call>")) {
        const r = readCalls(item.reference, { ...DEFAULT_LIMITS, exactIntegers });
        if (!r.ok) throw new InvalidItemError(`reference tool calls do not parse: ${r.reason}`);
        expected = r.calls;
      } else expected = [];
    } else {
      expected = item.reference.map((c) => ({ name: c.name, arguments: c.arguments ?? c.parameters ?? {} }));
    }
    const lo = o.format_min + o.correct_min, hi = o.format_max + o.correct_max;
    const scale = (r: number) => (o.normalize ? (hi > lo ? (r - lo) / (hi - lo) : 0) : r);
    if (item.response.length > o.max_response_chars) {
      return {
        reward: scale(lo),
        reason: `response longer than max_response_chars (${item.response.length} > ${o.max_response_chars})`,
        details: { format: o.format_min, correct: o.correct_min },
      };
    }
    const limits = { maxChars: o.max_response_chars, maxDepth: DEFAULT_LIMITS.maxDepth, exactIntegers };
    // The reference picks the rule: ToolRL's text implies ToolRL's layout, a list of calls none.
    const rule = o.format_rule === "auto" ? (typeof item.reference === "string" ? "toolrl" : "parsed") : o.format_rule;
    const r = toolrlReward(item.response, expected, wantResponse, o, rule, limits);
    return { reward: scale(r.reward), reason: r.reason, details: { ...r.details, raw_reward: r.reward } };
  },
});

export default [toolCall];
