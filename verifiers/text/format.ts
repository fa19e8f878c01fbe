/**
 * format: rewards R1-style well-formed output: one reasoning block `<think>…</think>` first, then
 * the answer (inside `<answer>…</answer>` when an answer tag is configured). Tags are configurable.
 */
import { Type, type Static } from "@sinclair/typebox";
import { defineVerifier } from "../../src/core/verifier.js";

const Tag = { pattern: "^[A-Za-z][A-Za-z0-9_-]{0,31}$" };
const Options = Type.Object(
  {
    think_tag: Type.String({ ...Tag, default: "think" }),
    answer_tag: Type.Union([Type.String(Tag), Type.Null()], {
      default: "answer",
      description: "tag the answer must sit in; null means any non-empty text after the reasoning block",
    }),
    strict: Type.Boolean({ default: true, description: "nothing but whitespace may stand outside the tags" }),
    think_opened_by_template: Type.Boolean({ default: false, description: "the chat template opened the reasoning block" }),
    reward: Type.Number({ default: 1, description: "reward for well-formed output" }),
    penalty: Type.Number({ default: 0, description: "reward for malformed output (-1 is a common penalty)" }),
  },
  { additionalProperties: false },
);
export type FormatOptions = Static<typeof Options>;

function count(hay: string, needle: string): number {
  let n = 0;
  for (let i = hay.indexOf(needle); i >= 0; i = hay.indexOf(needle, i + needle.length)) n++;
  return n;
}

/** Returns null when well-formed, else what is wrong. */
export function checkFormat(response: string, o: FormatOptions): string | null {
  const think = o.think_tag;
  const answer = o.answer_tag;
  const strict = o.strict;
  const [to, tc] = [`<${think}>`, `</${think}>`];
  let text = response;
  if (o.think_opened_by_template && !text.trimStart().startsWith(to)) text = to + text;
  const lead = text.trimStart();
  if (!lead.startsWith(to)) return `does not start with ${to}`;
  if (count(text, to) !== 1) return `${to} appears ${count(text, to)} times; exactly one is required`;
  if (count(text, tc) !== 1) return `${tc} appears ${count(text, tc)} times; exactly one is required`;
  const end = text.indexOf(tc);
  const reasoning = text.slice(text.indexOf(to) + to.length, end);
  if (!reasoning.trim()) return `the ${think} block is empty`;
  const rest = text.slice(end + tc.length);
  if (answer === null) return rest.trim() ? null : `no answer after ${tc}`;
  const [ao, ac] = [`<${answer}>`, `</${answer}>`];
  if (count(rest, ao) !== 1 || count(rest, ac) !== 1) return `exactly one ${ao}…${ac} block is required after ${tc}`;
  // rest holds exactly one of each, so another is before </think>: inside the reasoning block
  if (count(text, ao) !== 1) return `${ao} appears inside the ${think} block`;
  if (count(text, ac) !== 1) return `${ac} appears inside the ${think} block`;
  const a0 = rest.indexOf(ao);
  const a1 = rest.indexOf(ac);
  if (a1 < a0) return `${ac} comes before ${ao}`;
  if (!rest.slice(a0 + ao.length, a1).trim()) return `the ${answer} block is empty`;
  if (strict && (rest.slice(0, a0).trim() || rest.slice(a1 + ac.length).trim())) {
    return `text outside the ${ao} block after ${tc} (strict)`;
  }
  return null;
}

export const format = defineVerifier({
  name: "format",
  description: "R1-style format reward: <think>…</think> then the answer (in <answer>…</answer> by default).",
  reference: Type.Unknown(),
  options: Options,
  verify(item) {
    const o = item.options;
    const problem = checkFormat(item.response, o);
    return problem === null
      ? { reward: o.reward, reason: "well-formed", details: {} }
      : { reward: o.penalty, reason: `malformed: ${problem}`, details: { problem } };
  },
});
