/**
 * Where the math pool's CPU goes, thread by thread: the pool on a set, callers either one item
 * each (bench/math.ts's way: `--callers 32`) or batches (`--batch 64`: each caller submits 64
 * items and waits for all, as /reward/batch does), after a warm-up; per round, items/s, the
 * process's CPU µs per item, items per chunk, and for every thread of the process (the main
 * thread; the pool's workers, the largest others; V8's helper threads, the small ones) its CPU µs
 * per item (/proc/self/task/TID/schedstat) and its voluntary / involuntary context switches per
 * chunk (a worker preempted about once a chunk is the main thread's wake-up taking its core), and
 * (single-item callers) the items' own wall time inside grade() in the workers (`Done.ownMs`),
 * to set beside a loop's CPU per item. Issue 38, sixth and eighth passes (bench/README.md).
 *
 *   npx tsx bench/math-pool-threads.ts [conformance|hard|ordinary] [--threads 2] [--callers 32] [--batch 1] [--warm 5] [--rounds 3] [--seconds 2]
 */
import { readFileSync, readdirSync } from "node:fs";
import { MathPool } from "../verifiers/math/pool.js";
import type { Task } from "../verifiers/math/worker.js";
import { tasksOf, drive as driveCallers, type SetName } from "./math-sets.js";
import { loadavg } from "./lib.js";

const arg = (name: string, d: number) => { const i = process.argv.indexOf(name); return i > 0 ? Number(process.argv[i + 1]) : d; };
const which = process.argv[2] && !process.argv[2].startsWith("--") ? process.argv[2] : "ordinary";
const tasks: Task[] = tasksOf(which as SetName);
const threads = arg("--threads", 2), callers = arg("--callers", 32), batch = arg("--batch", 1);
const warm = arg("--warm", 5), rounds = arg("--rounds", 3), seconds = arg("--seconds", 2);

interface ThreadStat { name: string; cpuNs: number; vol: number; invol: number }
function threadStats(): Map<string, ThreadStat> {
  const m = new Map<string, ThreadStat>();
  for (const t of readdirSync("/proc/self/task")) {
    try {
      const status = readFileSync(`/proc/self/task/${t}/status`, "utf8");
      m.set(t, {
        name: readFileSync(`/proc/self/task/${t}/comm`, "utf8").trim(),
        cpuNs: Number(readFileSync(`/proc/self/task/${t}/schedstat`, "utf8").split(" ")[0]),
        vol: Number(/\nvoluntary_ctxt_switches:\s+(\d+)/.exec(status)![1]),
        invol: Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)![1]),
      });
    } catch { /* a thread that ended */ }
  }
  return m;
}

/** Sum of the items' own wall time in their worker (Done.ownMs), ms: printed for single-item callers only. */
let ownMs = 0;
const drive = (pool: MathPool, secs: number) => driveCallers((t) => pool.submit(t).done, tasks, { callers, batch, secs }, (d) => (ownMs += d.ownMs));

const pool = new MathPool(threads);
await pool.ready();
await drive(pool, warm);
console.log(`${which}: ${threads} threads, ${callers} callers of ${batch} item(s), load ${loadavg()}`);
for (let r = 0; r < rounds; r++) {
  ownMs = 0;
  const s0 = threadStats(), c0 = process.cpuUsage(), t0 = performance.now(), k0 = pool.stats.chunks;
  const n = await drive(pool, seconds);
  const c = process.cpuUsage(c0), s1 = threadStats(), chunks = pool.stats.chunks - k0;
  const parts: string[] = [];
  for (const [tid, b] of s1) {
    const a = s0.get(tid) ?? { name: b.name, cpuNs: 0, vol: 0, invol: 0 };
    const us = (b.cpuNs - a.cpuNs) / 1000 / n;
    if (us < 0.5) continue;
    // the main thread's id is the process's; the pool's workers are the threads with most CPU
    const role = tid === String(process.pid) ? "main" : `tid ${tid}`;
    parts.push(`${role} ${us.toFixed(1)} (ctx/chunk v${((b.vol - a.vol) / chunks).toFixed(2)} i${((b.invol - a.invol) / chunks).toFixed(2)})`);
  }
  console.log(`${(n / ((performance.now() - t0) / 1000)).toFixed(0)} items/s, ${((c.user + c.system) / n).toFixed(1)} µs CPU/item, ${(n / chunks).toFixed(1)} items/chunk${batch <= 1 ? `, own wall time in grade() ${((ownMs * 1000) / n).toFixed(1)} µs/item` : ""} | µs/item by thread: ${parts.join(", ")}`);
}
await pool.close();
