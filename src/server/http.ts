/**
 * What every route shares: the JSON body parser with the configured caps, one validation
 * middleware per request schema of openapi.yaml, admission under the in-flight cap, and an abort
 * signal for a client that goes away. Routes get these through RouteDeps.
 */
import type { Request, RequestHandler, Response } from "express";
import type { Runtime } from "../core/runtime.js";
import type { SharedPool } from "../core/scorer.js";
import { check } from "../core/contract.js";
import { HttpError, fieldOf } from "./errors.js";
import { jsonBody } from "./json-body.js";
import { pressureRetryS } from "../core/pressure.js";
import { Cancel } from "../core/deadlines.js";
import type { InflightLimiter } from "./limits.js";
import type { Metrics } from "./metrics.js";

export interface RouteDeps {
  runtime: Runtime;
  metrics: Metrics;
  limiter: InflightLimiter;
  /**
   * The request's opening, shared by every route that takes a JSON body: parse (size and depth
   * capped), require an object, validate against openapi.yaml's `schema` (filling the defaults
   * it declares). A failure is a 400 that names the field.
   */
  body(schema: string): RequestHandler;
  /**
   * The opening's first step alone: parse, size and depth capped, nothing required of the value.
   * For a route whose protocol allows another top-level shape (JSON-RPC's batch) or answers its
   * own errors (/mcp).
   */
  json: RequestHandler;
  /**
   * Reserves `n` items under the in-flight cap (429 + Retry-After past it); returns the release.
   * With the items themselves, also refuses (429) when they would wait for the sandbox longer
   * than ASSAY_SANDBOX_MAX_WAIT_MS, or for the SQL engines longer than ASSAY_SQL_MAX_WAIT_MS
   * (the scorer knows which verifiers use which pool, and the pools' backlogs); for a `caller`
   * that cannot use a refusal, only past what that caller waits.
   */
  admit(n: number, items?: readonly unknown[], caller?: Caller): () => void;
}

/**
 * A drop-in route's caller that cannot use a refusal: a trainer's client whose retries come too
 * fast to outlast a backlog (OpenRLHF: five tries a second apart) or that makes any error status
 * a failed rollout (NeMo-Gym). Its request is held in the pools' queues, not refused, for as long
 * as it waits for an answer less its items' own time (`Scorer.ownMs`), whatever the configured bound.
 */
export interface Caller {
  /** Who waits, for the refusal's message ("OpenRLHF's client"). */
  name: string;
  /** How long it waits for an answer, ms. */
  waitsMs: number;
}

/**
 * Each shared pool's admission bound, what a refusal calls it, and what to raise: the settings
 * that give the pool more room (`slots`) and the one that sets the bound itself (`boundSetting`),
 * kept apart so a refusal whose bound the configured one no longer decides (a held caller's)
 * names only the former.
 */
interface PoolBound {
  bound: number;
  what: string;
  slots: readonly string[];
  boundSetting: string;
}
const BOUNDS: Record<SharedPool, (c: Runtime["config"]) => PoolBound> = {
  sandbox: (c) => ({ bound: c.sandbox.maxWaitMs, what: "sandbox", slots: ["ASSAY_SANDBOX_POOL"], boundSetting: "ASSAY_SANDBOX_MAX_WAIT_MS" }),
  sql: (c) => ({ bound: c.sql.maxWaitMs, what: "SQL engines", slots: ["ASSAY_SQL_WORKERS", "ASSAY_SQL_PG_CONNECTIONS", "ASSAY_SQL_PG_POOL"], boundSetting: "ASSAY_SQL_MAX_WAIT_MS" }),
};
const POOLS = Object.keys(BOUNDS) as SharedPool[];

