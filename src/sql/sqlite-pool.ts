/**
 * SQLite queries off the event loop, in child processes (sqlite-worker.ts), one task at a time
 * each. Why processes and not worker threads (piscina, as the math verifier uses): better-sqlite3
 * is synchronous and exposes no sqlite3_interrupt, and Worker.terminate() only stops JavaScript.
 * A thread inside a long SQLite step (`SELECT count(*)` over a 6-way cross join, an endless
 * recursive CTE) keeps running after terminate, burning a core and keeping the process alive,
 * as we measured. A process is stopped by SIGKILL whatever it is doing.
 *
 * A query's clock starts when a process takes it, so a query queued behind a runaway one is not
 * charged for the wait; the item's deadline bounds queueing plus running.
 */
import { fork, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { WorkerTask } from "./sqlite-worker.js";
import type { QueryOutcome, SchemaTable } from "./types.js";

function workerFile(): string {
  const self = fileURLToPath(import.meta.url);
  const ext = self.endsWith(".ts") ? ".ts" : ".js";
  const file = self.replace(/sqlite-pool\.(ts|js)$/, `sqlite-worker${ext}`);
  if (!existsSync(file)) throw new Error(`sqlite worker not found at ${file}`);
  return file;
}

export class TaskTimeout extends Error {
  constructor(readonly started: boolean, readonly ms: number) {
    super(started ? `stopped after ${ms} ms` : `not started within ${ms} ms (all SQLite processes busy)`);
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

interface Job {
  task: WorkerTask;
  runMs: number;
  resolve(v: unknown): void;
  reject(e: Error): void;
  /** Set while queued: fires at the deadline. */
  queueTimer?: NodeJS.Timeout;
  done: boolean;
}

interface Slot {
  child: ChildProcess;
  ready: boolean;
  job: Job | null;
  id: number;
  runTimer?: NodeJS.Timeout;
  startedAt: number;
}

let seq = 0;

export class SqlitePool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private closed = false;
  private readonly file = workerFile();
  /** Processes killed because a task outlived its time (tests and metrics). */
  killed = 0;
  completed = 0;
  private readonly onExit = () => {
    for (const s of this.slots) s.child.kill("SIGKILL");
  };

  constructor(readonly size: number) {
    for (let i = 0; i < Math.max(1, size); i++) this.slots.push(this.spawn());
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
      clearTimeout(slot.runTimer);
      slot.job = null;
      this.completed++;
      if (!job.done) {
        job.done = true;
        if (m.ok) job.resolve(m.value);
        else job.reject(new Error(m.error));
      }
      this.pump();
    });
    child.on("exit", () => {
      clearTimeout(slot.runTimer);
      const job = slot.job;
      slot.job = null;
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
      slot.job = job;
      slot.id = ++seq;
      slot.startedAt = Date.now();
      slot.runTimer = setTimeout(() => {
        if (slot.job !== job) return;
        slot.job = null;
        slot.ready = false; // no new task for it: it is about to die
        this.killed++;
        job.done = true;
        job.reject(new TaskTimeout(true, Date.now() - slot.startedAt));
        slot.child.kill("SIGKILL"); // 'exit' respawns it
      }, job.runMs);
      slot.child.send({ id: slot.id, task: job.task });
    }
  }

  /**
   * Runs a task; `runMs` bounds its running time from the moment a process takes it, `deadline`
   * (epoch ms) bounds its wait in the queue. Rejects with TaskTimeout when either passes.
   */
  run<R>(task: WorkerTask, runMs: number, deadline: number, signal?: AbortSignal): Promise<R> {
    if (this.closed) return Promise.reject(new Error("the SQLite pool is closed"));
    return new Promise<R>((resolve, reject) => {
      const job: Job = { task, runMs, resolve: resolve as (v: unknown) => void, reject, done: false };
      const t0 = Date.now();
      const dequeue = () => {
        const i = this.queue.indexOf(job);
        if (i < 0) return false;
        this.queue.splice(i, 1);
        return true;
      };
      job.queueTimer = setTimeout(() => {
        if (dequeue()) {
          job.done = true;
          reject(new TaskTimeout(false, Date.now() - t0));
        }
      }, Math.max(0, deadline - t0));
      signal?.addEventListener(
        "abort",
        () => {
          if (dequeue()) {
            clearTimeout(job.queueTimer);
            job.done = true;
            reject(new TaskTimeout(false, Date.now() - t0));
          }
        },
        { once: true },
      );
      this.queue.push(job);
      this.pump();
    });
  }

  query(t: Extract<WorkerTask, { kind: "query" }>, runMs: number, deadline: number, signal?: AbortSignal) {
    return this.run<QueryOutcome>(t, runMs, deadline, signal);
  }
  schema(path: string, version: string, runMs: number) {
    return this.run<SchemaTable[]>({ kind: "schema", path, version }, runMs, Date.now() + runMs * 4);
  }
  build(path: string, script: string, runMs: number) {
    return this.run<{ ok: true } | { ok: false; error: string }>({ kind: "build", path, script }, runMs, Date.now() + runMs * 4);
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
      job.done = true;
      job.reject(new Error("the SQLite pool is closed"));
    }
    await Promise.all(
      this.slots.map(
        (s) =>
          new Promise<void>((res) => {
            if (s.child.exitCode !== null || s.child.signalCode !== null) return res();
            s.child.once("exit", () => res());
            s.child.kill("SIGKILL");
          }),
      ),
    );
  }
}
