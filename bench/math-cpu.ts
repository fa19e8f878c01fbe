/**
 * CPU time per math verification, in-process on the main thread against the worker pool on 2
 * threads (the pool's figure counts every thread of the process: dispatch, messaging and the
 * workers' own grading), best of 3 alternating rounds. CPU time, unlike wall time, holds up on
 * a shared machine; the difference is what the pool's dispatch costs per item. Same item sets as
 * bench/math.ts.
 *
 *   npx tsx bench/math-cpu.ts
 *
 * To compare two trees in one run on one machine, bundle this file against each (esbuild, as in
 * bench/README.md) and run the bundles one after the other.
 */
import { grade } from "../verifiers/math/grade.js";
import { MathPool } from "../verifiers/math/pool.js";
import type { Task } from "../verifiers/math/worker.js";
import { conformanceTasks, hardTasks, inline, ordinaryTasks } from "./math-sets.js";
import { table } from "./lib.js";
/** The worker module: the tree's own, or WORKER=path (a bundled copy beside a bundled bench). */
const WORKER = process.env.WORKER || undefined;

const sets = { conformance: conformanceTasks(process.env.CASES || undefined), "hard mix": hardTasks(240), ordinary: ordinaryTasks(240) };
// sanity: the hard mix is graded as designed (all equal but the deliberately wrong kind)
const wrong = sets["hard mix"].filter((t) => grade(t.response, t.reference, t.options).reward !== 1).length;
console.log(`hard mix: ${sets["hard mix"].length} items, ${wrong} graded 0 (expected ${sets["hard mix"].length / 12})`);


/** CPU time (all threads of the process) per item: robust on a shared machine where wall time is not. */
function cpuUs(c0: NodeJS.CpuUsage): number { const c = process.cpuUsage(c0); return c.user + c.system; }
async function pooledN(pool: MathPool, tasks: Task[], n: number): Promise<void> {
  let i = 0;
  const lane = async () => { while (i < n) await pool.run(tasks[i++ % tasks.length]); };
  await Promise.all(Array.from({ length: 32 }, lane));
}
const rowsCpu: (string | number)[][] = [["set", "main thread, µs CPU/item", "pool 2 threads, µs CPU/item (all threads)", "pool overhead µs/item"]];
for (const [name, tasks] of Object.entries(sets)) {
  const n = tasks.length * 4;
  inline(tasks, 0.5);
  let best1 = Infinity, best2 = Infinity;
  const p2 = new MathPool(2, { filename: WORKER });
  await p2.ready(600_000);
  await pooledN(p2, tasks, tasks.length);
  for (let r = 0; r < 3; r++) {
    let c0 = process.cpuUsage();
    for (let k = 0; k < n; k++) { const t = tasks[k % tasks.length]; grade(t.response, t.reference, t.options); }
    best1 = Math.min(best1, cpuUs(c0) / n);
    c0 = process.cpuUsage();
    await pooledN(p2, tasks, n);
    best2 = Math.min(best2, cpuUs(c0) / n);
  }
  await p2.close();
  rowsCpu.push([name, best1.toFixed(1), best2.toFixed(1), (best2 - best1).toFixed(1)]);
}
console.log("\nCPU per item (best of 3 alternating rounds)\n" + table(rowsCpu));
process.exit(0);
