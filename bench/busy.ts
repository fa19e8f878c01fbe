/**
 * The same reward on a busy machine: the 42 items of tests/busy-machine.test.ts (right and wrong
 * Python and C++ programs, programs near their CPU limit, hostile ones) scored in one
 * /reward/batch idle, then with a CPU hog at 4x oversubscription (4 busy loops per core), then
 * with an I/O and memory hog. Reports, per phase: agreement with the expected rewards, nulls,
 * and p50/p99 of the items' latency (elapsed_ms as the server reports it) and the batch's wall.
 *
 *   npx tsx bench/busy.ts [--backend bwrap|docker] [--rounds 1]
 */
import { cpus, tmpdir } from "node:os";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import request from "supertest";
import type { ChildProcess } from "node:child_process";
import { table } from "./lib.js";
import { items, cpuHog, ioMemoryHog, stopHogs } from "../tests/busy-items.js";
import { testApp, fakeSandbox } from "../tests/helpers.js";
import { openBackend } from "../tests/sandboxes.js";

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1]! : dflt;
};
const backend = arg("--backend", "bwrap");
const rounds = Number(arg("--rounds", "1"));

const sb = await openBackend(backend, 4);
const { app } = await testApp({}, [], { sandbox: fakeSandbox(sb) });
const ITEMS = items();
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};

const phases: [string, (dir: string) => ChildProcess[]][] = [
  ["idle", () => []],
  [`CPU hog (${4 * cpus().length} loops, ${cpus().length} cores)`, () => cpuHog(4 * cpus().length)],
  ["I/O + memory hog", ioMemoryHog],
];
const rows: (string | number)[][] = [["phase", "items", "agree", "nulls", "item p50 ms", "item p99 ms", "batch s"]];
for (const [phase, hog] of phases) {
  const lat: number[] = [];
  let agree = 0;
  let nulls = 0;
  let wall = 0;
  for (let r = 0; r < rounds; r++) {
    const dir = mkdtempSync(join(tmpdir(), "assay-hog-"));
    const hogs = hog(dir);
    try {
      if (hogs.length) await new Promise((res) => setTimeout(res, 500));
      const t0 = performance.now();
      const res = await request(app).post("/reward/batch").send({ items: ITEMS.map((it, id) => ({ id, verifier: "code", response: it.response, reference: it.reference, options: { time_limit_ms: 1000, ...it.options } })) });
      wall += (performance.now() - t0) / 1000;
      for (const x of res.body.results as { id: number; reward: number | null; elapsed_ms: number; reason: string }[]) {
        lat.push(x.elapsed_ms);
        if (x.reward === null) nulls++;
        if (x.reward === ITEMS[x.id]!.reward) agree++;
        else console.error(`${phase}: ${ITEMS[x.id]!.name}: ${x.reward} (${x.reason})`);
      }
    } finally {
      stopHogs(hogs);
      rmSync(dir, { recursive: true, force: true });
    }
  }
  rows.push([phase, ITEMS.length * rounds, agree, nulls, Math.round(pct(lat, 50)), Math.round(pct(lat, 99)), (wall / rounds).toFixed(1)]);
}
console.log(`backend ${backend}, ${rounds} round(s), load average before: see uptime\n`);
console.log(table(rows));
await sb.close();
