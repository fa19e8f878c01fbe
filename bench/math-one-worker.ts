/**
 * One math worker against one in-process thread, with the dispatching (main) thread on a core of
 * its own: on this 2-core machine the pool of one thread leaves the second core to the main
 * thread, so this reads what a worker delivers when the dispatcher does not share its core, the
 * case a machine with more cores than workers gives (issue 38, twelfth pass: bench/README.md).
 *
 * Per round, alternating: the grade() loop on the main thread (the baseline, items/s), then the
 * pool of one thread (verifiers/math/pool.ts) with 4 callers of 64-item batches (/reward/batch's
 * way) and with 32 callers of one item (bench/math.ts's); for each, its ratio to the same round's
 * loop, the process's CPU µs per item and the main thread's own (/proc/thread-self/schedstat).
 * From the medians it projects N workers on N + 1 cores: N x the one worker's ratio, for as long
 * as the main thread's share of its core (its µs per item x the items/s it would then dispatch)
 * stays under one core.
 *
 *   npx tsx bench/math-one-worker.ts [ordinary|hard|conformance] [--rounds 5] [--seconds 2] [--warm 15]
 */
import { MathPool } from "../verifiers/math/pool.js";
import { drive, inline, tasksOf, type SetName } from "./math-sets.js";
import { threadCpuUs } from "./math-two-at-once.js";
import { loadavg, median, table } from "./lib.js";

const arg = (name: string, d: number) => { const i = process.argv.indexOf(name); return i > 0 ? Number(process.argv[i + 1]) : d; };
const set = (process.argv[2] && !process.argv[2].startsWith("--") ? process.argv[2] : "ordinary") as SetName;
const rounds = arg("--rounds", 5), seconds = arg("--seconds", 2), warm = arg("--warm", 15);
const tasks = tasksOf(set);
const cpuUs = () => { const c = process.cpuUsage(); return c.user + c.system; };

const pool = new MathPool(1);
await pool.ready();
const loads = [loadavg()];
inline(tasks, warm);
await drive((t) => pool.run(t), tasks, { callers: 4, batch: 64, secs: warm });

const shapes = [{ name: "4 callers x 64 items", callers: 4, batch: 64 }, { name: "32 callers x 1 item", callers: 32, batch: 1 }];
interface Fig { ratio: number; rate: number; cpu: number; main: number }
const figs = new Map<string, Fig[]>(shapes.map((s) => [s.name, []]));
const loopRates: number[] = [], loopCpu: number[] = [];
for (let r = 0; r < rounds; r++) {
  const c0 = cpuUs(), t0 = performance.now();
  const loop = inline(tasks, seconds);
  loopRates.push(loop);
  loopCpu.push((cpuUs() - c0) / (loop * ((performance.now() - t0) / 1000)));
  for (const s of shapes) {
    const p0 = cpuUs(), m0 = threadCpuUs(), w0 = performance.now();
    const n = await drive((t) => pool.run(t), tasks, { callers: s.callers, batch: s.batch, secs: seconds });
    const rate = n / ((performance.now() - w0) / 1000);
    figs.get(s.name)!.push({ ratio: rate / loop, rate, cpu: (cpuUs() - p0) / n, main: (threadCpuUs() - m0) / n });
  }
}
await pool.close();
loads.push(loadavg());

const rows: (string | number)[][] = [["callers", "one worker vs the loop, median (range)", "items/s", "process CPU µs/item", "main thread µs/item", "main thread's core at 1 worker", "projected: 2 workers on 3 cores", "3 workers on 4 cores", "workers before the main thread's core is full"]];
for (const s of shapes) {
  const f = figs.get(s.name)!;
  const ratio = median(f.map((x) => x.ratio)), rate = median(f.map((x) => x.rate)), main = median(f.map((x) => x.main));
  const share = (main * rate) / 1e6; // of one core, at one worker's rate
  const proj = (n: number) => (n * share < 1 ? `${(n * ratio).toFixed(2)}x` : "main thread full");
  rows.push([s.name, `${ratio.toFixed(2)}x (${Math.min(...f.map((x) => x.ratio)).toFixed(2)}-${Math.max(...f.map((x) => x.ratio)).toFixed(2)})`, rate.toFixed(0), median(f.map((x) => x.cpu)).toFixed(1), main.toFixed(1), `${(100 * share).toFixed(0)}%`, proj(2), proj(3), Math.floor(1 / share)]);
}
console.log(`${set}: the loop ${median(loopRates).toFixed(0)} items/s (${Math.min(...loopRates).toFixed(0)}-${Math.max(...loopRates).toFixed(0)}), ${median(loopCpu).toFixed(1)} µs CPU/item; ${rounds} rounds of ${seconds} s, load average ${loads.join(" -> ")}\n` + table(rows));
