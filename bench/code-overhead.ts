/**
 * Where a HumanEval-shaped item's time goes beyond its program's own run (issue 37's "per-item
 * overhead under 20 ms at p50"), one item at a time on one backend, split by layer:
 * - the code verifier outside the sandbox (parsing, the assert harness put together, the verdict);
 * - the backend's host side around a warm slot's exec (bwrap: the slot's queue, its cgroup limits
 *   set, the OOM count read; docker: the pool);
 * - the runner's channel (the job's line out and its reply back, less the runner's own time);
 * - the runner's phases (ms since it read the job: files written, program started, exited,
 *   outcome collected, leftovers swept, scratch wiped).
 *
 *   node --import tsx bench/code-overhead.ts [--backend docker|bwrap] [--n 60]
 *
 * Prints the p50 of each, the item's program run as the runner timed it, and the load average.
 */
import { readFileSync } from "node:fs";
import { code } from "../verifiers/code/index.js";
import { verifyDirect, testServices, fakeSandbox } from "../tests/helpers.js";
import { openBackend } from "../tests/sandboxes.js";
import type { Sandbox, RunRequest } from "../sandbox/types.js";

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const backend = arg("backend", "bwrap");
const N = Number(arg("n", "60"));

type Exec = (this: unknown, job: { phases?: boolean }, ...a: unknown[]) => Promise<{ phases?: [string, number][] }>;
let exec = { ms: 0, runner: 0, phases: [] as [string, number][] };
const { Worker } = await import("../sandbox/docker/worker.js");
const { WarmSlot } = await import("../sandbox/bwrap/warm.js");
for (const C of [Worker, WarmSlot] as unknown as { prototype: { exec: Exec } }[]) {
  const orig = C.prototype.exec;
  C.prototype.exec = async function (job, ...a) {
    job.phases = true;
    const t = performance.now();
    const r = await orig.call(this, job, ...a);
    exec.ms += performance.now() - t;
    if (r.phases?.length) {
      exec.runner += r.phases[r.phases.length - 1][1];
      exec.phases = r.phases;
    }
    return r;
  };
}

const sb = await openBackend(backend, 2);
let inRun = 0;
const timed: Sandbox = Object.create(sb, {
  run: { value: async (req: RunRequest) => { const t = performance.now(); try { return await sb.run(req); } finally { inRun += performance.now() - t; } } },
});
const services = testServices({ sandbox: fakeSandbox(timed) });
const rows: { total: number; run: number; inRun: number; exec: number; runner: number; phases: [string, number][] }[] = [];
const load0 = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
for (let i = 0; i < N + 10; i++) {
  const item = { response: "```python\ndef add(a, b):\n    return a + b\n```", reference: { test: `def check(candidate):\n    assert candidate(${i}, 2) == ${i + 2}\n    assert candidate(-1, 1) == 0\n`, entry_point: "add" } };
  inRun = 0;
  exec = { ms: 0, runner: 0, phases: [] };
  const t = performance.now();
  const r = await verifyDirect(code, item, { services });
  const total = performance.now() - t;
  if (r.reward !== 1) throw new Error(`item ${i}: ${r.reward} ${r.reason}`);
  // The first 10 warm the slots up.
  if (i >= 10) rows.push({ total, run: (r.details as { tests: { ms: number }[] }).tests[0].ms, inRun, exec: exec.ms, runner: exec.runner, phases: exec.phases });
}
await sb.close();
const p50 = (f: (x: (typeof rows)[0]) => number) => [...rows.map(f)].sort((a, b) => a - b)[rows.length >> 1];
const names = rows[0].phases.map(([n]) => n);
let prev = 0;
const split = names.map((n, k) => {
  const at = p50((x) => x.phases[k]?.[1] ?? NaN);
  const s = `${n} +${(at - prev).toFixed(1)}`;
  prev = at;
  return s;
});
console.log(`${backend}, ${N} HumanEval-shaped items one at a time, p50 ms: item ${p50((x) => x.total).toFixed(1)} = program run ${p50((x) => x.run).toFixed(1)} + beyond it ${p50((x) => x.total - x.run).toFixed(1)}; ` +
  `of the item: code verifier outside the sandbox ${p50((x) => x.total - x.inRun).toFixed(1)}, backend host side ${p50((x) => x.inRun - x.exec).toFixed(1)}, ` +
  `channel ${p50((x) => x.exec - x.runner).toFixed(1)}, runner ${p50((x) => x.runner).toFixed(1)} (${split.join(", ")}); ` +
  `load average ${load0} -> ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`);
process.exit(0);
