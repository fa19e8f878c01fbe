/**
 * Every setting of the server, read from ASSAY_* environment variables here and nowhere else.
 * Each setting is declared once below (variable, default, meaning, parser); the configuration
 * table (docs/configuration.md), `assay config` and the tests all read these declarations. A bad value
 * is an error at start-up that names the variable and what it accepts, never a silent default.
 */
import { availableParallelism, homedir } from "node:os";
import { statSync } from "node:fs";
import { join } from "node:path";
import { STRUCTURED_MODES } from "../judge/types.js";
import { DB_ID } from "../sql/types.js";
import { didYouMean } from "./nearest.js";

type Env = Record<string, string | undefined>;

/** One setting: which variable, its default, what it means, how its text is read. */
export interface Setting<T> {
  env: string;
  default: T;
  doc: string;
  parse(raw: string): T;
  /** The default as the README shows it, when `String(default)` would not say it well. */
  shown?: string;
}

class ConfigError extends Error {}

function setting<T>(env: string, dflt: T, doc: string, parse: (raw: string) => T, shown?: string): Setting<T> {
  return { env, default: dflt, doc, parse, shown };
}

function int(env: string, dflt: number, doc: string, min = 0, max = Number.MAX_SAFE_INTEGER): Setting<number> {
  return setting(env, dflt, doc, (raw) => {
    const n = Number(raw);
    if (!/^\s*-?\d+\s*$/.test(raw) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new ConfigError(`is not an integer from ${min} to ${max}`);
    }
    return n;
  });
}

function size(env: string, dflt: number, doc: string, shown: string): Setting<number> {
  return setting(env, dflt, doc, (raw) => {
    const m = /^(\d+)\s*(b|kb|mb|gb)?$/i.exec(raw.trim());
    if (!m) throw new ConfigError("is not a size like 8mb or 1048576");
    return Number(m[1]) * { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(m[2] ?? "b").toLowerCase() as "b"];
  }, shown);
}

function str(env: string, dflt: string, doc: string, shown?: string): Setting<string> {
  return setting(env, dflt, doc, (raw) => raw, shown);
}

function oneOf<T extends string>(env: string, choices: readonly T[], dflt: T, doc: string): Setting<T> {
  return setting(env, dflt, doc, (raw) => {
    if (!(choices as readonly string[]).includes(raw)) throw new ConfigError(`is not one of ${choices.join(", ")}`);
    return raw as T;
  });
}

function bool(env: string, dflt: boolean, doc: string): Setting<boolean> {
  return setting(env, dflt, doc, (raw) => {
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off)$/i.test(raw)) return false;
    throw new ConfigError("is not a boolean (1/0, true/false)");
  });
}

function num(env: string, dflt: number, doc: string, min: number, max: number): Setting<number> {
  return setting(env, dflt, doc, (raw) => {
    const n = Number(raw);
    if (!/^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(raw) || n < min || n > max) throw new ConfigError(`is not a number from ${min} to ${max}`);
    return n;
  });
}

/** A price in USD per million tokens; unset means cost is not reported. */
function price(env: string, doc: string): Setting<number | null> {
  return setting<number | null>(env, null, doc, (raw) => {
    const n = Number(raw);
    if (!/^\s*(\d+\.?\d*|\.\d+)\s*$/.test(raw) || !Number.isFinite(n)) throw new ConfigError("is not a price (a number >= 0, USD per million tokens)");
    return n;
  }, "(none)");
}

function httpUrl(env: string, dflt: string, doc: string): Setting<string> {
  return setting(env, dflt, doc, (raw) => {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new ConfigError("is not a URL; use e.g. http://127.0.0.1:8000/v1 (vLLM) or http://127.0.0.1:11434/v1 (Ollama)");
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new ConfigError("is not an http(s) URL");
    return raw.replace(/\/+$/, "");
  });
}

/** A redis:// or rediss:// URL; empty means unset. */
function redisUrl(env: string, doc: string): Setting<string> {
  return setting(env, "", doc, (raw) => {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new ConfigError("is not a URL; use e.g. redis://127.0.0.1:6379");
    }
    if (u.protocol !== "redis:" && u.protocol !== "rediss:") throw new ConfigError("is not a redis:// or rediss:// URL");
    return raw;
  }, "(none)");
}

/** ":memory:", or a folder (created on first use): not an existing file. The default is resolved in loadConfig. */
function dataDir(env: string, doc: string, shown: string): Setting<string> {
  return setting(env, "", doc, (raw) => {
    if (raw === ":memory:") return raw;
    let isDir: boolean | undefined;
    try {
      isDir = statSync(raw).isDirectory();
    } catch {
      /* missing: created on first use */
    }
    if (isDir === false) throw new ConfigError('is a file, not a folder; point it at a folder (created if missing) or ":memory:"');
    return raw;
  }, shown);
}

