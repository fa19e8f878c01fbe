/**
 * The judge client: asks any OpenAI-compatible chat-completions endpoint a structured question
 * and returns a parsed, schema-checked JSON verdict, or throws JudgeError. Never a made-up verdict.
 *
 * Per call: cache lookup -> per-endpoint admission (rpm, tpm, concurrency) -> one HTTP attempt
 * with a timeout -> on 429/5xx/timeout/connection error, a wait (Retry-After when the endpoint
 * says, else exponential backoff with jitter) and another attempt, never past the deadline.
 * Structured output degrades json_schema -> tool call -> plain text when the endpoint refuses a
 * form with 400/422, and the form that worked is remembered per endpoint and model.
 * A judge that refuses to grade (a `refusal` message, `finish_reason: "content_filter"`, an HTTP
 * 400 whose error code is `content_filter`) is neither retried nor sent another form: it is a
 * JudgeRefusal, which a verifier may score as a verdict against the response.
 * A question longer than the judge's context (an HTTP 400 that says so) is neither retried nor
 * sent another form either: it is a JudgeContextExceeded, which a verifier may answer by sending
 * less of the material (the rubric verifier cuts the response shorter and asks again).
 * The messages go out well-formed: a lone surrogate (which UTF-8 cannot encode) becomes U+FFFD.
 */
import OpenAI, { APIError, APIConnectionError, APIConnectionTimeoutError, APIUserAbortError } from "openai";
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletion } from "openai/resources/chat/completions";
import { createHash } from "node:crypto";
import type { Logger } from "pino";
import type { ValidateFunction } from "ajv";
import { newAjv, describeErrors } from "../core/schema.js";
import type { JudgeCache } from "../store/judge-cache.js";
import { EndpointLimiter } from "./limits.js";
import { judgeMetrics, type JudgeMetrics } from "./metrics.js";
import { Delimiter } from "./material.js";
import { verdictOf } from "./parse.js";
import {
  JudgeError, JudgeRefusal,
  type AskOptions, type ChatMessage, type JudgeQuestion, type JudgeSettings, type StructuredMode, type Usage, type Verdict,
} from "./types.js";

const NEXT_MODE: Record<StructuredMode, StructuredMode | undefined> = { json_schema: "tool", tool: "text", text: undefined };
const MAX_BACKOFF_MS = 30_000;

interface Endpoint {
  baseURL: string;
  model: string;
  apiKey: string;
  temperature: number;
  maxTokens: number;
  structured: JudgeSettings["structured"];
}

export interface JudgeDeps {
  cache?: JudgeCache;
  log?: Logger;
  metrics?: JudgeMetrics;
}

export class Judge {
  private readonly clients = new Map<string, OpenAI>();
  private readonly limiters = new Map<string, EndpointLimiter>();
  /** Structured-output form that works, by endpoint and model (auto mode). */
  private readonly modes = new Map<string, StructuredMode>();
  private readonly ajv = newAjv();
  private readonly validators = new WeakMap<object, ValidateFunction>();
  private readonly metrics: JudgeMetrics;

  constructor(readonly settings: JudgeSettings, private readonly deps: JudgeDeps = {}) {
    this.metrics = deps.metrics ?? judgeMetrics();
  }

