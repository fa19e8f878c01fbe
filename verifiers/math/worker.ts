/**
 * The worker-thread side of the math verifier's pool: one message is a chunk of items, graded
 * one after another, their results sent back in one message. Started by the pool (pool.ts) from
 * its compiled .js (dist) or its .ts source (under tsx, through worker-boot.mjs).
 *
 * A chunk's items go in as objects (structured clone: ~50 µs of the event loop's time for 64
 * ordinary items, against ~115 µs for JSON.stringify) and its results come back as one JSON
 * string (JSON.parse ~75 µs, against ~140 µs to deserialize the same objects); the worker says
 * which item it is on through a small shared buffer (`Chunk.progress`): the pool's watchdog
 * reads it to hold each item to its own budget without a message per item.
 */
import { isMainThread, parentPort, workerData } from "node:worker_threads";
import { existsSync } from "node:fs";
import { grade, type Graded, type MathOptions } from "./grade.js";
import { InvalidItemError } from "../../src/core/types.js";
import { loadCases, loadHardSet, runCase } from "./conformance.js";

export interface Task {
  response: string;
  reference: string | string[];
  /** Defaults not yet filled in are filled by grade(). */
  options: Partial<MathOptions>;
  /** The item's prompt: what it asks for (a range, a percentage, labels' order, all solutions). */
  prompt?: string;
}

/** Marker response that spins forever, honoured only with ASSAY_MATH_TEST_HOOKS=1 (deadline tests). */
export const SPIN_MARKER = "\\boxed{x + 1} <assay test hook: spin forever>";
/** Marker response that keeps its worker busy for 100 ms of wall time, then is graded (its answer is x + 1); ASSAY_MATH_TEST_HOOKS=1 only (queueing tests). */
export const BUSY_MARKER = "\\boxed{x + 1} <assay test hook: busy 100 ms>";
/** Marker response whose worker thread exits mid-chunk, as one that runs out of memory does; ASSAY_MATH_TEST_HOOKS=1 only (re-dispatch tests). */
export const CRASH_MARKER = "\\boxed{x + 1} <assay test hook: thread exits>";
/** What the pool hands each worker it starts. */
export interface WorkerData {
  /** Marks a thread the pool started (another worker thread that imports this module is left alone). */
  assayMathPool: true;
  /** This module's path (worker-boot.mjs imports it). */
  file: string;
  /** ASSAY_MATH_TEST_HOOKS: honour the markers below. */
  testHooks: boolean;
  /** Date.now() at the pool's start: item start times are written relative to it. */
  base: number;
  /** At most this long (wall ms) grading the warm-up sets (warmUp) before the thread says it is ready. */
  warmupMs: number;
}
const data = (isMainThread ? undefined : (workerData as WorkerData | undefined)?.assayMathPool ? (workerData as WorkerData) : undefined);
const hooks = data?.testHooks === true;

/** What a task returns: a grade, or the reason the item's data is malformed (status invalid). */
export type TaskResult = Graded | { invalid: string; field: string };
/** One item's outcome in a chunk: its result, the message of an error grade() threw, or null (dropped, not graded). */
export type ItemResult = TaskResult | { error: string } | null;

/**
 * Where a worker stands in its chunk, in an Int32Array over a SharedArrayBuffer: [0] the index
 * of the item it is grading plus one (0: not begun; items + 1: done), [1] when that item began,
 * in ms since the pool's `base` (Date.now() at the pool's start); then one slot per item, set to
 * 1 by the pool when the item was dropped (killed while it waited): the worker skips it.
 */
export const PROGRESS_SLOTS = 2;

/** A message to a worker: a chunk of items. */
export interface Chunk {
  items: Task[];
  progress: Int32Array;
}
/** A chunk's answer: `out` is the JSON of an ItemResult[]; `ms[i]` is item i's own wall time. */
export interface ChunkResult {
  out: string;
  ms: number[];
}