/** ASSAY_STORE_URL: unset or `sqlite:[folder]` (the embedded file), or a postgres:// URL. */
function storeUrl(env: string, doc: string): Setting<string> {
  return setting(env, "", doc, (raw) => {
    if (/^sqlite:/i.test(raw)) return raw;
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new ConfigError("is not a URL; use postgres://user:password@host:5432/database, or sqlite: (or unset) for the embedded SQLite store");
    }
    if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") throw new ConfigError("is neither sqlite: nor a postgres:// URL; use postgres://user:password@host:5432/database");
    if (!u.hostname || u.pathname.length < 2) throw new ConfigError("names no host or no database; use postgres://user:password@host:5432/database");
    return raw;
  }, "(none: the embedded SQLite store under `ASSAY_DATA_DIR`)");
}

function list(env: string, doc: string, sep = ","): Setting<string[]> {
  return setting(env, [] as string[], doc, (raw) => raw.split(sep).map((s) => s.trim()).filter(Boolean), "(none)");
}

/** ASSAY_ALLOWED_ORIGINS: comma-separated origins (`scheme://host[:port]`), `null`, or `*`. */
function originList(env: string, doc: string): Setting<string[]> {
  return setting(env, [] as string[], doc, (raw) =>
    raw.split(",").map((s) => s.trim()).filter(Boolean).map((entry) => {
      if (entry === "*" || entry === "null") return entry;
      let u: URL;
      try {
        u = new URL(entry);
      } catch {
        throw new ConfigError(`has ${JSON.stringify(entry)}, which is not an origin; write it as the browser shows it, e.g. https://ui.example.com or http://localhost:5173`);
      }
      if ((u.protocol !== "http:" && u.protocol !== "https:") || u.origin !== entry.replace(/\/+$/, "").toLowerCase()) {
        throw new ConfigError(`has ${JSON.stringify(entry)}, which is not an origin (scheme://host[:port], no path); e.g. https://ui.example.com`);
      }
      return u.origin;
    }), "(none)");
}

/** ASSAY_IFEVAL_PUNKT_DIR: empty, or a directory with the four punkt_tab files. */
function punktDir(raw: string): string {
  if (raw === "") return raw;
  const missing = ["abbrev_types.txt", "collocations.tab", "sent_starters.txt", "ortho_context.tab"].filter((f) => {
    try {
      return !statSync(join(raw, f)).isFile();
    } catch {
      return true;
    }
  });
  if (missing.length) throw new ConfigError(`has no ${missing.join(", ")}: point it at a punkt_tab language folder such as ~/nltk_data/tokenizers/punkt_tab/english (python -c 'import nltk; nltk.download("punkt_tab")' fetches it), or unset it`);
  return raw;
}

/** ASSAY_SQL_POSTGRES: comma-separated `id=postgres://...` (or a bare URL: id = its database name). */
function postgresList(env: string, doc: string): Setting<{ id: string; url: string }[]> {
  return setting(env, [] as { id: string; url: string }[], doc, (raw) =>
    raw.split(",").map((s) => s.trim()).filter(Boolean).map((entry) => {
      const eq = entry.indexOf("=");
      const named = eq > 0 && !entry.slice(0, eq).includes("://");
      const url = named ? entry.slice(eq + 1) : entry;
      let u: URL;
      try {
        u = new URL(url);
      } catch {
        throw new ConfigError(`has ${JSON.stringify(url.replace(/:[^:@/]*@/, ":***@"))}, which is not a URL`);
      }
      if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") throw new ConfigError("has a URL that is not postgres:// or postgresql://");
      const id = named ? entry.slice(0, eq) : decodeURIComponent(u.pathname.slice(1));
      if (!DB_ID.test(id)) throw new ConfigError(`names database id ${JSON.stringify(id)}, which must match ${DB_ID.source}`);
      return { id, url };
    }), "(none)");
}

