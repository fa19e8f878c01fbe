/**
 * SQLite queries off the event loop, in child processes (sqlite-worker.ts), one task at a time
 * each. Why processes and not worker threads (piscina, as the math verifier uses): better-sqlite3
 * is synchronous and exposes no sqlite3_interrupt, and Worker.terminate() only stops JavaScript.
 * A thread inside a long SQLite step (`SELECT count(*)` over a 6-way cross join, an endless
 * recursive CTE) keeps running after terminate, burning a core and keeping the process alive,
 * as we measured. A process is stopped by SIGKILL whatever it is doing.
 *
 * A task's limit is the work it did: the CPU time its process spent on it (the process's main
 * thread, read from /proc/<pid>/schedstat while it runs), so a query that is only slow because
 * the machine is busy is not cut off. A wall-clock safety net (`netMs`) stops a task that sleeps
 * (disk, page faults) without using CPU; it is not charged for the time the process waited for a
 * CPU (schedstat's run-queue wait). Where /proc cannot be read the limit is wall-clock time.
 *
 * A task's clock starts when a process takes it (the service runs the whole query under the
 * scorer's `ctx.unclocked`, and fixes its limit from what is left of the item's deadline then).
 * The backlog is recorded in a ledger (sandbox/load.ts, the sandbox's own) so admission can refuse
 * work that would wait too long.
 */
import { fork, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ledger, type Ticket } from "../../sandbox/load.js";
import { schedstat } from "../../sandbox/meter.js";
import type { SandboxLoad } from "../../sandbox/types.js";
import type { WorkerTask } from "./sqlite-worker.js";
import type { QueryOutcome, SchemaTable } from "./types.js";

function workerFile(): string {
  const self = fileURLToPath(import.meta.url);
  const ext = self.endsWith(".ts") ? ".ts" : ".js";
  const file = self.replace(/sqlite-pool\.(ts|js)$/, `sqlite-worker${ext}`);
  if (!existsSync(file)) throw new Error(`sqlite worker not found at ${file}`);
  return file;
}

/** How often a running task's CPU time is read, ms. */
const POLL_MS = 20;

/** CPU time and run-queue wait of a process's main thread, ms; null where /proc cannot say. */
export function schedOf(pid: number | undefined): { cpuMs: number; waitMs: number } | null {
  const s = pid ? schedstat(pid) : null;
  return s && { cpuMs: s[0] / 1e6, waitMs: s[1] / 1e6 };
}

export class TaskTimeout extends Error {
  /**
   * `started`: the task had a process (else it waited for one past its deadline). `by`: what
   * stopped it: its CPU time, the wall-clock safety net, or (not started) the queue deadline.
   */
  constructor(readonly started: boolean, readonly ms: number, readonly by: "cpu" | "wall" | "queue" = started ? "wall" : "queue") {
    super(
      !started ? `not started within ${Math.round(ms)} ms (all SQLite processes busy)`
      : by === "cpu" ? `stopped after ${Math.round(ms)} ms of CPU time`
      : `stopped after ${Math.round(ms)} ms`,
    );
    this.name = "TaskTimeout";
  }
}

/** The process died while running the task. */
export class ProcessExited extends Error {
  constructor() {
    super("the SQLite process exited");
    this.name = "ProcessExited";
  }
}

export interface RunOptions {
  /**
   * The task's limit, ms of CPU time (wall time where /proc cannot be read); read when a process
   * takes the task, so a caller whose clock was stopped while it waited gets what is left then.
   */
  limitMs: number | (() => number);
  /** Wall-clock safety net once started, ms, not counting time waiting for a CPU; default 2 x limit + 1 s. */
  netMs?: number | (() => number);
  /** Epoch ms: a task still waiting for a process then is refused (TaskTimeout, not started). Unset: it waits. */
  startBy?: number;
  /** Aborts a task still waiting for a process. */
  signal?: AbortSignal;
  /** What the ledger expects the task to take at most, ms (admission); default the limit. */
  expectMs?: number;
}

