/**
 * trajectory: a reward over a whole multi-turn rollout (issue 32) — the final answer scored by any
 * verifier (a part, through ctx.scorePart), less a penalty for the tool calls that failed, so a
 * trainer can penalise failed tool calls.
 *
 * Tool errors are counted as rStar2-Agent counts them for GRPO-RoC (Shang et al., "rStar2-Agent:
 * Agentic Reasoning Technical Report", arXiv:2508.20722, §3: Resample-on-Correct keeps, among the
 * correct rollouts of a group, those with the fewest tool errors; recipe code in
 * volcengine/verl @ c12e3cbce, recipe/rstar2_agent/src/down_sample/roc.py,
 * calc_error_ratio_penalty_weights (MIT, Microsoft)): a tool response is an error when its text
 * contains "error" (any case), and the rollout's error ratio is errors / tool responses. RoC uses
 * the ratio to choose which correct rollouts to train on; here it lowers a correct rollout's reward
 * instead (`when: "correct"`, the default), which a trainer without RoC's sampler can use as is.
 *
 * The rollout is the item's `response`: OpenAI chat messages as JSON (`[{role, content, ...}]`,
 * roles set by the trainer, so nothing the model writes counts as a tool result) or text with
 * `<tool_response>` blocks (rStar2's template: the tags are trusted as the template's). Linear
 * time: one depth scan before JSON.parse, RE2 (re2js) for the error pattern, caps on turns.
 */
import { RE2JS } from "re2js";
import { Type, type Static } from "@sinclair/typebox";
import { InvalidItemError, MachineryError, type Outcome } from "../../src/core/types.js";
import { defineVerifier } from "../../src/core/verifier.js";
import { jsonDepth } from "../../src/core/json-depth.js";

/** rStar2-Agent's rule: `"error" in match.lower()`. */
export const DEFAULT_ERROR_PATTERN = "error";
/** The deepest JSON a messages rollout may nest (a message's content parts, tool call arguments). */
export const MAX_DEPTH = 32;
/** Turns listed one by one in details (all are counted). */
const LISTED = 100;

