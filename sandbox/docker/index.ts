/**
 * The docker backend: a warm pool of pre-started containers per image (pool.ts), each running
 * Assay's runner (sandbox/runner/runner.py) attached over stdin/stdout (worker.ts). A run costs
 * one JSON line each way and one fork+exec inside the container, never a container start. A
 * container that ran a program which timed out, ran out of memory, was SIGKILLed or left
 * processes behind is removed and replaced, never reused.
 */
import Docker from "dockerode";
import { hostname } from "node:os";
import type { RunOutcome, RunRequest, Sandbox } from "../types.js";
import { imageTag, recipeFor } from "../images.js";
import { LANGUAGES, notBuiltReason } from "../languages.js";
import { limitsOf, makeJob, notStarted, NotStartedError, outcomeOf, sandboxError, specOf } from "../job.js";
import { LABEL, withTimeout, type DockerOptions, type Worker } from "./worker.js";
import { Pool } from "./pool.js";

export { dockerOptions, type DockerOptions } from "./worker.js";

export class DockerSandbox implements Sandbox {
  readonly name = "docker";
  readonly languages: readonly string[];
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly docker: Docker, private readonly images: Record<string, string>, private readonly opts: DockerOptions) {
    this.languages = Object.keys(LANGUAGES).filter((l) => images[LANGUAGES[l].image ?? ""]);
  }

  private pool(image: string): Pool {
    let p = this.pools.get(image);
    if (!p) {
      p = new Pool(this.docker, image, this.opts);
      this.pools.set(image, p);
      p.fill();
    }
    return p;
  }

  /** Starts the pool for a language now rather than on first use. */
  warm(language: string): void {
    const spec = specOf(language);
    const tag = spec?.image && this.images[spec.image];
    if (tag) this.pool(tag);
  }

  stats() {
    return [...this.pools.values()].map((p) => p.stats());
  }

  async run(req: RunRequest): Promise<RunOutcome> {
    const t0 = performance.now();
    const spec = specOf(req.language);
    const tag = spec?.image && this.images[spec.image];
    if (!spec || !tag) return sandboxError(notBuiltReason(req.language) ?? `the docker backend does not run ${JSON.stringify(req.language)}; it runs ${this.languages.join(", ")}`);
    const limits = limitsOf(req, { memoryMb: this.opts.memoryMb, pids: this.opts.pids });
    const job = makeJob(req, spec, limits);
    const pool = this.pool(tag);
    let w: Worker;
    try {
      w = await pool.acquire(req.signal, req.startBy);
    } catch (e) {
      if (e instanceof NotStartedError) return notStarted(e.message, performance.now() - t0);
      return sandboxError(`no sandbox container: ${(e as Error).message}`, performance.now() - t0);
    }
    const budget = limits.wallMs + (job.compile?.limits.wallMs ?? 0) + 10_000;
    let onAbort: (() => void) | undefined;
    try {
      const aborted = new Promise<never>((_, rej) => {
        onAbort = () => rej(new Error("aborted"));
        req.signal?.addEventListener("abort", onAbort, { once: true });
      });
      if (req.signal?.aborted) throw new Error("aborted");
      const r = await Promise.race([w.exec(job, budget), aborted]);
      if (r.tainted || r.status === "sandbox_error") pool.discard(w);
      else pool.release(w);
      return outcomeOf(r);
    } catch (e) {
      // The runner overran, the container died, or the caller gave up mid-run: never reuse it.
      // A container the kernel's OOM killer ended (shared memory, say, is charged to it) died
      // of the program's memory use: that is the program's memory_limit, not our failure.
      const oom = !req.signal?.aborted && (await withTimeout(w.container.inspect(), 2000, "inspect").then((i) => i.State?.OOMKilled === true, () => false));
      pool.discard(w);
      if (oom) {
        return { status: "memory_limit", exitCode: null, signal: "SIGKILL", stdout: "", stderr: "", truncated: false, wallMs: performance.now() - t0, cpuMs: null, message: "the program's memory use took down its container" };
      }
      return sandboxError(`sandbox container failed: ${(e as Error).message}`, performance.now() - t0);
    } finally {
      if (onAbort) req.signal?.removeEventListener("abort", onAbort);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close()));
    this.pools.clear();
  }
}

/** Removes containers left by Assay processes on this host that are no longer running. */
async function removeStale(docker: Docker): Promise<void> {
  const list = await docker.listContainers({ all: true, filters: { label: [LABEL] } });
  const host = hostname();
  await Promise.all(
    list.map(async (c) => {
      const owner = c.Labels?.[LABEL] ?? "";
      const [h, pid] = owner.split(":");
      if (h !== host) return;
      try {
        process.kill(Number(pid), 0);
        return; // still running
      } catch {
        await docker.getContainer(c.Id).remove({ force: true }).catch(() => {});
      }
    }),
  );
}

/**
 * Connects to the engine and checks the images; resolves to a ready sandbox or to a reason
 * why not (what to install or build).
 */
export async function openDocker(opts: DockerOptions): Promise<{ sandbox: DockerSandbox | null; note: string }> {
  const docker = new Docker(opts.socketPath ? { socketPath: opts.socketPath } : undefined);
  try {
    await withTimeout(docker.ping(), 2000, "no answer within 2 s");
  } catch (e) {
    return { sandbox: null, note: `no Docker engine answers (${(e as Error).message}); install and start Docker (scripts/setup-sandbox.sh does)` };
  }
  const images: Record<string, string> = {};
  const missing: string[] = [];
  for (const name of new Set(Object.values(LANGUAGES).flatMap((l) => (l.image ? [l.image] : [])))) {
    const r = recipeFor(name);
    if (!r) continue;
    const tag = imageTag(r);
    try {
      await docker.getImage(tag).inspect();
      images[name] = tag;
    } catch {
      if (name === "python" || name === "cpp") missing.push(tag); // the others are opt-in (--lang)
    }
  }
  if (!Object.keys(images).length) {
    return { sandbox: null, note: `Docker answers but no sandbox image is built (${missing.join(", ")}); run \`npx assay sandbox build\`` };
  }
  await removeStale(docker).catch(() => {});
  const sb = new DockerSandbox(docker, images, opts);
  const note =
    `docker: pools of ${opts.poolSize} warm containers per image (${Object.values(images).join(", ")}), no network, ` +
    `${opts.memoryMb} MiB and ${opts.pids} pids per container` + (missing.length ? `; not built: ${missing.join(", ")}` : "");
  return { sandbox: sb, note };
}
