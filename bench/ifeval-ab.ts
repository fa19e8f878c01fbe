/**
 * ifeval before/after, in one process: the verifiers of other checkouts (say the commit before a
 * change: `git archive <commit> | tar -x -C /tmp/before`, with its node_modules) and this one's
 * score the bench mix (bench/ifeval-mix.ts, 512 items) in alternating rounds of 0.4 s, strict and
 * loose, the order rotating each round; CPU time per item of the process (and items per
 * CPU-second), median over the rounds, and the median of the per-round ratios against each other
 * checkout. Alternating in one process keeps them under the same load, which on a shared machine
 * moves separate runs by 2x. Prints the load average at the start and the end.
 *
 *   npx tsx bench/ifeval-ab.ts /tmp/before [/tmp/other ...] [rounds=16]
 */
import pino from "pino";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { mix, type Item } from "./ifeval-mix.js";

const args = process.argv.slice(2);
const R = /^\d+$/.test(args.at(-1) ?? "") ? Number(args.pop()) : 16;
if (args.length === 0) throw new Error("usage: npx tsx bench/ifeval-ab.ts <checkout to compare with> [more checkouts] [rounds]");
const here = fileURLToPath(new URL("..", import.meta.url));
const quiet = pino({ level: "silent" });
type Impl = { registry: { resolve(it: unknown): any }; ctx: unknown };
const impls = new Map<string, Impl>();
for (const root of [...args, here]) {
  const name = root === here ? "this" : root;
  const { ifeval } = await import(`${root}/verifiers/ifeval/index.ts`);
  const { Registry } = await import(`${root}/src/core/registry.ts`);
  const { loadConfig } = await import(`${root}/src/core/config.ts`);
  const services = { config: loadConfig({}) } as never;
  await ifeval.init?.({ log: quiet, services });
  impls.set(name, { registry: new Registry().register(ifeval), ctx: { deadline: Number.MAX_SAFE_INTEGER, signal: new AbortController().signal, log: quiet, services } });
}
const names = [...impls.keys()];
const items = mix(512);
const loose = items.map((it) => ({ ...it, options: { mode: "loose" } }));
/** CPU µs per item, by "label name". */
const res: Record<string, number[]> = {};
async function round(name: string, batch: Item[], label: string) {
  const { registry, ctx } = impls.get(name)!;
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
  (res[`${label} ${name}`] ??= []).push((c.user + c.system) / done);
}
const load0 = loadavg();
for (let r = 0; r < R; r++) {
  for (const [batch, label] of [[items, "strict"], [loose, "loose"]] as const) {
    const order = names.map((_, i) => names[(i + r) % names.length]);
    for (const n of order) await round(n, batch, label);
  }
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const la = (l: number[]) => l.map((x) => x.toFixed(2)).join(" ");
console.log(`${R} rounds of 0.4 s per version and mode; load average ${la(load0)} at the start, ${la(loadavg())} at the end`);
for (const l of ["strict", "loose"]) {
  const mine = res[`${l} this`];
  console.log(`${l}: this ${med(mine).toFixed(0)} µs CPU an item (${(1e6 / med(mine)).toFixed(0)} items/CPU-s)`);
  for (const other of args) {
    const theirs = res[`${l} ${other}`];
    // speed of this relative to the other: their CPU per item over ours
    const ratios = theirs.map((x, i) => x / mine[i]);
    console.log(
      `  vs ${other}: ${med(theirs).toFixed(0)} µs (${(1e6 / med(theirs)).toFixed(0)} items/CPU-s): this is ${(med(theirs) / med(mine)).toFixed(2)}x as fast; ` +
        `per-round ratio median ${med(ratios).toFixed(2)}, range ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}`,
    );
  }
}