/** The declarations, grouped as the Config object is. */
export const SETTINGS = {
  host: str("ASSAY_HOST", "127.0.0.1", "address to listen on (`0.0.0.0` in the Docker image; `serve --host` overrides)"),
  port: int("ASSAY_PORT", 8787, "port to listen on; 0 picks a free one (`serve --port` overrides)", 0, 65535),
  apiKeys: list("ASSAY_API_KEYS", "comma-separated keys; when set, every route but `/healthz`, `/readyz` (a probe: which parts are warming, how long they took) and the pages (`/ui`, `/docs`, `/openapi.yaml`: public, they take the key in the page) needs `Authorization: Bearer <key>`; the drop-in routes (`/get_reward`, `/run_code`, NeMo-Gym's) also take it in the path, `/k/<key>/get_reward`, for trainers that send no headers"),
  allowedOrigins: originList("ASSAY_ALLOWED_ORIGINS", "origins (comma-separated `https://host[:port]`; `*` for any) whose web pages may send writes (POST/PUT/PATCH/DELETE) to this server, and get CORS answers; a browser request from any other origin is refused (403), the server's own origin (the UI, `/docs`) is always allowed. Clients that send no `Origin` (trainers, curl) are not affected"),
  maxBodyBytes: size("ASSAY_MAX_BODY", 8 * 1024 ** 2, "largest request body (413 past it)", "`8mb`"),
  maxDepth: int("ASSAY_MAX_DEPTH", 64, "deepest JSON nesting accepted in a body (400 past it)", 2),
  maxBatch: int("ASSAY_MAX_BATCH", 4096, "most items in one batch (413 past it)", 1),
  maxInflight: int("ASSAY_MAX_INFLIGHT", 16_384, "most items being scored at once across requests (429 + `Retry-After` past it)", 1),
  batchConcurrency: int("ASSAY_BATCH_CONCURRENCY", 64, "items of one batch scored at once", 1),
  deadlineMs: int("ASSAY_DEADLINE_MS", 10_000, "per-item deadline, ms; past it the item is `error`/`null` (an item's or a batch's `deadline_ms` overrides it)", 1),
  maxDeadlineMs: int("ASSAY_MAX_DEADLINE_MS", 120_000, "cap on any requested deadline, ms (never below `ASSAY_DEADLINE_MS`)", 1),
  retryAfterS: int("ASSAY_RETRY_AFTER_S", 1, "seconds suggested in `Retry-After`", 0),
  logLevel: oneOf("ASSAY_LOG_LEVEL", ["fatal", "error", "warn", "info", "debug", "trace", "silent"], "info", "pino level; one JSON line per request with its request id (`X-Request-Id`)"),
  workers: int("ASSAY_WORKERS", 0, "worker threads for CPU-heavy verifiers (the `math` verifier's pool); `0` = one per core"),
  verifierPath: list("ASSAY_VERIFIER_PATH", "extra directories (colon-separated) whose sub-folders are verifiers, loaded beside verifiers/", ":"),
  sandbox: {
    backend: oneOf("ASSAY_SANDBOX", ["auto", "docker", "bwrap", "none"], "auto", "sandbox backend for code: `auto` (docker, else bwrap), `docker`, `bwrap`, `none`"),
    poolSize: { ...int("ASSAY_SANDBOX_POOL", 0, "programs run at once (docker: warm containers per image; bwrap: slots); `0` = one per CPU core, at least 4. Requests past it queue: a `/run_code` request waits as long as its caller's own timeout allows (`ASSAY_RUN_CODE_CALLER_SLACK_MS`), then is answered 504 (which verl retries). verl's `sandbox_fusion.max_concurrent` (default 64) can exceed it; the README's verl section says by how much", 0, 1024), shown: "`0` (one per core, at least 4)" },
    runCodeSlackMs: int("ASSAY_RUN_CODE_CALLER_SLACK_MS", 7_000, "`/run_code`: how long past `compile_timeout + run_timeout` the caller waits for an answer, less the time for starting and answering. A request waits for a free sandbox until it could no longer finish inside that budget even if it used its whole limits (for an interpreted language that leaves it `compile_timeout` + this; for a compiled one this alone), then is answered 504 instead of run late. verl's client waits `compile_timeout + run_timeout + 10` s (API_TIMEOUT) and retries only a 504, so this is its 10 s less 3 s (measured: answers on a 2-core machine at load 30 came up to 2 s after the run ended)", 0, 600_000),
    runCodePython: oneOf("ASSAY_RUN_CODE_PYTHON", ["python-sci", "python"], "python-sci", "where `/run_code` runs a `python` program: `python-sci` (NumPy, SciPy, pandas...), as SandboxFusion's Python has them, or `python`, which then runs where `ASSAY_SANDBOX_PYTHON` says. The code verifier is not affected"),
    maxWaitMs: int("ASSAY_SANDBOX_MAX_WAIT_MS", 30_000, "admission: a request with items for a sandboxed verifier (`code`) is refused with 429 and `Retry-After` while the sandbox's backlog (queued and running runs, each estimated from its own limits and recent run lengths, over the slots) would keep new work waiting longer than this, ms. OpenRLHF's `/get_reward` and NeMo-Gym's `/verify`, whose clients cannot use a 429, are held instead while their caller still waits for the answer (OpenRLHF 180 s, the NeMo-Gym proxy 900 s, less the items' own limits). Items of an accepted request are never turned to `null` by queueing: time waiting for a slot does not count against their deadline", 0, 600_000),
    cpuPressureMax: int("ASSAY_SANDBOX_CPU_PRESSURE_MAX", 0, "admission: a request with items for a sandboxed verifier is refused with 429 and `Retry-After` (the last 10 s of CPU stall, in seconds) while the host's CPU pressure (`/proc/pressure/cpu`, `some avg10`: % of the last 10 s in which a runnable task waited for a CPU) is above this %, the machine then being unable to keep up; `0` (the default) = off: PSI counts every process on the host, and on a shared machine other work alone keeps it near 100% (measured: 95%+ from other test runs on 2 cores), so set it where Assay has the machine to itself (e.g. `90`). Accepted items are timed by their own work (CPU time, and wall time less the wait for a CPU), so load makes them slower, not wrong", 0, 100),
    python: oneOf("ASSAY_SANDBOX_PYTHON", ["python", "python-sci"], "python", "where a plain `python` program runs (the code verifier; `/run_code` follows `ASSAY_RUN_CODE_PYTHON`): `python`, the lean standard-library image, or `python-sci`, the image with NumPy, SciPy, pandas, SymPy, NetworkX and sortedcontainers, nearer to SandboxFusion's Python runtime that verl users compare against (build it with `npx assay sandbox build --lang python-sci`). `python-sci` asked for by name runs there either way"),
    memoryMb: int("ASSAY_SANDBOX_MEMORY_MB", 1024, "each docker container's memory (cgroup), MiB, and the ceiling of any run's memory limit on docker and bwrap (`/run_code`'s `memory_limit_MB` included)", 32),
    pids: int("ASSAY_SANDBOX_PIDS", 128, "each docker container's pids limit (cgroup), and the ceiling of any run's process limit on bwrap", 8),
    scratchMb: int("ASSAY_SANDBOX_SCRATCH_MB", 128, "size of the tmpfs scratch, MiB: each docker container's, and each bwrap run's (a program that fills it gets ENOSPC; nothing reaches the host's disk)", 8),
    bwrapWarm: bool("ASSAY_SANDBOX_BWRAP_WARM", true, "bwrap: warm slots, a long-lived sandbox per slot running the runner and a warm Python that forks each run (as a docker container does), compiled languages too (compiled once per slot, each later test of the program on the slot that has its binary); needs root and cgroups (else, or with `0`, each run is a fresh bubblewrap sandbox). A warm slot holds ~22 MiB (python; ~42 MiB in python-sci with NumPy preloaded)"),
    preload: { ...list("ASSAY_SANDBOX_PRELOAD", "Python: modules (comma-separated) the warm interpreter imports once per container or bwrap slot, so a run that imports them finds them loaded; replaces the default list (`sandbox/languages.ts`: `math`, `collections`, `itertools`, `re`, ... and `numpy` in `python-sci`). A module that does not import (one the image lacks) is skipped, with a warning in the log once per image"), shown: "(each image's list)" },
    rootfs: str("ASSAY_SANDBOX_ROOTFS", "/var/lib/assay/rootfs", "where `sandbox build` keeps image root filesystems (bwrap runs over them)"),
    pull: bool("ASSAY_SANDBOX_PULL", true, "`sandbox build`: `0` skips trying the recipe's registry image and builds from Debian packages at once (CI sets it)"),
    debianMirror: str("ASSAY_DEBIAN_MIRROR", "", "Debian mirror for building images with debootstrap", "from `/etc/apt/sources.list*`"),
    dockerHost: str("DOCKER_HOST", "", "Docker engine socket (`unix://...`), as the docker CLI reads it", "`/var/run/docker.sock`"),
    dockerHosts: list("ASSAY_DOCKER_HOSTS", "docker: several engines (comma-separated `unix:///path` or `tcp://host:port`) to spread the warm containers over; an engine that fails is dropped and retried later while items score on the others. Unset: `DOCKER_HOST` alone"),
    dockerCertPath: str("DOCKER_CERT_PATH", "", "docker: directory of `ca.pem`, `cert.pem`, `key.pem` for `tcp://` engines over TLS, as the docker CLI reads it", "(none: plain TCP)"),
  },
  sessions: {
    max: int("ASSAY_SESSION_MAX", 256, "code-interpreter sessions (`/sessions`): most open at once, each its own sandbox (a container); `POST /sessions` past it is refused with 429 and `Retry-After`", 1, 100_000),
    warm: int("ASSAY_SESSION_WARM", 2, "sessions: sandboxes started ahead, so creating a session costs no container start (`0`: none kept warm, each session starts its own)", 0, 1024),
    maxWaitMs: int("ASSAY_SESSION_MAX_WAIT_MS", 30_000, "sessions: how long `POST /sessions` waits for a sandbox to start when none is warm, ms; past it 429 with `Retry-After`", 1, 600_000),
    memoryMb: int("ASSAY_SESSION_MEMORY_MB", 512, "sessions: a session's memory (its sandbox's cgroup, files in its tmpfs included), MiB, unless it asks for another (`limits.memoryMb`)", 16, 1 << 20),
    maxMemoryMb: int("ASSAY_SESSION_MAX_MEMORY_MB", 2048, "sessions: the most memory a session may ask for, MiB", 16, 1 << 20),
    cpuMs: int("ASSAY_SESSION_CPU_MS", 10_000, "sessions: CPU time one exec may use (every process of the session together), ms, unless the session asks for another (`limits.cpuMsPerExec`, at most 10 minutes); past it the interpreter is killed and the session ends with `timeout`", 1, 600_000),
    wallMs: int("ASSAY_SESSION_WALL_MS", 30_000, "sessions: wall time one exec may take, ms, unless the session asks for another (`limits.wallMsPerExec`, at most 10 minutes); past it the session ends with `timeout`", 1, 600_000),
    idleS: int("ASSAY_SESSION_IDLE_S", 300, "sessions: a session with no exec for this long is reclaimed (ended, `idle`), s, unless it asks for another (`limits.idleMs`, at most the lifetime cap)", 1, 86_400 * 7),
    lifetimeS: int("ASSAY_SESSION_LIFETIME_S", 3600, "sessions: a session's whole life, s, unless it asks for another (`limits.lifetimeMs`); past it the session ends (`lifetime`)", 1, 86_400 * 7),
    maxLifetimeS: int("ASSAY_SESSION_MAX_LIFETIME_S", 86_400, "sessions: the longest lifetime or idle timeout a session may ask for, s", 1, 86_400 * 7),
    outputBytes: size("ASSAY_SESSION_OUTPUT", 1024 ** 2, "sessions: most stdout (and, apart, stderr) one exec may write; past it the session ends with `output_limit` (a session may ask for up to 16 MiB, `limits.outputBytes`)", "`1mb`"),
  },
  dataDir: dataDir(
    "ASSAY_DATA_DIR",
    "where the SQLite store (`assay.db`: rubrics, judge verdict cache, batch jobs) lives; created on first use; `:memory:` keeps nothing",
    "`$XDG_DATA_HOME/assay`, else `~/.local/share/assay`",
  ),
  storeUrl: storeUrl(
    "ASSAY_STORE_URL",
    "the store (rubrics, presets, custom verifiers, batch jobs and their results, judge verdict cache): unset or `sqlite:` is the embedded SQLite file under `ASSAY_DATA_DIR` (`sqlite:/path` names another folder); `postgres://user:password@host:5432/database` is a PostgreSQL that several replicas share, so any replica answers any request (its schema is created and migrated at start). Uploaded SQL databases stay files under `ASSAY_SQL_UPLOAD_DIR`: replicas share them through one mounted folder",
  ),
  jobs: {
    redisUrl: redisUrl("ASSAY_REDIS_URL", "batch jobs: a Redis (`redis://127.0.0.1:6379`) whose BullMQ queue spreads jobs' chunks over every `assay worker` (and the server, see `ASSAY_JOB_LOCAL_WORKER`); unset, the server scores its jobs itself"),
    chunk: int("ASSAY_JOB_CHUNK", 500, "batch jobs: items per chunk (the unit a worker takes, and what a crash re-scores at most)", 1, 100_000),
    leaseMs: int("ASSAY_JOB_LEASE_MS", 30_000, "batch jobs: on Redis, a worker's hold on a chunk, renewed while it lives (a dead worker's chunk goes to another within about twice this); on a shared store (`ASSAY_STORE_URL=postgres://...`), a replica's hold on the job it scores (a dead replica's job goes on elsewhere after this)", 100),
    localWorker: bool("ASSAY_JOB_LOCAL_WORKER", true, "batch jobs on Redis: the server takes chunks too (`0`: only `assay worker` processes do)"),
    maxBytes: size("ASSAY_JOB_MAX_BODY", 1024 ** 3, "largest JSONL/multipart upload to `POST /jobs` (413 past it)", "`1gb`"),
    maxItems: int("ASSAY_JOB_MAX_ITEMS", 1_000_000, "most items in one batch job (413 past it)", 1),
    retentionDays: num("ASSAY_JOB_RETENTION_DAYS", 30, "batch jobs that finished (done, failed or cancelled) longer ago than this many days are deleted with their items and results (checked at start and hourly); `0` keeps them forever. `DELETE /jobs/{id}` deletes one at once", 0, 36_500),
  },
  judge: {
    baseURL: httpUrl("ASSAY_JUDGE_BASE_URL", "https://api.openai.com/v1", "LLM judge: any OpenAI-compatible API root (vLLM `http://127.0.0.1:8000/v1`, Ollama `http://127.0.0.1:11434/v1`)"),
    model: str("ASSAY_JUDGE_MODEL", "", "LLM judge model; unset, judge verifiers need `options.judge.model` (else the item is `error`/`null`)", "(none)"),
    apiKey: str("ASSAY_JUDGE_API_KEY", "", "LLM judge API key (local servers ignore it)", "(none)"),
    timeoutMs: int("ASSAY_JUDGE_TIMEOUT_MS", 60_000, "one judge call's timeout, ms (never past the item's deadline)", 1),
    maxRetries: int("ASSAY_JUDGE_MAX_RETRIES", 4, "judge retries on 429, 5xx, timeouts, connection errors and unreadable replies (waits honour `Retry-After`)", 0, 100),
    concurrency: int("ASSAY_JUDGE_CONCURRENCY", 32, "judge calls in flight per endpoint", 1, 100_000),
    rpm: int("ASSAY_JUDGE_RPM", 0, "judge requests per minute per endpoint; `0` = unlimited"),
    tpm: int("ASSAY_JUDGE_TPM", 0, "judge tokens per minute per endpoint (prompt estimate + max output); `0` = unlimited"),
    maxTokens: int("ASSAY_JUDGE_MAX_TOKENS", 1024, "judge `max_tokens` per call", 1),
    temperature: num("ASSAY_JUDGE_TEMPERATURE", 0, "judge sampling temperature", 0, 2),
    structured: oneOf("ASSAY_JUDGE_STRUCTURED", STRUCTURED_MODES, "auto", "judge structured output: `auto` (json_schema, else a tool call, else plain text), `json_schema`, `tool`, `text`"),
    priceInput: price("ASSAY_JUDGE_PRICE_INPUT", "USD per million judge input tokens, for cost in details and /metrics"),
    priceOutput: price("ASSAY_JUDGE_PRICE_OUTPUT", "USD per million judge output tokens"),
    cache: bool("ASSAY_JUDGE_CACHE", true, "keep judge verdicts in the store, keyed by (endpoint, model, prompt template version, inputs): a re-score costs no call"),
  },
  compose: {
    maxDepth: int("ASSAY_COMPOSE_MAX_DEPTH", 3, "deepest nesting of parts scored through `ctx.scorePart` (combine, presets); a deeper part is `invalid`", 1, 16),
  },
  custom: {
    memoryMb: int("ASSAY_CUSTOM_MEMORY_MB", 64, "custom verifiers: V8 heap limit of each verifier version's isolate, MiB", 8, 4096),
    timeoutMs: int("ASSAY_CUSTOM_TIMEOUT_MS", 1000, "custom verifiers: most CPU time one `score` call may take, ms (past it: `error`/`null`)", 1, 60_000),
    compileMs: int("ASSAY_CUSTOM_COMPILE_MS", 10_000, "custom verifiers: most wall time compiling one uploaded source may take, ms (in a worker thread, off the event loop; past it the upload is refused)", 100, 600_000),
    maxSourceBytes: size("ASSAY_CUSTOM_MAX_SOURCE", 256 * 1024, "custom verifiers: largest uploaded source", "`256kb`"),
    isolates: int("ASSAY_CUSTOM_ISOLATES", 64, "custom verifiers: isolates kept warm in all (least recently used closed first)", 1, 4096),
    perVersion: int("ASSAY_CUSTOM_PER_VERSION", 2, "custom verifiers: isolates per verifier version (each runs one call at a time, on its own thread)", 1, 64),
  },
  sql: {
    dir: str("ASSAY_SQL_DIR", "data/sql", "`sql` verifier: every `*.sqlite` under it (recursively) is a database, id = file stem (Spider/BIRD's `database/<db_id>/<db_id>.sqlite` works)"),
    uploadDir: str("ASSAY_SQL_UPLOAD_DIR", "", "where `POST /databases` stores uploaded databases (created on first upload)", "`$ASSAY_DATA_DIR/databases` (with `ASSAY_DATA_DIR=:memory:`, a temporary folder removed at exit)"),
    postgres: postgresList("ASSAY_SQL_POSTGRES", "PostgreSQL databases: comma-separated `id=postgres://user:pass@host/db` (a bare URL's id is its database name); the role must not be able to create temporary tables or objects (the server refuses to start, naming the REVOKE)"),
    timeoutMs: int("ASSAY_SQL_TIMEOUT_MS", 5_000, "most one SQL query may take, ms. SQLite: CPU time of its process (a query slowed by a busy machine is not cut off), with a wall-clock safety net of twice that plus 1 s that does not count time waiting for a CPU; past either its process is killed and the item scores 0. PostgreSQL on this host: CPU time of its backend (/proc), with the same net, past either the statement is canceled and the item scores 0; `statement_timeout` stays armed at 10x the limit + 5 s as the last resort (a query it stops after waiting a quarter of it for a CPU is null naming the load). A remote PostgreSQL: `statement_timeout` = the limit, wall-clock (see verifiers/sql/README.md)", 10, 600_000),
    maxWaitMs: int("ASSAY_SQL_MAX_WAIT_MS", 30_000, "admission: a request with `sql` items is refused with 429 and `Retry-After` while the SQL backlog (queued and running queries, each estimated from its limit and recent query lengths, over the SQLite processes or PostgreSQL connections) would keep new work waiting longer than this, ms. Time an accepted item waits for a process or connection does not count against its deadline", 0, 600_000),
    maxDbMb: int("ASSAY_SQL_MAX_DB_MB", 256, "largest database `POST /databases` accepts, MiB: an uploaded file past it is refused (413), and a build script's database cannot grow past it (`max_page_count`)", 1, 1_048_576),
    buildTimeoutMs: int("ASSAY_SQL_BUILD_TIMEOUT_MS", 30_000, "`POST /databases`: most CPU time a build script, or the `integrity_check` of an uploaded file, may take, ms (past it the upload is refused and nothing is kept)", 100, 3_600_000),
    maxRows: int("ASSAY_SQL_MAX_ROWS", 10_000, "most rows a query result may have; past it the query counts as failed", 1, 10_000_000),
    maxResultBytes: size("ASSAY_SQL_MAX_RESULT", 16 * 1024 ** 2, "largest query result (about 2 bytes a character); past it the query counts as failed", "`16mb`"),
    goldCacheEntries: int("ASSAY_SQL_GOLD_CACHE", 4_096, "gold query results kept (LRU, per database version and SQL)", 1, 10_000_000),
    goldCacheBytes: size("ASSAY_SQL_GOLD_CACHE_BYTES", 256 * 1024 ** 2, "total size of the kept gold results", "`256mb`"),
    threads: int("ASSAY_SQL_WORKERS", 0, "processes running SQLite queries; `0` = `ASSAY_WORKERS`", 0, 1024),
    pgPoolSize: int("ASSAY_SQL_PG_POOL", 8, "most connections one PostgreSQL database holds (within `ASSAY_SQL_PG_CONNECTIONS`)", 1, 1_000),
    pgConnections: int("ASSAY_SQL_PG_CONNECTIONS", 16, "most PostgreSQL connections open at once, all databases together (busy and idle): a database that needs one while they are all open takes another's idle one, or its query waits (the wait does not count against the item's deadline). Checked at start-up against each server's `max_connections`: it must be at most half of what is left after the reserved connections, or the server refuses to start", 1, 10_000),
    pgIdleS: int("ASSAY_SQL_PG_IDLE_S", 10, "an idle PostgreSQL connection is closed after this many seconds", 1, 86_400),
    allowUrlUpload: bool("ASSAY_SQL_ALLOW_URL_UPLOAD", false, "let `POST /databases` register a PostgreSQL URL (the server then connects where a client says)"),
  },
  ifeval: {
    punktDir: setting("ASSAY_IFEVAL_PUNKT_DIR", "", "ifeval: a directory holding NLTK's trained English Punkt model in punkt_tab form (`abbrev_types.txt`, `collocations.tab`, `sent_starters.txt`, `ortho_context.tab`; e.g. `~/nltk_data/tokenizers/punkt_tab/english` after `nltk.download(\"punkt_tab\")`): sentence counts are then NLTK's exactly; unset, a model trained by the same algorithm on public-domain text with Assay's abbreviation list (457 of 470 probe texts split as NLTK does; verifiers/ifeval/README.md)", punktDir, "(none)"),
  },
  math: {
    appeal: bool("ASSAY_MATH_APPEAL", false, "math: appeal rejections the rules could not prove to the LLM judge (ASSAY_JUDGE_*); an item's `options.appeal` overrides"),
    warmupMs: int("ASSAY_MATH_WARMUP_MS", 1500, "math: each pool thread grades the vendored conformance and hard-set cases for up to this long (wall ms) before the server is ready, so its first real items run compiled code (a cold thread costs ~2x the CPU per item over its first thousands); `0`: only the parser's two warm-up items", 0, 60_000),
    testHooks: bool("ASSAY_MATH_TEST_HOOKS", false, "tests only: a marker response makes a math worker spin, to test deadlines"),
  },
} as const;

