/**
 * The math verifier's worker pool: every grade() runs off the event loop, in worker threads.
 *
 * Items are sent in chunks, not one message each: items submitted in the same turn of the event
 * loop (a batch) wait in a queue here, and are cut into chunks, each sent to a thread as one
 * message, its results back in one (a JSON string: see worker.ts). A thread holds up to
 * PIPELINE chunks: it begins the next as soon as it has posted the results of one, without
 * waiting for the event loop here to read them and answer (that round trip left each thread
 * idle between chunks). Chunks are cut so that each thread holds about the same number of items:
 * one item alone goes at once, a burst is split evenly between the threads.
 *
 * The threads are node:worker_threads Workers driven directly (no piscina): its per-task
 * bookkeeping, message and wake-up were the larger part of the main thread's dispatch cost
 * (issue 38), and a thread here only ever runs one function.
 *
 * Each item keeps its own budget (`submit(task, budgetMs)`): the worker writes which item it is
 * on, and when it began it, to a small shared buffer per chunk; one watchdog timer per busy
 * thread (not per item), armed for the earliest moment the item it is on, or any after it,
 * could run out, reads it and terminates the thread of an item past its budget (another is
 * started). That item ends with a DeadlineExceeded; the other items the thread held go back to
 * the head of the queue and are graded again (grading is a pure function of the item, so an item
 * graded before the runaway gets the same result the second time). An item's wait in the queue,
 * or behind others, is not its own time: `done` says how long the item itself took (`ownMs`).
 */
import { Worker } from "node:worker_threads";
import { fileURLToPath } from "node:url";
import { PROGRESS_SLOTS, type Chunk, type ChunkResult, type ItemResult, type Task, type TaskResult, type WorkerData } from "./worker.js";
import { SETTINGS } from "../../src/core/config.js";
import { siblingModule } from "../../src/core/sibling.js";

/** worker.js next to this module when compiled, worker.ts when running from sources (tsx). */
export function workerFile(): string {
  return siblingModule(import.meta.url, "worker", "math worker");
}

/** Starts a .ts worker as an ES module under tsx's ESM hooks: see worker-boot.mjs. */
const BOOT = fileURLToPath(new URL("../../src/core/worker-boot.mjs", import.meta.url));

/** Most items in one chunk: a few ms of work for ordinary answers, so a thread is never held long. */
export const MAX_CHUNK = 64;
/** Chunks a thread holds at once: the one it grades, and the next, so it never waits for this thread. */
export const PIPELINE = 2;
/** An idle thread's share is cut in two chunks only when each would hold at least this many items. */
const SPLIT_MIN = 8;
/**
 * How long a thread grades the warm-up sets before it says it is ready (worker.ts warmUp), ms
 * of wall time at most: a cold thread's CPU per item on varied answers falls ~2x over its
 * first few thousand items (V8 compiles per thread). ~2 passes of the sets on an idle core.
 */
/** For pools made without a config: ASSAY_MATH_WARMUP_MS's default (src/core/config.ts). */
export const WARMUP_MS = SETTINGS.math.warmupMs.default;
/** How long ready() waits by default: generous, as a cold thread on a loaded machine takes tens of seconds. */
export const READY_TIMEOUT_MS = 180_000;
/** How often the watchdog looks at a thread that has not begun its chunk yet (a replacement still loading), ms. */
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
  thread: Thread;
  /** suffixMin[i]: the smallest budget among jobs i.. (the watchdog's next look). */
  suffixMin: number[];
}

interface Thread {
  worker: Worker;
  /** Chunks sent and not yet answered, in the order the worker takes them. */
  chunks: InFlight[];
  /** Items in those chunks. */
  items: number;
  /** Loaded and warmed up (it said so). */
  warm: boolean;
  /** Terminated or exited: its chunks have been dealt with, its messages are ignored. */
  ended: boolean;
  timer: NodeJS.Timeout | null;
  /** Set when the thread is terminated on purpose: which item, and why. */
  killed: { chunk: InFlight; index: number; reason: unknown } | null;
  /** The error it reported, if it failed. */
  error: Error | null;
}

