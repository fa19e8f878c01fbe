/**
 * Schema validation off the event loop, with a time limit, for schemas that may recurse.
 *
 * Ajv's generated code cannot be interrupted, and against a recursive schema its cost can grow
 * exponentially with the answer's depth (a recursive `oneOf` evaluates every branch, each
 * recursing: 2^depth). Such items are validated in one worker thread here, one at a time; a
 * validation still running after its budget has its thread terminated (a new one is started for
 * the next item) and ends as `slow`. Ordinary schemas never come here (index.ts: `mayRecurse`).
 *
 * The budget counts the validation itself: not the item's wait behind others, not the thread's
 * start, not the schema's compilation in the thread (the thread says when that is done).
 */
import { Worker } from "node:worker_threads";
import { fileURLToPath } from "node:url";
import { siblingModule } from "../../src/core/sibling.js";
import { InvalidItemError, MachineryError } from "../../src/core/types.js";
import type { FromValidator, ValidateJob } from "./validate-worker.js";

const BOOT = fileURLToPath(new URL("../../src/core/worker-boot.mjs", import.meta.url));

/** What validation said: valid, invalid (why), or not finished within `budgetMs` / in the thread's memory. */
export type Verdict = { kind: "valid" } | { kind: "invalid"; reason: string } | { kind: "slow"; budgetMs: number } | { kind: "memory" };

export interface Validated {
  verdict: Verdict;
  /** Wall time the validation itself took in the thread, ms (not the wait before it). */
  ownMs: number;
}

interface Job {
  id: number;
  schema: string;
  value: unknown;
  budgetMs: number;
  resolve(v: Validated): void;
  reject(e: unknown): void;
  started?: number;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export class ValidatorThread {
  private worker: Worker | null = null;
  private ready = false;
  private queue: Job[] = [];
  private current: Job | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Why the thread is being terminated: the job it was on ran out of time, or was aborted. */
  private ending: { job: Job } | null = null;
  private nextId = 1;
  /** Threads started (tests: a terminated one is replaced). */
  started = 0;

  constructor(private readonly file = siblingModule(import.meta.url, "validate-worker", "json validation worker")) {}

  /** Validates `value` against the schema whose JSON text is `schema`, within `budgetMs` of its own time. */
  validate(schema: string, value: unknown, budgetMs: number, signal?: AbortSignal): Promise<Validated> {
    return new Promise<Validated>((resolve, reject) => {
      const job: Job = { id: this.nextId++, schema, value, budgetMs, resolve, reject, signal };
      if (signal) {
        if (signal.aborted) return reject(signal.reason);
        job.onAbort = () => this.abort(job);
        signal.addEventListener("abort", job.onAbort, { once: true });
      }
      this.queue.push(job);
      this.pump();
    });
  }

  /** Terminates the thread; queued items are rejected. */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    const jobs = [...(this.current ? [this.current] : []), ...this.queue];
    this.queue = [];
    this.current = null;
    this.clearTimer();
    for (const j of jobs) this.settle(j, null, new MachineryError("json validation thread closed"));
    if (w) await w.terminate();
  }

  private pump(): void {
    if (this.current || !this.queue.length) {
      if (!this.current && !this.queue.length) this.worker?.unref();
      return;
    }
    if (!this.worker) this.spawn();
    this.worker!.ref();
    if (!this.ready) return;
    const job = this.queue.shift()!;
    this.current = job;
    job.started = performance.now();
    this.arm(job);
    this.worker!.postMessage({ id: job.id, schema: job.schema, value: job.value } satisfies ValidateJob);
  }

  private spawn(): void {
    const file = this.file;
    const worker = new Worker(file.endsWith(".ts") ? BOOT : file, {
      workerData: { file },
      // the worker inherits tsx's hooks from execArgv when running from sources
      execArgv: process.execArgv,
      resourceLimits: { maxOldGenerationSizeMb: 256 },
    });
    this.worker = worker;
    worker.unref(); // held (ref'd) only while it has items: an idle thread keeps no process alive
    this.ready = false;
    this.started++;
    let error: Error | null = null;
    worker.on("message", (m: FromValidator) => {
      if (worker !== this.worker) return;
      if ("ready" in m) {
        this.ready = true;
        this.pump();
        return;
      }
      const job = this.current;
      if (!job || job.id !== m.id) return;
      if ("compiled" in m) {
        // the schema's compilation is not the answer's time: the budget starts again
        job.started = performance.now();
        this.arm(job);
        return;
      }
      this.current = null;
      this.clearTimer();
      if ("error" in m) this.settle(job, null, new InvalidItemError(`validating against the reference schema failed: ${m.error}`));
      else this.settle(job, { verdict: m.valid ? { kind: "valid" } : { kind: "invalid", reason: m.reason ?? "is invalid" }, ownMs: performance.now() - job.started! });
      this.pump();
    });
    // A thread that fails must not crash the server through an unhandled 'error' event.
    worker.on("error", (e: Error) => { error = e; });
    worker.on("exit", () => {
      if (worker !== this.worker) return;
      const wasReady = this.ready;
      this.worker = null;
      this.ready = false;
      this.clearTimer();
      const job = this.current;
      this.current = null;
      const ending = this.ending;
      this.ending = null;
      if (job && ending?.job === job) {
        // settled already (end)
      } else if (job && wasReady && (error as { code?: string } | null)?.code === "ERR_WORKER_OUT_OF_MEMORY") {
        this.settle(job, { verdict: { kind: "memory" }, ownMs: performance.now() - job.started! });
      } else if (job || !wasReady) {
        // the thread failed to start, or died for a reason of its own: our machinery's fault
        const why = new MachineryError(`json validation thread ${wasReady ? "died" : "failed to start"}: ${error?.message ?? "exited"}`);
        if (job) this.settle(job, null, why);
        if (!wasReady) for (const j of this.queue.splice(0)) this.settle(j, null, why);
      }
      // a thread terminated for an answer is replaced at once, so the next item does not wait for its start
      if (ending && !this.worker) this.spawn();
      this.pump();
    });
  }

  private arm(job: Job): void {
    this.clearTimer();
    this.timer = setTimeout(() => this.end(job, { kind: "slow", budgetMs: job.budgetMs }), job.budgetMs);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Terminates the thread running `job` and settles the job with `verdict` (none: aborted, rejected by the caller). */
  private end(job: Job, verdict: Verdict | null): void {
    if (this.current !== job || !this.worker) return;
    this.ending = { job };
    this.clearTimer();
    // the verdict is known now: the item does not wait for the thread to stop (a thread deep in
    // Ajv's code takes a while to reach the point where it can be stopped)
    if (verdict) this.settle(job, { verdict, ownMs: performance.now() - job.started! });
    void this.worker.terminate();
  }

  private abort(job: Job): void {
    const i = this.queue.indexOf(job);
    if (i >= 0) this.queue.splice(i, 1);
    else if (this.current === job) this.end(job, null);
    else return;
    this.settle(job, null, job.signal?.reason ?? new Error("aborted"));
  }

  private settle(job: Job, ok: Validated | null, err?: unknown): void {
    if (job.onAbort) job.signal?.removeEventListener("abort", job.onAbort);
    job.onAbort = undefined;
    if (ok) job.resolve(ok);
    else job.reject(err);
  }
}