  /** Asks one question; resolves to its verdict or rejects with JudgeError. */
  async ask<T = unknown>(q: JudgeQuestion, opts: AskOptions = {}): Promise<Verdict<T>> {
    const t0 = performance.now();
    const ep = this.endpoint(opts);
    const validate = this.validator(q.schema.schema);
    const modelLabel = ep.model === this.settings.model && ep.baseURL === this.settings.baseURL ? ep.model : "override";
    const useCache = this.settings.cache && this.deps.cache;
    const key = useCache
      ? createHash("sha256")
          .update(JSON.stringify([ep.baseURL, ep.model, q.template, q.inputs, q.schema.schema, q.sample ?? 0, ep.temperature, ep.maxTokens]))
          .digest("hex")
      : "";
    if (useCache && !opts.fresh) {
      const hit = await this.deps.cache!.get(key);
      if (hit && validate(hit.value)) {
        this.metrics.cache.labels("hit").inc();
        const zero = { input_tokens: 0, output_tokens: 0 };
        return {
          value: hit.value as T, model: ep.model, cached: true, mode: hit.mode as StructuredMode,
          usage: zero, original_usage: hit.usage, cost_usd: this.priced(zero), attempts: 0, ms: performance.now() - t0,
        };
      }
      this.metrics.cache.labels("miss").inc();
    }

    const limiter = this.limiter(ep.baseURL);
    const client = this.client(ep);
    const delimiter = new Delimiter();
    // A lone surrogate (the material's own, or a cut made elsewhere) would get a 400 from an
    // endpoint that encodes the text to UTF-8, and the item would be null for it.
    const messages = q.render(delimiter).map((m) => ({ ...m, content: wellFormed(m.content) }));
    const modeKey = `${ep.baseURL}\0${ep.model}`;
    let mode: StructuredMode = ep.structured === "auto" ? this.modes.get(modeKey) ?? "json_schema" : ep.structured;
    const estimate = Math.ceil(messages.reduce((n, m) => n + m.content.length, 0) / 4) + ep.maxTokens;
    let attempts = 0;
    let lastProblem = "";
    for (;;) {
      attempts++;
      const timeout = this.attemptTimeout(opts.deadline, lastProblem);
      const tAttempt = performance.now();
      let reply: ChatCompletion;
      try {
        reply = await limiter.run(estimate, opts.signal, async () => {
          const g = this.metrics.inflight.labels(modelLabel === "override" ? "override" : "configured");
          g.inc();
          try {
            return await client.chat.completions.create(this.body(ep, q, messages, mode), { timeout, signal: opts.signal, maxRetries: 0 });
          } finally {
            g.dec();
          }
        });
      } catch (err) {
        this.metrics.seconds.labels(modelLabel).observe((performance.now() - tAttempt) / 1000);
        const c: Classified = opts.signal?.aborted ? { outcome: "aborted", retry: false, message: "aborted" } : classify(err);
        this.metrics.requests.labels(modelLabel, c.outcome).inc();
        if (c.outcome === "aborted") throw new JudgeError(`judge call aborted: ${reasonOf(opts.signal) ?? c.message}`, { model: ep.model, attempts });
        if (c.outcome === "refused") {
          throw new JudgeRefusal(`judge ${ep.model} refused to grade (content filter): ${c.message}`, c.message, { model: ep.model, attempts, outcome: "refused" });
        }
        if (c.outcome === "context_exceeded") {
          // The same question is as long in any structured form and on any retry: not a fallback.
          throw new JudgeContextExceeded(`judge ${ep.model} at ${ep.baseURL}: the question is longer than the judge's context: ${c.message}`, {
            model: ep.model, attempts, outcome: c.outcome,
          });
        }
        if (c.outcome === "bad_request" && ep.structured === "auto" && NEXT_MODE[mode]) {
          // The endpoint refuses this form of structured output; try the next one (not a retry).
          this.deps.log?.info({ model: ep.model, refused: mode, error: c.message }, `judge: ${mode} refused, falling back to ${NEXT_MODE[mode]}`);
          mode = NEXT_MODE[mode]!;
          attempts--;
          continue;
        }
        lastProblem = c.message;
        if (!c.retry || attempts > this.settings.maxRetries) {
          throw new JudgeError(`judge ${ep.model} at ${ep.baseURL} failed after ${attempts} attempt(s): ${c.message}`, {
            model: ep.model, attempts, outcome: c.outcome,
          });
        }
        await this.backoff(attempts, c.retryAfterMs, opts, ep, c.message);
        this.metrics.retries.labels(c.outcome).inc();
        continue;
      }
      this.metrics.seconds.labels(modelLabel).observe((performance.now() - tAttempt) / 1000);
      if (ep.structured === "auto") this.modes.set(modeKey, mode);
      const usage: Usage = { input_tokens: reply.usage?.prompt_tokens ?? 0, output_tokens: reply.usage?.completion_tokens ?? 0 };
      this.count(modelLabel, usage);
      const refusal = refusalOf(reply);
      if (refusal !== undefined) {
        // The judge will not grade this material: asking again, or in another form, only asks again.
        this.metrics.requests.labels(modelLabel, "refused").inc();
        throw new JudgeRefusal(`judge ${ep.model} refused to grade: ${refusal}`, refusal, { model: ep.model, attempts, outcome: "refused" });
      }
      const read = readVerdict(reply, mode, delimiter.nonce, validate);
      if (!("value" in read)) {
        this.metrics.requests.labels(modelLabel, "malformed").inc();
        lastProblem = read.problem;
        if (attempts > this.settings.maxRetries) {
          throw new JudgeError(`judge ${ep.model} gave no usable verdict after ${attempts} attempt(s): ${lastProblem}`, {
            model: ep.model, attempts, outcome: "malformed",
          });
        }
        this.metrics.retries.labels("malformed").inc();
        continue;
      }
      const value = read.value;
      this.metrics.requests.labels(modelLabel, "ok").inc();
      // the verdict is had: a cache that cannot be written costs a later call, not this item
      if (useCache) await this.deps.cache!.put(key, ep.model, q.template, { value, usage, mode }).catch((err) => this.deps.log?.warn({ err }, "judge: verdict cache write failed"));
      return {
        value: value as T, model: ep.model, cached: false, mode, usage, original_usage: usage,
        cost_usd: this.priced(usage), attempts, ms: performance.now() - t0,
      };
    }
  }

