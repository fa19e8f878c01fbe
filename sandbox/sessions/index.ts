/**
 * Session sandboxes: one long-lived sandbox per code-interpreter session, running the session
 * supervisor (kernel.py) that keeps one interpreter alive between execs. The isolation is a run's
 * (sandbox/docker/worker.ts: no network, read-only root, tmpfs scratch and /tmp, memory and pids
 * cgroup limits, one core, dropped capabilities, the program as uid 65534). A sandbox knows
 * nothing about rewards, sessions' ids or owners: src/sessions/service.ts keeps those.
 *
 * Boxes are started ahead (a small warm pool) so creating a session costs one JSON line, not a
 * container start; a box is never reused: when its session ends it is removed.
 */
import Docker from "dockerode";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../paths.js";
import { imageTag, recipeFor } from "../images.js";
import { Worker, withTimeout, type DockerOptions } from "../docker/worker.js";
import { connectionOf } from "../docker/engines.js";
import { removeStale } from "../docker/index.js";

export const KERNEL_PATH = join(PACKAGE_ROOT, "sandbox", "sessions", "kernel.py");
let kernelSource: string | undefined;
export function kernelSourceText(): string {
  return (kernelSource ??= readFileSync(KERNEL_PATH, "utf8"));
}

export type KernelStatus = "ok" | "error" | "timeout" | "memory" | "output_limit" | "crashed" | "sandbox_error";

/** The supervisor's answer to one exec (kernel.py's protocol). */
export interface KernelReply {
  status: KernelStatus;
  stdout: string;
  stderr: string;
  value: string | null;
  error: { name: string; message: string; traceback: string } | null;
  exit_code: number | null;
  truncated: boolean;
  ms: number;
  cpu_ms: number | null;
  message: string | null;
}

export interface KernelExec {
  code: string;
  cpuMs: number;
  wallMs: number;
  outputBytes: number;
}

/** One session's sandbox. */
export interface Box {
  readonly dead: boolean;
  /** Starts the interpreter (python or bash) with these files in its scratch directory. */
  start(language: string, files: Record<string, string> | undefined, valueBytes: number, memoryMb: number): Promise<void>;
  /** Runs one cell; never rejects for what the cell did (see KernelReply.status). */
  exec(x: KernelExec): Promise<KernelReply>;
  /** Removes the sandbox and everything in it. */
  destroy(): Promise<void>;
}

export interface BoxBackend {
  readonly name: string;
  /** A fresh box from the warm pool, or a wait for one; rejects past `startBy` (epoch ms). */
  take(startBy: number, signal?: AbortSignal): Promise<Box>;
  /** Resolves once a box is warm. */
  ready(timeoutMs?: number): Promise<void>;
  stats(): { warm: number; starting: number; waiting: number };
  close(): Promise<void>;
}

export interface SessionBoxOptions {
  /** Boxes kept started ahead. */
  warm: number;
  /** Memory each warm box starts with (MiB); a session asking another gets its box's cgroup updated. */
  memoryMb: number;
  pids: number;
  scratchMb: number;
  /** Engine address (empty: dockerode's default). */
  host?: string;
  certPath?: string;
  /** The image's tag (default: the python recipe's, images.ts). */
  image?: string;
}

export class NoBoxInTimeError extends Error {}

/** One caller waiting for a warm sandbox: handed one by the pool's fill, or out of line at startBy or on abort. */
export interface Waiter<T> {
  resolve: (x: T) => void;
  reject: (e: Error) => void;
}

/**
 * Joins `waiters` (a pool's queue, served first come first served as sandboxes start) and
 * resolves with `wrap` of the sandbox handed over; leaves the line with NoBoxInTimeError at
 * `startBy`, or when `signal` aborts. The pool's fill() starts what the line needs.
 */
export function waitInLine<T, B>(waiters: Waiter<T>[], startBy: number, signal: AbortSignal | undefined, wrap: (x: T) => B): Promise<B> {
  return new Promise<B>((resolve, reject) => {
    const entry: Waiter<T> = {
      resolve: (x) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        resolve(wrap(x));
      },
      reject: (e) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        reject(e);
      },
    };
    const leave = (e: Error) => {
      const i = waiters.indexOf(entry);
      if (i >= 0) {
        waiters.splice(i, 1);
        entry.reject(e);
      }
    };
    const onAbort = () => leave(new Error("aborted while waiting for a session sandbox"));
    const timer = setTimeout(() => leave(new NoBoxInTimeError("no session sandbox came free in time")), Math.max(0, startBy - Date.now()));
    signal?.addEventListener("abort", onAbort, { once: true });
    waiters.push(entry);
  });
}

