/** Configuration from ASSAY_* environment variables. Every default works on a laptop. */

export interface Config {
  host: string;
  port: number;
  /** API keys; empty means no auth. */
  apiKeys: string[];
  /** Max request body, bytes. */
  maxBodyBytes: number;
  /** Max nesting of objects/arrays in a request body. */
  maxDepth: number;
  /** Max items in one /reward/batch request. */
  maxBatch: number;
  /** Max items being scored at once across all requests; more gets HTTP 429. */
  maxInflight: number;
  /** Items of one batch scored concurrently. */
  batchConcurrency: number;
  /** Default per-item deadline, ms. */
  deadlineMs: number;
  /** Upper bound on any requested deadline, ms. */
  maxDeadlineMs: number;
  /** Seconds suggested in Retry-After on 429. */
  retryAfterS: number;
  logLevel: string;
  /** Sandbox backend: auto | docker | bwrap | none. */
  sandbox: string;
  /** Worker threads for CPU-heavy verifiers (0 = cores). */
  workers: number;
}

function int(env: NodeJS.ProcessEnv, key: string, dflt: number, min = 0): number {
  const raw = env[key];
  if (raw === undefined || raw === "") return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) {
    throw new Error(`${key}=${JSON.stringify(raw)} is not an integer >= ${min}; unset it for the default ${dflt}`);
  }
  return n;
}

function bytes(env: NodeJS.ProcessEnv, key: string, dflt: number): number {
  const raw = env[key];
  if (raw === undefined || raw === "") return dflt;
  const m = /^(\d+)\s*(b|kb|mb|gb)?$/i.exec(raw.trim());
  if (!m) throw new Error(`${key}=${JSON.stringify(raw)} is not a size like 8mb or 1048576`);
  const mult = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(m[2] ?? "b").toLowerCase() as "b"];
  return Number(m[1]) * mult;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const deadlineMs = int(env, "ASSAY_DEADLINE_MS", 10_000, 1);
  return {
    host: env.ASSAY_HOST || "127.0.0.1",
    port: int(env, "ASSAY_PORT", 8787),
    apiKeys: (env.ASSAY_API_KEYS ?? "").split(",").map((s) => s.trim()).filter(Boolean),
    maxBodyBytes: bytes(env, "ASSAY_MAX_BODY", 8 * 1024 * 1024),
    maxDepth: int(env, "ASSAY_MAX_DEPTH", 64, 2),
    maxBatch: int(env, "ASSAY_MAX_BATCH", 4096, 1),
    maxInflight: int(env, "ASSAY_MAX_INFLIGHT", 16_384, 1),
    batchConcurrency: int(env, "ASSAY_BATCH_CONCURRENCY", 64, 1),
    deadlineMs,
    maxDeadlineMs: Math.max(deadlineMs, int(env, "ASSAY_MAX_DEADLINE_MS", 120_000, 1)),
    retryAfterS: int(env, "ASSAY_RETRY_AFTER_S", 1, 0),
    logLevel: env.ASSAY_LOG_LEVEL || "info",
    sandbox: env.ASSAY_SANDBOX || "auto",
    workers: int(env, "ASSAY_WORKERS", 0),
  };
}
