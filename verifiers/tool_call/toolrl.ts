/**
 * ToolRL's reward for tool calls (Qian et al. 2025, "ToolRL: Reward is All Tool Learning Needs",
 * arXiv:2504.13958; reference code: verl/utils/reward_score/rlla.py in qiancheng0/ToolRL):
 *
 *   R = R_format + R_correct
 *   R_format  ∈ {format_min, format_max} = {0, 1}: the completion has ToolRL's layout
 *   R_correct = (correct_max − correct_min) · S / S_max + correct_min ∈ [−3, 3], where
 *     S     = match(gt names, predicted names)
 *             + Σ over gt calls of the matched predicted call's
 *               match(gt param names, predicted param names) + #(gt params whose value is equal)
 *     S_max = 1 + Σ over gt calls (1 + #gt params)
 *   match(a, b) = 1 if a == b (as lists) else |a ∩ b| / |a ∪ b| over multisets (0 if one is empty).
 *   An exact match of the whole call list gives correct_max; an unparseable call list correct_min;
 *   a ground truth without calls gives R_correct = 0.
 *
 * The only departure, on by default because calls are a set: ToolRL pairs each ground-truth call
 * greedily (in order) with the best unused predicted call of the same name; `matching: "optimal"`
 * pairs them by an optimal assignment (Hungarian algorithm, npm `munkres`), which is never lower
 * than greedy and equals it whenever greedy is already optimal. `matching: "greedy"` is ToolRL's.
 */
import { munkres } from "munkres";
import { DEFAULT_LIMITS, extractJson, fencedJson, parseJsonText, type JsonLimits } from "../json/parse.js";
import { afterThink } from "../../src/core/completion.js";

export interface ToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

export interface ToolRLWeights {
  format_max: number;
  format_min: number;
  correct_max: number;
  correct_min: number;
  /** Weight of the tool-name match term (ToolRL: 1). */
  name_weight: number;
  /** Weight of each call's parameter-name match (ToolRL: 1). */
  param_name_weight: number;
  /** Weight of each ground-truth parameter whose value matches (ToolRL: 1). */
  value_weight: number;
  matching: "optimal" | "greedy";
}

// ---------------------------------------------------------------------------------------------
// Reading calls

type CallsParse = { ok: true; calls: ToolCall[]; style: "tags" | "json" } | { ok: false; reason: string };