/**
 * ASSAY_* variables that are not settings of the server but are read elsewhere in the project,
 * each with where: start-up accepts these and fails on any other ASSAY_* name it does not
 * declare above (a misspelt setting is an error, never silently ignored). The one list.
 */
export const NOT_SETTINGS: Readonly<Record<string, string>> = {
  ASSAY_URL: "clients: the server's URL (Python client, trainer adapters)",
  ASSAY_API_KEY: "clients: the key they send (Python client; `assay score --server`)",
  ASSAY_VERIFIER: "Python client's OpenRLHF adapter: default verifier",
  ASSAY_NULL_REWARD: "Python client's OpenRLHF adapter: reward sent for unscored items",
  ASSAY_SKIP_PYTHON: "scripts/run-tests.mjs: skip the Python client's tests",
  ASSAY_TEST_CONCURRENCY: "scripts/run-tests.mjs: test files run at a time (default: Node's, one fewer than the cores)",
  ASSAY_UI_SCREENSHOTS: "tests/ui-e2e.test.ts: also write the docs' screenshots",
  ASSAY_CHROMIUM: "tests/ui-e2e.test.ts: the Chromium binary",
  ASSAY_E2E_VERIFIER: "Python client's end-to-end tests: the verifier they train against",
  ASSAY_SQL_TEST_POSTGRES: "verifiers/sql tests: owner URL of the test database",
  ASSAY_SQL_TEST_POSTGRES_RO: "verifiers/sql tests: reader URL of the test database",
  ASSAY_LOG_DIR: "scripts/setup-sandbox.sh, scripts/docker2.sh: where their daemons log",
  ASSAY_REDIS_PORT: "scripts/setup-redis.sh: the test Redis's port",
  ASSAY_PG_PORT: "scripts/setup-postgres.sh: the test PostgreSQL's port",
  ASSAY_STORE_TEST_POSTGRES: "store tests: the PostgreSQL (a database the tests may create schemas in) the store's suite runs against",
  ASSAY_TEST_STORE: "tests: `postgres` runs every test app's store on a fresh PostgreSQL schema (tests/store-backends.ts)",
  ASSAY_BENCH_PIN: "bench/: `0` turns off pinning processes to cores",
  ASSAY_BENCH_REDIS: "bench/jobs.ts: the Redis it uses",
  ASSAY_BENCH_JOB_MB: "bench/host-stall.ts: size of the job upload it times, MB",
  ASSAY_SCRATCH: "inside a sandbox: the runner's scratch folder",
  ASSAY_IN_SANDBOX: "inside a sandbox: set for the runner",
};

