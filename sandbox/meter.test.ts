/**
 * The run meter: a program kept off the CPU by other work is measured as waiting (so its wall
 * limit is not spent by the host's load), and its limits are judged on its own time.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync } from "node:fs";
import { RunMeter, SchedstatFile, hardWallMs, overloadMessage, ownTimeMs, schedstat } from "./meter.js";

const busy = (cpu: string, seconds: number): ChildProcess =>
  spawn("taskset", ["-c", cpu, "python3", "-c", `import time\nt=time.time()\nwhile time.time()-t<${seconds}: pass`], { stdio: "ignore" });
const threadsOf = (pid: number) => () => {
  try {
    return readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
};
const exited = (c: ChildProcess) => new Promise((r) => c.once("exit", r));

test("a program sharing its CPU with three busy loops is measured waiting for it", async () => {
  const hogs = [0, 1, 2].map(() => busy("0", 6));
  try {
    const prog = busy("0", 1.6);
    const meter = new RunMeter({ cpuNs: () => null, threads: threadsOf(prog.pid!) });
    const timer = setInterval(() => meter.sample(), 50);
    await exited(prog);
    clearInterval(timer);
    const wall = performance.now() - meter.t0;
    // Four runnable processes on one CPU: the program waits most of the time, and that wait
    // is taken off the wall time its wall limit is judged on.
    assert.ok(meter.waitMs() > wall * 0.3, `wait ${meter.waitMs()} of ${wall} ms`);
  } finally {
    for (const h of hogs) h.kill("SIGKILL");
  }
});

test("a sleeping program does not wait for a CPU: its wall limit is its wall time", async () => {
  const prog = spawn("python3", ["-c", "import time; time.sleep(2.5)"], { stdio: "ignore" });
  const meter = new RunMeter({ cpuNs: () => null, threads: threadsOf(prog.pid!) });
  let first: number | null = null;
  const timer = setInterval(() => {
    if (first === null && meter.check({ wallMs: 800, cpuMs: 10_000 }) === "time_limit") first = performance.now() - meter.t0;
  }, 50);
  await exited(prog);
  clearInterval(timer);
  // The sleep is the program's own time: its wall limit passes while it sleeps (its start-up
  // may wait for a CPU on a busy machine; a sleep never does).
  assert.ok(first !== null && first >= 800, `time_limit at ${first} ms`);
  assert.ok(meter.waitMs() < performance.now() - meter.t0 - 2000, `wait ${meter.waitMs()} ms`);
});

test("CPU over the whole tree is a time limit; the plain wall bound is 'overloaded', named as the host's load", () => {
  let cpu = 0;
  const meter = new RunMeter({ cpuNs: () => cpu, threads: () => [] });
  assert.equal(meter.check({ wallMs: 10_000, cpuMs: 50 }), null);
  cpu = 60e6;
  assert.equal(meter.check({ wallMs: 10_000, cpuMs: 50 }), "time_limit");
  assert.equal(hardWallMs(1000), 10_000);
  assert.match(overloadMessage({ wallMs: 10_000, waitMs: 9500, cpuMs: 300 }, { wallMs: 1000, cpuMs: 1000 }), /host is overloaded.*waited 9500 ms of 10000 ms.*no verdict/);
});

test("a run's own time: wall less the wait for a CPU; a run a limit ended is charged at most that limit", () => {
  assert.equal(ownTimeMs({ status: "finished", wallMs: 5000, waitMs: 4400 }, 3000, 10_000), 600);
  assert.equal(ownTimeMs({ status: "finished", wallMs: 5000 }, 3000, 10_000), 5000);
  // Killed at its limit; reaping its tree on a loaded host took 4 s more: the machine's time.
  assert.equal(ownTimeMs({ status: "time_limit", wallMs: 9000, waitMs: 2000 }, 3000, 10_000), 3000);
  assert.equal(ownTimeMs({ status: "finished", wallMs: 100, waitMs: 50, compile: { status: "finished", wallMs: 4000, waitMs: 3000 } }, 3000, 10_000), 1050);
});

test("a schedstat file kept open reads the process's growing CPU time, as schedstat does, and nothing once it has exited", { skip: process.platform !== "linux" }, async () => {
  const prog = busy("0", 2);
  const f = new SchedstatFile(prog.pid!);
  try {
    const a = f.read();
    assert.ok(a, "read while the process runs");
    // the same file read again from its start: the CPU time it has run since, not the first
    // reading (polled: on a loaded machine the busy loop may get little of its CPU)
    let b = a;
    for (const t0 = Date.now(); b[0] - a[0] < 20e6 && Date.now() - t0 < 1_800; ) {
      await new Promise((r) => setTimeout(r, 20));
      b = f.read()!;
    }
    const c = schedstat(prog.pid!)!;
    assert.ok(b[0] - a[0] >= 20e6, `CPU time grew ${(b[0] - a[0]) / 1e6} ms while a busy loop ran`);
    assert.ok(c[0] >= b[0] && c[1] >= b[1], "a fresh read of the same file is not behind it");
    await exited(prog);
    // its entry is gone: null, never the reading of another process that took its pid
    assert.equal(f.read(), null);
  } finally {
    f.close();
    prog.kill();
  }
  assert.equal(f.read(), null, "closed");
  assert.equal(new SchedstatFile(-1).read(), null, "no such process");
});
