/**
 * The pool's threads warm up before they say they are ready (worker.ts warmUp): V8 compiles per
 * thread, and a fresh worker graded Math-Verify's conformance cases at ~2x the CPU per item of a
 * warm one for its first few thousand items (issue 38, fifth pass in bench/README.md). CPU time
 * of the worker's own threads (from /proc), not wall time, so a loaded machine changes it less.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { MathPool } from "./pool.js";
import { loadCases, optionsFor } from "./conformance.js";
import { extractAnswer } from "./extract.js";
import type { Task } from "./worker.js";

const tasks: Task[] = loadCases().map((c) => {
  const o = optionsFor(c);
  const g = extractAnswer(c.gold, { priority: o.extract });
  return { response: c.pred, reference: g ? (g.latex ? `$${g.answer}$` : g.answer) : c.gold, options: o };
});
const tids = () => new Set(readdirSync("/proc/self/task"));
/** CPU µs of the given threads of this process (utime + stime, clock ticks of 10 ms). */
function cpuUs(of: string[]): number {
  let us = 0;
  for (const tid of of) {
    try {
      const s = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
      us += (Number(f[11]) + Number(f[12])) * 10_000;
    } catch { /* ended */ }
  }
  return us;
}
/** The worker's CPU µs per item over `passes` passes of the conformance cases, in chunks of 64. */
async function perItem(pool: MathPool, threads: string[], passes: number): Promise<number> {
  const c0 = cpuUs(threads);
  for (let p = 0; p < passes; p++) await Promise.all(tasks.map((t) => pool.run(t).catch(() => null)));
  return (cpuUs(threads) - c0) / (passes * tasks.length);
}

test("each thread grades the vendored conformance cases and hard set before it is ready; warmupMs 0 only the parser's two", async () => {
  const warm = new MathPool(1);
  const cold = new MathPool(1, { warmupMs: 0 });
  try {
    await Promise.all([warm.ready(), cold.ready()]);
    assert.ok(warm.stats.warmed > 100, `warmed ${warm.stats.warmed} items`);
    assert.equal(cold.stats.warmed, 2);
  } finally {
    await Promise.all([warm.close(), cold.close()]);
  }
});

test("a thread's first pass over the conformance cases costs well under a cold thread's (warmupMs 0, as before the warm-up)", { skip: !existsSync("/proc/self/task") && "needs /proc" }, async () => {
  const t0 = tids();
  const cold = new MathPool(1, { warmupMs: 0 });
  await cold.ready();
  const t1 = tids();
  const warm = new MathPool(1);
  try {
    await warm.ready();
    const coldThreads = [...t1].filter((t) => !t0.has(t));
    const warmThreads = [...tids()].filter((t) => !t1.has(t));
    // one after the other, so that neither has the other's core
    const coldFirst = await perItem(cold, coldThreads, 1);
    const warmFirst = await perItem(warm, warmThreads, 1);
    // measured here: cold 1082 µs/item, warmed 410-560 (0.38-0.52x), at a load average of 3-4 on 2 cores
    assert.ok(warmFirst < 0.75 * coldFirst, `first pass: warmed ${warmFirst.toFixed(0)} µs/item, cold ${coldFirst.toFixed(0)} µs/item (${(warmFirst / coldFirst).toFixed(2)}x)`);
  } finally {
    await Promise.all([cold.close(), warm.close()]);
  }
});

test("ASSAY_MATH_WARMUP_MS reaches the server's pool: 0 warms only the parser's two items", async () => {
  const { testApp } = await import("../../tests/helpers.js");
  const { mathPoolStats } = await import("./index.js");
  const t = await testApp({ ASSAY_WORKERS: "1", ASSAY_MATH_WARMUP_MS: "0" });
  try {
    await t.scorer.score({ id: 1, verifier: "math", response: "\\boxed{x^2+1}", reference: "1+x^2" });
    assert.equal(mathPoolStats()?.warmed, 2);
  } finally {
    await t.registry.close();
  }
});
