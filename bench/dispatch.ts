/**
 * The pipeline's share of a light verifier's cost (issue 38): for each of exact, ifeval, the
 * overlap metrics (bleu, chrf, rouge), json and tool_call, the CPU one item costs
 *   - in-process: the registry's checks and defaults, then verify(), in a loop for --seconds
 *     (the function itself; no HTTP, no scorer; process.cpuUsage, every thread), and
 *   - through the compiled server: POST /reward/batch of 256 items, two in flight, after a
 *     warm-up, the server process's CPU time (/proc, every thread) divided by the items it
 *     answered over at least --seconds and 12 requests,
 * in the same run. The difference is what the pipeline (parsing, validation, dispatch,
 * deadlines, metrics, logging, serialisation) adds to each item; its share is that over the
 * HTTP figure. CPU time, not wall time: the machine is shared.
 *
 *   npm run build && npx tsx bench/dispatch.ts [--seconds 3]
 */
import pino from "pino";
import { loadavg } from "node:os";
import { loadConfig } from "../src/core/config.js";
import { createRuntime } from "../src/core/runtime.js";
import type { VerifyContext } from "../src/core/verifier.js";
import { items as rewardItems } from "./reward-items.js";
import { cpuUs, startAssay, table } from "./lib.js";

const seconds = Number(process.argv[process.argv.indexOf("--seconds") + 1]) || 3;
const BATCH = 256;

const ifevalItem = (i: number) => ({
  verifier: "ifeval",
  response: `Here is a short answer about item ${i}. It has no commas at all and ends plainly. The second paragraph is here too.`,
  reference: { instruction_id_list: ["punctuation:no_comma", "length_constraints:number_words"], kwargs: [{}, { relation: "at least", num_words: 10 }] },
});
const cases: Record<string, (i: number) => Record<string, unknown>> = {
  exact: rewardItems.exact!,
  ifeval: ifevalItem,
  bleu: rewardItems.bleu!,
  chrf: rewardItems.chrf!,
  rouge: rewardItems.rouge!,
  json: rewardItems.json!,
  tool_call: rewardItems.tool_call!,
};

// In-process: the function itself, after the registry's checks, on one thread.
const rt = await createRuntime(loadConfig({ ASSAY_SANDBOX: "none", ASSAY_LOG_LEVEL: "silent" }), { log: pino({ level: "silent" }), only: Object.keys(cases) });
const ctx: VerifyContext = { deadline: Date.now() + 3_600_000, signal: new AbortController().signal, log: rt.log, services: rt.services };
async function inProcessUs(make: (i: number) => Record<string, unknown>): Promise<number> {
  const batch = Array.from({ length: BATCH }, (_, i) => make(i));
  const once = async () => {
    for (const it of batch) {
      const r = rt.registry.resolve(it as never);
      if ("invalid" in r) throw new Error(`${it.verifier}: ${r.invalid}`);
      await r.verifier.verify(r.item, ctx);
    }
  };
  // warm-up, as through HTTP: 1 s
  for (const w0 = performance.now(); performance.now() - w0 < 1000; ) await once();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < seconds * 1000) {
    await once();
    n += BATCH;
  }
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / n;
}

/**
 * The server's CPU µs per request for `body`: two requests in flight (one parsing while the other
 * scores), a warm-up of 1 s (the JIT: the first seconds of a case cost 2-4x its later ones), then
 * at least `seconds` and at least 12 requests, the CPU of the whole window over the requests (not
 * the best of short windows: /proc counts CPU in 10 ms ticks, and the least of a few windows of a
 * few requests each is biased low). A closed loop, not autocannon's fixed duration: a slow
 * verifier's 256-item batch can take longer than the whole window on a shared core, and a window
 * with no answer measures nothing.
 */
async function throughHttp(body: string, pid: number | undefined): Promise<number> {
  const post = async () => {
    const r = await fetch(`${assay.url}/reward/batch`, { method: "POST", headers: { "content-type": "application/json" }, body });
    if (r.status !== 200) throw new Error(`/reward/batch answered ${r.status}: ${await r.text()}`);
    await r.arrayBuffer();
  };
  const window = async (ms: number, least: number) => {
    const cpu0 = cpuUs(pid);
    const t0 = performance.now();
    let done = 0;
    const loop = async () => {
      while (done < least || performance.now() - t0 < ms) {
        await post();
        done++;
      }
    };
    await Promise.all([loop(), loop()]);
    return (cpuUs(pid) - cpu0) / done;
  };
  await window(1000, 2);
  return window(seconds * 1000, 12);
}

const load0 = loadavg()[0]!;
const assay = await startAssay({ ASSAY_SANDBOX: "none" }, { pin: true });
const rows: (string | number)[][] = [["verifier", "in-process µs/item", "through /reward/batch µs/item", "pipeline µs/item", "pipeline share", "items/s per core (HTTP)"]];
try {
  for (const [name, make] of Object.entries(cases)) {
    const body = JSON.stringify({ items: Array.from({ length: BATCH }, (_, i) => ({ id: i, ...make(i) })) });
    const check = (await (await fetch(`${assay.url}/reward/batch`, { method: "POST", headers: { "content-type": "application/json" }, body })).json()) as { results: { status: string; reason: string }[] };
    const bad = check.results.find((r) => r.status !== "ok");
    if (bad) throw new Error(`${name}: an item is ${bad.status}: ${bad.reason}`);
    const inproc = await inProcessUs(make);
    const http = (await throughHttp(body, assay.child.pid)) / BATCH;
    rows.push([name, inproc.toFixed(1), http.toFixed(1), (http - inproc).toFixed(1), `${(100 * Math.max(0, http - inproc) / http).toFixed(0)}%`, (1e6 / http).toFixed(0)]);
    console.log(`${name}: in-process ${inproc.toFixed(1)} µs/item, HTTP ${http.toFixed(1)} µs/item`);
  }
  console.log(`\nCPU per item, ${BATCH}-item batches, ${seconds} s per case; load average ${load0.toFixed(1)} -> ${loadavg()[0]!.toFixed(1)}:`);
  console.log(table(rows));
} finally {
  assay.child.kill();
  await rt.close();
}