type FromWorker = ChunkResult | { ready: true; warmed: number };

export class MathPool {
  private readonly filename: string;
  private readonly testHooks: boolean;
  private readonly warmupMs: number;
  /** Items the threads graded to warm up, all threads started so far (stats). */
  private warmed = 0;
  /** Date.now() at start: the workers write item start times relative to it (int32 ms). */
  private readonly base = Date.now();
  private threadList: Thread[] = [];
  private queue: Job[] = [];
  private head = 0;
  private pumpScheduled = false;
  private completed = 0;
  /** Chunks sent to threads, and items sent again after their thread was terminated (stats). */
  private chunks = 0;
  private resent = 0;
  private closed = false;
  private failure: Error | null = null;

  /** `testHooks`: ASSAY_MATH_TEST_HOOKS, read by the config and handed to the workers here. */
  /** `warmupMs`: each thread's warm-up before it is ready, at most (WARMUP_MS; 0: the parser's two items only). */
  constructor(readonly threads: number, o: { testHooks?: boolean; filename?: string; warmupMs?: number } = {}) {
    this.filename = o.filename ?? workerFile();
    this.testHooks = o.testHooks ?? false;
    this.warmupMs = o.warmupMs ?? WARMUP_MS;
    for (let i = 0; i < threads; i++) this.threadList.push(this.spawn());
  }

  private spawn(): Thread {
    const file = this.filename;
    const workerData: WorkerData = { assayMathPool: true, file, testHooks: this.testHooks, base: this.base, warmupMs: this.warmupMs };
    const worker = new Worker(file.endsWith(".ts") ? BOOT : file, {
      workerData,
      // the worker inherits tsx's hooks from execArgv when running from sources
      execArgv: process.execArgv,
      resourceLimits: { maxOldGenerationSizeMb: 512 },
    });
    worker.unref(); // held (ref'd) only while it has chunks: an idle pool keeps no process alive
    const t: Thread = { worker, chunks: [], items: 0, warm: false, ended: false, timer: null, killed: null, error: null };
    worker.on("message", (m: FromWorker) => this.onMessage(t, m));
    // A worker that fails (its module does not load, it runs out of memory) must not crash the
    // server through an unhandled 'error' event: its exit, which follows, is dealt with below.
    worker.on("error", (err: Error) => { t.error = err; });
    worker.on("exit", (code) => this.onExit(t, code));
    return t;
  }

  /** Resolves once every thread has started and warmed up (a cold thread takes ~1 s, tens of seconds on a loaded machine). */
  async ready(timeoutMs = READY_TIMEOUT_MS): Promise<void> {
    const t0 = Date.now();
    while (this.threadList.filter((t) => t.warm).length < this.threads) {
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
    if (c && !c.thread.ended) {
      const i = c.jobs.indexOf(job);
      // flag first, then read where the worker is (it does the converse): an item it has begun,
      // or is beginning, is stopped only by terminating its thread; one still ahead is skipped
      Atomics.store(c.progress, PROGRESS_SLOTS + i, 1);
      if (Atomics.load(c.progress, 0) - 1 === i) {
        this.terminate(c.thread, { chunk: c, index: i, reason });
        return;
      }
    }
    // queued (skipped when its turn comes), or waiting behind others (skipped there)
    job.over = true;
    job.reject(reason);
  }

  /** Items of a batch arrive over several microtasks: cut chunks once they all have. */
  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    for (;;) {
      while (this.head < this.queue.length && this.queue[this.head].over) this.head++;
      const left = this.queue.length - this.head;
      if (left === 0) {
        this.queue = [];
        this.head = 0;
        return;
      }
      // the open thread (one with room for another chunk) that holds the fewest items
      let t: Thread | null = null, held = 0;
      for (const x of this.threadList) {
        held += x.items;
        // a warm thread first: one still warming up (a replacement) begins a chunk only after
        // its warm-up (~WARMUP_MS), so it is given one only when no warm thread has room
        if (!x.ended && x.chunks.length < PIPELINE && (t === null || (x.warm && !t.warm) || (x.warm === t.warm && x.items < t.items))) t = x;
      }
      if (t === null) {
        // no thread left to grade them: every one failed to start (ready() reports it)
        if (this.failure && this.threadList.every((x) => x.ended)) this.failQueued(`math worker failed to start: ${this.failure.message}`);
        return;
      }
      // the thread's share of all the items (held and queued); an idle thread's, when large,
      // in two chunks, so that it holds the next while it grades the first and items that
      // arrive meanwhile (callers answered by the first) make a chunk of their own behind it
      const share = Math.max(1, Math.ceil((held + left) / this.threadList.length) - t.items);
      const size = Math.min(MAX_CHUNK, left, t.chunks.length === 0 && share >= 2 * SPLIT_MIN ? Math.ceil(share / 2) : share);
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
      if (jobs.length) this.send(t, jobs);
    }
  }