  /** The endpoint's limiter (exposed for tests and benchmarks: in-flight counts). */
  limiter(baseURL: string): EndpointLimiter {
    let l = this.limiters.get(baseURL);
    if (!l) {
      l = new EndpointLimiter({ concurrency: this.settings.concurrency, rpm: this.settings.rpm, tpm: this.settings.tpm });
      this.limiters.set(baseURL, l);
    }
    return l;
  }

  async close(): Promise<void> {
    await Promise.all([...this.limiters.values()].map((l) => l.close()));
    this.limiters.clear();
    this.clients.clear();
  }

  private endpoint(opts: AskOptions): Endpoint {
    const o = opts.override ?? {};
    const ep: Endpoint = {
      baseURL: dropTrailingSlashes(o.baseURL ?? this.settings.baseURL),
      model: o.model ?? this.settings.model,
      apiKey: o.apiKey ?? (o.baseURL && o.baseURL !== this.settings.baseURL ? "" : this.settings.apiKey),
      temperature: o.temperature ?? this.settings.temperature,
      maxTokens: o.maxTokens ?? this.settings.maxTokens,
      structured: o.structured ?? this.settings.structured,
    };
    if (!ep.model) {
      throw new JudgeError("no judge model: set ASSAY_JUDGE_MODEL (and ASSAY_JUDGE_BASE_URL), or options.judge.model on the item");
    }
    return ep;
  }

  private client(ep: Endpoint): OpenAI {
    const k = `${ep.baseURL}\0${ep.apiKey}`;
    let c = this.clients.get(k);
    if (!c) {
      // The SDK insists on a key; local servers (vLLM, Ollama) ignore whatever is sent.
      c = new OpenAI({ baseURL: ep.baseURL, apiKey: ep.apiKey || "unused", maxRetries: 0, timeout: this.settings.timeoutMs });
      this.clients.set(k, c);
    }
    return c;
  }

  private validator(schema: Record<string, unknown>): ValidateFunction {
    let v = this.validators.get(schema);
    if (!v) {
      v = this.ajv.compile(schema);
      this.validators.set(schema, v);
    }
    return v;
  }