function count(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

/** One call object in any of the usual spellings, or a reason it is not one. */
function toCall(v: unknown, limits: JsonLimits): ToolCall | string {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return "a tool call is not a JSON object";
  let o = v as Record<string, unknown>;
  // OpenAI: {"type": "function", "function": {"name", "arguments"}}
  if (typeof o.function === "object" && o.function !== null && !Array.isArray(o.function)) o = o.function as Record<string, unknown>;
  if (typeof o.name !== "string") return "a tool call has no string \"name\"";
  let args: unknown = o.arguments ?? o.parameters ?? {};
  if (typeof args === "string") {
    // OpenAI sends arguments as a JSON-encoded string.
    const p = parseJsonText(args, limits);
    if (!p.ok) return `arguments of ${o.name} are not JSON: ${p.reason}`;
    args = p.value;
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) return `arguments of ${o.name} are not a JSON object`;
  return { name: o.name, arguments: args as Record<string, unknown> };
}

function toCalls(values: unknown[], limits: JsonLimits): ToolCall[] | string {
  const out: ToolCall[] = [];
  for (const v of values) {
    const c = toCall(v, limits);
    if (typeof c === "string") return c;
    out.push(c);
  }
  return out;
}

/** The calls inside `<tool_call>` blocks: one JSON value per block, or ToolRL's one per line. */
function callsFromTags(text: string, limits: JsonLimits): CallsParse {
  const values: unknown[] = [];
  let from = 0;
  for (;;) {
    const open = text.indexOf("<tool_call>", from);
    if (open < 0) break;
    const close = text.indexOf("</tool_call>", open);
    if (close < 0) return { ok: false, reason: "<tool_call> is never closed" };
    const body = text.slice(open + 11, close).trim();
    from = close + 12;
    const whole = parseJsonText(body, limits);
    if (whole.ok) {
      if (Array.isArray(whole.value)) values.push(...whole.value);
      else values.push(whole.value);
      continue;
    }
    for (const line of body.split("\n")) {
      // ToolRL: json.loads on every line; a bad line fails the whole call list.
      const p = parseJsonText(line.trim(), limits);
      if (!p.ok) return { ok: false, reason: `a <tool_call> line is not JSON: ${p.reason}` };
      values.push(p.value);
    }
  }
  const calls = toCalls(values, limits);
  return typeof calls === "string" ? { ok: false, reason: calls } : { ok: true, calls, style: "tags" };
}

/** At most this many separate JSON values (fences, or bare values) are read for calls. */
const MAX_JSON_VALUES = 16;

/** Whether a JSON value is written as tool calls: one call in any spelling, a list of them, or a `tool_calls` wrapper. */
function callShaped(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0 && v.every((x) => !Array.isArray(x) && callShaped(x));
  if (typeof v !== "object" || v === null) return false;
  const o = v as Record<string, unknown>;
  if (typeof o.name === "string" || (typeof o.function === "object" && o.function !== null)) return true;
  if (Array.isArray(o.tool_calls)) return true;
  return typeof o.message === "object" && o.message !== null && Array.isArray((o.message as Record<string, unknown>).tool_calls);
}

/** The calls one JSON value holds: its `tool_calls`, the list itself, or the one call. */
function callValues(v: unknown): unknown[] {
  if (typeof v === "object" && v !== null && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    if (Array.isArray(o.tool_calls)) return o.tool_calls;
    if (typeof o.message === "object" && o.message !== null && Array.isArray((o.message as Record<string, unknown>).tool_calls)) {
      return (o.message as Record<string, unknown>).tool_calls as unknown[];
    }
  }
  return Array.isArray(v) ? v : [v];
}

/**
 * Every JSON value of the text written as tool calls, in text order: those of the ```json fences
 * when any fence holds some, else the bare ones, left to right. A value that is not call-shaped
 * (prose's `{"city": "Paris"}` around a fenced call) is passed over. At most MAX_JSON_VALUES
 * values are read, each search linear (extractJson's bound), so the whole is too.
 */
function callShapedValues(text: string, limits: JsonLimits): unknown[] {
  const found: unknown[] = [];
  for (const { body } of fencedJson(text)) {
    const p = parseJsonText(body, limits);
    if (p.ok && callShaped(p.value)) found.push(p.value);
    if (found.length >= MAX_JSON_VALUES) break;
  }
  if (found.length) return found;
  for (let from = 0, k = 0; k < MAX_JSON_VALUES && from < text.length; k++) {
    const p = extractJson(from ? text.slice(from) : text, limits);
    if (!p.ok) break;
    if (callShaped(p.value)) found.push(p.value);
    from += p.end;
  }
  return found;
}

/**
 * OpenAI-style JSON: {"tool_calls": [...]}, a list of calls, or one call; every such value the
 * text writes (two calls written as two JSON objects are two calls: reading only the first paid a
 * wrong second call, and gave no credit for a right one). With none call-shaped, the one value
 * extractJson picks, whose reading says what is wrong with it.
 */
function callsFromJson(text: string, limits: JsonLimits): CallsParse {
  const p = extractJson(text, limits);
  if (!p.ok) return { ok: false, reason: p.reason };
  const shaped = callShapedValues(text, limits);
  const calls = toCalls((shaped.length ? shaped : [p.value]).flatMap(callValues), limits);
  return typeof calls === "string" ? { ok: false, reason: calls } : { ok: true, calls, style: "json" };
}

/** The tool calls a text makes: `<tool_call>` tags when present, else OpenAI-style JSON. */
export function readCalls(text: string, limits: JsonLimits = DEFAULT_LIMITS): CallsParse {
  if (text.includes("<tool_call>")) return callsFromTags(text, limits);
  return callsFromJson(text, limits);
}

/** What a chat-templated completion says after the assistant header (ToolRL strips these). */
export function assistantText(text: string): string {
  for (const [start, end] of [["<|im_start|>assistant", "<|im_end|>"], ["<|start_header_id|>assistant<|end_header_id|>", "<|eot_id|>"]]) {
    const at = text.lastIndexOf(start);
    if (at >= 0) {
      const rest = text.slice(at + start.length);
      const stop = rest.indexOf(end);
      return (stop >= 0 ? rest.slice(0, stop) : rest).trim();
    }
  }
  return text.trim();
}

// ---------------------------------------------------------------------------------------------
// Format: ToolRL's anchored patterns, checked with string positions instead of regex.

/** Python's `$` without MULTILINE also matches before one final newline. */
function endsWithAt(s: string, suffix: string): number {
  if (s.endsWith(suffix)) return s.length - suffix.length;
  if (s.endsWith(suffix + "\n")) return s.length - 1 - suffix.length;
  return -1;
}

/**
 * ToolRL's `customize_format_reward_func` for one completion: which of its four patterns applies
 * depends on whether the ground truth has `<tool_call>` and/or `<response>`.
 */
export function toolrlFormatOk(s: string, wantCall: boolean, wantResponse: boolean): boolean {
  if (!s.startsWith("<think>")) return false;
  const thinkEndBefore = (at: number) => at - 9 >= 7 && s.slice(at - 9, at) === "</think>\n";
  if (!wantCall && !wantResponse) {
    const end = endsWithAt(s, "</think>");
    return end >= 7;
  }
  if (wantCall) {
    if (count(s, "<tool_call>") !== 1 || count(s, "</tool_call>") !== 1) return false;
    const open = s.indexOf("<tool_call>");
    const close = s.indexOf("</tool_call>");
    if (!thinkEndBefore(open) || s[open + 11] !== "\n" || close - 1 < open + 12 || s[close - 1] !== "\n") return false;
    if (!wantResponse) return endsWithAt(s, "</tool_call>") === close;
    if (count(s, "<response>") !== 1 || count(s, "</response>") !== 1) return false;
    const resp = s.indexOf("<response>");
    if (resp !== close + 13 || s[close + 12] !== "\n") return false;
    const end = endsWithAt(s, "</response>");
    return end >= resp + 10 && end === s.indexOf("</response>");
  }
  if (count(s, "<response>") !== 1 || count(s, "</response>") !== 1) return false;
  const resp = s.indexOf("<response>");
  if (!thinkEndBefore(resp)) return false;
  const end = endsWithAt(s, "</response>");
  return end >= resp + 10 && end === s.indexOf("</response>");
}

// ---------------------------------------------------------------------------------------------
// Correctness

const isNum = (x: unknown): x is number | bigint => typeof x === "number" || typeof x === "bigint";

/** Exact numeric equality, a BigInt (an integer beyond 2^53) included, as Python compares int and float. */
function numEqual(a: number | bigint, b: number | bigint): boolean {
  if (typeof a === typeof b) return a === b;
  const [big, n] = typeof a === "bigint" ? [a, b as number] : [b as bigint, a];
  return Number.isInteger(n) && BigInt(n) === big;
}

/** Python's `==` on JSON values: 1 == 1.0 and True == 1 hold; dicts compare by key set. */
export function pyEqual(a: unknown, b: unknown): boolean {
  const num = (x: unknown) => (typeof x === "boolean" ? (x ? 1 : 0) : x);
  const na = num(a), nb = num(b);
  if (isNum(na) && isNum(nb)) return numEqual(na, nb);
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => pyEqual(x, bb[i]));
  }
  const ka = Object.keys(a as object), kb = Object.keys(b as object);
  if (ka.length !== kb.length) return false;
  const ob = b as Record<string, unknown>;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(ob, k) && pyEqual((a as Record<string, unknown>)[k], ob[k]));
}

