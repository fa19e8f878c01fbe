/**
 * One runtime: the registry, the shared services and the scorer, built from configuration. The
 * server, `assay score`, the tests and the benches all start from here, so a new service or a
 * new verifier folder reaches every one of them at once.
 */
import type { Logger } from "pino";
import type { Config } from "./config.js";
import { Registry } from "./registry.js";
import { discoverVerifiers, VERIFIERS_DIR } from "./discover.js";
import { createServices, type Services } from "./services.js";
import { Scorer } from "./scorer.js";
import type { AnyVerifier } from "./verifier.js";
import { Readiness } from "./readiness.js";

export interface Runtime {
  config: Config;
  log: Logger;
  registry: Registry;
  services: Services;
  scorer: Scorer;
  /**
   * Starts verifiers' pools and the sandbox's warm containers now rather than on their first
   * item; resolves once each is warm or has failed (never rejects). `readiness` follows it.
   */
  warmUp(): Promise<void>;
  /** What is warm and what is not yet (GET /readyz). */
  readiness: Readiness;
  /** Closes verifiers, then services. */
  close(): Promise<void>;
  /** Whether close() has been called (a retry loop started with the runtime stops then). */
  readonly closed: boolean;
}

export interface RuntimeOptions {
  log: Logger;
  /** Verifiers beside the discovered ones (tests). */
  extraVerifiers?: AnyVerifier[];
  /** Only these discovered verifiers (by name). */
  only?: string[];
  /** Replace services (tests: a fake sandbox). Unreplaced ones are built from config as usual. */
  services?: Partial<Services>;
}

export async function createRuntime(config: Config, o: RuntimeOptions): Promise<Runtime> {
  const { log } = o;
  const registry = new Registry();
  for (const dir of [VERIFIERS_DIR, ...config.verifierPath]) {
    for (const v of await discoverVerifiers(dir)) if (!o.only || o.only.includes(v.name)) registry.register(v);
  }
  for (const v of o.extraVerifiers ?? []) registry.register(v);
  const built = createServices(config, log);
  const services: Services = { ...built, ...o.services };
  const scorer = new Scorer({
    registry,
    services,
    log,
    deadlineMs: config.deadlineMs,
    maxDeadlineMs: config.maxDeadlineMs,
    batchConcurrency: config.batchConcurrency,
    maxPartDepth: config.compose.maxDepth,
  });
  const readiness = new Readiness();
  let warming: Promise<void> | undefined;
  const warmUp = () =>
    (warming ??= (async () => {
      for (const { name, done } of registry.initAll({ log, services })) readiness.track(`verifier:${name}`, "starting", done);
      if (config.sandbox.backend !== "none") {
        readiness.track(
          "sandbox",
          "choosing a backend and starting warm containers",
          services.sandbox().then(async (sb) => (await sb.warmUp?.(), sb)),
          (sb) => `${sb.name}: runs ${sb.languages.join(", ")}`,
        );
      }
      readiness.track("sql", "starting SQLite processes", services.sql().then((sql) => sql.warmUp()), (note) => note);
      readiness.started = true;
      await readiness.settled();
    })());
  let closing: Promise<void> | undefined;
  return {
    config,
    log,
    registry,
    services,
    scorer,
    warmUp,
    readiness,
    get closed() {
      return closing !== undefined;
    },
    close() {
      closing ??= (async () => {
        await registry.close();
        await built.close();
      })();
      return closing;
    },
  };
}
