/**
 * bench/ifeval-ab.ts by instruction: for each of the 25 IFEval ids, the bench mix's items that
 * ask for it, with that instruction alone, scored by another checkout's verifier and this one's in
 * alternating rounds of 60 ms (6 rounds); median CPU µs an item of each, and this one's speed
 * relative to the other's (above 1: faster). Sorted from the most slowed down.
 *
 *   npx tsx bench/ifeval-ab-by-id.ts /tmp/before [strict|loose]
 */
import pino from "pino";
import { fileURLToPath } from "node:url";
import { mix } from "./ifeval-mix.js";
if (!process.argv[2]) throw new Error("usage: npx tsx bench/ifeval-ab-by-id.ts <checkout to compare with> [strict|loose]");
const roots = { before: process.argv[2], this: fileURLToPath(new URL("..", import.meta.url)) };
const quiet = pino({ level: "silent" });
const impls: any = {};
for (const [name, root] of Object.entries(roots)) {
  const { ifeval } = await import(`${root}/verifiers/ifeval/index.ts`);
  const { Registry } = await import(`${root}/src/core/registry.ts`);
  const { loadConfig } = await import(`${root}/src/core/config.ts`);
  const services = { config: loadConfig({}) } as never;
  await ifeval.init?.({ log: quiet, services });
  impls[name] = { registry: new Registry().register(ifeval), ctx: { deadline: Number.MAX_SAFE_INTEGER, signal: new AbortController().signal, log: quiet, services } };
}
const items = mix(512);
const byId = new Map<string, any[]>();
for (const it of items) { const r = it.reference as any; r.instruction_id_list.forEach((id: string, i: number) => { (byId.get(id) ?? byId.set(id, []).get(id)!).push({ verifier: "ifeval", response: it.response, reference: { instruction_id_list: [id], kwargs: [r.kwargs[i]] }, options: { mode: process.argv[3] ?? "strict" } }); }); }
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1];
const rows: [string, number, number][] = [];
for (const [id, batch] of [...byId].sort()) {
  const t: any = { before: [], this: [] };
  for (let r = 0; r < 6; r++) for (const n of r % 2 ? ["before", "this"] : ["this", "before"]) {
    const { registry, ctx } = impls[n];
    let done = 0; const c0 = process.cpuUsage(); const t0 = performance.now();
    while (performance.now() - t0 < 60) { for (const it of batch) { const x = registry.resolve(it); await x.verifier.verify(x.item, ctx); } done += batch.length; }
    const c = process.cpuUsage(c0); t[n].push((c.user + c.system) / done);
  }
  rows.push([id, med(t.before), med(t.this)]);
}
for (const [id, b, n] of rows.sort((x, y) => y[2] - y[1] - (x[2] - x[1]))) console.log(`${id.padEnd(45)} before ${b.toFixed(0).padStart(5)} µs  this ${n.toFixed(0).padStart(5)} µs  ${(b / n).toFixed(2)}x`);
