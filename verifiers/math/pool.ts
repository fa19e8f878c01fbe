/**
 * The math verifier's worker pool (piscina): every grade() runs off the event loop, and a task
 * that outlives its deadline is aborted, which terminates its worker (piscina starts another).
 * `submit` says when a worker takes a task (the worker sets a shared flag as it begins), so the
 * caller can start the task's clock then: a task's wait in the queue (behind other items, or for
 * a replacement worker that is still loading) is not its own time.
 */
import { Piscina } from "piscina";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Task, TaskResult } from "./worker.js";

/** worker.js next to this module when compiled, worker.ts when running from sources (tsx). */
export function workerFile(): string {
  const self = fileURLToPath(import.meta.url);
  const ext = self.endsWith(".ts") ? ".ts" : ".js";
  const file = self.replace(/pool\.(ts|js)$/, `worker${ext}`);
  if (!existsSync(file)) throw new Error(`math worker not found at ${file}`);
  return file;
}

/** A task handed to the pool (MathPool.submit). */
export interface Submitted {
  /** Resolves when a worker takes the task (or the task settles first); never rejects. */
  started: Promise<void>;
  done: Promise<TaskResult>;
  kill(reason?: unknown): void;
}

/** Atomics.waitAsync (Node >= 16; not in TypeScript's ES2022 lib). */
interface AtomicsWaitAsync {
  waitAsync(a: Int32Array, index: number, value: number): { async: false; value: string } | { async: true; value: Promise<string> };
}

export class MathPool {
  private readonly pool: Piscina<Task, TaskResult>;
  /** Workers that have loaded and warmed their parsers (replacements count too). */
  private readonly warmed = new Int32Array(new SharedArrayBuffer(4));
  /** `testHooks`: ASSAY_MATH_TEST_HOOKS, read by the config and handed to the workers here. */
  constructor(readonly threads: number, o: { testHooks?: boolean; filename?: string } = {}) {
    this.pool = new Piscina<Task, TaskResult>({
      filename: o.filename ?? workerFile(),
      workerData: { warmed: this.warmed, testHooks: o.testHooks ?? false },
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: 60_000,
      // a few queued tasks per thread keep them busy without hiding back-pressure
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

  /** Resolves once every thread has started and warmed up (a cold thread takes ~1 s). */
  async ready(timeoutMs = 30_000): Promise<void> {
    const t0 = Date.now();
    while (Atomics.load(this.warmed, 0) < this.threads) {
      if (this.failure) throw new Error(`math worker failed to start: ${this.failure.message}`);
      if (Date.now() - t0 > timeoutMs) throw new Error(`math workers not ready after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  run(task: Task, signal?: AbortSignal): Promise<TaskResult> {
    return this.pool.run(task, { signal });
  }

  /**
   * Queues a task. `started` resolves when a worker begins it (or when the task settles without
   * having begun: a worker that failed to load); it never rejects. `kill` aborts the task: one a
   * worker is running ends with its worker terminated (piscina starts another), a queued one
   * leaves the queue.
   */
  submit(task: Task): Submitted {
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const ac = new AbortController();
    const done = this.pool.run({ ...task, started: flag }, { signal: ac.signal });
    const settled = done.then(() => {}, () => {});
    // The waiter is released when the task settles, so a task that never began leaves none behind.
    void settled.then(() => Atomics.notify(flag, 0));
    const w = (Atomics as unknown as AtomicsWaitAsync).waitAsync(flag, 0, 0);
    const signalled = w.async ? w.value.then(() => {}) : Promise.resolve();
    return { started: Promise.race([signalled, settled]), done, kill: (reason) => ac.abort(reason) };
  }

  get stats() {
    return { threads: this.pool.threads.length, threadIds: this.pool.threads.map((t) => t.threadId), queued: this.pool.queueSize, completed: this.pool.completed };
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
