/**
 * The docker backend: a warm pool of pre-started containers per image, each running Assay's
 * runner (sandbox/runner/runner.py) attached over stdin/stdout. A run costs one JSON line each
 * way and one fork+exec inside the container, never a container start. Containers have no
 * network, a read-only root with a tmpfs scratch, memory and pids limits from their cgroup,
 * and no capabilities but those the runner needs to drop to an unprivileged uid. A container
 * that ran a program which timed out, ran out of memory, was SIGKILLed or left processes behind
 * is removed and replaced, never reused.
 */
import Docker from "dockerode";
import { PassThrough, type Duplex } from "node:stream";
import { hostname } from "node:os";
import type { RunOutcome, RunRequest, Sandbox } from "../types.js";
import { runnerSourceText } from "../paths.js";
import { imageTag, recipeFor } from "../images.js";
import { LANGUAGES } from "../languages.js";
import { limitsOf, makeJob, outcomeOf, sandboxError, specOf, type RunnerJob } from "../job.js";

export interface DockerOptions {
  /** Containers per image. */
  poolSize: number;
  /** Each container's memory (cgroup), MiB: the ceiling of any run's memory limit. */
  memoryMb: number;
  /** Each container's pids limit (cgroup). */
  pids: number;
  /** Scratch tmpfs size, MiB. */
  scratchMb: number;
  socketPath?: string;
}

export function dockerOptionsFromEnv(env = process.env): DockerOptions {
  const n = (k: string, d: number) => (env[k] && Number.isInteger(Number(env[k])) && Number(env[k]) > 0 ? Number(env[k]) : d);
  return {
    poolSize: n("ASSAY_SANDBOX_POOL", 8),
    memoryMb: n("ASSAY_SANDBOX_MEMORY_MB", 1024),
    pids: n("ASSAY_SANDBOX_PIDS", 128),
    scratchMb: n("ASSAY_SANDBOX_SCRATCH_MB", 128),
    socketPath: env.DOCKER_HOST?.startsWith("unix://") ? env.DOCKER_HOST.slice(7) : undefined,
  };
}

const OWNER = `${hostname()}:${process.pid}`;
const LABEL = "assay.sandbox";

interface Pending {
  resolve: (r: any) => void;
  reject: (e: Error) => void;
}

/** One warm container and its attached runner. */
class Worker {
  private buf = "";
  private pending: Pending | null = null;
  private stderrTail = "";
  dead = false;
  ready: Promise<void>;

  private constructor(readonly container: Docker.Container, private readonly stream: Duplex, demux: (s: Duplex, o: PassThrough, e: PassThrough) => void) {
    const out = new PassThrough();
    const err = new PassThrough();
    demux(stream, out, err);
    err.on("data", (d: Buffer) => {
      this.stderrTail = (this.stderrTail + d.toString("utf8")).slice(-2000);
    });
    let readyResolve!: () => void;
    let readyReject!: (e: Error) => void;
    this.ready = new Promise((res, rej) => {
      readyResolve = res;
      readyReject = rej;
    });
    this.ready.catch(() => {});
    let gotReady = false;
    out.on("data", (d: Buffer) => {
      this.buf += d.toString("utf8");
      let nl: number;
      while ((nl = this.buf.indexOf("\n")) >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        let msg: any;
        try {
          msg = JSON.parse(line);
        } catch {
          continue;
        }
        if (!gotReady && msg.ready) {
          gotReady = true;
          readyResolve();
          continue;
        }
        const p = this.pending;
        this.pending = null;
        p?.resolve(msg);
      }
    });
    const onEnd = () => {
      if (this.dead) return;
      this.dead = true;
      const e = new Error(`sandbox container ended unexpectedly${this.stderrTail ? ": " + this.stderrTail.trim().slice(-300) : ""}`);
      readyReject(e);
      const p = this.pending;
      this.pending = null;
      p?.reject(e);
    };
    stream.on("end", onEnd);
    stream.on("close", onEnd);
    stream.on("error", onEnd);
  }