  private send(t: Thread, jobs: Job[]): void {
    const progress = new Int32Array(new SharedArrayBuffer(4 * (PROGRESS_SLOTS + jobs.length)));
    const suffixMin = new Array<number>(jobs.length);
    for (let i = jobs.length - 1, m = Infinity; i >= 0; i--) suffixMin[i] = m = Math.min(m, jobs[i].budgetMs);
    const c: InFlight = { jobs, progress, thread: t, suffixMin };
    const items = new Array<Task>(jobs.length);
    for (let i = 0; i < jobs.length; i++) {
      jobs[i].chunk = c;
      items[i] = jobs[i].task;
    }
    if (t.chunks.length === 0) t.worker.ref();
    t.chunks.push(c);
    t.items += jobs.length;
    this.chunks++;
    t.worker.postMessage({ items, progress } satisfies Chunk);
    if (t.timer === null) this.watch(t);
  }

  /**
   * The thread's watchdog: arms one timer for the earliest moment the item its worker is on, or
   * one after it in the chunks it holds, could be past its budget; terminates the thread when
   * the item it is on is.
   */
  private watch(t: Thread): void {
    if (t.timer) { clearTimeout(t.timer); t.timer = null; }
    if (t.ended) return;
    // the first chunk the worker has not finished (those before it are answered, or about to be)
    let c: InFlight | null = null, cur = -1;
    for (const x of t.chunks) {
      cur = Atomics.load(x.progress, 0) - 1;
      if (cur < x.jobs.length) { c = x; break; }
    }
    if (c === null) return; // nothing held, or every answer on its way
    let wait: number;
    if (cur < 0) wait = Math.min(UNSTARTED_POLL_MS, c.suffixMin[0]);
    else {
      const began = this.base + Atomics.load(c.progress, 1);
      const spent = Date.now() - began;
      const job = c.jobs[cur];
      if (spent >= job.budgetMs && !job.over) {
        this.terminate(t, { chunk: c, index: cur, reason: new DeadlineExceeded(job.budgetMs) });
        return;
      }
      // an item that was dropped (killed while waiting) is no longer held to its budget
      wait = Math.min(job.over ? Infinity : job.budgetMs - spent, cur + 1 < c.jobs.length ? c.suffixMin[cur + 1] : Infinity);
    }
    if (!Number.isFinite(wait)) return;
    t.timer = setTimeout(() => { t.timer = null; this.watch(t); }, Math.max(1, Math.ceil(wait)));
    t.timer.unref?.();
  }

