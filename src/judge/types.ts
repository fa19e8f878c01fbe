/** The judge's public types: what a caller asks, what comes back, and how it is configured. */
import { MachineryError } from "../core/types.js";
import type { Config } from "../core/config.js";
import type { Delimiter } from "./material.js";

/** How the verdict's JSON is requested: response_format json_schema, a forced tool call, or plain text. */
export type StructuredMode = "json_schema" | "tool" | "text";
export const STRUCTURED_MODES = ["auto", "json_schema", "tool", "text"] as const;
export type StructuredSetting = (typeof STRUCTURED_MODES)[number];

/**
 * Process-wide judge settings: the `judge` group of src/core/config.ts (ASSAY_JUDGE_*), declared
 * there once. `structured: "auto"` tries json_schema, then a tool call, then plain text, and
 * remembers what worked per endpoint and model; prices are USD per million tokens (null: no cost).
 */
export type JudgeSettings = Config["judge"];

/** Per-request overrides (a verifier's options.judge). */
export interface JudgeOverride {
  baseURL?: string;
  model?: string;
  apiKey?: string;
  temperature?: number;
  maxTokens?: number;
  structured?: StructuredSetting;
}

export interface ChatMessage {
  role: "system" | "user";
  content: string;
}

/**
 * A structured question. `inputs` is everything the verdict depends on besides the template and
 * the model: it (not the rendered text, which may hold random delimiters) keys the cache.
 */
export interface JudgeQuestion {
  /** Prompt template name and version, e.g. "rubric.criterion@1": bump the version when the wording changes. */
  template: string;
  inputs: unknown;
  /**
   * The messages. Material to grade goes in `d.block(NAME, text)`: the client knows the markers
   * and reads the verdict only after the material's last closing marker in the reply.
   */
  render(d: Delimiter): ChatMessage[];
  /** The verdict's JSON Schema (an object schema, additionalProperties false, every property required). */
  schema: { name: string; description?: string; schema: Record<string, unknown> };
  /** Sample index for N-sample voting: samples are cached apart. */
  sample?: number;
}

export interface AskOptions {
  override?: JudgeOverride;
  signal?: AbortSignal;
  /** Epoch ms; no attempt or retry wait goes past it. */
  deadline?: number;
  /** Skip the cache for this question (it is still written). */
  fresh?: boolean;
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

export interface Verdict<T> {
  value: T;
  model: string;
  cached: boolean;
  mode: StructuredMode;
  /** Tokens this call used (0 for a cache hit); what the verdict first cost is in `original_usage`. */
  usage: Usage;
  original_usage: Usage;
  /** USD for this call; null when no price is configured. */
  cost_usd: number | null;
  attempts: number;
  ms: number;
}

/** The judge could not give a verdict (unreachable, rate limited past the deadline, unreadable replies). */
export class JudgeError extends MachineryError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, details);
    this.name = "JudgeError";
  }
}

/**
 * The judge refused to grade the material (a `refusal` message, a content filter): an answer
 * about the material, not an outage. Not retried. A JudgeError, so a caller that does not know it
 * still gives null; the rubric verifier scores it as criteria not met.
 */
export class JudgeRefusal extends JudgeError {
  constructor(message: string, readonly refusal: string, details: Record<string, unknown> = {}) {
    super(message, { ...details, refused: true });
    this.name = "JudgeRefusal";
  }
}
