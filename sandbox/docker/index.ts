/**
 * The docker backend: a warm pool of pre-started containers per image (pool.ts), each running
 * Assay's runner (sandbox/runner/runner.py) attached over stdin/stdout (worker.ts). A run costs
 * one JSON line each way and one fork+exec inside the container, never a container start. A
 * container that ran a program which timed out, ran out of memory, was SIGKILLed or left
 * processes behind is removed and replaced, never reused.
 */
import Docker from "dockerode";
import { hostname } from "node:os";
import type { RunOutcome, RunRequest, Sandbox, SandboxLoad } from "../types.js";
import { imageTag, recipeFor } from "../images.js";
import { LANGUAGES, notBuiltReason } from "../languages.js";
import { jobHardWallMs, limitsOf, makeJob, notStarted, NotStartedError, outcomeOf, preloadWarner, sandboxError, specOf } from "../job.js";
import { LABEL, withTimeout, processStart, type DockerOptions, type Worker } from "./worker.js";
import { Pool } from "./pool.js";
import { connectionOf, Engines } from "./engines.js";

export { dockerOptions, type DockerOptions } from "./worker.js";

/** How often a missing image is looked for again (it may have been built since): at most once per this, per image. */
export const IMAGE_RECHECK_MS = 2_000;

export class DockerSandbox implements Sandbox {
  readonly name = "docker";
  private readonly pools = new Map<string, Pool>();
  /** Runs sent again to another engine because theirs went away under them. */
  rerun = 0;
  /** When each missing image may next be looked for, by image name. */
  private readonly recheckAt = new Map<string, number>();

  constructor(readonly engines: Engines, private readonly images: Record<string, string>, private readonly opts: DockerOptions) {
    this.warnPreload = preloadWarner(opts.onWarning);
  }

  /** Logs the preloaded modules a container's warm Python could not import (once per image and list). */
  private readonly warnPreload: ReturnType<typeof preloadWarner>;

  /** The languages whose images are here (grows when an image is built while the server runs). */
  get languages(): readonly string[] {
    return Object.keys(LANGUAGES).filter((l) => this.images[LANGUAGES[l].image ?? ""]);
  }

  /**
   * An image that was not here (at start-up or the last look) is looked for again, at most once
   * per IMAGE_RECHECK_MS: `npx assay sandbox build` while the server runs is picked up by the
   * next item that needs it, without a restart. Returns its tag when it is here now.
   */
  private async recheck(name: string): Promise<string | undefined> {
    const now = Date.now();
    if ((this.recheckAt.get(name) ?? 0) > now) return undefined;
    this.recheckAt.set(name, now + IMAGE_RECHECK_MS);
    const r = recipeFor(name);
    const engine = this.engines.pick() ?? this.engines.list[0];
    if (!r || !engine) return undefined;
    const tag = (this.opts.tagOf ?? imageTag)(r);
    const here = await withTimeout(engine.docker.getImage(tag).inspect(), 2000, "inspect").then(() => true, () => false);
    if (!here) return undefined;
    this.images[name] = tag;
    this.recheckAt.delete(name);
    return tag;
  }

  private pool(image: string): Pool {
    let p = this.pools.get(image);
    if (!p) {
      p = new Pool(this.engines, image, this.opts);
      this.pools.set(image, p);
      p.fill();
    }
    return p;
  }

  async refresh(language: string): Promise<boolean> {
    const image = specOf(language)?.image;
    return !!image && !!(this.images[image] ?? (await this.recheck(image)));
  }

  /** Starts the pool for a language now rather than on first use. */
  warm(language: string): void {
    const spec = specOf(language);
    const tag = spec?.image && this.images[spec.image];
    if (tag) this.pool(tag);
  }

  /** Resolves once python's pool (the default language's) has a warm container. */
  async warmUp(): Promise<void> {
    const tag = this.images[specOf("python")?.image ?? ""];
    if (tag) await this.pool(tag).ready();
  }

  stats() {
    return [...this.pools.values()].map((p) => p.stats());
  }

  /** Each engine: up or down, Assay containers on it, its last error. */
  engineStats() {
    return this.engines.stats();
  }

