/**
 * The math benchmarks' item sets and their in-process baseline, shared by bench/math.ts
 * (throughput and latency) and bench/math-cpu.ts (CPU time per item): both measure the same items.
 */
import { grade } from "../verifiers/math/grade.js";
import { loadCases, optionsFor } from "../verifiers/math/conformance.js";
import { extractAnswer } from "../verifiers/math/extract.js";
import type { Task } from "../verifiers/math/worker.js";
import { mulberry32 } from "../verifiers/math/compare.js";

/** Math-Verify's conformance cases as tasks (`path`: another copy of the cases file). */
export function conformanceTasks(path?: string): Task[] {
  return loadCases(path).map((c) => {
    const o = optionsFor(c);
    const g = extractAnswer(c.gold, { priority: o.extract });
    return { response: c.pred, reference: g ? (g.latex ? `$${g.answer}$` : g.answer) : c.gold, options: o };
  });
}

const filler = (rnd: () => number, n: number) =>
  Array.from({ length: n }, (_, i) => `Step ${i + 1}: we have $a_${i} = ${Math.floor(rnd() * 100)}$ and so $\\frac{${i + 1}}{${i + 2}}$ follows.`).join(" ");

/** Hard answers: symbolic identities, sets of tuples, unions, matrices, equations, long texts. */
export function hardTasks(n: number): Task[] {
  const rnd = mulberry32(7);
  const int = (a: number, b: number) => a + Math.floor(rnd() * (b - a + 1));
  const out: Task[] = [];
  const kinds = [
    () => { const a = int(1, 9), b = int(1, 9); return [`\\boxed{x^2 + ${a + b}x + ${a * b}}`, `(x+${a})(x+${b})`]; },
    () => { const a = int(2, 5); return [`\\boxed{\\sec^2(${a}y)}`, `\\tan^2(${a}y) + 1`]; },
    () => { const a = int(1, 6); return [`\\boxed{(a+${a})^3}`, `a^3 + ${3 * a}a^2 + ${3 * a * a}a + ${a ** 3}`]; },
    () => { const p = int(1, 30), q = int(31, 97); return [`\\boxed{${(p / q).toFixed(6)}}`, `\\frac{${p}}{${q}}`, 6]; },
    () => { const t = [[int(1, 9), int(1, 9)], [int(1, 9), int(1, 9)], [int(1, 9), int(1, 9)]]; return [`\\boxed{${[...t].reverse().map((x) => `(${x})`).join(", ")}}`, t.map((x) => `(${x})`).join(", ")]; },
    () => { const a = int(-9, 0), b = int(1, 5), c = int(6, 12); return [`\\boxed{(-\\infty, ${a}) \\cup [${b}, ${c}]}`, `(-\\infty, ${a}) \\cup [${b}, ${c}]`]; },
    () => { const m = [[int(1, 9), int(1, 9), int(1, 9)], [int(1, 9), int(1, 9), int(1, 9)], [int(1, 9), int(1, 9), int(1, 9)]]; const tex = (r: number[][]) => `\\begin{pmatrix}${r.map((x) => x.map((v) => `\\frac{${v}}{2}`).join(" & ")).join(" \\\\ ")}\\end{pmatrix}`; return [`$${tex(m)}$`, tex(m)]; },
    () => { const a = int(1, 9), b = int(1, 9), c = int(1, 9), k = int(2, 5); return [`\\boxed{${k * a}x + ${k * b}y = ${k * c}}`, `${a}x + ${b}y - ${c} = 0`]; },
    () => { const b = int(1, 9), c = int(1, 20); return [`\\boxed{x = ${b} \\pm \\sqrt{${c}}}`, `${b} \\pm \\sqrt{${c}}`]; },
    () => { const a = int(2, 9); return [`<think>${filler(rnd, 40)}</think> ${filler(rnd, 10)} Therefore the answer is $\\boxed{\\frac{${a}\\sqrt{3}}{2}}$.`, `${a / 2}\\sqrt{3}`]; },
    () => { const a = int(1, 9); return [`\\boxed{x^2 - ${a}}`, `x^2 + ${a}`]; }, // a wrong one
    () => { const a = int(2, 9); return [`\\boxed{\\ln(${a}x) - \\ln x}`, `\\ln ${a}`]; },
  ];
  for (let i = 0; i < n; i++) {
    const [response, reference, precision] = kinds[i % kinds.length]() as [string, string, number?];
    out.push({ response, reference, options: precision === undefined ? {} : { precision } });
  }
  return out;
}

/** Ordinary answers: a paragraph of reasoning, then a boxed integer or fraction. */
export function ordinaryTasks(n: number): Task[] {
  const rnd = mulberry32(3);
  return Array.from({ length: n }, (_, i) => {
    const v = i % 3 === 0 ? `\\frac{${1 + (i % 7)}}{${2 + (i % 5)}}` : String(Math.floor(rnd() * 1000));
    return { response: `${filler(rnd, 8)} So the answer is $\\boxed{${v}}$.`, reference: i % 4 === 0 ? "12" : v.replace("\\frac", "\\dfrac"), options: {} };
  });
}

/** The three sets by name, as the benches' command lines take them. */
export type SetName = "conformance" | "hard" | "ordinary";
export const tasksOf = (name: SetName): Task[] => (name === "hard" ? hardTasks(240) : name === "ordinary" ? ordinaryTasks(240) : conformanceTasks());

export function inline(tasks: Task[], secs: number): number {
  let done = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < secs * 1000) {
    for (const t of tasks) grade(t.response, t.reference, t.options);
    done += tasks.length;
  }
  return done / ((performance.now() - t0) / 1000);
}

/**
 * `o.callers` concurrent callers for `o.secs` seconds, each submitting the next of `tasks` one at a
 * time (bench/math.ts's clients) or `o.batch` at once and waiting for all (/reward/batch's);
 * `each` sees every result. Returns the items done.
 */
export async function drive<R>(submit: (t: Task) => Promise<R>, tasks: Task[], o: { callers: number; batch: number; secs: number }, each?: (r: R) => void): Promise<number> {
  let done = 0, i = 0;
  const end = performance.now() + o.secs * 1000;
  const one = async () => {
    const r = await submit(tasks[i++ % tasks.length]!);
    each?.(r);
  };
  const caller = async () => {
    while (performance.now() < end) {
      if (o.batch <= 1) await one();
      else await Promise.all(Array.from({ length: o.batch }, one));
      done += Math.max(1, o.batch);
    }
  };
  await Promise.all(Array.from({ length: o.callers }, caller));
  return done;
}
