/**
 * The math verifier's worker pool: every grade() runs off the event loop, in piscina threads.
 *
 * Items are sent in chunks, not one task each: items submitted in the same turn of the event
 * loop (a batch) wait in a queue here, and whenever a thread is free it gets the next
 * `ceil(queued / threads)` of them (at most MAX_CHUNK) as one task, its results back in one
 * message (a JSON string: see worker.ts). A thread holds one chunk at a time, so the queue (and the chunk size) follows the load:
 * one item alone goes at once, a burst is split evenly between the threads.
 *
 * Each item keeps its own budget (`submit(task, budgetMs)`): the worker writes which item it is
 * on, and when it began it, to a small shared buffer; a watchdog timer per chunk, armed for the
 * earliest moment any of its items could run out, reads it and terminates the thread of an item
 * past its budget (piscina starts another). That item ends with a DeadlineExceeded; the chunk's
 * other items go back to the head of the queue and are graded again (grading is a pure function
 * of the item, so an item graded before the runaway gets the same result the second time). An
 * item's wait in the queue, or behind others of its chunk, is not its own time: `done` says how
 * long the item itself took (`ownMs`).
 */
import { Piscina } from "piscina";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Cancel } from "../../src/core/deadlines.js";
import { PROGRESS_SLOTS, type Chunk, type ChunkResult, type ItemResult, type Task, type TaskResult } from "./worker.js";

/** worker.js next to this module when compiled, worker.ts when running from sources (tsx). */
export function workerFile(): string {
  const self = fileURLToPath(import.meta.url);
  const ext = self.endsWith(".ts") ? ".ts" : ".js";
  const file = self.replace(/pool\.(ts|js)$/, `worker${ext}`);
  if (!existsSync(file)) throw new Error(`math worker not found at ${file}`);
  return file;
}

/** Most items in one chunk: a few ms of work for ordinary answers, so a thread is never held long. */
export const MAX_CHUNK = 64;
/** How long ready() waits by default: generous, as a cold thread on a loaded machine takes tens of seconds. */
export const READY_TIMEOUT_MS = 180_000;
/** How often the watchdog looks at a chunk that a thread has not begun yet (a replacement still loading), ms. */
const UNSTARTED_POLL_MS = 50;

/** An item that ran past its budget: its thread was terminated. */
export class DeadlineExceeded extends Error {
  constructor(readonly budgetMs: number) {
    super(`deadline of ${budgetMs} ms exceeded`);
  }
}

/** What a settled item says: its result and the wall time it took in its thread. */
export interface Done {
  result: TaskResult;
  ownMs: number;
}

/** A task handed to the pool (MathPool.submit). */
export interface Submitted {
  /** Resolves with the item's result; rejects with DeadlineExceeded, a worker failure, or kill's reason. */
  done: Promise<Done>;
  /** Drops the item: out of the queue if it waits there; its thread terminated if it is being graded now. */
  kill(reason?: unknown): void;
}

interface Job {
  task: Task;
  budgetMs: number;
  resolve(d: Done): void;
  reject(e: unknown): void;
  /** Settled (or killed): nothing more to do for it. */
  over: boolean;
  /** Sent again alone after its chunk's thread crashed: a second crash is its own. */
  solo: boolean;
  /** The chunk it is in while a thread holds it. */
  chunk: InFlight | null;
}

interface InFlight {
  jobs: Job[];
  progress: Int32Array;
  /**
   * Aborts the chunk's piscina task (its thread is terminated). A Cancel, not an AbortController:
   * piscina takes anything with addEventListener/aborted, and an EventTarget per chunk was an
   * eighth of the main thread's dispatch CPU (issue 38).
   */
  ac: Cancel;
  timer: NodeJS.Timeout | null;
  /** suffixMin[i]: the smallest budget among jobs i.. (the watchdog's next look). */
  suffixMin: number[];
  /** Set when the chunk is aborted on purpose: which item, and why. */
  killed: { index: number; reason: unknown } | null;
}

export class MathPool {
  private readonly pool: Piscina<Chunk, ChunkResult>;
  /** Workers that have loaded and warmed their parsers (replacements count too). */
  private readonly warmed = new Int32Array(new SharedArrayBuffer(4));
  /** Date.now() at start: the workers write item start times relative to it (int32 ms). */
  private readonly base = Date.now();
  private queue: Job[] = [];
  private head = 0;
  private inFlight = 0;
  private pumpScheduled = false;
  private completed = 0;
  /** Chunks sent to threads, and items sent again after their chunk's thread was terminated (stats). */
  private chunks = 0;
  private resent = 0;
  private closed = false;

