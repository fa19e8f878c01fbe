/**
 * What two threads can do on this machine with no dispatch at all: the same grade() loop over a
 * set runs in one worker thread alone, then in two at the same time (no pool, no message during
 * the loop), alternating, after a warm-up; each figure is the grading threads' own CPU µs per item
 * (/proc/thread-self/schedstat) and the whole process's (V8's helper threads included: its
 * optimising compiler and GC). It is the bound for the math pool (bench/math.ts's "no-dispatch
 * bound" column, issue 38): if two threads grading with no messages at all get 1.3x one thread,
 * no dispatch gets the pool past 1.3x.
 *
 * `--noise`: each round also runs the two at once while this (the main) thread works in bursts
 * (100 µs busy, then a timer of ~1 ms), as a pool's dispatching thread does: what a third
 * runnable thread on the two cores costs the grading threads, with no message to them.
 *
 *   npx tsx bench/math-two-at-once.ts [conformance|hard|ordinary] [--rounds 5] [--seconds 1] [--warm 3] [--noise]
 */
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { readFileSync } from "node:fs";
import { loadavg } from "./lib.js";
import { fileURLToPath } from "node:url";
import { grade } from "../verifiers/math/grade.js";
import type { Task } from "../verifiers/math/worker.js";
import { tasksOf as setOf, type SetName } from "./math-sets.js";

export type { SetName };
/** The calling thread's own CPU time, µs (/proc/thread-self/schedstat). */
export const threadCpuUs = () => Number(readFileSync("/proc/thread-self/schedstat", "utf8").split(" ")[0]) / 1000;

/** The process's tsx hooks (--import/--require and their values), not its V8 flags, which a worker refuses: a bench worker's execArgv. */
export const workerExecArgv = () => process.execArgv.filter((a) => !a.startsWith("--") || a === "--import" || a === "--require" || a.startsWith("--import=") || a.startsWith("--require="));

/** One round of a grading thread: items graded and its own CPU µs per item. */
export interface Loop { n: number; cpu: number }
function loop(set: Task[], secs: number): Loop {
  const c0 = threadCpuUs();
  let n = 0;
  const end = performance.now() + secs * 1000;
  while (performance.now() < end) for (const t of set) { grade(t.response, t.reference, t.options); n++; }
  return { cpu: (threadCpuUs() - c0) / n, n };
}

/** Worker threads that each grade a set in a loop for as long as they are asked, with no message in between. */
export class LoopThreads {
  private readonly workers: Worker[];
  constructor(set: SetName, threads: number) {
    const boot = fileURLToPath(new URL("../src/core/worker-boot.mjs", import.meta.url));
    const file = fileURLToPath(import.meta.url);
    // tsx's hooks, not V8 flags (a worker refuses those: they are the process's)
    const execArgv = workerExecArgv();
    this.workers = Array.from({ length: threads }, () => {
      const w = new Worker(boot, { workerData: { file, set, loopThread: true }, execArgv, resourceLimits: { maxOldGenerationSizeMb: 512 } });
      w.on("error", (e) => { console.error(e); process.exit(1); });
      return w;
    });
  }
  /** Every thread grades for `secs` at the same time: their rounds. */
  run(secs: number): Promise<Loop[]> {
    return Promise.all(this.workers.map((w) => this.ask(w, secs)));
  }
  /** The first thread alone. */
  alone(secs: number): Promise<Loop> {
    return this.ask(this.workers[0], secs);
  }
  private ask(w: Worker, secs: number): Promise<Loop> {
    return new Promise<Loop>((res) => { w.once("message", res); w.postMessage(secs); });
  }
  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/** Keeps this thread busy `busyUs` at a time, a timer turn (~1 ms) apart, until the returned stop is called. */
function bursts(busyUs: number): () => void {
  let on = true;
  const tick = () => {
    if (!on) return;
    const end = performance.now() + busyUs / 1000;
    while (performance.now() < end) { /* a dispatch's worth of work */ }
    setTimeout(tick, 0);
  };
  tick();
  return () => { on = false; };
}

async function main(): Promise<void> {
  const arg = (name: string) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : undefined; };
  const which = (process.argv[2] && !process.argv[2].startsWith("--") ? process.argv[2] : "conformance") as SetName;
  const rounds = Number(arg("--rounds")) || 5, secs = Number(arg("--seconds")) || 1, warm = Number(arg("--warm") ?? 3);
  const set = setOf(which);
  const threads = new LoopThreads(which, 2);
  loop(set, warm);
  await threads.run(warm);
  const main1: number[] = [], alone: number[] = [], both: number[] = [], procAlone: number[] = [], procBoth: number[] = [];
  const noisy: number[] = [];
  let nAlone = 0, nBoth = 0, nNoisy = 0;
  for (let r = 0; r < rounds; r++) {
    main1.push(loop(set, secs).cpu);
    let p0 = process.cpuUsage();
    const a = await threads.alone(secs);
    let p = process.cpuUsage(p0);
    alone.push(a.cpu); nAlone += a.n; procAlone.push((p.user + p.system) / a.n);
    p0 = process.cpuUsage();
    const b = await threads.run(secs);
    p = process.cpuUsage(p0);
    both.push((b[0].cpu + b[1].cpu) / 2); nBoth += b[0].n + b[1].n; procBoth.push((p.user + p.system) / (b[0].n + b[1].n));
    if (process.argv.includes("--noise")) {
      const stop = bursts(100);
      const x = await threads.run(secs);
      stop();
      noisy.push((x[0].cpu + x[1].cpu) / 2); nNoisy += x[0].n + x[1].n;
    }
  }
  const s = (a: number[]) => { const x = [...a].sort((p, q) => p - q); return `min ${x[0].toFixed(0)}, median ${x[x.length >> 1].toFixed(0)}`; };
  console.log(`${which}: ${set.length} items, load ${loadavg()}`);
  console.log(`main thread alone: ${s(main1)} µs CPU/item (the grading thread's own)`);
  console.log(`one worker alone:  ${s(alone)} µs CPU/item, ${(nAlone / rounds / secs).toFixed(0)} items/s; the whole process ${s(procAlone)}`);
  console.log(`two workers at once: ${s(both)} µs CPU/item each, ${(nBoth / rounds / secs).toFixed(0)} items/s together (${(nBoth / nAlone).toFixed(2)}x one alone); the whole process ${s(procBoth)}`);
  if (noisy.length) console.log(`two at once, the main thread in 100 µs bursts about every ms: ${s(noisy)} µs CPU/item each, ${(nNoisy / rounds / secs).toFixed(0)} items/s together (${(nNoisy / nAlone).toFixed(2)}x one alone)`);
  await threads.close();
}

// no top-level await: worker-boot.mjs imports this module in each thread
if (isMainThread) {
  if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) void main();
} else if ((workerData as { loopThread?: boolean } | undefined)?.loopThread) {
  const set = setOf((workerData as { set: SetName }).set);
  parentPort!.on("message", (secs: number) => parentPort!.postMessage(loop(set, secs)));
}
