/**
 * The math verifier's worker pool (piscina): every grade() runs off the event loop, and a task
 * that outlives its deadline is aborted, which terminates its worker (piscina starts another).
 */
import { Piscina } from "piscina";
import { availableParallelism } from "node:os";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Task } from "./worker.js";
import type { Graded } from "./grade.js";

/** worker.js next to this module when compiled, worker.ts when running from sources (tsx). */
export function workerFile(): string {
  const self = fileURLToPath(import.meta.url);
  const ext = self.endsWith(".ts") ? ".ts" : ".js";
  const file = self.replace(/pool\.(ts|js)$/, `worker${ext}`);
  if (!existsSync(file)) throw new Error(`math worker not found at ${file}`);
  return file;
}

/** ASSAY_WORKERS: threads for CPU-heavy verifiers, 0 or unset = one per core. */
export function workersFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.ASSAY_WORKERS;
  const n = raw === undefined || raw === "" ? 0 : Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`ASSAY_WORKERS=${JSON.stringify(raw)} is not an integer >= 0`);
  return n === 0 ? availableParallelism() : n;
}

export class MathPool {
  private readonly pool: Piscina<Task, Graded>;
  constructor(readonly threads: number, filename = workerFile()) {
    this.pool = new Piscina<Task, Graded>({
      filename,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: 60_000,
      // a few queued tasks per thread keep them busy without hiding back-pressure
      concurrentTasksPerWorker: 1,
      // the worker inherits tsx's --import from execArgv when running from sources
      execArgv: process.execArgv,
      resourceLimits: { maxOldGenerationSizeMb: 512 },
    });
  }

  run(task: Task, signal?: AbortSignal): Promise<Graded> {
    return this.pool.run(task, { signal });
  }

  get stats() {
    return { threads: this.pool.threads.length, queued: this.pool.queueSize, completed: this.pool.completed };
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