interface Job {
  task: WorkerTask;
  o: RunOptions;
  resolve(v: unknown): void;
  reject(e: Error): void;
  ticket: Ticket;
  /** Set while queued: fires at startBy. */
  queueTimer?: NodeJS.Timeout;
  done: boolean;
}

interface Slot {
  child: ChildProcess;
  ready: boolean;
  job: Job | null;
  id: number;
  watch?: NodeJS.Timeout;
  startedAt: number;
}

let seq = 0;
const value = (v: number | (() => number)) => (typeof v === "function" ? v() : v);

export class SqlitePool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private closed = false;
  private readonly file = workerFile();
  /** The backlog (queued and running tasks with their limits), for admission. */
  readonly ledger: Ledger;
  /** Processes killed because a task outlived its limit (tests and metrics). */
  killed = 0;
  completed = 0;
  private readonly onExit = () => {
    for (const s of this.slots) s.child.kill("SIGKILL");
  };

  constructor(readonly size: number) {
    for (let i = 0; i < Math.max(1, size); i++) this.slots.push(this.spawn());
    this.ledger = new Ledger(this.slots.length);
    process.once("exit", this.onExit); // never leave a runaway query behind
  }

  private spawn(): Slot {
    const child = fork(this.file, [], { execArgv: process.execArgv, serialization: "advanced", stdio: ["ignore", "ignore", "pipe", "ipc"] });
    child.stderr?.resume();
    const slot: Slot = { child, ready: false, job: null, id: 0, startedAt: 0 };
    child.on("message", (m: { ready?: true; id?: number; ok?: boolean; value?: unknown; error?: string }) => {
      if (m.ready) {
        slot.ready = true;
        this.pump();
        return;
      }
      const job = slot.job;
      if (!job || m.id !== slot.id) return;
      clearInterval(slot.watch);
      slot.job = null;
      this.completed++;
      job.ticket.end();
      if (!job.done) {
        job.done = true;
        if (m.ok) job.resolve(m.value);
        else job.reject(new Error(m.error));
      }
      this.pump();
    });
    child.on("exit", () => {
      clearInterval(slot.watch);
      const job = slot.job;
      slot.job = null;
      if (job) job.ticket.end();
      if (job && !job.done) {
        job.done = true;
        job.reject(new ProcessExited());
      }
      const i = this.slots.indexOf(slot);
      if (i >= 0 && !this.closed) {
        this.slots[i] = this.spawn();
      }
    });
    child.on("error", () => {}); // 'exit' follows
    return slot;
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (!this.queue.length) return;
      if (!slot.ready || slot.job) continue;
      const job = this.queue.shift()!;
      clearTimeout(job.queueTimer);
      job.ticket.start();
      slot.job = job;
      slot.id = ++seq;
      this.watch(slot, job);
      slot.child.send({ id: slot.id, task: job.task });
    }
  }

  /** Stops the task at its CPU limit, or at the wall-clock net less the time spent waiting for a CPU. */
  private watch(slot: Slot, job: Job): void {
    const limitMs = Math.max(1, value(job.o.limitMs));
    const netMs = job.o.netMs === undefined ? limitMs * 2 + 1_000 : Math.max(limitMs, value(job.o.netMs));
    const pid = slot.child.pid;
    const at = performance.now();
    const base = schedOf(pid);
    slot.startedAt = at;
    const stop = (ms: number, by: "cpu" | "wall") => {
      if (slot.job !== job) return;
      clearInterval(slot.watch);
      slot.job = null;
      slot.ready = false; // no new task for it: it is about to die
      this.killed++;
      job.ticket.end();
      job.done = true;
      job.reject(new TaskTimeout(true, ms, by));
      slot.child.kill("SIGKILL"); // 'exit' respawns it
    };
    slot.watch = setInterval(() => {
      const wall = performance.now() - at;
      const now = base && schedOf(pid);
      if (!base || !now) {
        if (wall >= limitMs) stop(wall, "wall");
        return;
      }
      const cpu = now.cpuMs - base.cpuMs;
      if (cpu >= limitMs) return stop(cpu, "cpu");
      if (wall - (now.waitMs - base.waitMs) >= netMs) stop(wall, "wall");
    }, POLL_MS);
  }

  /**
   * Runs a task under `o.limitMs` from the moment a process takes it; until then it waits in the
   * queue (until `o.startBy`, or its signal aborts). Rejects with TaskTimeout when either passes.
   */
  run<R>(task: WorkerTask, o: RunOptions): Promise<R> {
    if (this.closed) return Promise.reject(new Error("the SQLite pool is closed"));
    return new Promise<R>((resolve, reject) => {
      const expect = o.expectMs ?? (typeof o.limitMs === "number" ? o.limitMs : o.limitMs());
      const job: Job = { task, o, resolve: resolve as (v: unknown) => void, reject, ticket: this.ledger.enter(expect), done: false };
      const t0 = Date.now();
      const refuse = () => {
        const i = this.queue.indexOf(job);
        if (i < 0) return;
        this.queue.splice(i, 1);
        clearTimeout(job.queueTimer);
          job.ticket.end(false);
        job.done = true;
        reject(new TaskTimeout(false, Date.now() - t0));
      };
      if (o.startBy !== undefined) job.queueTimer = setTimeout(refuse, Math.max(0, o.startBy - t0));
      o.signal?.addEventListener("abort", refuse, { once: true });
      this.queue.push(job);
      this.pump();
    });
  }

  query(t: Extract<WorkerTask, { kind: "query" }>, o: RunOptions) {
    return this.run<QueryOutcome>(t, o);
  }
  /** `once`: the file is not kept open afterwards (an upload not yet registered). */
  schema(path: string, version: string, limitMs: number, once = false) {
    return this.run<SchemaTable[]>({ kind: "schema", path, version, once }, { limitMs, startBy: Date.now() + limitMs * 4 });
  }
  check(path: string, limitMs: number) {
    return this.run<{ ok: true } | { ok: false; error: string }>({ kind: "check", path }, { limitMs, startBy: Date.now() + limitMs * 4 });
  }
  build(path: string, script: string, maxBytes: number, limitMs: number) {
    return this.run<{ ok: true } | { ok: false; error: string; full?: boolean }>({ kind: "build", path, script, maxBytes }, { limitMs, startBy: Date.now() + limitMs * 4 });
  }

  /** The backlog as admission sees it (sandbox/load.ts). */
  load(): SandboxLoad {
    return this.ledger.load();
  }

  /** Resolves once every process has started and said so (start-up waits on it); rejects after `timeoutMs`. */
  async ready(timeoutMs = 120_000): Promise<void> {
    const t0 = Date.now();
    while (!this.closed && this.slots.some((s) => !s.ready)) {
      if (Date.now() - t0 > timeoutMs) throw new Error(`SQLite processes not started after ${timeoutMs / 1000} s`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  get stats() {
    return { pids: this.slots.map((s) => s.child.pid ?? 0), busy: this.slots.filter((s) => s.job).length, queued: this.queue.length, completed: this.completed, killed: this.killed };
  }

  async close(): Promise<void> {
    this.closed = true;
    process.removeListener("exit", this.onExit);
    for (const job of this.queue.splice(0)) {
      clearTimeout(job.queueTimer);
      job.ticket.end(false);
      job.done = true;
      job.reject(new Error("the SQLite pool is closed"));
    }
    await Promise.all(
      this.slots.map(
        (s) =>
          new Promise<void>((res) => {
            clearInterval(s.watch);
            if (s.child.exitCode !== null || s.child.signalCode !== null) return res();
            s.child.once("exit", () => res());
            s.child.kill("SIGKILL");
          }),
      ),
    );
  }
}
