/**
 * Is grading in a pool worker the same cost as grading in-process? The same loop of grade() over
 * the ordinary answers (or the hard mix: SET=hard) runs on the main thread and in worker threads
 * started the ways the pool could start them, in alternating rounds of 1 s after 1 s of warm-up
 * each (equal JIT warm-up: the same items, the same number of runs); each round's figure is the
 * thread's own CPU µs per item (/proc/thread-self/schedstat, ns), so other processes on the
 * machine change it less than wall time. Min and median of 7 rounds. Issue 38: loaded through
 * require() (tsx's CommonJS transform, the pool's way before) a worker graded ~1.4x slower than
 * the main thread; as an ES module (worker-boot.mjs) the same.
 *
 *   npx tsx bench/math-worker-vs-main.ts      (SET=hard for the hard mix)
 */
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { grade } from "../verifiers/math/grade.js";
import { hardTasks, ordinaryTasks } from "./math-sets.js";
import { threadCpuUs } from "./math-two-at-once.js";

const set = process.env.SET === "hard" ? hardTasks(240) : ordinaryTasks(240);
function loop(secs: number): number {
  const c0 = threadCpuUs();
  let n = 0;
  const end = performance.now() + secs * 1000;
  while (performance.now() < end) for (const t of set) { grade(t.response, t.reference, t.options); n++; }
  return (threadCpuUs() - c0) / n;
}

async function main(): Promise<void> {
  const self = fileURLToPath(import.meta.url);
  const ways: [string, Worker][] = [
    ["worker, ES module (worker-boot.mjs, the pool's way)", new Worker(fileURLToPath(new URL("../src/core/worker-boot.mjs", import.meta.url)), { workerData: { file: self }, execArgv: process.execArgv, resourceLimits: { maxOldGenerationSizeMb: 512 } })],
    ["worker, through require() (tsx's CommonJS transform)", new Worker(fileURLToPath(new URL("./math-worker-require.cjs", import.meta.url)), { workerData: { file: self }, execArgv: process.execArgv, resourceLimits: { maxOldGenerationSizeMb: 512 } })],
  ];
  const ask = (w: Worker) => new Promise<number>((res, rej) => { w.once("message", res); w.once("error", rej); w.postMessage(1); });
  const res: number[][] = [[], ...ways.map(() => [])];
  loop(1);
  for (const [, w] of ways) await ask(w);
  for (let r = 0; r < 7; r++) {
    res[0].push(loop(1));
    for (let k = 0; k < ways.length; k++) res[k + 1].push(await ask(ways[k][1]));
  }
  const s = (a: number[]) => { a.sort((x, y) => x - y); return `min ${a[0].toFixed(1)}, median ${a[3].toFixed(1)} µs CPU/item`; };
  console.log(`${process.env.SET === "hard" ? "hard mix" : "ordinary answers"}, load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`);
  console.log(`main thread: ${s(res[0])}`);
  ways.forEach(([name], k) => console.log(`${name}: ${s(res[k + 1])}`));
  for (const [, w] of ways) await w.terminate();
}

// no top-level await: this module is also loaded through require() (a CommonJS transform) in a worker
if (isMainThread) void main();
else if ((workerData as { file?: string } | undefined)?.file) {
  parentPort!.on("message", () => parentPort!.postMessage(loop(1)));
}
