/**
 * CPU time per math verification, in-process on the main thread against the worker pool on 2
 * threads (the pool's figure counts every thread of the process: dispatch, messaging and the
 * workers' own grading), best of 3 alternating rounds. CPU time, unlike wall time, holds up on
 * a shared machine; the difference is what the pool's dispatch costs per item. Same item sets as
 * bench/math.ts.
 *
 *   npx tsx bench/math-cpu.ts
 *
 * To compare two trees in one run on one machine, bundle this file against each (esbuild, as in
 * bench/README.md) and run the bundles one after the other.
 */
import { grade } from "../verifiers/math/grade.js";
import { MathPool } from "../verifiers/math/pool.js";
import { loadCases, optionsFor } from "../verifiers/math/conformance.js";
import { extractAnswer } from "../verifiers/math/extract.js";
import type { Task } from "../verifiers/math/worker.js";
import { mulberry32 } from "../verifiers/math/compare.js";
import { table } from "./lib.js";
/** The worker module: the tree's own, or WORKER=path (a bundled copy beside a bundled bench). */
const WORKER = process.env.WORKER || undefined;
function conformanceTasks(): Task[] {
  return loadCases(process.env.CASES || undefined).map((c) => {
    const o = optionsFor(c);
    const g = extractAnswer(c.gold, { priority: o.extract });
    return { response: c.pred, reference: g ? (g.latex ? `$${g.answer}$` : g.answer) : c.gold, options: o };
  });
}

const filler = (rnd: () => number, n: number) =>
  Array.from({ length: n }, (_, i) => `Step ${i + 1}: we have $a_${i} = ${Math.floor(rnd() * 100)}$ and so $\\frac{${i + 1}}{${i + 2}}$ follows.`).join(" ");

/** Hard answers: symbolic identities, sets of tuples, unions, matrices, equations, long texts. */
function hardTasks(n: number): Task[] {
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
function ordinaryTasks(n: number): Task[] {
  const rnd = mulberry32(3);
  return Array.from({ length: n }, (_, i) => {
    const v = i % 3 === 0 ? `\\frac{${1 + (i % 7)}}{${2 + (i % 5)}}` : String(Math.floor(rnd() * 1000));
    return { response: `${filler(rnd, 8)} So the answer is $\\boxed{${v}}$.`, reference: i % 4 === 0 ? "12" : v.replace("\\frac", "\\dfrac"), options: {} };
  });
}

function inline(tasks: Task[], secs: number): number {
  let done = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < secs * 1000) {
    for (const t of tasks) grade(t.response, t.reference, t.options);
    done += tasks.length;
  }
  return done / ((performance.now() - t0) / 1000);
}

const sets = { conformance: conformanceTasks(), "hard mix": hardTasks(240), ordinary: ordinaryTasks(240) };
// sanity: the hard mix is graded as designed (all equal but the deliberately wrong kind)
const wrong = sets["hard mix"].filter((t) => grade(t.response, t.reference, t.options).reward !== 1).length;
console.log(`hard mix: ${sets["hard mix"].length} items, ${wrong} graded 0 (expected ${sets["hard mix"].length / 12})`);


/** CPU time (all threads of the process) per item: robust on a shared machine where wall time is not. */
function cpuUs(c0: NodeJS.CpuUsage): number { const c = process.cpuUsage(c0); return c.user + c.system; }
async function pooledN(pool: MathPool, tasks: Task[], n: number): Promise<void> {
  let i = 0;
  const lane = async () => { while (i < n) await pool.run(tasks[i++ % tasks.length]); };
  await Promise.all(Array.from({ length: 32 }, lane));
}
const rowsCpu: (string | number)[][] = [["set", "main thread, µs CPU/item", "pool 2 threads, µs CPU/item (all threads)", "pool overhead µs/item"]];
for (const [name, tasks] of Object.entries(sets)) {
  const n = tasks.length * 4;
  inline(tasks, 0.5);
  let best1 = Infinity, best2 = Infinity;
  const p2 = new MathPool(2, { filename: WORKER });
  await p2.ready(600_000);
  await pooledN(p2, tasks, tasks.length);
  for (let r = 0; r < 3; r++) {
    let c0 = process.cpuUsage();
    for (let k = 0; k < n; k++) { const t = tasks[k % tasks.length]; grade(t.response, t.reference, t.options); }
    best1 = Math.min(best1, cpuUs(c0) / n);
    c0 = process.cpuUsage();
    await pooledN(p2, tasks, n);
    best2 = Math.min(best2, cpuUs(c0) / n);
  }
  await p2.close();
  rowsCpu.push([name, best1.toFixed(1), best2.toFixed(1), (best2 - best1).toFixed(1)]);
}
console.log("\nCPU per item (best of 3 alternating rounds)\n" + table(rowsCpu));
process.exit(0);
