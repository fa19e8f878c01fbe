/**
 * Does the compiled server's CPU per math item fall as its workers keep grading the set? The
 * server (ASSAY_WORKERS=2) takes POST /reward/batch of 64 items of the hard mix (or ordinary
 * answers) from 2 connections for `--windows` windows of `--seconds` each, back to back, and each
 * window prints items/s and the server's CPU µs an item (every thread of its process). bench/math.ts
 * gives its pools `--warm` seconds on a set before measuring them, and its server 2 s of the hard
 * mix: if the server's figure is still falling after that, its HTTP row measures V8 compiling
 * in the workers, not the dispatch (issue 38, tenth pass).
 *
 *   npm run build && npx tsx bench/math-http-warm.ts [hard|ordinary] [--windows 12] [--seconds 5]
 */
import { load, loadavg, startAssay, table, waitReady } from "./lib.js";
import { hardTasks, ordinaryTasks } from "./math-sets.js";

const arg = (name: string, d: number) => { const i = process.argv.indexOf(name); return i > 0 ? Number(process.argv[i + 1]) : d; };
const which = process.argv[2] === "ordinary" ? "ordinary" : "hard";
const windows = arg("--windows", 12), seconds = arg("--seconds", 5);
const set = which === "hard" ? hardTasks(240) : ordinaryTasks(240);
const body = JSON.stringify({ items: set.slice(0, 64).map((t) => ({ verifier: "math", ...t })) });

const assay = await startAssay({ ASSAY_WORKERS: "2", ASSAY_LOG_LEVEL: "warn" });
try {
  await waitReady(assay.url);
  const rows: (string | number)[][] = [["window", "from s", "items/s", "server CPU µs/item", "p99 ms", "load"]];
  for (let w = 0; w < windows; w++) {
    const r = await load(`${assay.url}/reward/batch`, body, 2, seconds, assay.child.pid);
    if (r.errors || r.non2xx || r.requests === 0) throw new Error(`window ${w + 1}: ${r.errors} errors, ${r.non2xx} non-2xx, ${r.requests} answered`);
    rows.push([w + 1, w * seconds, (r.rps * 64).toFixed(0), (r.cpuUsPerRequest / 64).toFixed(1), r.p99, loadavg()]);
  }
  console.log(`${which}: 64-item batches, 2 connections, ${windows} windows of ${seconds} s from /readyz\n` + table(rows));
} finally {
  assay.child.kill();
}