  private body(ep: Endpoint, q: JudgeQuestion, messages: ChatMessage[], mode: StructuredMode): ChatCompletionCreateParamsNonStreaming {
    const base = { model: ep.model, temperature: ep.temperature, max_tokens: ep.maxTokens };
    const { name, description, schema } = q.schema;
    switch (mode) {
      case "json_schema":
        return { ...base, messages, response_format: { type: "json_schema", json_schema: { name, description, schema, strict: true } } };
      case "tool":
        return {
          ...base, messages,
          tools: [{ type: "function", function: { name, description: description ?? "Record the verdict.", parameters: schema } }],
          tool_choice: { type: "function", function: { name } },
        };
      case "text":
        return {
          ...base,
          messages: [
            ...messages,
            {
              role: "user",
              content:
                "End your reply with your verdict: one JSON object, after any reasoning and after anything you quote from the material. " +
                `It must match this JSON Schema:\n${JSON.stringify(schema)}`,
            },
          ],
        };
    }
  }

  private attemptTimeout(deadline: number | undefined, lastProblem: string): number {
    if (deadline === undefined) return this.settings.timeoutMs;
    const left = deadline - Date.now();
    if (left <= 0) throw new JudgeError(`judge: the item's deadline passed${lastProblem ? ` (last problem: ${lastProblem})` : ""}`);
    // Whole milliseconds: a deadline may fall between two (an item's own time is charged in
    // fractions of a ms) and the HTTP client's timeout must be an integer.
    return Math.max(1, Math.floor(Math.min(this.settings.timeoutMs, left)));
  }

  private async backoff(attempt: number, retryAfterMs: number | undefined, opts: AskOptions, ep: Endpoint, problem: string): Promise<void> {
    const wait = retryAfterMs ?? Math.min(MAX_BACKOFF_MS, 500 * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
    if (opts.deadline !== undefined && Date.now() + wait >= opts.deadline) {
      throw new JudgeError(
        `judge ${ep.model} at ${ep.baseURL}: ${problem}; the next try (in ${Math.round(wait)} ms${retryAfterMs !== undefined ? ", from Retry-After" : ""}) would be past the item's deadline`,
        { model: ep.model, attempts: attempt },
      );
    }
    await sleep(wait, opts.signal);
  }

  private count(modelLabel: string, usage: Usage): void {
    if (usage.input_tokens) this.metrics.tokens.labels(modelLabel, "input").inc(usage.input_tokens);
    if (usage.output_tokens) this.metrics.tokens.labels(modelLabel, "output").inc(usage.output_tokens);
    const cost = this.priced(usage);
    if (cost) this.metrics.cost.labels(modelLabel).inc(cost);
  }

  private priced(u: Usage): number | null {
    const { priceInput, priceOutput } = this.settings;
    if (priceInput === null && priceOutput === null) return null;
    return (u.input_tokens * (priceInput ?? 0) + u.output_tokens * (priceOutput ?? 0)) / 1e6;
  }
}

/**
 * The endpoint says the question is longer than the model's context: an answer about the
 * question's length, not an outage and not an unsupported structured form. Not retried. A
 * JudgeError, so a caller that does not send less gets null; `details.outcome` is
 * "context_exceeded".
 */
export class JudgeContextExceeded extends JudgeError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, details);
    this.name = "JudgeContextExceeded";
  }
}

/** `text`'s first `max` UTF-16 units, one fewer when the cut would split a surrogate pair. */
export function headOf(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max);
  const c = text.charCodeAt(end - 1);
  if (end > 0 && c >= 0xd800 && c <= 0xdbff && (text.charCodeAt(end) & 0xfc00) === 0xdc00) end--;
  return text.slice(0, end);
}

/** A surrogate half without its other half (no `u` flag: the string's UTF-16 units). Constant work per position. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `text` with each lone surrogate, which UTF-8 cannot encode, replaced by U+FFFD (String.prototype.toWellFormed, ES2024). Linear. */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, "\uFFFD");
}