  static async start(docker: Docker, image: string, opts: DockerOptions): Promise<Worker> {
    const container = await docker.createContainer({
      Image: image,
      Cmd: ["python3", "-u", "-c", runnerSourceText()],
      Env: ["ASSAY_SCRATCH=/sandbox", "ASSAY_IN_SANDBOX=1", "PATH=/usr/local/bin:/usr/bin:/bin"],
      User: "0:0",
      WorkingDir: "/sandbox",
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      OpenStdin: true,
      StdinOnce: false,
      Tty: false,
      NetworkDisabled: true,
      Labels: { [LABEL]: OWNER },
      HostConfig: {
        NetworkMode: "none",
        ReadonlyRootfs: true,
        Tmpfs: { "/sandbox": `rw,exec,nosuid,nodev,size=${opts.scratchMb}m,mode=755` },
        ShmSize: 16 * 1024 * 1024,
        Memory: opts.memoryMb * 1024 * 1024,
        MemorySwap: opts.memoryMb * 1024 * 1024,
        PidsLimit: opts.pids,
        CapDrop: ["ALL"],
        CapAdd: ["SETUID", "SETGID", "CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL"],
        SecurityOpt: ["no-new-privileges"],
        IpcMode: "private",
        Init: false,
        AutoRemove: false,
        LogConfig: { Type: "none", Config: {} },
      },
    });
    try {
      const stream = (await container.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true })) as unknown as Duplex;
      const w = new Worker(container, stream, (s, o, e) => docker.modem.demuxStream(s, o, e));
      await container.start();
      await withTimeout(w.ready, 20_000, "the sandbox runner did not start within 20 s");
      return w;
    } catch (e) {
      await container.remove({ force: true }).catch(() => {});
      throw e;
    }
  }

  /** Sends one job; resolves with the runner's answer, rejects if the container dies or overruns. */
  exec(job: RunnerJob, timeoutMs: number): Promise<any> {
    if (this.dead) return Promise.reject(new Error("sandbox container is gone"));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending = null;
        reject(new Error(`the sandbox runner did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending = {
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      this.stream.write(JSON.stringify(job) + "\n");
    });
  }

  async destroy(): Promise<void> {
    this.dead = true;
    try {
      this.stream.destroy();
    } catch {
      /* already closed */
    }
    await this.container.remove({ force: true }).catch(() => {});
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(t)),
    new Promise<T>((_, rej) => {
      t = setTimeout(() => rej(new Error(what)), ms);
    }),
  ]);
}

/** Warm containers of one image. */
class Pool {
  private idle: Worker[] = [];
  private waiters: { resolve: (w: Worker) => void; reject: (e: Error) => void }[] = [];
  private live = 0;
  private closed = false;
  private lastError: Error | null = null;
  recycled = 0;

  constructor(private readonly docker: Docker, readonly image: string, private readonly opts: DockerOptions) {}

  /** Starts containers until the pool is full. */
  fill(): void {
    while (!this.closed && this.live < this.opts.poolSize) {
      this.live++;
      Worker.start(this.docker, this.image, this.opts).then(
        (w) => {
          this.lastError = null;
          if (this.closed) {
            this.live--;
            void w.destroy();
          } else this.release(w);
        },
        (e: Error) => {
          this.live--;
          this.lastError = e;
          // Nothing is starting any more: tell the waiters rather than hang them.
          if (this.live === 0) for (const w of this.waiters.splice(0)) w.reject(e);
        },
      );
    }
  }

  acquire(signal?: AbortSignal): Promise<Worker> {
    const w = this.idle.pop();
    if (w) return Promise.resolve(w);
    if (this.live < this.opts.poolSize) this.fill();
    if (this.live === 0 && this.lastError) return Promise.reject(this.lastError);
    return new Promise((resolve, reject) => {
      const entry = { resolve, reject };
      this.waiters.push(entry);
      signal?.addEventListener(
        "abort",
        () => {
          const i = this.waiters.indexOf(entry);
          if (i >= 0) {
            this.waiters.splice(i, 1);
            reject(new Error("aborted while waiting for a sandbox"));
          }
        },
        { once: true },
      );
    });
  }

  release(w: Worker): void {
    if (w.dead || this.closed) {
      this.discard(w);
      return;
    }
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve(w);
    else this.idle.push(w);
  }

  /** Removes a container that can no longer be trusted and starts a fresh one. */
  discard(w: Worker): void {
    this.live--;
    this.recycled++;
    void w.destroy();
    if (!this.closed) this.fill();
  }

  stats() {
    return { image: this.image, live: this.live, idle: this.idle.length, waiting: this.waiters.length, recycled: this.recycled };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w.reject(new Error("sandbox closed"));
    await Promise.all(this.idle.splice(0).map((w) => w.destroy()));
  }
}

export class DockerSandbox implements Sandbox {
  readonly name = "docker";
  readonly languages: readonly string[];
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly docker: Docker, private readonly images: Record<string, string>, private readonly opts: DockerOptions) {
    this.languages = Object.keys(LANGUAGES).filter((l) => images[LANGUAGES[l].image]);
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
    const tag = spec && this.images[spec.image];
    if (tag) this.pool(tag);
  }

  stats() {
    return [...this.pools.values()].map((p) => p.stats());
  }

  async run(req: RunRequest): Promise<RunOutcome> {
    const t0 = performance.now();
    const spec = specOf(req.language);
    const tag = spec && this.images[spec.image];
    if (!spec || !tag) return sandboxError(`the docker backend does not run ${JSON.stringify(req.language)}; it runs ${this.languages.join(", ")}`);
    const limits = limitsOf(req, { memoryMb: this.opts.memoryMb, pids: this.opts.pids });
    const job = makeJob(req, spec, limits);
    const pool = this.pool(tag);
    let w: Worker;
    try {
      w = await pool.acquire(req.signal);
    } catch (e) {
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
      pool.discard(w);
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
export async function openDocker(opts = dockerOptionsFromEnv()): Promise<{ sandbox: DockerSandbox | null; note: string }> {
  const docker = new Docker(opts.socketPath ? { socketPath: opts.socketPath } : undefined);
  try {
    await withTimeout(docker.ping(), 2000, "no answer within 2 s");
  } catch (e) {
    return { sandbox: null, note: `no Docker engine answers (${(e as Error).message}); install and start Docker (scripts/setup-sandbox.sh does)` };
  }
  const images: Record<string, string> = {};
  const missing: string[] = [];
  for (const name of new Set(Object.values(LANGUAGES).map((l) => l.image))) {
    const r = recipeFor(name);
    if (!r) continue;
    const tag = imageTag(r);
    try {
      await docker.getImage(tag).inspect();
      images[name] = tag;
    } catch {
      missing.push(tag);
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
