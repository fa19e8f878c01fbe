/**
 * Where bench/ifeval.ts's in-process time goes: the bench mix (bench/ifeval-mix.ts, 512 items)
 * scored through the registry and verify() for --seconds, strict then loose, under V8's sampling
 * CPU profiler (node:inspector, 100 µs interval), and each sample charged to the innermost part of
 * the verifier on its stack: langdetect (its text scan and its trials apart), Punkt, NLTK's word
 * tokenizer rules, the instruction checks, the response's Python-string helpers, the loose
 * variants, parsing the reference, the registry's validation, the garbage collector. Prints the
 * shares and the busiest functions; `--save FILE` keeps the .cpuprofile for Chrome DevTools.
 *
 *   npx tsx bench/ifeval-profile.ts [--seconds 3] [--mode strict|loose|both] [--save prof.cpuprofile]
 */
import { Session } from "node:inspector/promises";
import { writeFileSync } from "node:fs";
import pino from "pino";
import { Registry } from "../src/core/registry.js";
import type { AnyVerifier } from "../src/core/verifier.js";
import { loadConfig } from "../src/core/config.js";
import { ifeval } from "../verifiers/ifeval/index.js";
import { mix } from "./ifeval-mix.js";

const arg = (name: string, dflt: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : dflt);
const seconds = Number(arg("--seconds", "3"));
const modes = arg("--mode", "both") === "both" ? ["strict", "loose"] : [arg("--mode", "both")];
const save = arg("--save", "");

const quiet = pino({ level: "silent" });
const services = { config: loadConfig({}) } as never;
await ifeval.init?.({ log: quiet, services });
const registry = new Registry().register(ifeval as AnyVerifier);
const ctx = { deadline: Number.MAX_SAFE_INTEGER, signal: new AbortController().signal, log: quiet, services };
const items = mix(512);

/** Innermost match wins: [category, function-name pattern, file pattern]. */
const CATEGORIES: [string, RegExp, RegExp][] = [
  ["langdetect: text scan (append, clean, n-grams)", /^(appendText|cleaningText|extractNgrams|normalize|isUpperCp|scanText|ngramsOf)$/, /langdetect\.ts/],
  ["langdetect: trials (random draws, updates)", /./, /langdetect\.ts/],
  ["Punkt sentences", /./, /punkt\.ts/],
  ["word_tokenize rules (capital words)", /^(tokenizeJoined|eachWordBatch|capitalTokensUpTo|nltkWordTokenize)$/, /ifeval\/text\.ts/],
  ["loose variants", /^looseVariants$/, /ifeval\/index\.ts/],
  ["Python-string helpers (strip, split, isupper, word count, json)", /./, /ifeval\/text\.ts/],
  ["instruction checks", /./, /ifeval\/instructions\.ts/],
  ["re2js (dataset patterns, bullets)", /./, /re2js/],
  ["reference parsing, building the checks", /./, /ifeval\/(reference|pyliteral|ifevalg|open_instruct)\.ts/],
  ["verify's own code", /./, /ifeval\/index\.ts/],
  ["registry: options/shape validation", /./, /(src\/core\/|typebox|ajv)/],
];

async function profile(mode: string) {
  const batch = items.map((it) => ({ ...it, options: { mode } }));
  for (const it of batch.slice(0, 64)) await registry.resolve(it as never); // warm the registry
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  await session.post("Profiler.start");
  let done = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  while (performance.now() - t0 < seconds * 1000) {
    for (const it of batch) {
      const r = registry.resolve(it as never);
      if ("invalid" in r) throw new Error(r.invalid);
      await r.verifier.verify(r.item, ctx);
    }
    done += batch.length;
  }
  const cpu = process.cpuUsage(c0);
  const { profile: p } = await session.post("Profiler.stop");
  session.disconnect();
  if (save) writeFileSync(save.replace(/(\.cpuprofile)?$/, `.${mode}.cpuprofile`), JSON.stringify(p));

  type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] };
  const nodes = new Map<number, Node>(p.nodes.map((n: Node) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes as Node[]) for (const c of n.children ?? []) parent.set(c, n.id);
  const sampleTime = new Map<number, number>();
  p.samples!.forEach((id: number, i: number) => sampleTime.set(id, (sampleTime.get(id) ?? 0) + (p.timeDeltas![i] ?? 0)));
  const byCat = new Map<string, number>();
  const bySelf = new Map<string, number>();
  let total = 0;
  for (const [id, t] of sampleTime) {
    const leaf = nodes.get(id)!;
    const f = leaf.callFrame;
    const where = f.url.split("/").slice(-2).join("/");
    const key = `${f.functionName || "(anonymous)"}${where ? ` (${where})` : ""}`;
    let cat: string | undefined;
    if (f.functionName === "(garbage collector)") cat = "garbage collector";
    // the profiler's own Profiler.stop (collecting this profile) is not the workload
    let own = false;
    for (let at: number | undefined = id; at !== undefined && !own; at = parent.get(at)) own = nodes.get(at)!.callFrame.url === "node:inspector";
    if (own) continue;
    bySelf.set(key, (bySelf.get(key) ?? 0) + t);
    total += t;
    for (let at: number | undefined = id; at !== undefined && !cat; at = parent.get(at)) {
      const cf = nodes.get(at)!.callFrame;
      for (const [c, fn, file] of CATEGORIES) {
        if (file.test(cf.url) && fn.test(cf.functionName)) {
          cat = c;
          break;
        }
      }
    }
    cat ??= f.functionName === "(program)" || f.functionName === "(idle)" ? "V8 (program, idle)" : "bench loop, runtime, other";
    byCat.set(cat, (byCat.get(cat) ?? 0) + t);
  }
  const pct = (t: number) => `${((100 * t) / total).toFixed(1)}%`;
  console.log(
    `\n${mode}: ${done} items in ${seconds} s, ${(((cpu.user + cpu.system) / done) | 0)} µs CPU an item; ` +
      `${(total / 1e3).toFixed(0)} ms sampled; load ${(await import("node:os")).loadavg().map((x) => x.toFixed(2)).join(" ")}`,
  );
  console.log("| part | share of samples |\n| --- | --- |");
  for (const [c, t] of [...byCat].sort((a, b) => b[1] - a[1])) console.log(`| ${c} | ${pct(t)} |`);
  console.log("busiest functions (self time):");
  for (const [k, t] of [...bySelf].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`  ${pct(t).padStart(6)}  ${k}`);
}

for (const m of modes) await profile(m);
