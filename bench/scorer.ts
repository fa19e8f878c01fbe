/**
 * The scorer alone, in-process (issue 38): CPU µs per item of scorer.scoreBatch over 256 `exact`
 * items (shape check, registry, deadline, verify, result), 5 rounds of N batches. CPU time, not
 * wall time: the machine is shared.
 *
 *   npx tsx bench/scorer.ts [N=400]
 */
import pino from "pino";
import { loadConfig } from "../src/core/config.js";
import { createRuntime } from "../src/core/runtime.js";

const rt = await createRuntime(loadConfig({ ASSAY_SANDBOX: "none", ASSAY_WORKERS: "1" }), { log: pino({ level: "silent" }), only: ["exact"] });
const item = (i: number) => ({ id: i, verifier: "exact", response: `The answer is ${i % 7}`, reference: `the answer is ${i % 5}` });
const N = Number(process.argv[2] || 400);
for (let r = 0; r < 5; r++) {
  const c0 = process.cpuUsage();
  for (let k = 0; k < N; k++) await rt.scorer.scoreBatch(Array.from({ length: 256 }, (_, i) => item(i)));
  const c = process.cpuUsage(c0);
  console.log(`scoreBatch: ${((c.user + c.system) / (N * 256)).toFixed(2)} µs CPU/item`);
}
await rt.close();
