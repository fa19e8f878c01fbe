/**
 * Rubric judging under load: 1,000 rubric items of 5 criteria (5,000 judge calls) scored in one
 * batch through the runtime (registry -> rubric verifier -> judge client -> HTTP) against the
 * loopback chat-completions fixture, with ASSAY_JUDGE_CONCURRENCY=20. Baseline, same run: the
 * same 5,000 request bodies sent straight to the fixture with fetch, 20 at a time. Then the same
 * batch again with the verdict cache on (first pass fills it, second pass is all hits).
 * The fixture runs in this process, so both sides share its cost.
 *
 *   npx tsx bench/judge.ts [--items 1000] [--criteria 5] [--concurrency 20]
 */
import { startJudgeFixture } from "../tests/fixtures/judge-server.js";
import { runLoad, runLoadTwice, loadItem } from "../verifiers/rubric/load.js";
import { criterionQuestion, CRITERION_VERDICT } from "../verifiers/rubric/prompt.js";
import { Delimiter } from "../src/judge/material.js";
import { table } from "./lib.js";

const arg = (name: string, d: number) => (process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) : d);
const items = arg("--items", 1000);
const criteria = arg("--criteria", 5);
const concurrency = arg("--concurrency", 20);
const model = "fx+delay1";

const fx = await startJudgeFixture();
try {
  // Baseline: the same calls without Assay: one fetch per criterion, `concurrency` at a time.
  const bodies: string[] = [];
  for (let i = 0; i < items; i++) {
    const it = loadItem(i, criteria);
    for (const c of it.reference.criteria) {
      const q = criterionQuestion(c, { prompt: it.prompt, response: it.response }, 0);
      bodies.push(JSON.stringify({
        model, messages: q.render(new Delimiter()), temperature: 0, max_tokens: 1024,
        response_format: { type: "json_schema", json_schema: { name: CRITERION_VERDICT.name, schema: CRITERION_VERDICT.schema, strict: true } },
      }));
    }
  }
  fx.reset();
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < bodies.length) {
      const b = bodies[next++];
      const r = await fetch(`${fx.url}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: b });
      await r.json();
    }
  }));
  const base = { seconds: (performance.now() - t0) / 1000, calls: fx.stats.requests, maxInflight: fx.stats.maxInflight };

  const cold = await runLoad(fx, { items, criteria, concurrency, model });
  // One runtime (one in-memory store), scored twice: the first pass fills the cache, the second hits it.
  const [, warm] = await runLoadTwice(fx, { items, criteria, concurrency, model, cache: true });

  for (const [name, f] of Object.entries({ cold, warm })) {
    if (f.statuses.ok !== items) throw new Error(`${name}: not every item scored: ${JSON.stringify(f.statuses)}`);
  }
  if (cold.maxInflight > concurrency) throw new Error(`the fixture saw ${cold.maxInflight} calls at once (limit ${concurrency})`);
  const rows = [
    ["case", "items", "judge calls", "seconds", "calls/s", "items/s", "max in flight", "vs baseline"],
    ["baseline: fetch straight to the fixture", "-", base.calls, base.seconds.toFixed(2), (base.calls / base.seconds).toFixed(0), "-", base.maxInflight, "1.00x"],
    ["assay rubric, cache off", items, cold.calls, cold.seconds.toFixed(2), (cold.calls / cold.seconds).toFixed(0), (items / cold.seconds).toFixed(0), cold.maxInflight, `${(cold.seconds / base.seconds).toFixed(2)}x`],
    ["assay rubric, re-score from cache", items, warm.calls, warm.seconds.toFixed(2), "-", (items / warm.seconds).toFixed(0), warm.maxInflight, `${(warm.seconds / base.seconds).toFixed(2)}x`],
  ];
  console.log(`${items} items x ${criteria} criteria, judge concurrency ${concurrency}, fixture model ${model}`);
  console.log(table(rows));
  console.log(`\nnever more than ${concurrency} in flight: ${cold.maxInflight <= concurrency ? "met" : "MISSED"} (max ${cold.maxInflight}); every item scored: met`);
} finally {
  await fx.close();
}
