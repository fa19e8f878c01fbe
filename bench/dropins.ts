/**
 * The drop-in routes' own costs, each against a baseline measured in the same run:
 *   (1) the OpenRLHF reply written with floats (openrlhfJson) vs JSON.stringify of the same
 *       object (which writes 1, not 1.0), for a 4096-query reply with its results;
 *   (2) /run_code queueing: how long a request that cannot start waits before its 504, vs the
 *       wait its own budget allows (compile_timeout + ASSAY_RUN_CODE_CALLER_SLACK_MS for a
 *       python program; a fake sandbox that never frees a slot; no programs run).
 * The same route under verl's own client with real programs: clients/python/bench_verl_load.py.
 * Usage: npx tsx bench/dropins.ts
 */
import { openrlhfJson } from "../src/server/routes/openrlhf.js";
import type { RunOutcome, RunRequest, Sandbox } from "../sandbox/types.js";
import { testApp, fakeSandbox } from "../tests/helpers.js";

function time(fn: () => unknown, reps: number): number {
  fn();
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) fn();
  return (performance.now() - t0) / reps;
}

const n = 4096;
const rewards = Array.from({ length: n }, (_, i) => i % 2);
const results = rewards.map((r, i) => ({ id: i, verifier: "math", reward: r, status: "ok", reason: "matches the reference", details: { extracted: "42" }, elapsed_ms: 0.4 }));
const reply = { rewards, scores: rewards, extra_logs: { assay_unscored: rewards.map(() => 0), assay_invalid: rewards.map(() => 0) }, results };
const floats = time(() => openrlhfJson(reply as any), 50);
const plain = time(() => JSON.stringify(reply), 50);
console.log(`OpenRLHF reply, ${n} queries: openrlhfJson ${floats.toFixed(2)} ms, JSON.stringify ${plain.toFixed(2)} ms, ratio ${(floats / plain).toFixed(2)}x`);

// A sandbox whose only slot never frees: every run waits until its startBy.
const stuck: Sandbox = {
  name: "stuck", languages: ["python"],
  run: (req: RunRequest) => new Promise<RunOutcome>((resolve) => {
    setTimeout(() => resolve({ status: "not_started", exitCode: null, signal: null, stdout: "", stderr: "", truncated: false, wallMs: 0, cpuMs: null }), Math.max(0, (req.startBy ?? Date.now()) - Date.now()));
  }),
  close: async () => {},
};
const compileTimeoutS = 0.1, slackMs = 100;
const waitMs = compileTimeoutS * 1000 + slackMs;
const { app } = await testApp({ ASSAY_RUN_CODE_CALLER_SLACK_MS: String(slackMs) }, [], { sandbox: fakeSandbox(stuck) });
const server = app.listen(0, "127.0.0.1");
await new Promise((r) => server.once("listening", r));
const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/run_code`;
const post = async () => {
  const t = performance.now();
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ code: "print(1)", compile_timeout: compileTimeoutS, run_timeout: 1 }) });
  await res.text();
  if (res.status !== 504) throw new Error(`expected 504, got ${res.status}`);
  return performance.now() - t;
};
await post(); // warm
const one = await post();
const t0 = performance.now();
await Promise.all(Array.from({ length: 64 }, post));
const all = performance.now() - t0;
console.log(`/run_code turned away: one request 504 after ${one.toFixed(0)} ms, 64 at once all 504 within ${all.toFixed(0)} ms; allowed wait ${waitMs} ms, ratios ${(one / waitMs).toFixed(2)}x and ${(all / waitMs).toFixed(2)}x`);
server.close();
process.exit(0);
