/**
 * Where the math pool's time goes, per item, split by thread: the in-process baseline (grade() in
 * a loop on the main thread) against the pool on 2 threads, driven two ways: 32 callers of one
 * item each (as bench/math.ts) and batches of 64 items, two in flight (as POST /reward/batch
 * sends them). For each: wall items/s; CPU µs per item on the main thread and on every other
 * thread of the process (the workers and every isolate's V8 helper threads), read from
 * /proc/self/task/<tid>/stat (CPU time holds up on a shared machine, wall time does not); chunks
 * (messages each way) per item; timers armed per item (setTimeout calls during the run, counted);
 * the size of what crosses the thread boundary per item (the structured clone of a chunk's
 * items, v8.serialize; the results' JSON); and how busy the workers were (their CPU over 2 x wall).
 *
 *   npx tsx bench/math-split.ts [--seconds 3] [--pool DIR]   (DIR: another tree's verifiers/math/pool.ts, to compare)
 */
import { readFileSync, readdirSync } from "node:fs";
import { serialize } from "node:v8";
import { grade } from "../verifiers/math/grade.js";
import type { Task } from "../verifiers/math/worker.js";
import { conformanceTasks, hardTasks, ordinaryTasks } from "./math-sets.js";
import { table } from "./lib.js";

const arg = (name: string) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : undefined; };
const seconds = Number(arg("--seconds")) || 3;
const poolModule = arg("--pool") ? `${arg("--pool")}/verifiers/math/pool.ts` : "../verifiers/math/pool.js";
const { MathPool } = (await import(poolModule)) as typeof import("../verifiers/math/pool.js");
type Pool = InstanceType<typeof MathPool>;

const TICK_US = 1e6 / 100; // USER_HZ: /proc reports clock ticks of 10 ms
/** CPU µs of the main thread and of all other threads of this process, from /proc. */
function threadCpu(): { main: number; other: number } {
  let main = 0, other = 0;
  for (const tid of readdirSync("/proc/self/task")) {
    let stat: string;
    try { stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8"); } catch { continue; } // a thread that just ended
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const us = (Number(f[11]) + Number(f[12])) * TICK_US;
    if (Number(tid) === process.pid) main += us; else other += us;
  }
  return { main, other };
}

/** Counts setTimeout calls while `f` runs: timers armed per item. */
let timers = 0;
const realSetTimeout = globalThis.setTimeout;
globalThis.setTimeout = ((...a: Parameters<typeof setTimeout>) => { timers++; return realSetTimeout(...a); }) as typeof setTimeout;

interface Row { items: number; wall: number; main: number; other: number; chunks: number; timers: number }
async function measure(f: () => Promise<number>, pool?: Pool): Promise<Row> {
  const c0 = threadCpu(), t0 = performance.now(), k0 = pool?.stats.chunks ?? 0, n0 = timers;
  const items = await f();
  const wall = (performance.now() - t0) / 1000;
  const c1 = threadCpu();
  return { items, wall, main: c1.main - c0.main, other: c1.other - c0.other, chunks: (pool?.stats.chunks ?? 0) - k0, timers: timers - n0 };
}

function inline(tasks: Task[], secs: number): Promise<number> {
  let done = 0;
  const end = performance.now() + secs * 1000;
  while (performance.now() < end) for (const t of tasks) { grade(t.response, t.reference, t.options); done++; }
  return Promise.resolve(done);
}
async function lanes(pool: Pool, tasks: Task[], secs: number): Promise<number> {
  let done = 0, i = 0;
  const end = performance.now() + secs * 1000;
  const lane = async () => { while (performance.now() < end) { await pool.run(tasks[i++ % tasks.length]); done++; } };
  await Promise.all(Array.from({ length: 32 }, lane));
  return done;
}
async function batches(pool: Pool, tasks: Task[], secs: number): Promise<number> {
  let done = 0, i = 0;
  const end = performance.now() + secs * 1000;
  const lane = async () => {
    while (performance.now() < end) {
      const batch = Array.from({ length: 64 }, () => tasks[i++ % tasks.length]);
      await Promise.all(batch.map((t) => pool.run(t)));
      done += 64;
    }
  };
  await Promise.all(Array.from({ length: 2 }, lane));
  return done;
}

const sets = { conformance: conformanceTasks(), "hard mix": hardTasks(240), ordinary: ordinaryTasks(240) };
const rows: (string | number)[][] = [["set", "way", "items/s (wall)", "main µs CPU/item", "other threads µs CPU/item", "all µs CPU/item", "items/chunk", "timers/item", "workers busy"]];
const fmt = (r: Row, name: string, way: string, workers: number) => [
  name, way, (r.items / r.wall).toFixed(0), (r.main / r.items).toFixed(1), (r.other / r.items).toFixed(1), ((r.main + r.other) / r.items).toFixed(1),
  r.chunks ? (r.items / r.chunks).toFixed(1) : "-", (r.timers / r.items).toFixed(3), workers ? `${((100 * r.other) / 1e6 / (workers * r.wall)).toFixed(0)}%` : "-",
];
const sizes: (string | number)[][] = [["set", "bytes in per item (structured clone)", "bytes out per item (results JSON)"]];
for (const [name, tasks] of Object.entries(sets)) {
  const results = tasks.map((t) => { try { return grade(t.response, t.reference, t.options, t.prompt); } catch (e) { return { error: String(e) }; } });
  sizes.push([name, (serialize({ items: tasks }).length / tasks.length).toFixed(0), (JSON.stringify(results).length / tasks.length).toFixed(0)]);
  await inline(tasks, 1); // JIT warm-up, as the pool gets below
  rows.push(fmt(await measure(() => inline(tasks, seconds)), name, "in-process", 0));
  const pool = new MathPool(2);
  await pool.ready(180_000);
  await lanes(pool, tasks, 1); // the pool's warm-up
  rows.push(fmt(await measure(() => lanes(pool, tasks, seconds), pool), name, "pool, 32 callers", 2));
  rows.push(fmt(await measure(() => batches(pool, tasks, seconds), pool), name, "pool, batches of 64", 2));
  await pool.close();
}
console.log(`load average at the end: ${readFileSync("/proc/loadavg", "utf8").trim()}`);
console.log("\nper item, by thread\n" + table(rows));
console.log("\nwhat crosses the thread boundary\n" + table(sizes));
process.exit(0);