  /** `attempt`: a run whose engine died under it is run again on another (at most twice). */
  async run(req: RunRequest, attempt = 0): Promise<RunOutcome> {
    const t0 = performance.now();
    const spec = specOf(req.language);
    const tag = spec?.image && (this.images[spec.image] ?? (await this.recheck(spec.image)));
    if (!spec || !tag) return sandboxError(notBuiltReason(req.language) ?? `the docker backend does not run ${JSON.stringify(req.language)}; it runs ${this.languages.join(", ")}`);
    const limits = limitsOf(req, { memoryMb: this.opts.memoryMb, pids: this.opts.pids });
    const job = makeJob(req, spec, limits, this.opts.preload);
    const pool = this.pool(tag);
    const ticket = pool.ledger.enter(limits.wallMs + (job.compile?.limits.wallMs ?? 0));
    let w: Worker;
    try {
      const key = job.compile?.key;
      const waiting = pool.acquire(req.signal, req.startBy, key ? (x) => x.compiled.has(key) : undefined);
      w = await (req.queued ? req.queued(waiting) : waiting);
    } catch (e) {
      ticket.end(false);
      if (e instanceof NotStartedError) return notStarted(e.message, performance.now() - t0);
      return sandboxError(`no sandbox container: ${(e as Error).message}`, performance.now() - t0);
    }
    ticket.start();
    // The runner ends every run by its plain wall-time bound at the latest (a loaded host).
    // Its cleanup (reaping a tree, a container under memory pressure) gets 30 s more.
    const budget = jobHardWallMs(job) + 30_000;
    let onAbort: (() => void) | undefined;
    try {
      const aborted = new Promise<never>((_, rej) => {
        onAbort = () => rej(new Error("aborted"));
        req.signal?.addEventListener("abort", onAbort, { once: true });
      });
      if (req.signal?.aborted) throw new Error("aborted");
      const r = await Promise.race([w.exec(job, budget), aborted]);
      this.warnPreload(tag, r);
      if (job.compile && r.compile?.status === "finished") {
        if (w.compiled.size >= 256) w.compiled.clear(); // (bounded; a stale key costs one compile)
        w.compiled.add(job.compile.key);
      }
      if (r.tainted || r.status === "sandbox_error") pool.discard(w);
      else pool.release(w);
      return outcomeOf(r, job);
    } catch (e) {
      // The runner overran, the container died, or the caller gave up mid-run: never reuse it.
      // A container the kernel's OOM killer ended (shared memory, say, is charged to it) died
      // of the program's memory use: that is the program's memory_limit, not our failure.
      const oom = !req.signal?.aborted && (await withTimeout(w.container.inspect(), 2000, "inspect").then((i) => i.State?.OOMKilled === true, () => false));
      // The engine itself went away (its daemon died, its host is unreachable): not the
      // program's doing. It is marked down and the run goes to another engine.
      const engine = w.engine;
      const engineGone = !oom && !req.signal?.aborted && engine !== undefined &&
        (await withTimeout(engine.docker.ping(), 1500, "ping").then(() => false, () => true));
      pool.discard(w);
      if (engineGone) {
        this.engines.fail(engine!, `lost mid-run: ${(e as Error).message}`);
        if (attempt < 2 && this.engines.pick()) {
          ticket.end(false);
          this.rerun++;
          return this.run(req, attempt + 1);
        }
      }
      if (oom) {
        return { status: "memory_limit", exitCode: null, signal: "SIGKILL", stdout: "", stderr: "", truncated: false, wallMs: performance.now() - t0, cpuMs: null, message: "the program's memory use took down its container" };
      }
      return sandboxError(`sandbox container failed: ${(e as Error).message}`, performance.now() - t0);
    } finally {
      ticket.end();
      if (onAbort) req.signal?.removeEventListener("abort", onAbort);
    }
  }

