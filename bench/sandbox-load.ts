/**
 * The sandbox under hostile load: one /reward/batch of 64 hostile programs (loops, sleeps, fork
 * and memory bombs, floods) mixed with 64 correct ones, on the compiled server, while /healthz is
 * polled every 50 ms. Reports how many correct items scored 1, hostile ones what they should
 * (0; 1 for the program that sleeps 2.5 s of its 3 s wall limit and then answers right: it is
 * within its limits), nulls (the target is none), 429s (admission; the target is none for one
 * batch on an idle server), the batch's wall time against the same 64 correct items alone (the baseline, measured
 * in the same run), and /healthz latency.
 *
 *   npm run build && npx tsx bench/sandbox-load.ts [--backend docker|bwrap]
 */
import { startAssay, table } from "./lib.js";

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : dflt;
};
const backend = arg("--backend", "docker");

const fence = (src: string) => "```python\n" + src + "\n```";
const ref = { inputs: ["3 4\n"], outputs: ["7\n"] };
const correct = fence("a, b = map(int, input().split())\nprint(a + b)");
/** Each hostile program and the reward it deserves. */
const HOSTILE: [string, number][] = [
  ["while True: pass", 0],
  ["import time\ntime.sleep(60)", 0],
  ["import os\nwhile True:\n    try: os.fork()\n    except OSError: pass", 0],
  ["xs = []\nwhile True: xs.append(bytearray(16 << 20))", 0],
  ["import sys\nwhile True: sys.stdout.write('x' * 65536)", 0],
  // Slow but within its limits (1 s CPU, 3 s wall): the right answer, reward 1.
  ["import time\ntime.sleep(2.5)\nprint(7)", 1],
  ["print(8)", 0],
  ["raise SystemExit(3)", 0],
];

const items = (hostile: boolean) =>
  Array.from({ length: 64 }, (_, i) => ({
    id: `${hostile ? "h" : "c"}${i}`,
    verifier: "code",
    response: hostile ? fence(HOSTILE[i % HOSTILE.length]![0]) : correct,
    reference: ref,
    options: { time_limit_ms: 1000 },
  }));

async function batch(url: string, list: unknown[]) {
  const t0 = performance.now();
  const res = await fetch(url + "/reward/batch", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ items: list }) });
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  const body = (await res.json()) as { results: { id: string; reward: number | null; status: string }[] };
  return { ms: performance.now() - t0, results: body.results };
}

const server = await startAssay({ ASSAY_SANDBOX: backend, ASSAY_LOG_LEVEL: "warn" });
try {
  // Warm the pool, then the baseline: the correct items alone.
  await batch(server.url, items(false).slice(0, 8));
  const base = await batch(server.url, items(false));

  const health: number[] = [];
  let polling = true;
  const poll = (async () => {
    while (polling) {
      const t0 = performance.now();
      await fetch(server.url + "/healthz").catch(() => {});
      health.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const mixed = [...items(false), ...items(true)].sort(() => Math.random() - 0.5);
  const run = await batch(server.url, mixed);
  polling = false;
  await poll;

  const good = run.results.filter((r) => r.id.startsWith("c"));
  const bad = run.results.filter((r) => r.id.startsWith("h"));
  const deserved = (id: string) => HOSTILE[Number(id.slice(1)) % HOSTILE.length]![1];
  health.sort((a, b) => a - b);
  const p = (q: number) => health[Math.min(health.length - 1, Math.floor(q * health.length))]?.toFixed(1) ?? "-";
  console.log(table([
    ["case", "items", "correct scored 1", "hostile scored right", "nulls", "wall s", "vs baseline"],
    ["64 correct alone (baseline)", 64, base.results.filter((r) => r.reward === 1).length, "-", base.results.filter((r) => r.reward === null).length, (base.ms / 1000).toFixed(1), "1.00x"],
    ["64 correct + 64 hostile", 128, good.filter((r) => r.reward === 1).length, bad.filter((r) => r.reward === deserved(r.id)).length, run.results.filter((r) => r.reward === null).length, (run.ms / 1000).toFixed(1), `${(run.ms / base.ms).toFixed(2)}x`],
  ]));
  console.log(`\n/healthz during the mixed batch: ${health.length} polls, p50 ${p(0.5)} ms, p99 ${p(0.99)} ms (target < 100 ms)`);
  const nulls = run.results.filter((r) => r.reward === null);
  const wrong = bad.filter((r) => r.reward !== null && r.reward !== deserved(r.id));
  if (wrong.length) console.log(`hostile scored wrong: ${wrong.slice(0, 5).map((r) => `${r.id}=${r.reward}`).join(", ")}`);
  if (nulls.length) console.log(`nulls: ${[...new Set(nulls.map((r) => r.status))].join(", ")} (first ids: ${nulls.slice(0, 5).map((r) => r.id).join(", ")})`);
} finally {
  server.child.kill();
}
