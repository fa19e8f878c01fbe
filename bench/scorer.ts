/**
 * The scorer alone, in-process (issue 38): CPU µs per 256-item `exact` batch of JSON.parse (the
 * body) + scorer.scoreBatch (shape check, registry, deadline, verify, result), 5 rounds of N
 * batches. CPU time, not wall time: the machine is shared.
 *
 *   npx tsc -p tsconfig.json && npx tsx bench/scorer.ts [N=400] [--before DIR]
 *
 * It loads the compiled tree (dist/); --before DIR: also another built tree (an earlier commit,
 * `npx tsc -p tsconfig.json` there), measured alternately with this one in the same rounds.
 */
import pino from "pino";
import { root } from "./lib.js";

const argOf = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const beforeDir = argOf("--before");
const N = Number(process.argv[2]?.startsWith("--") ? 400 : process.argv[2] || 400);

async function runtimeOf(dir: string) {
  const { loadConfig } = await import(`${dir}/dist/src/core/config.js`);
  const { createRuntime } = await import(`${dir}/dist/src/core/runtime.js`);
  return createRuntime(loadConfig({ ASSAY_SANDBOX: "none", ASSAY_WORKERS: "1", ASSAY_DATA_DIR: ":memory:" }), { log: pino({ level: "silent" }), only: ["exact"] });
}
const item = (i: number) => ({ id: i, verifier: "exact", response: `The answer is ${i % 7}`, reference: `the answer is ${i % 5}` });
const body = Buffer.from(JSON.stringify({ items: Array.from({ length: 256 }, (_, i) => item(i)) }));
const trees = [{ name: "this tree", rt: await runtimeOf(root) }, ...(beforeDir ? [{ name: `before (${beforeDir})`, rt: await runtimeOf(beforeDir) }] : [])];
for (const t of trees) for (let k = 0; k < 50; k++) await t.rt.scorer.scoreBatch(JSON.parse(body.toString("utf8")).items); // warm
for (let r = 0; r < 5; r++) {
  for (const t of trees) {
    const c0 = process.cpuUsage();
    for (let k = 0; k < N; k++) await t.rt.scorer.scoreBatch(JSON.parse(body.toString("utf8")).items);
    const c = process.cpuUsage(c0);
    const us = (c.user + c.system) / N;
    console.log(`round ${r + 1}, ${t.name}: ${us.toFixed(0)} µs CPU a 256-item batch (${(us / 256).toFixed(2)} an item)`);
  }
}
for (const t of trees) await t.rt.close();
