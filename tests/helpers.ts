/** Test helpers: a runtime and app with the real verifiers plus test-only ones, fake services, a quiet logger. */
import pino from "pino";
import { Type } from "@sinclair/typebox";
import { loadConfig } from "../src/core/config.js";
import { createRuntime, type Runtime } from "../src/core/runtime.js";
import { createServices, lazy, type Services } from "../src/core/services.js";
import { createApp } from "../src/server/app.js";
import { defineVerifier, type AnyVerifier, type VerifyContext } from "../src/core/verifier.js";
import { Registry } from "../src/core/registry.js";
import { InvalidItemError, type Outcome } from "../src/core/types.js";
import type { Sandbox } from "../sandbox/types.js";
import { fetchWithin } from "../src/client/within.js";

export const quiet = pino({ level: "silent" });

/** Waits `ms` (or until aborted), then rewards 1: lets tests drive deadlines and the in-flight cap. */
export const sleepVerifier = defineVerifier({
  name: "test-sleep",
  description: "test only: sleeps options.ms then rewards 1",
  reference: Type.Unknown(),
  options: Type.Object({ ms: Type.Integer({ minimum: 0, default: 0 }) }),
  verify(item, ctx) {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => resolve({ reward: 1, reason: "slept" }), item.options.ms);
      ctx.signal.addEventListener("abort", () => { clearTimeout(t); reject(ctx.signal.reason); }, { once: true });
    });
  },
});

/** Throws, or returns a broken reward, to prove the scorer contains verifier bugs. */
export const brokenVerifier = defineVerifier({
  name: "test-broken",
  description: "test only: misbehaves as options.mode says",
  reference: Type.Unknown(),
  options: Type.Object({ mode: Type.Optional(Type.Union([Type.Literal("throw"), Type.Literal("nan"), Type.Literal("null")])) }),
  async verify(item) {
    if (item.options.mode === "nan") return { reward: NaN, reason: "nan" };
    if (item.options.mode === "null") return { reward: null, reason: "judge unreachable" };
    throw new Error("boom");
  },
});

/** A sandbox service that hands out `sandbox` (or fails as none being available). */
export function fakeSandbox(sandbox: Sandbox | null): Services["sandbox"] {
  return lazy(async () => {
    if (!sandbox) throw new Error("no sandbox in this test");
    return sandbox;
  });
}

export interface TestRuntimeOptions {
  /** ASSAY_* variables (ASSAY_SANDBOX defaults to none, ASSAY_LOG_LEVEL to silent). */
  env?: Record<string, string>;
  /** Verifiers beside the discovered ones (default: the sleep and broken test verifiers). */
  extra?: AnyVerifier[];
  /** Only these discovered verifiers. */
  only?: string[];
  services?: Partial<Services>;
}

/** A runtime as the server builds it, with test-only verifiers and, optionally, fake services. */
export async function testRuntime(o: TestRuntimeOptions = {}): Promise<Runtime> {
  const env: Record<string, string> = { ASSAY_LOG_LEVEL: "silent", ASSAY_SANDBOX: "none", ASSAY_DATA_DIR: ":memory:", ...o.env };
  // ASSAY_TEST_STORE=postgres: a store that would be in memory is a fresh PostgreSQL schema instead (tests/store-backends.ts)
  let drop: (() => Promise<void>) | undefined;
  if (process.env.ASSAY_TEST_STORE === "postgres" && env.ASSAY_DATA_DIR === ":memory:" && !env.ASSAY_STORE_URL) {
    const { freshSchema } = await import("./store-backends.js");
    const s = await freshSchema();
    env.ASSAY_STORE_URL = s.url;
    drop = s.drop;
  }
  const config = loadConfig(env);
  const runtime = await createRuntime(config, { log: quiet, extraVerifiers: o.extra ?? [sleepVerifier, brokenVerifier], only: o.only, services: o.services });
  if (drop) {
    const close = runtime.close.bind(runtime);
    runtime.close = async () => {
      await close();
      await drop!().catch(() => {});
    };
  }
  return runtime;
}

/** The HTTP app over a test runtime (supertest takes `app`). */
export async function testApp(env: Record<string, string> = {}, extra?: AnyVerifier[], services?: Partial<Services>) {
  const runtime = await testRuntime({ env, extra, services });
  return { ...createApp(runtime), runtime, config: runtime.config, registry: runtime.registry, scorer: runtime.scorer };
}

/** Services for calling a verifier directly: default config, one worker, no sandbox unless given, an in-memory store. */
export function testServices(o: Partial<Services> = {}): Services {
  const { close: _close, ...built } = createServices(loadConfig({ ASSAY_LOG_LEVEL: "silent", ASSAY_SANDBOX: "none", ASSAY_DATA_DIR: ":memory:" }), quiet);
  return { ...built, workers: 1, sandbox: fakeSandbox(null), ...o };
}