/** ToolRL's `match_score`: list equality, else multiset Jaccard. */
export function matchScore(a: string[], b: string[]): number {
  if (a.length === b.length && a.every((x, i) => x === b[i])) return 1;
  if (!a.length || !b.length) return 0;
  const ca = new Map<string, number>();
  for (const x of a) ca.set(x, (ca.get(x) ?? 0) + 1);
  const cb = new Map<string, number>();
  for (const x of b) cb.set(x, (cb.get(x) ?? 0) + 1);
  let inter = 0;
  for (const [k, n] of ca) inter += Math.min(n, cb.get(k) ?? 0);
  return inter / (a.length + b.length - inter);
}

const callsEqual = (a: ToolCall[], b: ToolCall[]) =>
  a.length === b.length && a.every((c, i) => c.name === b[i].name && pyEqual(c.arguments, b[i].arguments));

export interface CorrectnessDetail {
  score: number;
  max_score: number;
  exact: boolean;
  /** For each ground-truth call, the index of the predicted call paired with it (or null). */
  pairs: (number | null)[];
}

/** ToolRL's `compute_tool_call_reward`, scaled to [correct_min, correct_max]. */
export function toolCallCorrectness(gt: ToolCall[], pd: ToolCall[], w: ToolRLWeights): { reward: number; detail: CorrectnessDetail } {
  if (callsEqual(gt, pd)) {
    return { reward: w.correct_max, detail: { score: 1, max_score: 1, exact: true, pairs: gt.map((_, i) => i) } };
  }
  let score = w.name_weight * matchScore(gt.map((c) => c.name), pd.map((c) => c.name));
  let maxScore = w.name_weight;
  // pairScore[g][p]: what pairing gt call g with predicted call p earns (0 unless names agree).
  const pairScore = gt.map((g) => pd.map((p) => {
    if (p.name !== g.name) return 0;
    const gk = Object.keys(g.arguments), pk = Object.keys(p.arguments);
    const params = matchScore(gk, pk);
    let values = 0;
    for (const k of gk) if (Object.prototype.hasOwnProperty.call(p.arguments, k) && pyEqual(p.arguments[k], g.arguments[k])) values++;
    return w.param_name_weight * params + w.value_weight * values;
  }));
  for (const g of gt) maxScore += w.param_name_weight + w.value_weight * Object.keys(g.arguments).length;
  const pairs: (number | null)[] = gt.map(() => null);
  if (w.matching === "greedy") {
    const used = new Set<number>();
    gt.forEach((_, gi) => {
      let best = -1, bestScore = 0;
      pd.forEach((p, pi) => {
        if (used.has(pi) || p.name !== gt[gi].name) return;
        if (pairScore[gi][pi] > bestScore) { bestScore = pairScore[gi][pi]; best = pi; }
      });
      if (best >= 0) { used.add(best); pairs[gi] = best; score += bestScore; }
    });
  } else if (gt.length && pd.length) {
    let top = 0;
    for (const row of pairScore) for (const x of row) top = Math.max(top, x);
    for (const [gi, pi] of munkres(pairScore.map((row) => row.map((x) => top - x)))) {
      if (pairScore[gi][pi] > 0) { pairs[gi] = pi; score += pairScore[gi][pi]; }
    }
  }
  const reward = maxScore > 0 ? ((w.correct_max - w.correct_min) * score) / maxScore + w.correct_min : w.correct_min;
  return { reward, detail: { score, max_score: maxScore, exact: false, pairs } };
}

