/**
 * Two trees' compiled servers side by side under POST /reward/batch of 64 math items (ordinary
 * answers, the hard mix; ASSAY_WORKERS=2), in alternating rounds of 3 s: items/s, and the
 * server's CPU µs per item split into its main thread (HTTP, scorer, the verifier's event-loop
 * side, the pool's dispatch) and every other thread (the math workers, V8's helpers), read from
 * /proc/<pid>/task. Both servers run throughout, so each round's load on the shared machine is
 * the same for both; the medians are the figures to quote. Issue 38.
 *
 *   npx tsc -p tsconfig.json && npx tsx bench/math-http-ab.ts --before DIR [--rounds 3]   (DIR: another checkout with its dist/ built)
 */
import { readFileSync, readdirSync } from "node:fs";
import { load, startAssay, startServer, waitReady } from "./lib.js";
import { ordinaryTasks, hardTasks } from "./math-sets.js";
function cpu(pid: number) {
  let main = 0, other = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let st: string; try { st = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8"); } catch { continue; }
    const f = st.slice(st.lastIndexOf(")") + 2).split(" ");
    const us = (Number(f[11]) + Number(f[12])) * 1e4;
    if (Number(tid) === pid) main += us; else other += us;
  }
  return { main, other };
}
const arg = (name: string) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : undefined; };
const dir = arg("--before");
if (!dir) throw new Error("usage: npx tsx bench/math-http-ab.ts --before DIR [--rounds 3] (DIR: another checkout, its dist/ built)");
const rounds = Number(arg("--rounds")) || 3;
const env = { ASSAY_WORKERS: "2", ASSAY_LOG_LEVEL: "warn" };
const servers = [["before", await startServer([`${dir}/dist/src/cli/main.js`, "serve"], env)], ["this tree", await startAssay(env)]] as const;
try {
  for (const [, a] of servers) await waitReady(a.url);
  const bodies = Object.fromEntries(([["ordinary", ordinaryTasks(240)], ["hard", hardTasks(240)]] as const).map(([n, set]) => [n, JSON.stringify({ items: set.slice(0, 64).map((t) => ({ verifier: "math", ...t })) })]));
  for (const [, a] of servers) for (const b of Object.values(bodies)) await load(`${a.url}/reward/batch`, b, 2, 2);
  const rows: Record<string, { main: number[]; other: number[]; rate: number[] }> = {};
  for (let r = 0; r < rounds; r++) for (const [name, body] of Object.entries(bodies)) for (const [tree, a] of servers) {
    const c0 = cpu(a.child.pid!);
    const l = await load(`${a.url}/reward/batch`, body, 2, 3);
    const c1 = cpu(a.child.pid!);
    const items = l.requests * 64;
    const k = `${name} ${tree}`;
    rows[k] ??= { main: [], other: [], rate: [] };
    rows[k].main.push((c1.main - c0.main) / items); rows[k].other.push((c1.other - c0.other) / items); rows[k].rate.push(l.rps * 64);
  }
  const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1];
  for (const [k, v] of Object.entries(rows)) console.log(k.padEnd(20), "items/s (rounds)", v.rate.map((x) => x.toFixed(0)).join(" / "), "| main µs/item", v.main.map((x) => x.toFixed(0)).join(" / "), "| other threads", v.other.map((x) => x.toFixed(0)).join(" / "), "| median all", (med(v.main) + med(v.other)).toFixed(0), "-> projected", (2e6 / (med(v.main) + med(v.other))).toFixed(0));
  console.log("load", readFileSync("/proc/loadavg", "utf8").trim());
} finally { for (const [, a] of servers) a.child.kill(); }