interface Classified {
  outcome: "rate_limited" | "server_error" | "timeout" | "connection" | "bad_request" | "client_error" | "aborted" | "refused" | "context_exceeded";
  retry: boolean;
  retryAfterMs?: number;
  message: string;
}

function classify(err: unknown): Classified {
  if (err instanceof APIUserAbortError || (err as Error)?.name === "AbortError") return { outcome: "aborted", retry: false, message: String((err as Error).message) };
  if (err instanceof APIConnectionTimeoutError) return { outcome: "timeout", retry: true, message: "timed out" };
  if (err instanceof APIConnectionError) return { outcome: "connection", retry: true, message: `connection failed (${(err.cause as Error)?.message ?? err.message})` };
  if (err instanceof APIError && typeof err.status === "number") {
    const s = err.status;
    const msg = `HTTP ${s}: ${headOf(String(err.message), 300)}`;
    if (s === 429) return { outcome: "rate_limited", retry: true, retryAfterMs: retryAfter(err.headers), message: msg };
    if (s >= 500 || s === 408 || s === 409) return { outcome: "server_error", retry: true, retryAfterMs: retryAfter(err.headers), message: msg };
    if (s === 400 || s === 422) {
      // Azure OpenAI's content filter answers 400 with error code "content_filter": a refusal, not an unsupported form.
      if (isContentFilter(err)) return { outcome: "refused", retry: false, message: msg };
      // "The question is too long" is not "this structured form is unsupported".
      if (isContextExceeded(err)) return { outcome: "context_exceeded", retry: false, message: msg };
      return { outcome: "bad_request", retry: false, message: msg };
    }
    return { outcome: "client_error", retry: false, message: msg };
  }
  return { outcome: "connection", retry: true, message: (err as Error)?.message ?? String(err) };
}

/** An HTTP error that is a content filter's refusal: error code (or inner error code) `content_filter`. */
function isContentFilter(err: APIError): boolean {
  const e = err.error as { code?: unknown; innererror?: { code?: unknown } } | undefined;
  const codes = [err.code, e?.code, e?.innererror?.code];
  return codes.some((c) => c === "content_filter" || c === "ResponsibleAIPolicyViolation");
}

/**
 * How endpoints say a request is longer than the model's context. OpenAI (and Azure, Groq, …):
 * code "context_length_exceeded", "This model's maximum context length is N tokens…"; vLLM:
 * code 400 with "This model's maximum context length is N tokens. However, you requested…" (or
 * "…and your request has M input tokens", "The decoder prompt (length M) is longer than the
 * maximum model length of N"); llama.cpp: type "exceed_context_size_error", "the request exceeds
 * the available context size"; SGLang: "…is longer than the model's context length (N tokens)";
 * TGI (422): "`inputs` tokens + `max_new_tokens` must be <= N"; Anthropic's compatible endpoint:
 * "prompt is too long: M tokens > N maximum"; Gemini's: "The input token count (M) exceeds the
 * maximum number of tokens allowed (N)". Literal alternatives only: linear in the message.
 */
const CONTEXT_CODES = new Set(["context_length_exceeded", "exceed_context_size_error"]);
const CONTEXT_WORDS =
  /maximum context length|context[ _]length[ _]exceeded|exceeds the available context size|longer than the maximum model length|longer than the model's context length|max_new_tokens` must be <=|prompt is too long|exceeds the maximum number of tokens allowed/i;

/** An HTTP 400/422 that says the request is longer than the model's context. */
function isContextExceeded(err: APIError): boolean {
  const e = err.error as { code?: unknown; type?: unknown } | undefined;
  if ([err.code, err.type, e?.code, e?.type].some((c) => typeof c === "string" && CONTEXT_CODES.has(c))) return true;
  return CONTEXT_WORDS.test(String(err.message).slice(0, 2_000));
}

