/**
 * Client for an Assay server, for Node-based pipelines: `import { AssayClient } from "assay"`.
 *
 * Same behaviour as the Python client: `rewardBatch(items)` splits a large batch into chunks,
 * sends `concurrency` chunks at a time, retries a chunk on connection errors, 429 (waiting what
 * `Retry-After` asks) and 5xx with exponential backoff, and returns one reward per item in input
 * order: a number, or null where the server answered `reward: null` (unscored; mask it).
 * Uses the global fetch (Node 20+); knows nothing of the server's internals beyond the wire.
 */
import pLimit from "p-limit";
import type { RewardItem, RewardResult, Wire } from "../core/types.js";
import { fetchWithin } from "./within.js";

export type { RewardItem, RewardResult } from "../core/types.js";

export interface AssayClientOptions {
  /** Server URL; default $ASSAY_URL or http://127.0.0.1:8787. */
  url?: string;
  /** Bearer key; default $ASSAY_API_KEY. */
  apiKey?: string;
  /** Per-request timeout in ms (default 120000). */
  timeoutMs?: number;
  /** Items per /reward/batch request (default 256). */
  chunkSize?: number;
  /** Chunks in flight at once (default 4). */
  concurrency?: number;
  /** Retries after the first try (default 5). */
  maxRetries?: number;
  /** Backoff base in ms: waits up to backoffMs * 2^attempt, with full jitter (default 250). */
  backoffMs?: number;
  /** Cap on any wait, Retry-After included, in ms (default 10000). */
  maxBackoffMs?: number;
  /** A fetch implementation (default the global one). */
  fetch?: typeof fetch;
}

/** OpenRLHF's reply, as openapi.yaml declares it. */
export type GetRewardResponse = Wire["GetRewardResponse"];

/** Assay could not be reached, or answered with an error the request caused. */
export class AssayError extends Error {
  constructor(message: string, readonly status?: number, readonly field?: string) {
    super(message);
    this.name = "AssayError";
  }
}