/** One item, as the pool grades it (the test hooks included). */
export function gradeTask(task: Task): TaskResult {
  if (hooks && task.response === SPIN_MARKER) for (;;) { /* a pathological input that no cap catches */ }
  if (hooks && task.response === CRASH_MARKER) process.exit(1);
  if (hooks && task.response === BUSY_MARKER) for (const end = Date.now() + 100; Date.now() < end;) { /* a slow task */ }
  try {
    return grade(task.response, task.reference, task.options, task.prompt);
  } catch (e) {
    // an error's class does not survive the thread boundary: say it in the result instead
    if (e instanceof InvalidItemError) return { invalid: e.message, field: e.field };
    throw e;
  }
}

export default function run(chunk: Chunk): ChunkResult {
  const tasks = chunk.items;
  const p = chunk.progress;
  const base = data?.base ?? 0;
  const out: ItemResult[] = new Array(tasks.length);
  const ms: number[] = new Array(tasks.length);
  for (let i = 0; i < tasks.length; i++) {
    // the start first, then the index: a reader that sees the index sees its start too
    Atomics.store(p, 1, Date.now() - base);
    Atomics.store(p, 0, i + 1);
    // read after announcing the item: the pool sets the flag, then reads the index (so one of
    // the two sees the other: an item dropped as it begins is skipped, or its thread is ended)
    if (Atomics.load(p, PROGRESS_SLOTS + i) === 1) {
      out[i] = null;
      ms[i] = 0;
      continue;
    }
    const t0 = performance.now();
    try {
      out[i] = gradeTask(tasks[i]);
    } catch (e) {
      out[i] = { error: e instanceof Error ? e.message : String(e) };
    }
    ms[i] = performance.now() - t0;
  }
  Atomics.store(p, 0, tasks.length + 1);
  return { out: JSON.stringify(out), ms };
}

/** Passes over the warm-up sets at most (each pass ~800 items, ~0.5 s on a warm thread). */
export const WARMUP_PASSES = 3;
/** The vendored sets next to the sources: ./testdata from verifiers/math, or from dist/verifiers/math the source tree's (the package ships `verifiers`). */
function testdata(name: string): URL | null {
  for (const rel of [`./testdata/${name}`, `../../../verifiers/math/testdata/${name}`]) {
    const u = new URL(rel, import.meta.url);
    if (existsSync(u)) return u;
  }
  return null;
}

/**
 * Grades Math-Verify's conformance cases and the hard set (testdata/) for up to `budgetMs` of
 * wall time, at most WARMUP_PASSES times, before the thread says it is ready. V8 compiles per
 * isolate: a fresh worker graded the conformance cases at ~2.2x the CPU per item of a warm one
 * for its first ~3,000 items (bench/README.md, issue 38 fifth pass), and a thread the pool
 * starts again after a runaway item was as cold. Returns the items graded. Their results are
 * thrown away: grading is a pure function of the item, so nothing of them stays behind.
 */
export function warmUp(budgetMs: number): number {
  // the parser first (compute-engine's first parse builds its dictionaries), whatever the budget
  grade("\\boxed{\\frac{1}{2}x + \\sqrt{2}}", "x/2 + \\sqrt 2");
  grade("\\boxed{\\sec^2 y + \\begin{pmatrix}1\\end{pmatrix}}", "\\tan^2 y + 1");
  let n = 2;
  const end = performance.now() + budgetMs;
  if (budgetMs <= 0) return n;
  const cases = testdata("math-verify-cases.jsonl");
  const hard = testdata("hard-set.jsonl");
  const conformance = cases ? loadCases(cases) : [];
  const pairs = hard ? loadHardSet(hard) : [];
  for (let pass = 0; pass < WARMUP_PASSES; pass++) {
    for (const c of conformance) {
      if (performance.now() > end) return n;
      try { runCase(c); } catch { /* a case that throws warms the same code */ }
      n++;
    }
    for (const t of pairs) {
      if (performance.now() > end) return n;
      try { grade(t.response, t.reference, t.options, t.prompt); } catch { /* as above */ }
      n++;
    }
  }
  return n;
}

if (data && parentPort) {
  const port = parentPort;
  const warmed = warmUp(data.warmupMs);
  // Chunks queue in the port while one is graded: the next begins as soon as this one is posted.
  port.on("message", (chunk: Chunk) => port.postMessage(run(chunk)));
  port.postMessage({ ready: true, warmed });
}
