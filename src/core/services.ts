/**
 * The process-wide shared services handed to verifiers (as `ctx.services`) and to the HTTP
 * surfaces that are not verifiers (/run_code). They are built here and only here: adding a
 * service (a judge client, a SQL pool, a job queue) is one line in `createServices`, and its
 * type reaches every verifier from that line.
 */
import type { Logger } from "pino";
import type { Config } from "./config.js";
import { MachineryError } from "./types.js";
import type { Sandbox } from "../../sandbox/types.js";
import { selectSandbox } from "../../sandbox/index.js";
import { Judge } from "../judge/client.js";
import { openStore, type Store } from "../store/index.js";
import { createSqlService } from "../sql/service.js";
import { JobService } from "../jobs/service.js";
import type { Sessions } from "../sessions/service.js";

interface Closable {
  close(): Promise<void>;
}

/**
 * A service made on first use. A failed start is retried on the next use (an engine may come up
 * later); `close` closes it only if it was made.
 */
export function lazy<T extends Closable>(make: () => Promise<T>): (() => Promise<T>) & Closable & { current(): T | undefined } {
  let p: Promise<T> | undefined;
  let made: T | undefined;
  const get = () => {
    p ??= make().then((v) => (made = v));
    return p.catch((err) => {
      p = undefined;
      throw err;
    });
  };
  return Object.assign(get, {
    /** The service if it has been made, without making it (admission peeks at the sandbox's load). */
    current: () => made,
    async close() {
      const was = p;
      p = undefined;
      made = undefined;
      if (was) await was.then((s) => s.close()).catch(() => {});
    },
  });
}

function sandboxService(config: Config, log: Logger) {
  return lazy(async (): Promise<Sandbox> => {
    const { sandbox, note } = await selectSandbox(config.sandbox, (message) => log.warn(message));
    log.info({ sandbox: sandbox?.name ?? null }, `sandbox: ${note}`);
    if (!sandbox) throw new MachineryError(`no sandbox available: ${note}`);
    return sandbox;
  });
}

function storeService(config: Config) {
  return lazy(async (): Promise<Store> => openStore({ dataDir: config.dataDir, url: config.storeUrl }));
}

function judgeService(config: Config, log: Logger, store: () => Promise<Store>) {
  return lazy(async () => new Judge(config.judge, { cache: config.judge.cache ? (await store()).judgeCache : undefined, log }));
}

function jobsService(config: Config, log: Logger, store: () => Promise<Store>) {
  return lazy(async () => new JobService(config, log, await store()));
}

/** The code-interpreter sessions (src/sessions), started on first use; `close` ends every session. */
function sessionsService(config: Config, log: Logger) {
  return lazy(async () => {
    const { openSessions } = await import("../sessions/service.js");
    const sessions: Sessions = await openSessions(config);
    log.info({ backend: sessions.backend, boot: sessions.bootId }, "sessions: ready");
    return { sessions, close: () => sessions.shutdown() };
  });
}

export function createServices(config: Config, log: Logger) {
  const store = storeService(config);
  const services = {
    /** The configuration, read-only: a verifier's own settings (config.math, ...) live there. */
    config,
    /** Threads for CPU-heavy verifiers' worker pools (ASSAY_WORKERS, 0 resolved to the cores). */
    workers: config.workers,
    /** Resolves the configured sandbox backend; rejects with MachineryError when none answers. */
    sandbox: sandboxService(config, log),
    /** The store (SQLite under ASSAY_DATA_DIR, or the PostgreSQL of ASSAY_STORE_URL): versioned rubrics, presets, custom verifiers, jobs, the judge verdict cache. */
    store,
    /** The LLM judge (ASSAY_JUDGE_*): `(await services.judge()).ask(question)`; see src/judge/README.md. */
    judge: judgeService(config, log, store),
    /** SQL databases by id and their engines (SQLite process pool, PostgreSQL pools), started on first use. */
    sql: lazy(async () => createSqlService(config)),
    /** Batch scoring jobs (src/jobs): stored in the store, spread over workers when ASSAY_REDIS_URL is set. */
    jobs: jobsService(config, log, store),
    /** Code-interpreter sessions (`(await services.sessions()).sessions`: the SessionService of src/sessions/types.ts). */
    sessions: sessionsService(config, log),
  };
  return {
    ...services,
    async close(): Promise<void> {
      // Jobs and the judge before the store they write to.
      await services.jobs.close();
      await services.judge.close();
      await Promise.allSettled(Object.values(services).map((s) => (typeof s === "function" && "close" in s ? s.close() : undefined)));
    },
  };
}

/** What a verifier may use: every service built above. */
export type Services = Omit<ReturnType<typeof createServices>, "close">;
export type ServiceHandle = ReturnType<typeof createServices>;
