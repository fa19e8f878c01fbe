/**
 * Before/after of the warm Python's per-test cost on both backends, one slot, one test at a time:
 * p50 at the sandbox API, the run's own wait for a CPU (the runner's waitMs), CPU per test in the
 * sandbox (the container's or the slots' cgroup) and in this process, and the run's process's own
 * minor page faults and CPU once it had the run (0 and NaN for a runner without them). The label (first argument)
 * only names the lines: swap the tree's sandbox/runner/runner.py and sandbox/bwrap/cgroups.ts
 * between runs and alternate, so both sides see the same load (bench/README.md, issue 31's third
 * round). Usage: npx tsx bench/code-warm-ab.ts LABEL [--n 150] [--gap MS]
 */
import { openDockerForTests, openBwrapForTests } from "../tests/sandboxes.js";
import { sandboxCpuMs } from "./lib.js";
import { PROGRAM, STDIN } from "./code-program.js";
import { readFileSync } from "node:fs";
import { Worker } from "../sandbox/docker/worker.js";
import { WarmSlot } from "../sandbox/bwrap/warm.js";
// Each job asks for the runner's phases, whose `faults` and `runCpuMs` are the run's process's
// own minor page faults and CPU time from the moment it had the run (runner.py's spawn).
let own: { faults: number; runCpuMs: number }[] = [];
let phases: [string, number][][] = [];
for (const C of [Worker, WarmSlot] as unknown as { prototype: { exec: (job: any, ...a: unknown[]) => Promise<any> } }[]) {
  const orig = C.prototype.exec;
  C.prototype.exec = async function (this: unknown, job: any, ...a: unknown[]) {
    job.phases = true;
    const r = await orig.call(this, job, ...a);
    if (typeof r.faults === "number") own.push({ faults: r.faults, runCpuMs: r.runCpuMs });
    if (r.phases) phases.push(r.phases);
    return r;
  };
}
// --gap MS: an idle pause before each timed test (untimed), as a verifier's and the HTTP path's
// own work leaves between one test's reply and the next job; 0 (the default): back to back.
const GAP = process.argv.includes("--gap") ? Number(process.argv[process.argv.indexOf("--gap") + 1]) : 0;
const out: string[] = [];
for (const [name, open] of [["docker", openDockerForTests], ["bwrap", openBwrapForTests]] as const) {
  const o = await open(1);
  const sb = o.sandbox!;
  const once = () => sb.run({ language: "python", code: PROGRAM, stdin: STDIN, limits: { wallMs: 30_000, cpuMs: 10_000 } });
  for (let i = 0; i < 20; i++) await once();
  const N = Number(process.argv[process.argv.indexOf("--n") + 1]) || 150;
  own = [];
  phases = [];
  const c0 = sandboxCpuMs(name), me0 = process.cpuUsage(), l0 = readFileSync("/proc/loadavg", "utf8").split(" ")[0];
  const ts: number[] = [], waits: number[] = [];
  for (let i = 0; i < N; i++) { if (GAP) await new Promise((r) => setTimeout(r, GAP)); const t = performance.now(); const r = await once(); ts.push(performance.now() - t); waits.push(r.waitMs ?? NaN); if (r.status !== "finished") throw new Error(r.status); }
  const c1 = sandboxCpuMs(name), me = process.cpuUsage(me0);
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN;
  out.push(`${process.argv[2]} ${name}${GAP ? ` (${GAP} ms idle before each test)` : ""}: p50 ${med(ts).toFixed(2)} ms, run's wait p50 ${med(waits).toFixed(2)} ms, sandbox CPU/test ${c0 && c1 && c0.ids === c1.ids ? ((c1.ms - c0.ms) / N).toFixed(2) : "NaN"} ms, host CPU/test ${((me.user + me.system) / 1000 / N).toFixed(2)} ms, ` +
    `the run's own (from having the run) p50: ${med(own.map((o) => o.faults))} minor faults, ${med(own.map((o) => o.runCpuMs)).toFixed(2)} ms CPU, load ${l0}\n` +
    `  runner's phases, p50 ms after the one before: ${phases[0].map(([n], i) => `${n} ${(med(phases.map((p) => p[i][1])) - (i ? med(phases.map((p) => p[i - 1][1])) : 0)).toFixed(2)}`).join(", ")}`);
  await sb.close();
}
console.log(out.join("\n"));
process.exit(0);
