/**
 * Two checkouts' math pools on 2 threads, the hard mix, in alternating rounds of 3 s in one
 * process: 32 callers of one item (as bench/math.ts) and 128; items/s, CPU µs per item (every
 * thread), items per chunk, the 1-minute load average. A quicker A/B than bench/math.ts --before
 * when only the pool changed.
 *
 *   npx tsx bench/math-pool-ab.ts --before DIR
 */
import { readFileSync } from "node:fs";
import { MathPool as After } from "../verifiers/math/pool.js";
import { hardTasks } from "./math-sets.js";
const dir = process.argv[process.argv.indexOf("--before") + 1];
if (!process.argv.includes("--before") || !dir) throw new Error("usage: npx tsx bench/math-pool-ab.ts --before DIR (another checkout)");
const { MathPool: Before } = (await import(`${dir}/verifiers/math/pool.ts`)) as { MathPool: typeof After };
const tasks = hardTasks(240);
const cpu = () => { const c = process.cpuUsage(); return c.user + c.system; };
async function lanes(pool: InstanceType<typeof After>, n: number, secs: number) { let done = 0, i = 0; const end = performance.now() + secs * 1000;
  await Promise.all(Array.from({ length: n }, async () => { while (performance.now() < end) { await pool.run(tasks[i++ % tasks.length]); done++; } })); return done; }
const pools: [string, InstanceType<typeof After>][] = [["before", new Before(2)], ["after", new After(2)]];
for (const [, p] of pools) { await p.ready(180000); await lanes(p, 32, 2); }
for (let r = 0; r < 3; r++) for (const [name, p] of pools) for (const n of [32, 128]) {
  const c0 = cpu(), t0 = performance.now(), k0 = p.stats.chunks; const d = await lanes(p, n, 3);
  console.log(name, `callers ${n}`, (d / ((performance.now() - t0) / 1000)).toFixed(0), "/s", ((cpu() - c0) / d).toFixed(0), "µs/item", (d / (p.stats.chunks - k0)).toFixed(1), "items/chunk", readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
}
process.exit(0);