class DockerBox implements Box {
  /** `memoryMb`: what the container started with (a session asking the same needs no update). */
  constructor(private readonly w: Worker, private readonly memoryMb: number) {}
  get dead() {
    return this.w.dead;
  }
  async start(language: string, files: Record<string, string> | undefined, valueBytes: number, memoryMb: number): Promise<void> {
    if (memoryMb && memoryMb !== this.memoryMb) {
      const bytes = memoryMb * 1024 * 1024;
      await this.w.container.update({ Memory: bytes, MemorySwap: bytes });
    }
    const r = await this.w.exec({ op: "start", language, files, value_bytes: valueBytes } as any, 20_000);
    if (!r.ok) throw new Error(`the session sandbox could not start ${language}: ${r.message ?? "no reason given"}`);
  }
  async exec(x: KernelExec): Promise<KernelReply> {
    // The supervisor ends the exec at its wall limit; the margin covers a loaded host.
    const budget = x.wallMs + 15_000;
    try {
      return await this.w.exec({ op: "exec", code: x.code, cpu_ms: x.cpuMs, wall_ms: x.wallMs, output_bytes: x.outputBytes } as any, budget);
    } catch (e) {
      const oom = await withTimeout(this.w.container.inspect(), 2000, "inspect").then((i) => i.State?.OOMKilled === true, () => false);
      const base = { stdout: "", stderr: "", value: null, error: null, exit_code: null, truncated: false, ms: 0, cpu_ms: null };
      if (oom) return { ...base, status: "memory", message: "the session's sandbox ran out of memory" };
      // The container ended under the exec (its supervisor killed by what the cell did): the cell's doing.
      if (this.w.dead) return { ...base, status: "crashed", message: (e as Error).message };
      return { ...base, status: "timeout", message: (e as Error).message };
    }
  }
  destroy(): Promise<void> {
    return this.w.destroy();
  }
}

export class DockerBoxes implements BoxBackend {
  readonly name = "docker";
  private readonly docker: Docker;
  private readonly image: string;
  private idle: Worker[] = [];
  private starting = 0;
  private waiters: Waiter<Worker>[] = [];
  private closed = false;
  private lastError: Error | null = null;
  private failures = 0;
  private retryTimer?: NodeJS.Timeout;

  constructor(private readonly opts: SessionBoxOptions) {
    this.docker = new Docker(opts.host ? connectionOf(opts.host, opts.certPath) : undefined);
    this.image = opts.image ?? imageTag(recipeFor("python")!);
  }

  /** Checks the engine and the image; a reason (what to build or start) when they are not there. */
  async check(): Promise<string | null> {
    try {
      await withTimeout(this.docker.ping(), 3000, "no answer in 3 s");
    } catch (e) {
      return `no Docker engine answers (${(e as Error).message}): start one, or set DOCKER_HOST`;
    }
    const here = await withTimeout(this.docker.getImage(this.image).inspect(), 3000, "inspect").then(() => true, () => false);
    // Sessions of an Assay process that is gone (a restart) are lost: their containers go.
    await withTimeout(removeStale(this.docker), 10_000, "sweep").catch(() => {});
    return here ? null : `the sandbox image ${this.image} is not built: run \`npx assay sandbox build --lang python\``;
  }

  private workerOptions(): DockerOptions {
    return { poolSize: this.opts.warm, memoryMb: this.opts.memoryMb, pids: this.opts.pids, scratchMb: this.opts.scratchMb, hosts: [] };
  }

  /** Starts boxes until `warm` are idle or starting, plus one per waiting creation. */
  fill(): void {
    while (!this.closed && this.idle.length + this.starting < this.opts.warm + this.waiters.length) {
      this.starting++;
      Worker.start(this.docker, this.image, this.workerOptions(), {
        source: kernelSourceText(),
        tmpfs: { "/tmp": `rw,exec,nosuid,nodev,size=${this.opts.scratchMb}m,mode=1777` },
        labels: { "assay.session": "1" },
      }).then(
        (w) => {
          this.starting--;
          this.failures = 0;
          this.lastError = null;
          if (this.closed) return void w.destroy();
          const waiter = this.waiters.shift();
          if (waiter) waiter.resolve(w);
          else this.idle.push(w);
        },
        (e: Error) => {
          this.starting--;
          this.lastError = e;
          this.failures++;
          if (this.starting === 0 && this.failures >= 3) for (const x of this.waiters.splice(0)) x.reject(new Error(`no session sandbox could start: ${e.message}`));
          if (!this.closed && !this.retryTimer) {
            this.retryTimer = setTimeout(() => {
              this.retryTimer = undefined;
              this.fill();
            }, Math.min(30_000, 500 * 2 ** Math.min(this.failures, 6)));
            this.retryTimer.unref();
          }
        },
      );
    }
  }

  take(startBy: number, signal?: AbortSignal): Promise<Box> {
    let w = this.idle.shift();
    while (w?.dead) {
      void w.destroy();
      w = this.idle.shift();
    }
    if (w) {
      this.fill();
      return Promise.resolve(new DockerBox(w, this.opts.memoryMb));
    }
    if (this.failures >= 3 && this.lastError) {
      this.fill();
      return Promise.reject(new Error(`no session sandbox could start: ${this.lastError.message}`));
    }
    const box = waitInLine(this.waiters, startBy, signal, (x) => new DockerBox(x, this.opts.memoryMb));
    this.fill();
    return box;
  }

  async ready(timeoutMs = 120_000): Promise<void> {
    this.fill();
    const t0 = Date.now();
    while (!this.closed && this.idle.length === 0) {
      if (this.failures >= 3 && this.lastError) throw new Error(`no warm session sandbox: ${this.lastError.message}`);
      if (Date.now() - t0 > timeoutMs) throw new Error(`no session sandbox warm after ${timeoutMs / 1000} s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  stats() {
    return { warm: this.idle.length, starting: this.starting, waiting: this.waiters.length };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    for (const x of this.waiters.splice(0)) x.reject(new Error("the session service is shutting down"));
    await Promise.all(this.idle.splice(0).map((w) => w.destroy()));
  }
}