  /** The busiest pool's backlog (a new request's language is not known ahead). */
  load(): SandboxLoad {
    let worst: SandboxLoad = { slots: this.opts.poolSize, running: 0, queued: 0, waitMs: 0, typicalMs: 0 };
    for (const p of this.pools.values()) {
      const l = p.ledger.load();
      if (l.waitMs > worst.waitMs || (l.waitMs === worst.waitMs && l.running + l.queued > worst.running + worst.queued)) worst = l;
    }
    return worst;
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close()));
    this.pools.clear();
  }
}

/**
 * Whether a container labelled `owner` (`<hostname>:<pid>[:<start>]`) was left by an Assay process
 * of this host that no longer runs: its pid is gone, or is now another process (a different start
 * time: a restarted container's server is pid 1 again). Another host's containers are never stale here.
 */
export function isStale(owner: string, host = hostname()): boolean {
  const [h, pid, start] = owner.split(":");
  if (h !== host) return false;
  try {
    process.kill(Number(pid), 0);
  } catch {
    return true;
  }
  return start !== undefined && start !== "" && start !== processStart(Number(pid));
}

/** Removes containers left by Assay processes on this host that are no longer running. */
export async function removeStale(docker: Docker): Promise<void> {
  const list = await docker.listContainers({ all: true, filters: { label: [LABEL] } });
  const host = hostname();
  await Promise.all(
    list.map(async (c) => {
      if (!isStale(c.Labels?.[LABEL] ?? "", host)) return;
      await docker.getContainer(c.Id).remove({ force: true }).catch(() => {});
    }),
  );
}

/**
 * Connects to the engine and checks the images; resolves to a ready sandbox or to a reason
 * why not (what to install or build).
 */
export async function openDocker(opts: DockerOptions): Promise<{ sandbox: DockerSandbox | null; note: string }> {
  let all: { name: string; docker: Docker }[];
  try {
    all = opts.hosts.length
      ? opts.hosts.map((h) => ({ name: h, docker: new Docker(connectionOf(h, opts.certPath)) }))
      : [{ name: "default", docker: new Docker() }];
  } catch (e) {
    return { sandbox: null, note: (e as Error).message };
  }
  const answers = await Promise.all(all.map((e) => withTimeout(e.docker.ping(), 2000, "no answer within 2 s").then(() => null, (err: Error) => err.message)));
  const engines = Engines.of(all);
  engines.list.forEach((e, i) => {
    if (answers[i]) engines.fail(e, answers[i]!);
  });
  const first = engines.list.find((e) => !e.down);
  if (!first) {
    return { sandbox: null, note: `no Docker engine answers (${answers.join("; ")}); install and start Docker (scripts/setup-sandbox.sh does)` };
  }
  // Images are tagged by recipe hash, so every engine holds the same tags; an engine without one
  // fails to create its containers and is treated as down.
  const images: Record<string, string> = {};
  const missing: string[] = [];
  for (const name of new Set(Object.values(LANGUAGES).flatMap((l) => (l.image ? [l.image] : [])))) {
    const r = recipeFor(name);
    if (!r) continue;
    const tag = (opts.tagOf ?? imageTag)(r);
    try {
      await first.docker.getImage(tag).inspect();
      images[name] = tag;
    } catch {
      if (name === "python" || name === "cpp") missing.push(tag); // the others are opt-in (--lang)
    }
  }
  if (!Object.keys(images).length) {
    return { sandbox: null, note: `Docker answers but no sandbox image is built (${missing.join(", ")}); run \`npx assay sandbox build\`` };
  }
  await Promise.all(engines.list.filter((e) => !e.down).map((e) => removeStale(e.docker).catch(() => {})));
  const sb = new DockerSandbox(engines, images, opts);
  const down = engines.list.filter((e) => e.down);
  const note =
    `docker: pools of ${opts.poolSize} warm containers per image (${Object.values(images).join(", ")})` +
    (engines.list.length > 1 ? ` over ${engines.list.length} engines` : "") + ", no network, " +
    `${opts.memoryMb} MiB and ${opts.pids} pids per container` + (missing.length ? `; not built: ${missing.join(", ")}` : "") +
    (down.length ? `; not answering yet (retried): ${down.map((e) => `${e.name} (${e.lastError})`).join(", ")}` : "");
  return { sandbox: sb, note };
}
