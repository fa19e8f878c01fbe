/**
 * ifeval verifier throughput, all measured in this run on this machine, over a realistic mix:
 * IFEval-like responses (about 0.5-2.5 KB of prose, some with bullets, highlights, sections, P.S.,
 * titles, JSON, quotes, ALL CAPS or lower case) with 1-3 instructions each, drawn from all 25
 * instruction types with IFEval's kwargs (about half followed, half not).
 * - items/s in-process through the registry (validation + defaults) and verify(), strict and
 *   loose, against the `exact` verifier on the same responses (the baseline: a verifier that only
 *   normalises the text) and a bare IFEval word count (`\w+` runs);
 * - items/s through POST /reward/batch on the compiled server (64 items per request), against the
 *   `exact` verifier through the same server. Target: >= 5,000 items/s through /reward/batch.
 * Figures are the best of 3 rounds of --seconds each (default 2); in-process rates also per
 * CPU-second of this process (steadier than wall time on a shared machine). --no-http skips the
 * server half.
 *
 *   npm run build && npx tsx bench/ifeval.ts [--seconds 2] [--no-http]
 */
import { Registry } from "../src/core/registry.js";
import type { AnyVerifier } from "../src/core/verifier.js";
import { ifeval } from "../verifiers/ifeval/index.js";
import { exact } from "../verifiers/text/exact.js";
import { countWords } from "../verifiers/ifeval/text.js";
import { mix, type Item } from "./ifeval-mix.js";
import { load, startAssay, table } from "./lib.js";
import { loadConfig } from "../src/core/config.js";
import pino from "pino";

const seconds = Number(process.argv[process.argv.indexOf("--seconds") + 1]) || 2;
const ROUNDS = 3;

const items = mix(512);
const quiet = pino({ level: "silent" });
const registry = new Registry().register(ifeval as AnyVerifier).register(exact as AnyVerifier);
const services = { config: loadConfig({}) } as never;
const ctx = { deadline: Number.MAX_SAFE_INTEGER, signal: new AbortController().signal, log: quiet, services };
await ifeval.init?.({ log: quiet, services });

/** Best items/s of the rounds, in wall time and per CPU-second of this process. */
async function throughput(batch: Item[]): Promise<[number, number]> {
  let best = 0;
  let bestCpu = 0;
  for (let r = 0; r < ROUNDS; r++) {
    let done = 0;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    while (performance.now() - t0 < seconds * 1000) {
      for (const it of batch) {
        const res = registry.resolve(it as never);
        if ("invalid" in res) throw new Error(res.invalid);
        await res.verifier.verify(res.item, ctx);
      }
      done += batch.length;
    }
    best = Math.max(best, done / ((performance.now() - t0) / 1000));
    const c = process.cpuUsage(c0);
    bestCpu = Math.max(bestCpu, done / ((c.user + c.system) / 1e6));
  }
  return [best, bestCpu];
}
function bare(batch: Item[]): number {
  let best = 0;
  for (let r = 0; r < ROUNDS; r++) {
    let done = 0;
    let sink = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < seconds * 1000) {
      for (const it of batch) sink += countWords(it.response);
      done += batch.length;
    }
    if (sink < 0) console.log(sink);
    best = Math.max(best, done / ((performance.now() - t0) / 1000));
  }
  return best;
}

const loose = items.map((it) => ({ ...it, options: { mode: "loose" } }));
const asExact = items.map((it) => ({ verifier: "exact", response: it.response, reference: "a reference answer" }));
const sizes = items.map((it) => it.response.length).sort((a, b) => a - b);
const nInstr = items.reduce((s, it) => s + (it.reference as { instruction_id_list: string[] }).instruction_id_list.length, 0);
let followed = 0;
for (const it of items) {
  const res = registry.resolve(it as never);
  if ("invalid" in res) throw new Error(res.invalid);
  followed += (await res.verifier.verify(res.item, ctx)).reward ?? 0;
}
console.log(`mix: ${items.length} items, ${nInstr} instructions, response median ${sizes[sizes.length >> 1]} chars (max ${sizes[sizes.length - 1]}), mean strict reward ${(followed / items.length).toFixed(2)}`);

const [rStrict, cStrict] = await throughput(items);
const [rLoose, cLoose] = await throughput(loose);
const [rExact, cExact] = await throughput(asExact);
const rBare = bare(items);
console.log("\nin-process items/s (registry resolve + verify), best of 3\n" + table([
  ["verifier", "items/s", "vs exact", "items/CPU-s", "vs exact"],
  ["ifeval strict", rStrict.toFixed(0), `${(rStrict / rExact).toFixed(2)}x`, cStrict.toFixed(0), `${(cStrict / cExact).toFixed(2)}x`],
  ["ifeval loose", rLoose.toFixed(0), `${(rLoose / rExact).toFixed(2)}x`, cLoose.toFixed(0), `${(cLoose / cExact).toFixed(2)}x`],
  ["exact (baseline)", rExact.toFixed(0), "1.00x", cExact.toFixed(0), "1.00x"],
  ["bare \\w+ word count (floor)", rBare.toFixed(0), `${(rBare / rExact).toFixed(2)}x`, "", ""],
]));
if (process.argv.includes("--no-http")) process.exit(0);

const assay = await startAssay({ ASSAY_WORKERS: "1", ASSAY_LOG_LEVEL: "warn" });
try {
  const url = `${assay.url}/reward/batch`;
  const body = (xs: Item[]) => JSON.stringify({ items: xs.slice(0, 64) });
  const bodies = { strict: body(items), loose: body(loose), exact: body(asExact) };
  await load(url, bodies.strict, 2, 2); // warm-up
  const rows: (string | number)[][] = [["load (64 items/request, 2 connections)", "requests/s", "items/s", "p50 ms", "p99 ms", "vs exact"]];
  const res: Record<string, Awaited<ReturnType<typeof load>>> = {};
  for (const [name, b] of Object.entries(bodies)) {
    let top: Awaited<ReturnType<typeof load>> | null = null;
    for (let r = 0; r < ROUNDS; r++) {
      const l = await load(url, b, 2, seconds);
      if (l.errors || l.non2xx) throw new Error(`${name}: ${l.errors} errors, ${l.non2xx} non-2xx`);
      if (!top || l.rps > top.rps) top = l;
    }
    res[name] = top!;
  }
  for (const [name, l] of Object.entries(res)) {
    rows.push([name === "exact" ? "exact (baseline)" : `ifeval ${name}`, l.rps.toFixed(0), (l.rps * 64).toFixed(0), l.p50, l.p99, `${(l.rps / res.exact.rps).toFixed(2)}x`]);
  }
  console.log("\nPOST /reward/batch, compiled server, best of 3\n" + table(rows));
  const got = res.strict.rps * 64;
  console.log(`\nifeval strict through /reward/batch: ${got.toFixed(0)} items/s (target >= 5000): ${got >= 5000 ? "met" : "MISSED"}`);
} finally {
  assay.child.kill();
}
