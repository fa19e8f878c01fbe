/**
 * The SQLite process's CPU per cold pair, in this process (no IPC, no server): what
 * sqlite-worker.ts's run() does for a pair of the cold path, the gold with `keep` + `stay`
 * (every gold text unique) and the model's query digested against it there, timed with
 * process.cpuUsage. With `--against DIR` (DIR/src/sql from another commit, e.g.
 * `git archive 9ebe527 src/sql | tar -x -C DIR`, with a node_modules link), that tree's worker
 * runs alternately with this one on the same pairs, in the same process, and the least of each
 * side's rounds is compared: end to end (bench/sql.ts) a shared 2-core machine's load moves CPU
 * per pair by +-20%, more than a change to the worker's own work.
 *
 *   npx tsx bench/sql-worker.ts [--pairs 1600] [--rounds 6] [--against DIR]
 */
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { buildDb, pairs } from "./sql-data.js";

const arg = (name: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const count = Number(arg("--pairs")) || 1600;
const rounds = Number(arg("--rounds")) || 6;
const against = arg("--against");

type Run = (task: unknown) => unknown;
const sides: { name: string; run: Run; cpu: number[]; matched: number }[] = [
  { name: "this tree", run: (await import("../src/sql/sqlite-worker.js")).run as Run, cpu: [], matched: 0 },
];
if (against) sides.unshift({ name: against, run: (await import(resolve(against, "src/sql/sqlite-worker.ts"))).run as Run, cpu: [], matched: 0 });

const { path } = buildDb();
// the model's response without its fence: run() takes the extracted query
const ps = pairs(count, true).map((p) => ({ gold: p.gold, pred: p.pred.replace(/^```sql\n|\n```$/g, "") }));
const rule = { rows: "bag" as const, ordered: false, floatDigits: 0 };
const caps = { maxRows: 10_000, maxBytes: 1 << 24 };
let round = 0;

function once(run: Run): { cpuUs: number; matched: number } {
  const fresh = ` /* round ${round++} */`; // every gold text unique: each one runs (the cold path)
  const c0 = process.cpuUsage();
  let matched = 0;
  for (const p of ps) {
    const gold = p.gold + fresh;
    run({ kind: "query", path, version: "1", sql: gold, ...caps, keep: true, stay: true });
    const r = run({ kind: "query", path, version: "1", sql: p.pred, ...caps, digest: { ...rule, of: gold, maxRows: 10_000, held: true } }) as { matched?: unknown };
    if (r.matched) matched++;
  }
  const c = process.cpuUsage(c0);
  return { cpuUs: (c.user + c.system) / ps.length, matched };
}

for (let i = 0; i < rounds; i++) {
  for (const s of i % 2 ? [...sides].reverse() : sides) {
    const r = once(s.run);
    s.cpu.push(r.cpuUs);
    s.matched = r.matched;
  }
}
const least = (a: number[]) => Math.min(...a);
for (const s of sides) console.log(`${s.name}: ${least(s.cpu).toFixed(0)} µs CPU a pair (least of ${rounds} rounds of ${ps.length}; all: ${s.cpu.map((x) => x.toFixed(0)).join(" ")}), ${s.matched} matched by digest`);
if (sides.length === 2) console.log(`this tree / ${against}: ${(least(sides[1].cpu) / least(sides[0].cpu)).toFixed(3)}`);
console.log(`load average ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