  /** `testHooks`: ASSAY_MATH_TEST_HOOKS, read by the config and handed to the workers here. */
  constructor(readonly threads: number, o: { testHooks?: boolean; filename?: string } = {}) {
    this.pool = new Piscina<Chunk, ChunkResult>({
      filename: o.filename ?? workerFile(),
      workerData: { warmed: this.warmed, testHooks: o.testHooks ?? false, base: this.base },
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: 60_000,
      // one chunk per thread: the rest wait here, where the next chunk is cut to the queue's size
      concurrentTasksPerWorker: 1,
      // the worker inherits tsx's --import from execArgv when running from sources
      execArgv: process.execArgv,
      resourceLimits: { maxOldGenerationSizeMb: 512 },
    });
    // A worker that fails outside a task (e.g. its module does not load) must not crash the
    // server through an unhandled 'error' event; ready() reports it instead.
    this.pool.on("error", (err: Error) => { this.failure = err; });
  }

  private failure: Error | null = null;

  /** Resolves once every thread has started and warmed up (a cold thread takes ~1 s, tens of seconds on a loaded machine). */
  async ready(timeoutMs = READY_TIMEOUT_MS): Promise<void> {
    const t0 = Date.now();
    while (Atomics.load(this.warmed, 0) < this.threads) {
      if (this.failure) throw new Error(`math worker failed to start: ${this.failure.message}`);
      if (Date.now() - t0 > timeoutMs) throw new Error(`math workers not ready after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** One item, no budget; `signal` aborts it (terminating its thread if the item is being graded). */
  run(task: Task, signal?: AbortSignal): Promise<TaskResult> {
    const job = this.submit(task);
    if (signal) {
      if (signal.aborted) job.kill(signal.reason);
      else {
        const onAbort = () => job.kill(signal.reason);
        signal.addEventListener("abort", onAbort, { once: true });
        void job.done.then(() => signal.removeEventListener("abort", onAbort), () => signal.removeEventListener("abort", onAbort));
      }
    }
    return job.done.then((d) => d.result);
  }

  /**
   * Queues an item, to be graded within `budgetMs` of wall time from when its thread begins it
   * (its wait before that is not counted); past it, its thread is terminated and `done` rejects
   * with DeadlineExceeded.
   */
  submit(task: Task, budgetMs = Infinity): Submitted {
    let resolve!: (d: Done) => void, reject!: (e: unknown) => void;
    const done = new Promise<Done>((res, rej) => { resolve = res; reject = rej; });
    const job: Job = { task, budgetMs: Math.max(1, budgetMs), resolve, reject, over: false, solo: false, chunk: null };
    if (this.closed) {
      job.over = true;
      reject(new Error("math worker pool is closed"));
    } else {
      this.queue.push(job);
      this.schedulePump();
    }
    return { done, kill: (reason) => this.kill(job, reason) };
  }

  private kill(job: Job, reason: unknown): void {
    if (job.over) return;
    const c = job.chunk;
    if (c && !c.killed) {
      const i = c.jobs.indexOf(job);
      // flag first, then read where the worker is (it does the converse): an item it has begun,
      // or is beginning, is stopped only by terminating its thread; one still ahead is skipped
      Atomics.store(c.progress, PROGRESS_SLOTS + i, 1);
      if (Atomics.load(c.progress, 0) - 1 === i) {
        this.abortChunk(c, i, reason);
        return;
      }
    }
    // queued (skipped when its turn comes), or waiting behind others of its chunk (skipped there)
    job.over = true;
    job.reject(reason);
  }

  /** Items of a batch arrive over several microtasks: cut chunks once they all have. */
  private schedulePump(): void {
    if (this.pumpScheduled || this.inFlight >= this.threads) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.threads) {
      while (this.head < this.queue.length && this.queue[this.head].over) this.head++;
      const left = this.queue.length - this.head;
      if (left === 0) {
        this.queue = [];
        this.head = 0;
        return;
      }
      const size = Math.min(MAX_CHUNK, Math.ceil(left / this.threads));
      const jobs: Job[] = [];
      while (jobs.length < size && this.head < this.queue.length) {
        const j = this.queue[this.head];
        if (j.over) { this.head++; continue; }
        // an item whose chunk crashed its thread goes alone, so a second crash is its own
        if (j.solo && jobs.length > 0) break;
        jobs.push(j);
        this.head++;
        if (j.solo) break;
      }
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      this.send(jobs);
    }
  }

  private send(jobs: Job[]): void {
    const progress = new Int32Array(new SharedArrayBuffer(4 * (PROGRESS_SLOTS + jobs.length)));
    const suffixMin = new Array<number>(jobs.length);
    for (let i = jobs.length - 1, m = Infinity; i >= 0; i--) suffixMin[i] = m = Math.min(m, jobs[i].budgetMs);
    const c: InFlight = { jobs, progress, ac: new Cancel(), timer: null, suffixMin, killed: null };
    for (const j of jobs) j.chunk = c;
    this.inFlight++;
    this.chunks++;
    const items = jobs.map((j) => j.task);
    this.watch(c);
    this.pool.run({ items, progress }, { signal: c.ac }).then(
      (r) => this.settle(c, r, null),
      (err) => this.settle(c, null, err),
    );
  }

  /** Arms the chunk's watchdog for the earliest moment one of its items could be past its budget. */
  private watch(c: InFlight): void {
    const cur = Atomics.load(c.progress, 0) - 1;
    if (cur >= c.jobs.length) return; // done; its answer is on its way
    let wait: number;
    if (cur < 0) wait = Math.min(UNSTARTED_POLL_MS, c.suffixMin[0]);
    else {
      const began = this.base + Atomics.load(c.progress, 1);
      const spent = Date.now() - began;
      const job = c.jobs[cur];
      if (spent >= job.budgetMs && !job.over) {
        this.abortChunk(c, cur, new DeadlineExceeded(job.budgetMs));
        return;
      }
      // an item that was dropped (killed while waiting) is no longer held to its budget
      wait = Math.min(job.over ? Infinity : job.budgetMs - spent, cur + 1 < c.jobs.length ? c.suffixMin[cur + 1] : Infinity);
    }
    if (!Number.isFinite(wait)) return;
    c.timer = setTimeout(() => { c.timer = null; this.watch(c); }, Math.max(1, Math.ceil(wait)));
    c.timer.unref?.();
  }

  /** Terminates the chunk's thread for item `index` (it ends with `reason`); the others go back to the queue. */
  private abortChunk(c: InFlight, index: number, reason: unknown): void {
    c.killed = { index, reason };
    c.ac.abort(reason);
  }

  private settle(c: InFlight, r: ChunkResult | null, err: unknown): void {
    if (c.timer) clearTimeout(c.timer);
    this.inFlight--;
    for (const j of c.jobs) j.chunk = null;
    if (this.closed) {
      for (const j of c.jobs) if (!j.over) { j.over = true; j.reject(new Error("math worker pool is closed")); }
      return;
    }
    if (r) {
      const out = JSON.parse(r.out) as ItemResult[];
      c.jobs.forEach((j, i) => {
        if (j.over) return;
        j.over = true;
        this.completed++;
        const o = out[i];
        if (o === null) j.reject(new Error("math worker skipped the item"));
        else if ("error" in o) j.reject(new Error(o.error));
        else j.resolve({ result: o, ownMs: r.ms[i] });
      });
    } else {
      const again: Job[] = [];
      c.jobs.forEach((j, i) => {
        if (j.over) return;
        if (c.killed && i === c.killed.index) {
          j.over = true;
          j.reject(c.killed.reason);
        } else if (c.killed || !j.solo) {
          // innocent of the kill, or maybe of the crash: graded again (alone, after a crash)
          if (!c.killed) j.solo = true;
          again.push(j);
        } else {
          j.over = true;
          j.reject(err);
        }
      });
      if (again.length) {
        this.resent += again.length;
        this.queue = [...again, ...this.queue.slice(this.head)];
        this.head = 0;
      }
    }
    if (this.head < this.queue.length) this.pump();
  }

  get stats() {
    return { threads: this.pool.threads.length, threadIds: this.pool.threads.map((t) => t.threadId), queued: this.queue.length - this.head + this.pool.queueSize, completed: this.completed, chunks: this.chunks, resent: this.resent };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (let i = this.head; i < this.queue.length; i++) {
      const j = this.queue[i];
      if (!j.over) { j.over = true; j.reject(new Error("math worker pool is closed")); }
    }
    this.queue = [];
    this.head = 0;
    await this.pool.destroy();
  }
}