export function routeDeps(runtime: Runtime, metrics: Metrics, limiter: InflightLimiter): RouteDeps {
  const { config } = runtime;
  const json = jsonBody(config.maxBodyBytes, config.maxDepth);
  const requireObject: RequestHandler = (req, _res, next) => {
    const b = req.body;
    if (b === undefined || b === null || typeof b !== "object" || Array.isArray(b)) {
      return next(new HttpError(400, "request body must be a JSON object (Content-Type: application/json)"));
    }
    next();
  };
  const validate = (schema: string): RequestHandler => (req, _res, next) => {
    const problem = check(schema, req.body);
    next(problem ? new HttpError(400, `request ${problem}`, fieldOf(problem)) : undefined);
  };
  return {
    runtime,
    metrics,
    limiter,
    json,
    body: (schema) => {
      const steps = [json, requireObject, validate(schema)];
      return (req, res, next) => {
        const step = (i: number) => (err?: unknown) => (err || i === steps.length ? next(err) : steps[i](req, res, step(i + 1)));
        step(0)();
      };
    },
    admit: (n, items, caller) => {
      // The host cannot keep up: sandboxed work would only crawl (timed by its own work, it is
      // not scored wrong, but it would hold its client for minutes). Refused up front instead.
      const pMax = config.sandbox.cpuPressureMax;
      if (pMax > 0 && items && runtime.scorer.anyUsesSandbox(items)) {
        const p = runtime.scorer.hostPressure();
        if (p && p.some10 > pMax) {
          const retry = Math.max(config.retryAfterS, pressureRetryS(p));
          throw new HttpError(
            429,
            `host overloaded: a runnable task waited for a CPU ${p.some10}% of the last 10 s (/proc/pressure/cpu), past the bound of ${pMax}%; retry after ${retry}s (or run fewer programs at once: ASSAY_SANDBOX_POOL, or raise ASSAY_SANDBOX_CPU_PRESSURE_MAX)`,
            undefined,
            { "Retry-After": String(retry) },
          );
        }
      }
      let ownMs: number | undefined;
      for (const pool of POOLS) {
        const waitMs = items ? runtime.scorer.waitMs(items, pool) : 0;
        // Nothing waits for this pool (every text item): no bound to weigh, nothing to build.
        if (waitMs <= 0) continue;
        const limits = BOUNDS[pool](config);
        let bound = limits.bound;
        let held = "";
        let raise = [...limits.slots, limits.boundSetting].join(" / ");
        if (waitMs > bound && items && caller) {
          ownMs ??= runtime.scorer.ownMs(items);
          const hold = caller.waitsMs - ownMs;
          if (hold > bound) {
            bound = hold;
            held = ` (${caller.name} waits ${Math.round(caller.waitsMs / 1000)} s for an answer, ${Math.round(ownMs / 1000)} s of it for scoring)`;
            // The configured bound no longer decides: more slots, or fewer requests, do.
            raise = `${limits.slots.join(" / ")}, or have the trainer send fewer requests at once`;
          }
        }
        if (waitMs > bound) {
          const retry = Math.max(config.retryAfterS, Math.ceil((waitMs - bound) / 1000));
          throw new HttpError(
            429,
            `${limits.what} busy: work sent now would wait about ${Math.round(waitMs / 1000)} s for a ${pool === "sandbox" ? "slot" : "process or connection"}, past the bound of ${Math.round(bound / 1000)} s${held}; retry after ${retry}s (or raise ${raise})`,
            undefined,
            { "Retry-After": String(retry) },
          );
        }
      }
      return limiter.acquire(n, config.retryAfterS);
    },
  };
}

/** Aborted when the client closes the connection before the response is written. */
export function clientGone(_req: Request, res: Response): AbortSignal {
  const ac = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) ac.abort(new Error("client closed the connection"));
  });
  return ac.signal;
}

/**
 * clientGone as a Cancel, for what only the scorer reads (POST /reward, /reward/batch, /verify):
 * made for every request, where an AbortController (an EventTarget) costs more than scoring a
 * text item; the scorer makes a real AbortSignal only for a verifier that reads ctx.signal.
 */
export function clientLeft(_req: Request, res: Response): Cancel {
  const c = new Cancel();
  // `on`: 'close' comes once per response (request-log.ts).
  res.on("close", () => {
    if (!res.writableFinished) c.abort(new Error("client closed the connection"));
  });
  return c;
}

/** Past this many UTF-16 units a body is encoded once into a Buffer (see sendJson). */
const ENCODE_ONCE = 4096;

/**
 * `res.json(value)` for the scoring routes' 200s, without express's `send` (its charset parsing,
 * ETag and freshness checks, off or moot for a POST here): the same bytes and headers
 * (`Content-Type: application/json; charset=utf-8`, `Content-Length`), written at once. A large
 * body (a batch's results) is encoded to UTF-8 once and its length read off the Buffer, where
 * `Buffer.byteLength` then the socket's own encoding of the string walked it twice.
 */
export function sendJson(res: Response, value: unknown): void {
  const body = JSON.stringify(value);
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  if (body.length > ENCODE_ONCE) {
    const bytes = Buffer.from(body, "utf8");
    res.setHeader("Content-Length", bytes.length);
    res.end(bytes);
    return;
  }
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.end(body);
}
