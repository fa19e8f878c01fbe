/**
 * Custom verifier throughput against the same function run in-process (the limit), both through
 * the same scorer (registry checks, deadline) in this run on this machine. The function
 * normalises a ~1 KB response and checks it mentions the reference (what a small user-written
 * check does). Items are scored in batches of 64 (ASSAY_BATCH_CONCURRENCY). Target: custom >= 30%
 * of in-process. Figures are the best of 3 rounds of --seconds each (default 2). Also reported:
 * a verifier's first item (isolate start + lockdown) and the fresh-context-per-item design it
 * replaces (a new isolated-vm context per item), for the record.
 *
 *   npx tsx bench/compose.ts [--seconds 2]
 */
import pino from "pino";
import { Type } from "@sinclair/typebox";
import { loadConfig } from "../src/core/config.js";
import { createRuntime } from "../src/core/runtime.js";
import { defineVerifier } from "../src/core/verifier.js";
import { compileCustom } from "../src/store/index.js";

const seconds = Number(process.argv[process.argv.indexOf("--seconds") + 1]) || 2;
const ROUNDS = 3;
const BATCH = 64;

const SOURCE = `
export function score({ response, reference }) {
  const norm = (s) => String(s).normalize("NFKC").toLowerCase().replace(/\\s+/g, " ").trim();
  const hit = norm(response).includes(norm(reference));
  return { reward: hit ? 1 : 0, reason: hit ? "mentions it" : "does not", details: { hit } };
}`;
// The same function, in-process.
const norm = (s: string) => String(s).normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim();
const inproc = defineVerifier({
  name: "bench-inproc",
  description: "bench only: SOURCE's score, in-process",
  reference: Type.Unknown(),
  options: Type.Object({}, { additionalProperties: true }),
  async verify(item) {
    const hit = norm(item.response).includes(norm(String(item.reference)));
    return { reward: hit ? 1 : 0, reason: hit ? "mentions it" : "does not", details: { hit } };
  },
});

const config = loadConfig({ ASSAY_LOG_LEVEL: "silent", ASSAY_DATA_DIR: ":memory:", ASSAY_SANDBOX: "none" });
const rt = await createRuntime(config, { log: pino({ level: "silent" }), extraVerifiers: [inproc] });
const store = await rt.services.store();
await store.customVerifiers.save("bench", await compileCustom({ language: "javascript", source: SOURCE }));

const text = "The capital of France is a city on the Seine. ".repeat(22);
const items = (verifier: string) => Array.from({ length: BATCH }, (_, i) => ({ verifier, response: text + (i % 2 ? "Paris" : "Lyon"), reference: "paris" }));

async function rate(verifier: string): Promise<number> {
  const batch = items(verifier);
  let best = 0;
  for (let r = 0; r < ROUNDS; r++) {
    let n = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < seconds * 1000) {
      const out = await rt.scorer.scoreBatch(batch);
      if (out.some((o) => o.status !== "ok")) throw new Error(`${verifier}: ${out.find((o) => o.status !== "ok")!.reason}`);
      n += out.length;
    }
    best = Math.max(best, n / ((performance.now() - t0) / 1000));
  }
  return best;
}

const t0 = performance.now();
const first = await rt.scorer.score(items("custom:bench")[0]);
const firstMs = performance.now() - t0;
if (first.status !== "ok") throw new Error(first.reason);

const base = await rate("bench-inproc");
const custom = await rate("custom:bench");

// For the record: a fresh isolated-vm context per item, the simple safe design.
const ivm = ((await import("isolated-vm")) as any).default;
const iso = new ivm.Isolate({ memoryLimit: 64 });
let fresh = 0;
{
  const t = performance.now();
  while (performance.now() - t < seconds * 1000) {
    const ctx = await iso.createContext();
    const fn = await ctx.eval(`(function(){ ${SOURCE.replace("export function", "function")}; return (i) => JSON.stringify(score(JSON.parse(i))); })()`, { reference: true });
    await fn.apply(undefined, [JSON.stringify({ response: text, reference: "paris" })], { arguments: { copy: true }, result: { copy: true }, timeout: 1000 });
    ctx.release();
    fresh++;
  }
  fresh = fresh / seconds;
}
iso.dispose();

const f = (x: number) => Math.round(x).toLocaleString("en-US");
console.log(`custom verifier, first item (isolate start + lockdown + compile): ${firstMs.toFixed(1)} ms`);
console.log(`| verifier | items/s | vs in-process |`);
console.log(`| --- | ---: | ---: |`);
console.log(`| in-process function (limit) | ${f(base)} | 100% |`);
console.log(`| custom:<name> (warm isolates, batched calls, fresh module state per item) | ${f(custom)} | ${((100 * custom) / base).toFixed(1)}% |`);
console.log(`| fresh isolated-vm context per item (not used; for the record) | ${f(fresh)} | ${((100 * fresh) / base).toFixed(1)}% |`);
console.log(custom / base >= 0.3 ? "target (>= 30% of in-process) met" : "target (>= 30% of in-process) NOT met");
await rt.close();