/** HTTP statuses worth another try: the server is busy or failed, not the request. */
const RETRY_STATUSES = new Set([429, 500, 502, 503, 504]);

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class AssayClient {
  readonly url: string;
  private readonly apiKey?: string;
  private readonly timeoutMs: number;
  private readonly chunkSize: number;
  private readonly concurrency: number;
  private readonly maxRetries: number;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly fetch: typeof fetch;

  constructor(opts: AssayClientOptions = {}) {
    this.url = (opts.url ?? process.env.ASSAY_URL ?? "http://127.0.0.1:8787").replace(/\/+$/, "");
    this.apiKey = opts.apiKey ?? process.env.ASSAY_API_KEY ?? undefined;
    this.timeoutMs = opts.timeoutMs ?? 120_000;
    this.chunkSize = opts.chunkSize ?? 256;
    this.concurrency = opts.concurrency ?? 4;
    this.maxRetries = opts.maxRetries ?? 5;
    this.backoffMs = opts.backoffMs ?? 250;
    this.maxBackoffMs = opts.maxBackoffMs ?? 10_000;
    this.fetch = opts.fetch ?? globalThis.fetch;
    if (!(this.chunkSize >= 1)) throw new RangeError("chunkSize must be at least 1");
    if (!(this.concurrency >= 1)) throw new RangeError("concurrency must be at least 1");
    if (!/^https?:\/\/[^/]/.test(this.url)) throw new RangeError(`Assay URL must look like http://host:port, got ${JSON.stringify(this.url)}`);
  }

  /** How long to wait before try number attempt + 1: Retry-After when the server gave one. */
  private delay(attempt: number, retryAfter?: string | null): number {
    if (retryAfter != null && retryAfter.trim() !== "") {
      const s = Number(retryAfter);
      if (Number.isFinite(s)) return Math.min(Math.max(s * 1000, 0), this.maxBackoffMs);
    }
    return Math.random() * Math.min(this.maxBackoffMs, this.backoffMs * 2 ** attempt);
  }

  private async send<T>(method: "GET" | "POST", path: string, payload?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (payload !== undefined) headers["content-type"] = "application/json";
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    const body = payload === undefined ? undefined : JSON.stringify(payload);
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      let text: string;
      try {
        // The answer's body is read within the same deadline (and a deadline that holds the
        // process open: ./within.ts says why AbortSignal.timeout is not enough).
        [res, text] = await fetchWithin(this.url + path, { method, headers, body }, this.timeoutMs, async (r) => {
          if (RETRY_STATUSES.has(r.status) && attempt < this.maxRetries) {
            await r.body?.cancel().catch(() => {});
            return [r, ""] as const;
          }
          return [r, await r.text()] as const;
        }, this.fetch);
      } catch (err) {
        // fetch rejects on refused/reset connections and on our timeout; none is the request's fault.
        if (attempt >= this.maxRetries) {
          const cause = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
          throw new AssayError(`cannot reach Assay at ${this.url} after ${attempt + 1} tries: ${cause}`);
        }
        await sleep(this.delay(attempt));
        continue;
      }
      if (RETRY_STATUSES.has(res.status) && attempt < this.maxRetries) {
        await sleep(this.delay(attempt, res.headers.get("retry-after")));
        continue;
      }
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        throw new AssayError(`Assay answered HTTP ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`, res.status);
      }
      if (!res.ok) {
        const e = parsed as { error?: string; field?: string } | undefined;
        throw new AssayError(`Assay answered HTTP ${res.status}: ${e?.error ?? text.slice(0, 200)}`, res.status, e?.field);
      }
      return parsed as T;
    }
  }

  /** The full result for one item. A malformed item throws AssayError naming the field. */
  score(item: RewardItem): Promise<RewardResult> {
    return this.send<RewardResult>("POST", "/reward", item);
  }

  /** The reward for one item, or null when the server could not score it. */
  async reward(item: RewardItem): Promise<number | null> {
    return (await this.score(item)).reward;
  }

  /** Full results in input order; chunks of `chunkSize` go out `concurrency` at a time. */
  async scoreBatch(items: readonly RewardItem[]): Promise<RewardResult[]> {
    const chunks: RewardItem[][] = [];
    for (let i = 0; i < items.length; i += this.chunkSize) chunks.push(items.slice(i, i + this.chunkSize));
    const limit = pLimit(this.concurrency);
    const parts = await Promise.all(chunks.map((chunk) => limit(async () => {
      const body = await this.send<{ results?: RewardResult[] }>("POST", "/reward/batch", { items: chunk });
      if (!Array.isArray(body?.results) || body.results.length !== chunk.length) {
        throw new AssayError(`Assay answered a batch of ${chunk.length} with ${Array.isArray(body?.results) ? body.results.length : "no"} results`);
      }
      return body.results;
    })));
    return parts.flat();
  }

  /** One reward per item, in input order; null where Assay answered `reward: null`. */
  async rewardBatch(items: readonly RewardItem[]): Promise<(number | null)[]> {
    return (await this.scoreBatch(items)).map((r) => r.reward);
  }

  /** OpenRLHF's remote-reward route: {query, prompts, labels} -> {rewards, scores, extra_logs}. */
  getReward(query: string[], prompts?: string[], labels?: unknown[], opts: { verifier?: string; nullReward?: number } = {}): Promise<GetRewardResponse> {
    const params = new URLSearchParams();
    if (opts.verifier) params.set("verifier", opts.verifier);
    if (opts.nullReward !== undefined) params.set("null_reward", String(opts.nullReward));
    const qs = params.size ? `?${params}` : "";
    return this.send<GetRewardResponse>("POST", `/get_reward${qs}`, { query, ...(prompts ? { prompts } : {}), ...(labels ? { labels } : {}) });
  }

  async verifiers(): Promise<Array<Record<string, unknown>>> {
    return (await this.send<{ verifiers: Array<Record<string, unknown>> }>("GET", "/verifiers")).verifiers;
  }

  health(): Promise<{ status: string; verifiers: string[]; inflight: number; uptime_s: number }> {
    return this.send("GET", "/healthz");
  }
}