/**
 * The judge's refusal to grade, when its reply is one: the message's `refusal` (OpenAI's
 * structured outputs), or `finish_reason: "content_filter"` (the provider withheld or cut the
 * reply). Undefined for an ordinary reply.
 */
function refusalOf(reply: ChatCompletion): string | undefined {
  const choice = reply.choices?.[0];
  const refusal = (choice?.message as { refusal?: unknown } | undefined)?.refusal;
  if (typeof refusal === "string" && refusal.trim() !== "") return headOf(refusal.trim(), 300);
  if ((choice?.finish_reason as string | undefined) === "content_filter") return 'the reply was withheld by a content filter (finish_reason "content_filter")';
  return undefined;
}

/** Retry-After in ms: `retry-after-ms`, else `retry-after` as seconds or an HTTP date. Capped at 10 minutes. */
export function retryAfter(headers: Headers | undefined): number | undefined {
  if (!headers) return undefined;
  const ms = Number(headers.get("retry-after-ms"));
  if (headers.get("retry-after-ms") !== null && Number.isFinite(ms) && ms >= 0) return Math.min(ms, 600_000);
  const raw = headers.get("retry-after");
  if (raw === null) return undefined;
  const s = Number(raw);
  if (Number.isFinite(s) && s >= 0) return Math.min(s * 1000, 600_000);
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - Date.now()), 600_000);
}

function replyText(reply: ChatCompletion): string {
  const m = reply.choices?.[0]?.message;
  return m?.tool_calls?.[0]?.type === "function" ? m.tool_calls[0].function.arguments : m?.content ?? "";
}

/**
 * The verdict from a reply: its last object that names a key of the verdict's schema (parse.ts
 * verdictOf: the judge's own words, the material taken out), which must pass the schema; an
 * earlier object is never read instead. From the tool call's arguments when there is one, else
 * from the message text.
 */
function readVerdict(reply: ChatCompletion, mode: StructuredMode, nonce: string, validate: ValidateFunction): { value: unknown } | { problem: string } {
  const m = reply.choices?.[0]?.message;
  if (!m) return { problem: "reply has no message" };
  const texts: string[] = [];
  const call = m.tool_calls?.find((t) => t.type === "function");
  if (call && call.type === "function") texts.push(call.function.arguments ?? "");
  if (mode !== "tool" || texts.length === 0) texts.push(m.content ?? "");
  // The judge stopped at its token limit: a verdict it was still writing is not read.
  const cut = reply.choices?.[0]?.finish_reason === "length";
  const keys = Object.keys(((validate.schema as { properties?: object } | undefined)?.properties ?? {}) as object);
  let schemaProblem: string | undefined;
  for (const text of texts) {
    // json_schema and tool replies are read whole or not at all (parse.ts, step 0).
    const v = verdictOf(text, nonce, keys, cut, mode !== "text");
    if (v === undefined) continue;
    if (validate(v)) return { value: v };
    schemaProblem ??= describeErrors(validate.errors, "verdict");
  }
  if (schemaProblem !== undefined) return { problem: `the judge's last verdict does not match the verdict schema (${schemaProblem}); an earlier object is not read instead` };
  return cut
    ? { problem: `reply cut off at the judge's token limit (finish_reason "length") before a whole verdict: ${JSON.stringify(replyText(reply).slice(-200))}` }
    : { problem: `reply is not JSON: no verdict object after the material, in the judge's own words: ${JSON.stringify(replyText(reply).slice(-200))}` };
}

/** `url` without its trailing slashes. A loop: `/\/+$/` retries from every slash of a run inside the text (quadratic). */
function dropTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url.charCodeAt(end - 1) === 47 /* / */) end--;
  return url.slice(0, end);
}

function reasonOf(signal: AbortSignal | undefined): string | undefined {
  const r = signal?.reason;
  return r === undefined ? undefined : r instanceof Error ? r.message : String(r);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new JudgeError(`judge call aborted: ${reasonOf(signal)}`));
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new JudgeError(`judge call aborted: ${reasonOf(signal)}`));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