/** Every ASSAY_* variable in `env` that is neither a setting nor in NOT_SETTINGS, with the nearest setting's name. */
export function unknownVariables(env: Env): string[] {
  const known = new Set(settingsList().map((s) => s.env));
  const out: string[] = [];
  for (const name of Object.keys(env)) {
    if (!name.startsWith("ASSAY_") || known.has(name) || name in NOT_SETTINGS) continue;
    const hint = didYouMean(name, known);
    out.push(`${name} is not a setting${hint || "; `npx assay config` lists every setting"} (unset it, or rename it)`);
  }
  return out;
}

type Resolved<S> = S extends Setting<infer T> ? T : { readonly [K in keyof S]: Resolved<S[K]> };
export type Config = Resolved<typeof SETTINGS>;
export type SandboxConfig = Config["sandbox"];

/** Values that override the environment (the CLI's --host/--port), by the Config's own keys. */
export type ConfigOverrides = Partial<Omit<Config, "sandbox" | "math" | "ifeval" | "judge" | "jobs" | "compose" | "custom" | "sessions">> & { sandbox?: Partial<SandboxConfig>; judge?: Partial<Config["judge"]>; jobs?: Partial<Config["jobs"]>; sessions?: Partial<Config["sessions"]> };

function isSetting(x: unknown): x is Setting<unknown> {
  return !!x && typeof x === "object" && typeof (x as Setting<unknown>).parse === "function";
}