  private onMessage(t: Thread, m: FromWorker): void {
    if (t.ended) return;
    if ("ready" in m) {
      t.warm = true;
      this.warmed += m.warmed;
      // items that waited for it (a replacement warming up while the others were full)
      if (this.head < this.queue.length) this.pump();
      return;
    }
    const c = t.chunks.shift();
    if (!c) return;
    t.items -= c.jobs.length;
    if (t.chunks.length === 0) t.worker.unref();
    const out = JSON.parse(m.out) as ItemResult[];
    for (let i = 0; i < c.jobs.length; i++) {
      const j = c.jobs[i];
      j.chunk = null;
      if (j.over) continue;
      j.over = true;
      this.completed++;
      const o = out[i];
      if (o === null) j.reject(new Error("math worker skipped the item"));
      else if ("error" in o) j.reject(new Error(o.error));
      else j.resolve({ result: o, ownMs: m.ms[i] });
    }
    this.watch(t);
    if (this.head < this.queue.length) this.pump();
  }

  /** Ends a thread on purpose: item `index` of `chunk` ends with `reason`; the other items it held are graded again. */
  private terminate(t: Thread, killed: Thread["killed"]): void {
    t.killed = killed;
    void t.worker.terminate();
    this.lost(t, null);
  }

  private onExit(t: Thread, code: number): void {
    if (t.ended) return; // terminated here: already dealt with
    this.lost(t, t.error ?? new Error(`math worker exited with code ${code}`));
  }

  /**
   * A thread is gone (terminated here, or it crashed: `err`): settles or re-queues what it held,
   * and starts another in its place. Items it held are innocent of a kill and graded again with
   * the next chunks; after a crash, the items of the chunk it was on are graded again one by one
   * (alone), so a second crash is the culprit's own.
   */
  private lost(t: Thread, err: Error | null): void {
    t.ended = true;
    if (t.timer) { clearTimeout(t.timer); t.timer = null; }
    const again: Job[] = [];
    for (const c of t.chunks) {
      // the chunk the worker was in when it crashed; before it, chunks it finished (their
      // answers lost with it), after it, chunks it had not begun: their items are innocent
      const on = Atomics.load(c.progress, 0);
      const suspect = on > 0 && on <= c.jobs.length;
      c.jobs.forEach((j, i) => {
        j.chunk = null;
        if (j.over) return;
        if (this.closed) {
          j.over = true;
          j.reject(new Error("math worker pool is closed"));
        } else if (t.killed && t.killed.chunk === c && t.killed.index === i) {
          j.over = true;
          j.reject(t.killed.reason);
        } else if (err && !t.warm) {
          // it never loaded: nothing is graded, and a replacement would fail the same way
          j.over = true;
          j.reject(new Error(`math worker failed to start: ${err.message}`));
        } else if (t.killed || !suspect) {
          again.push(j);
        } else if (!j.solo) {
          j.solo = true;
          again.push(j);
        } else {
          j.over = true;
          j.reject(err);
        }
      });
    }
    t.chunks = [];
    t.items = 0;
    const at = this.threadList.indexOf(t);
    if (err && !t.warm) {
      this.failure = err;
      this.pump();
      return;
    }
    if (this.closed) return;
    if (at >= 0) this.threadList[at] = this.spawn();
    if (again.length) {
      this.resent += again.length;
      this.queue = [...again, ...this.queue.slice(this.head)];
      this.head = 0;
    }
    if (this.head < this.queue.length) this.pump();
  }

  get stats() {
    return { threads: this.threadList.length, threadIds: this.threadList.map((t) => t.worker.threadId), queued: this.queue.length - this.head, completed: this.completed, chunks: this.chunks, resent: this.resent, warmed: this.warmed };
  }

  private failQueued(message: string): void {
    for (let i = this.head; i < this.queue.length; i++) {
      const j = this.queue[i];
      if (!j.over) { j.over = true; j.reject(new Error(message)); }
    }
    this.queue = [];
    this.head = 0;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.failQueued("math worker pool is closed");
    const threads = this.threadList;
    this.threadList = [];
    await Promise.all(threads.map((t) => {
      const exited = t.worker.terminate();
      this.lost(t, null);
      return exited;
    }));
  }
}