// ---------------------------------------------------------------------------------------------
// The whole reward

/** `v` with every BigInt (read with `exactIntegers`) as a number, so that details serialise. */
function jsonSafe(v: unknown): unknown {
  if (typeof v === "bigint") return Number(v);
  if (Array.isArray(v)) return v.map(jsonSafe);
  if (typeof v === "object" && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) Object.defineProperty(out, k, { value: jsonSafe(x), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return v;
}

export interface ToolRLResult {
  reward: number;
  format: number;
  correct: number;
  reason: string;
  details: Record<string, unknown>;
}

/**
 * ToolRL's `compute_score` for one completion. `expected` are the ground-truth calls (empty when
 * the ground truth makes none); `wantResponse` says whether it also has a `<response>`.
 * `rule` "toolrl" applies ToolRL's layout patterns; "parsed" gives format_max to any completion
 * whose calls could be read (for OpenAI-style JSON, which has no tags to check). The caller
 * picks the rule from the reference, never from the completion: a completion that could choose
 * its own rule would choose the one it passes.
 */
export function toolrlReward(
  completion: string, expected: ToolCall[], wantResponse: boolean, w: ToolRLWeights,
  rule: "toolrl" | "parsed", limits: JsonLimits = DEFAULT_LIMITS,
): ToolRLResult {
  const text = assistantText(completion);
  const wantCall = expected.length > 0;
  // Under "parsed" the calls are what the completion says after its reasoning: a call drafted
  // inside <think>, or in a think block the token limit cut off, is not one (it was paid in
  // full). ToolRL's layout rule reads the whole text, as ToolRL's own scorer does.
  const said = rule === "parsed" ? afterThink(text).trim() : text;
  const read = readCalls(said, limits);
  // Under "parsed": calls expected, at least one read; none expected, none attempted: no call
  // read and no <tool_call> tag at all (a real call followed by a broken block reads as no call,
  // and was paid as making none), and something said.
  const madeCalls = read.ok && read.calls.length > 0;
  const formatOk = rule === "toolrl" ? toolrlFormatOk(text, wantCall, wantResponse) : wantCall ? madeCalls : !madeCalls && !said.includes("<tool_call>") && said.length > 0;
  const format = formatOk ? w.format_max : w.format_min;
  let correct = 0;
  let detail: CorrectnessDetail | null = null;
  let reason: string;
  if (!wantCall) {
    reason = "the ground truth makes no tool call: correctness is neutral (0)";
  } else if (!read.ok) {
    correct = w.correct_min;
    reason = `tool calls unreadable: ${read.reason}`;
  } else {
    const r = toolCallCorrectness(expected, read.calls, w);
    correct = r.reward;
    detail = r.detail;
    reason = r.detail.exact ? "tool calls match exactly" : `tool calls match ${r.detail.score.toFixed(2)} of ${r.detail.max_score}`;
  }
  return {
    reward: format + correct,
    format,
    correct,
    reason: `${reason}; format ${formatOk ? "ok" : "not ToolRL's layout"} (${rule})`,
    details: {
      format, correct, format_rule: rule,
      predicted: read.ok ? (limits.exactIntegers ? jsonSafe(read.calls.slice(0, 32)) : read.calls.slice(0, 32)) : null,
      ...(detail ? { score: detail.score, max_score: detail.max_score, exact: detail.exact, pairs: detail.pairs } : {}),
    },
  };
}
