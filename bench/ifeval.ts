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
import { mulberry32 } from "../verifiers/math/compare.js";
import { load, startAssay, table } from "./lib.js";
import { loadConfig } from "../src/core/config.js";
import pino from "pino";

const seconds = Number(process.argv[process.argv.indexOf("--seconds") + 1]) || 2;
const ROUNDS = 3;

const SENTENCES = [
  "The old lighthouse stood at the edge of the cliff, its lamp long since dark.",
  "Researchers have found that regular walks improve both mood and memory.",
  "In 1969, Apollo 11 carried three astronauts to the Moon and back.",
  "A good itinerary balances famous sights with quiet afternoons.",
  "Dr. Rivera explained the results at 3 p.m. to a packed room.",
  "Why do cats knock things off tables?",
  "The recipe calls for two cups of flour, one egg and a pinch of salt.",
  "Markets opened higher on Monday after a week of losses.",
  "She wrote the letter twice before she was happy with it!",
  "Each chapter ends with a short summary and a few questions.",
];
type Item = { verifier: string; prompt?: string; response: string; reference: unknown; options?: Record<string, unknown> };

function mix(n: number): Item[] {
  const rnd = mulberry32(11);
  const pick = <T>(a: T[]) => a[Math.floor(rnd() * a.length)];
  const prose = (k: number) => Array.from({ length: 2 * k }, () => pick(SENTENCES)).join(" ");
  const paragraphs = (p: number, k: number) => Array.from({ length: p }, () => prose(k)).join("\n\n");
  const kinds: (() => [string, string, Record<string, unknown>][] | [string, string, Record<string, unknown>])[] = [
    () => [paragraphs(3, 5), "keywords:existence", { keywords: ["lighthouse", "memory"] }],
    () => [paragraphs(3, 5), "keywords:frequency", { keyword: "the", frequency: 5, relation: "at least" }],
    () => [paragraphs(2, 6), "keywords:forbidden_words", { forbidden_words: ["moon", "flour"] }],
    () => [paragraphs(2, 6), "keywords:letter_frequency", { letter: "q", let_frequency: 2, let_relation: "less than" }],
    () => [paragraphs(2, 6), "language:response_language", { language: pick(["en", "fr"]) }],
    () => [paragraphs(2, 5), "length_constraints:number_sentences", { num_sentences: 12, relation: pick(["less than", "at least"]) }],
    () => [prose(4) + "\n***\n" + prose(4) + "\n***\n" + prose(3), "length_constraints:number_paragraphs", { num_paragraphs: 3 }],
    () => [paragraphs(3, 6), "length_constraints:number_words", { num_words: 200, relation: pick(["less than", "at least"]) }],
    () => [paragraphs(3, 4), "length_constraints:nth_paragraph_first_word", { num_paragraphs: 3, nth_paragraph: 2, first_word: "the" }],
    () => [`Dear [name],\n\n${prose(5)}\n\nBest,\n[sender] at [address]`, "detectable_content:number_placeholders", { num_placeholders: 3 }],
    () => [`${paragraphs(2, 5)}\n\nP.S. ${prose(1)}`, "detectable_content:postscript", { postscript_marker: pick(["P.S.", "P.P.S"]) }],
    () => [`${prose(2)}\n* ${prose(1)}\n* ${prose(1)}\n* ${prose(1)}\n${prose(2)}`, "detectable_format:number_bullet_lists", { num_bullets: pick([3, 4]) }],
    () => [`${prose(3)} My answer is yes.`, "detectable_format:constrained_response", {}],
    () => [`*${prose(1)}* ${prose(4)} **${prose(1)}** ${prose(3)}`, "detectable_format:number_highlighted_sections", { num_highlights: pick([2, 3]) }],
    () => [`Section 1\n${prose(4)}\nSection 2\n${prose(4)}`, "detectable_format:multiple_sections", { section_spliter: "Section", num_sections: pick([2, 3]) }],
    () => ["```json\n" + JSON.stringify({ summary: prose(3), points: [prose(1), prose(1)] }, null, 2) + "\n```", "detectable_format:json_format", {}],
    () => [`<<${prose(1).slice(0, 30)}>>\n\n${paragraphs(2, 5)}`, "detectable_format:title", {}],
    () => [`${prose(4)}\n******\n${prose(4)}`, "combination:two_responses", {}],
    () => [`Write a story about a lighthouse. ${paragraphs(2, 5)}`, "combination:repeat_prompt", { prompt_to_repeat: "Write a story about a lighthouse." }],
    () => [`${paragraphs(2, 5)} Is there anything else I can help with?`, "startend:end_checker", { end_phrase: "Is there anything else I can help with?" }],
    () => [`"${paragraphs(2, 5)}"`, "startend:quotation", {}],
    () => [paragraphs(2, 5).replace(/walks|Moon|FLOUR/g, (w) => w.toUpperCase()), "change_case:capital_word_frequency", { capital_frequency: 3, capital_relation: "less than" }],
    () => [paragraphs(2, 5).toUpperCase(), "change_case:english_capital", {}],
    () => [paragraphs(2, 5).toLowerCase(), "change_case:english_lowercase", {}],
    () => [paragraphs(2, 5).replaceAll(",", ""), "punctuation:no_comma", {}],
  ];
  const out: Item[] = [];
  for (let i = 0; i < n; i++) {
    const k = 1 + Math.floor(rnd() * 3);
    const parts = Array.from({ length: k }, () => pick(kinds)() as [string, string, Record<string, unknown>]);
    // One response per item (the first kind's); every instruction is checked against it.
    const ids = [...new Set(parts.map((p) => p[1]))];
    const kwargs = ids.map((id) => parts.find((p) => p[1] === id)![2]);
    out.push({ verifier: "ifeval", response: parts[0][0], reference: { instruction_id_list: ids, kwargs } });
  }
  return out;
}

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