function read(spec: Record<string, unknown>, env: Env, errors: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(spec)) {
    if (!isSetting(s)) {
      out[key] = read(s as Record<string, unknown>, env, errors);
      continue;
    }
    const raw = env[s.env];
    if (raw === undefined || raw === "") {
      out[key] = s.default;
      continue;
    }
    try {
      out[key] = s.parse(raw);
    } catch (e) {
      errors.push(`${s.env}=${JSON.stringify(raw)} ${(e as Error).message}; unset it for the default ${s.shown ?? JSON.stringify(s.default)}`);
    }
  }
  return out;
}

/** Reads every setting; throws one error listing every bad variable. */
export function loadConfig(env: Env = process.env, overrides: ConfigOverrides = {}): Config {
  const errors: string[] = unknownVariables(env);
  const c = read(SETTINGS, env, errors) as any;
  if (errors.length) throw new Error(`bad configuration:\n  ${errors.join("\n  ")}`);
  const { sandbox, judge, jobs, sessions, ...rest } = overrides;
  Object.assign(c, rest);
  Object.assign(c.jobs, jobs ?? {});
  Object.assign(c.sandbox, sandbox ?? {});
  Object.assign(c.judge, judge ?? {});
  Object.assign(c.sessions, sessions ?? {});
  if (!c.dataDir) c.dataDir = join(env.XDG_DATA_HOME || join(homedir(), ".local", "share"), "assay");
  c.maxDeadlineMs = Math.max(c.deadlineMs, c.maxDeadlineMs);
  if (c.workers === 0) c.workers = availableParallelism();
  if (c.sandbox.poolSize === 0) c.sandbox.poolSize = defaultPoolSize();
  return c as Config;
}

/** ASSAY_SANDBOX_POOL=0: one program per CPU core (more would only slow each one against its
 * wall-clock limit), but at least 4, so a few looping programs cannot hold every slot. */
export function defaultPoolSize(): number {
  return Math.max(4, availableParallelism());
}

/** Every setting as a flat list (README table, `assay config`). */
export function settingsList(spec: Record<string, unknown> = SETTINGS): Setting<unknown>[] {
  return Object.values(spec).flatMap((s) => (isSetting(s) ? [s] : settingsList(s as Record<string, unknown>)));
}

/** The configuration table in Markdown, one row per variable. */
export function settingsMarkdown(): string {
  const shown = (s: Setting<unknown>) => s.shown ?? (typeof s.default === "boolean" ? `\`${s.default ? 1 : 0}\`` : `\`${String(s.default)}\``);
  const rows = settingsList().map((s) => `| \`${s.env}\` | ${shown(s)} | ${s.doc} |`);
  return ["| variable | default | meaning |", "| --- | --- | --- |", ...rows].join("\n");
}