export const Answer = Type.Object(
  {
    verifier: Type.String({ minLength: 1, maxLength: 200, description: "the verifier that scores the final answer (math, code, exact, ...)" }),
    reference: Type.Optional(Type.Unknown()),
    options: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

export const TrajectoryOptions = Type.Object(
  {
    format: Type.Union([Type.Literal("auto"), Type.Literal("messages"), Type.Literal("text")], {
      default: "auto",
      description: "messages: response is a JSON array of chat messages; text: tool results in <tool_response> blocks; auto: messages when the response is a JSON array holding an object, else text",
    }),
    penalty: Type.Union([Type.Literal("ratio"), Type.Literal("count")], { default: "ratio", description: "ratio: weight x errors / tool calls (rStar2-Agent's error ratio); count: weight x errors" }),
    weight: Type.Number({ default: 0.5, minimum: 0, description: "penalty per unit (the whole ratio, or one error)" }),
    max_penalty: Type.Number({ default: 1, minimum: 0, description: "the penalty never exceeds this" }),
    when: Type.Union([Type.Literal("correct"), Type.Literal("always")], { default: "correct", description: "correct: only a rollout whose answer reaches correct_at is penalised (as RoC only filters correct rollouts); always: every rollout" }),
    correct_at: Type.Number({ default: 1, description: "answer reward at or above which the rollout counts as correct" }),
    floor: Type.Number({ default: 0, description: "the penalty never takes the reward below this (nor below the answer reward, if that is lower already)" }),
    error_pattern: Type.String({ default: DEFAULT_ERROR_PATTERN, minLength: 1, maxLength: 1000, description: "RE2, case-insensitive: a tool result whose text matches is an error" }),
    no_tool_calls: Type.Number({ default: 0, minimum: 0, maximum: 1, description: "error ratio given to a rollout with no tool calls (rStar2-Agent's RoC uses 0.5 to rank such rollouts)" }),
    max_turns: Type.Integer({ default: 1000, minimum: 1, maximum: 100_000, description: "a rollout with more messages (or tool responses) than this scores 0" }),
  },
  { additionalProperties: false },
);
type Options = Static<typeof TrajectoryOptions>;

/** One tool result: where it sits and whether it failed. */
export interface ToolTurn {
  /** Index of the message (messages) or of the tool response block (text). */
  turn: number;
  error: boolean;
  /** Why it counts as an error: "flag" (the trainer marked it), "pattern" (its text matched). */
  why?: "flag" | "pattern";
  name?: string;
}

export interface Parsed {
  format: "messages" | "text";
  /** The final answer: the last assistant message's text, or the text after the last tool response. */
  answer: string;
  tools: ToolTurn[];
  turns: number;
}

/** Hostile or malformed rollouts: scored 0 with this reason (never null: the model wrote them). */
export class Unscorable extends Error {}

const cache = new Map<string, RE2JS>();
function compile(pattern: string): RE2JS {
  let re = cache.get(pattern);
  if (!re) {
    try {
      re = RE2JS.compile(pattern, RE2JS.DOTALL | RE2JS.CASE_INSENSITIVE);
    } catch (e) {
      throw new InvalidItemError(`options.error_pattern does not compile as RE2: ${(e as Error).message}`, "options.error_pattern");
    }
    if (cache.size >= 256) cache.delete(cache.keys().next().value!);
    cache.set(pattern, re);
  }
  return re;
}

/** A message's text: a string, or the text parts of a content array (OpenAI's and MCP's `{type: "text", text}`). */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  let out = "";
  for (const part of content) {
    if (typeof part === "string") out += part;
    else if (part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string") out += (part as { text: string }).text;
  }
  return out;
}

/** A trainer's (or MCP's) explicit failure flag on a tool message. */
function flagged(m: Record<string, unknown>): boolean {
  return m.is_error === true || m.isError === true || m.error === true || m.status === "error" || (typeof m.error === "string" && m.error.length > 0);
}

export function parseTrajectory(response: string, o: Pick<Options, "format" | "error_pattern" | "max_turns">): Parsed {
  const re = compile(o.error_pattern);
  const auto = o.format === "auto";
  const looksJson = /^\s*\[/.test(response);
  const format = o.format === "auto" ? (looksJson ? "messages" : "text") : o.format;
  if (format === "text") return parseText(response, re, o.max_turns);
  // Refused before JSON.parse walks it (V8 takes ~0.35 µs a level). Under auto too: no ordinary
  // text nests brackets this deep, and reading a deep messages rollout as text would not count
  // its tool errors.
  if (jsonDepth(response, MAX_DEPTH) > MAX_DEPTH) throw new Unscorable(`the rollout's JSON is nested deeper than ${MAX_DEPTH} levels`);
  let messages: unknown;
  try {
    messages = JSON.parse(response);
  } catch (e) {
    // auto: not JSON, so not a messages rollout ("[Step 1] ..."): the text form, as any other text.
    if (auto) return parseText(response, re, o.max_turns);
    throw new Unscorable(`the rollout is not valid JSON (format messages): ${(e as Error).message.slice(0, 200)}`);
  }
  // auto: a JSON array with no object in it ("[1, 2, 3]", "[]") is an answer written as text, not
  // a chat transcript (one with some objects stays messages, and a bad message scores 0).
  if (auto && Array.isArray(messages) && !messages.some((m) => m !== null && typeof m === "object" && !Array.isArray(m))) {
    return parseText(response, re, o.max_turns);
  }
  if (!Array.isArray(messages)) throw new Unscorable("the rollout (format messages) must be a JSON array of chat messages");
  if (messages.length > o.max_turns) throw new Unscorable(`the rollout has ${messages.length} messages, over max_turns (${o.max_turns})`);
  const tools: ToolTurn[] = [];
  let answer: string | null = null;
  messages.forEach((m, i) => {
    if (!m || typeof m !== "object" || Array.isArray(m)) throw new Unscorable(`message ${i} is not an object`);
    const msg = m as Record<string, unknown>;
    if (msg.role === "tool" || msg.role === "ipython" || msg.role === "function") {
      const name = typeof msg.name === "string" ? msg.name.slice(0, 100) : undefined;
      const error = flagged(msg) ? "flag" : re.matcher(textOf(msg.content)).find() ? "pattern" : undefined;
      tools.push({ turn: i, error: error !== undefined, ...(error ? { why: error } : {}), ...(name ? { name } : {}) });
    } else if (msg.role === "assistant") {
      const t = textOf(msg.content);
      if (t.trim()) answer = t;
    }
  });
  if (answer === null) throw new Unscorable("the rollout has no assistant message with text: no final answer to score");
  return { format, answer, tools, turns: messages.length };
}

const OPEN = "<tool_response>";
const CLOSE = "</tool_response>";

/** rStar2-Agent's `<tool_response>.*?</tool_response>` (DOTALL, non-greedy) with indexOf: linear. */
function parseText(text: string, re: RE2JS, maxTurns: number): Parsed {
  const tools: ToolTurn[] = [];
  let at = 0;
  let end = 0;
  for (;;) {
    const open = text.indexOf(OPEN, at);
    if (open < 0) break;
    const close = text.indexOf(CLOSE, open + OPEN.length);
    if (close < 0) break;
    if (tools.length >= maxTurns) throw new Unscorable(`the rollout has more than max_turns (${maxTurns}) tool responses`);
    const body = text.slice(open + OPEN.length, close);
    const error = re.matcher(body).find();
    tools.push({ turn: tools.length, error, ...(error ? { why: "pattern" as const } : {}) });
    at = end = close + CLOSE.length;
  }
  return { format: "text", answer: text.slice(end), tools, turns: tools.length };
}

/** The penalty for the rollout's tool errors, capped; the ratio as rStar2-Agent's calc_error_ratio_penalty_weights computes it. */
export function toolPenalty(tools: readonly ToolTurn[], o: Pick<Options, "penalty" | "weight" | "max_penalty" | "no_tool_calls">): { errors: number; ratio: number; penalty: number } {
  const errors = tools.reduce((n, t) => n + (t.error ? 1 : 0), 0);
  const ratio = tools.length === 0 ? o.no_tool_calls : errors / tools.length;
  const raw = o.penalty === "ratio" ? o.weight * ratio : o.weight * errors;
  return { errors, ratio, penalty: Math.min(raw, o.max_penalty) };
}

export const trajectory = defineVerifier({
  name: "trajectory",
  description: "A multi-turn rollout's reward: its final answer scored by any verifier, less a penalty for failed tool calls (rStar2-Agent's error ratio).",
  reference: Answer,
  options: TrajectoryOptions,
  partsOf: (ref) => (ref && typeof ref === "object" ? [ref] : []),
  async verify(item, ctx): Promise<Outcome> {
    const o: Options = item.options;
    compile(o.error_pattern); // a bad pattern is the item's fault, before anything runs
    if (!ctx.scorePart) throw new MachineryError("this context cannot score parts (no ctx.scorePart)");
    const scoreAnswer = async (response: string) => {
      const r = await ctx.scorePart!({ verifier: item.reference.verifier, response, prompt: item.prompt, reference: item.reference.reference, options: item.reference.options });
      if (r.status === "invalid") throw new InvalidItemError(`reference (answer verifier ${item.reference.verifier}): ${r.reason}`, "reference");
      return r;
    };
    let parsed: Parsed;
    try {
      parsed = parseTrajectory(item.response, o);
    } catch (e) {
      if (!(e instanceof Unscorable)) throw e;
      // Scored as a rollout with no answer: never above 0, nor above what the answer verifier
      // pays an empty answer (patch's -1), so garbling the rollout never beats a wrong answer.
      const none = await scoreAnswer("");
      const reward = none.status === "ok" ? Math.min(0, none.reward as number) : 0;
      return { reward, reason: `unscorable rollout: ${e.message}; scored as no answer (${round(reward)})`, details: { format_ok: false, answer: none } };
    }
    const { answer: finalText, tools, format, turns } = parsed;
    const inner = await scoreAnswer(finalText);
    if (inner.status !== "ok") return { reward: null, reason: `answer verifier ${item.reference.verifier} failed: ${inner.reason}`, details: { answer: inner } };
    const answerReward = inner.reward as number;
    const correct = answerReward >= o.correct_at;
    const { errors, ratio, penalty } = toolPenalty(tools, o);
    const applied = o.when === "always" || correct ? penalty : 0;
    // The floor bounds only what the penalty takes away: a negative answer reward (RLCR's
    // -0.64, patch's -1) is kept as is when no penalty applies, and never raised by the floor.
    const reward = applied > 0 ? Math.max(Math.min(o.floor, answerReward), answerReward - applied) : answerReward;
    const failed = tools.filter((t) => t.error);
    const details = {
      format,
      format_ok: true,
      turns,
      tool_calls: tools.length,
      tool_errors: errors,
      error_ratio: ratio,
      penalty: applied,
      answer_reward: answerReward,
      correct,
      failed_turns: failed.slice(0, LISTED),
      answer: inner,
    };
    const why = `${errors}/${tools.length} tool call(s) failed`;
    const reason = applied > 0 ? `answer ${round(answerReward)} less ${round(applied)} for tool errors (${why}) = ${round(reward)}` : `answer ${round(answerReward)}; ${why}${penalty > 0 ? " (not penalised: the answer is not correct)" : ""}`;
    return { reward, reason, details };
  },
});

const round = (x: number) => Math.round(x * 1e6) / 1e6;

export default [trajectory];
