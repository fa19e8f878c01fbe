/**
 * The worker-thread side of the math verifier's pool: one grade() per task. Loaded by piscina
 * from its compiled .js (dist) or its .ts source (under tsx, which worker threads inherit).
 */
import { workerData } from "piscina";
import { grade, type Graded, type MathOptions } from "./grade.js";
import { InvalidItemError } from "../../src/core/types.js";

export interface Task {
  response: string;
  reference: string | string[];
  /** Defaults not yet filled in are filled by grade(). */
  options: Partial<MathOptions>;
  /** The item's prompt: what it asks for (a range, a percentage, labels' order, all solutions). */
  prompt?: string;
  /** Set to 1 (and notified) as the worker begins the task: the caller starts its clock then. */
  started?: Int32Array;
}

/** Marker response that spins forever, honoured only with ASSAY_MATH_TEST_HOOKS=1 (deadline tests). */
export const SPIN_MARKER = "\\boxed{x + 1} <assay test hook: spin forever>";
/** Marker response that keeps its worker busy for 100 ms of wall time, then is graded (its answer is x + 1); ASSAY_MATH_TEST_HOOKS=1 only (queueing tests). */
export const BUSY_MARKER = "\\boxed{x + 1} <assay test hook: busy 100 ms>";
const data = workerData as { warmed?: Int32Array; testHooks?: boolean } | undefined;
const hooks = data?.testHooks === true;

/** What a task returns: a grade, or the reason the item's data is malformed (status invalid). */
export type TaskResult = Graded | { invalid: string; field: string };

export default function run(task: Task): TaskResult {
  if (task.started) {
    Atomics.store(task.started, 0, 1);
    Atomics.notify(task.started, 0);
  }
  if (hooks && task.response === SPIN_MARKER) for (;;) { /* a pathological input that no cap catches */ }
  if (hooks && task.response === BUSY_MARKER) for (const end = Date.now() + 100; Date.now() < end;) { /* a slow task */ }
  try {
    return grade(task.response, task.reference, task.options, task.prompt);
  } catch (e) {
    // an error's class does not survive the thread boundary: say it in the result instead
    if (e instanceof InvalidItemError) return { invalid: e.message, field: e.field };
    throw e;
  }
}

// Warm the parser (compute-engine's first parse builds its dictionaries) before the first task.
grade("\\boxed{\\frac{1}{2}x + \\sqrt{2}}", "x/2 + \\sqrt 2");
grade("\\boxed{\\sec^2 y + \\begin{pmatrix}1\\end{pmatrix}}", "\\tan^2 y + 1");
if (data?.warmed) Atomics.add(data.warmed, 0, 1);
