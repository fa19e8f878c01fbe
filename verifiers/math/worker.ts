/**
 * The worker-thread side of the math verifier's pool: one grade() per task. Loaded by piscina
 * from its compiled .js (dist) or its .ts source (under tsx, which worker threads inherit).
 */
import { grade, type Graded, type MathOptions } from "./grade.js";

export interface Task {
  response: string;
  reference: string | string[];
  options: MathOptions;
}

/** Marker response that spins forever, honoured only with ASSAY_MATH_TEST_HOOKS=1 (deadline tests). */
export const SPIN_MARKER = "__assay_test_spin_forever__";
const hooks = process.env.ASSAY_MATH_TEST_HOOKS === "1";

export default function run(task: Task): Graded {
  if (hooks && task.response === SPIN_MARKER) for (;;) { /* a pathological input that no cap catches */ }
  return grade(task.response, task.reference, task.options);
}

// Warm the parser (compute-engine's first parse builds its dictionaries) before the first task.
grade("\\boxed{\\frac{1}{2}x + \\sqrt{2}}", "x/2 + \\sqrt 2");