const registries = new WeakMap<AnyVerifier, Registry>();

/**
 * Calls `v.verify` as the scorer does (reference checked, option defaults filled in), without
 * HTTP or deadlines. An item the declarations reject throws InvalidItemError.
 */
export async function verifyDirect(
  v: AnyVerifier,
  item: { response: string; reference?: unknown; options?: Record<string, unknown>; prompt?: string },
  ctx: Partial<VerifyContext> = {},
): Promise<Outcome> {
  let registry = registries.get(v);
  if (!registry) registries.set(v, (registry = new Registry().register(v)));
  const r = registry.resolve({ verifier: v.name, ...item });
  if ("invalid" in r) throw new InvalidItemError(r.invalid, r.field);
  return v.verify(r.item, { deadline: Date.now() + 60_000, signal: new AbortController().signal, log: quiet, services: testServices(), ...ctx });
}

/**
 * This process's CPU time (user + system) for one run of `f`, the fastest of five after a
 * warm-up run. Hostile-input tests time with it: on a busy machine wall time measures the
 * neighbours, while an algorithmic blow-up costs CPU on every run.
 *
 * With `under`, the bound the caller will assert, a reading at or over it earns up to two more
 * rounds of five after a half-second pause. process.cpuUsage counts V8's compiler and GC threads
 * too, and on a 2-core CI machine running other test files beside this one (compilers, docker)
 * every run of a round can read 2-3x slow; a quadratic step still costs seconds on every run of
 * every round, so the retry hides load, never a blow-up.
 *
 * `runs`: timed runs a round (default 5). `giveUp`: a warm-up run that took more than this many
 * ms is the reading, with no more runs: a sweep over many shapes then costs one slow run per
 * quadratic shape, not sixteen.
 */
export async function fastestCpu<T>(f: () => Promise<T> | T, opts: { under?: number; runs?: number; giveUp?: number } = {}): Promise<{ out: T; ms: number }> {
  const w0 = process.cpuUsage();
  let out = await f();
  const w = process.cpuUsage(w0);
  const warmMs = (w.user + w.system) / 1000;
  if (opts.giveUp !== undefined && warmMs > opts.giveUp) return { out, ms: warmMs };
  let ms = Infinity;
  for (let round = 0; round < 3; round++) {
    if (round > 0) {
      if (opts.under === undefined || ms < opts.under) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    // Five runs: a 1 MB case needs three or four before it is fully optimised (100+ ms, then ~27 ms).
    for (let i = 0; i < (opts.runs ?? 5); i++) {
      const c0 = process.cpuUsage();
      out = await f();
      const c = process.cpuUsage(c0);
      ms = Math.min(ms, (c.user + c.system) / 1000);
    }
  }
  return { out, ms };
}

/** The URL from a served child's `assay listening on` log line (its output so far read through
 * `out`), within 60 s; rejects at once, with the output, if the child exits first. */
export function listeningUrl(child: import("node:child_process").ChildProcess, out: () => string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no 'listening' line within 60 s: ${out().slice(0, 400)}`)), 60_000);
    const poll = setInterval(() => {
      const l = out().split("\n").find((x) => x.includes("assay listening on"));
      if (!l) return;
      clearInterval(poll);
      clearTimeout(t);
      resolve(JSON.parse(l).url);
    }, 5);
    child.once("exit", (c) => reject(new Error(`serve exited ${c}: ${out().slice(0, 400)}`)));
  });
}

/** Why PostgreSQL at `url` cannot be used by a test (null when it answers), with the command that
 * starts one; under CI the caller throws it instead of skipping. */
export async function pgMissingAt(url: string): Promise<string | null> {
  const { default: pg } = await import("pg");
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await c.connect();
    await c.end();
    return null;
  } catch (err) {
    return `PostgreSQL not reachable (${(err as Error).message}); bash scripts/setup-postgres.sh starts one`;
  }
}

/** An answer read whole: what `exchange` gives. */
export interface Answer {
  status: number;
  ok: boolean;
  text: string;
  json<T = unknown>(): T;
}

/**
 * One HTTP exchange for a test against a server behind a proxy (docker-proxy, HAProxy), the
 * answer read whole within `ms`, under a deadline that holds the process open: such a proxy closes
 * a connection unread while its backend starts, and a bare fetch then never settles and lets the
 * test's process end mid-await (src/client/within.ts).
 */
export function exchange(url: string, init: RequestInit = {}, ms = 30_000): Promise<Answer> {
  return fetchWithin(url, init, ms, async (r) => {
    const text = await r.text();
    return { status: r.status, ok: r.ok, text, json: <T>() => JSON.parse(text) as T };
  });
}
