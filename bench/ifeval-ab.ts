/**
 * ifeval before/after, in one process: the verifier of another checkout (say the commit before a
 * change: `git worktree add /tmp/before <commit>`, with its node_modules) and this one's score the
 * bench mix (bench/ifeval-mix.ts, 512 items) in alternating rounds of 0.4 s, strict and loose;
 * items per CPU-second of the process, median over the rounds, and the median of the per-round
 * ratios. Alternating in one process keeps the two under the same load, which on a shared machine
 * moves separate runs by 2x.
 *
 *   npx tsx bench/ifeval-ab.ts /tmp/before [rounds=16]
 */
import pino from "pino";
import { fileURLToPath } from "node:url";
import { mix, type Item } from "./ifeval-mix.js";

const before = process.argv[2];
if (!before) throw new Error("usage: npx tsx bench/ifeval-ab.ts <checkout of the version to compare with> [rounds]");
const R = Number(process.argv[3] ?? 16);
const here = fileURLToPath(new URL("..", import.meta.url));
const quiet = pino({ level: "silent" });
type Impl = { registry: { resolve(it: unknown): any }; ctx: unknown };
const impls: Record<string, Impl> = {};
for (const [name, root] of [["before", before], ["this", here]] as const) {
  const { ifeval } = await import(`${root}/verifiers/ifeval/index.ts`);
  const { Registry } = await import(`${root}/src/core/registry.ts`);
  const { loadConfig } = await import(`${root}/src/core/config.ts`);
  const services = { config: loadConfig({}) } as never;
  await ifeval.init?.({ log: quiet, services });
  impls[name] = { registry: new Registry().register(ifeval), ctx: { deadline: Number.MAX_SAFE_INTEGER, signal: new AbortController().signal, log: quiet, services } };
}
const items = mix(512);
const loose = items.map((it) => ({ ...it, options: { mode: "loose" } }));
const res: Record<string, number[]> = {};
async function round(name: string, batch: Item[], label: string) {
  const { registry, ctx } = impls[name];
  let done = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  while (performance.now() - t0 < 400) {
    for (const it of batch) {
      const r = registry.resolve(it);
      if ("invalid" in r) throw new Error(r.invalid);
      await r.verifier.verify(r.item, ctx);
    }
    done += batch.length;
  }
  const c = process.cpuUsage(c0);
  (res[`${label} ${name}`] ??= []).push(done / ((c.user + c.system) / 1e6));
}
for (let r = 0; r < R; r++) {
  for (const [batch, label] of [[items, "strict"], [loose, "loose"]] as const) {
    for (const n of r % 2 ? ["before", "this"] : ["this", "before"]) await round(n, batch, label);
  }
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
for (const l of ["strict", "loose"]) {
  const b = med(res[`${l} before`]);
  const n = med(res[`${l} this`]);
  const ratios = res[`${l} before`].map((x, i) => res[`${l} this`][i] / x);
  console.log(
    `${l}: before ${b.toFixed(0)} items/CPU-s, this ${n.toFixed(0)} (medians of ${R} alternating rounds): ${(n / b).toFixed(2)}x; ` +
      `per-round ratio median ${med(ratios).toFixed(2)}, range ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}`,
  );
}
