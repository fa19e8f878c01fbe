/**
 * Reward-verifier throughput: items/s through POST /reward/batch (batches of 256) for each of
 * bleu, chrf, rouge, tool_call, patch (both forms), iou and json, against the `exact` verifier
 * measured the same way in the same run on the same server. Target: >= 5,000 items/s each.
 *
 *   npm run build && npx tsx bench/rewards.ts [--seconds 3] [--rounds 3]
 */
import { cpus, loadavg } from "node:os";
import { load, median, startAssay, table } from "./lib.js";
import { items } from "./reward-items.js";

const arg = (name: string) => (process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) : NaN);
const seconds = arg("--seconds") || 3;
const rounds = arg("--rounds") || 3;
const BATCH = 256;

const assay = await startAssay({ ASSAY_SANDBOX: "none" }, { pin: true });
try {
  const url = `http://127.0.0.1:${assay.port}/reward/batch`;
  const bodies = Object.fromEntries(Object.entries(items).map(([k, make]) => [k, JSON.stringify({ items: Array.from({ length: BATCH }, (_, i) => ({ id: i, ...make(i) })) })]));
  // Every item must be scored ("ok"): a benchmark of invalid items would measure nothing.
  for (const [name, body] of Object.entries(bodies)) {
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
    const out = (await res.json()) as { results: { status: string; reason: string }[] };
    const bad = out.results.find((r) => r.status !== "ok");
    if (!res.ok || bad) throw new Error(`${name}: ${res.status} ${bad?.reason}`);
    await load(url, body, 4, 1); // warm-up
  }
  // Each round measures exact and then every verifier; a verifier's ratio is taken against the
  // exact of its own round, so that load from outside this benchmark moves both alike.
  const results: Record<string, number[]> = {};
  const ratios: Record<string, number[]> = {};
  for (let r = 0; r < rounds; r++) {
    let base = 0;
    for (const [name, body] of Object.entries(bodies)) {
      const l = await load(url, body, 4, seconds);
      if (l.errors || l.non2xx) throw new Error(`${name}: ${l.errors} errors, ${l.non2xx} non-2xx`);
      const itemsPerS = l.rps * BATCH;
      if (name === "exact") base = itemsPerS;
      (results[name] ??= []).push(itemsPerS);
      (ratios[name] ??= []).push(itemsPerS / base);
    }
  }
  const rows: (string | number)[][] = [["verifier", "items/s", "vs exact", "target 5,000 items/s"]];
  for (const [name, xs] of Object.entries(results)) {
    const v = median(xs);
    rows.push([name, v.toFixed(0), `${median(ratios[name]).toFixed(2)}x`, name === "exact" ? "baseline" : v >= 5000 ? "met" : "MISSED"]);
  }
  console.log(`\n/reward/batch, ${BATCH} items per request, 4 connections, ${seconds} s per case, median of ${rounds} round(s):`);
  console.log(table(rows));
  console.log(`load average during the run (1/5/15 min): ${loadavg().map((x) => x.toFixed(1)).join(" / ")} on ${cpus().length} cores`);
} finally {
  assay.child.kill();
}
