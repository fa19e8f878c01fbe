/**
 * /healthz while the host does the heavy part of a request (issue 25): the p50/p99/max of
 * /healthz polled every 10 ms from this process while each case runs against a server in its
 * own process, beside the same figures for the idle server measured in the same run. A case's
 * bodies are sent from a client thread of their own (tests/loop-watch.ts clientThread): sent
 * from the poller's thread, the client's copying of 100 MB held the poller itself for ~300 ms.
 *
 *   seven 1 MiB completions to `exact` (whitespace runs: the costly shape), sent at once;
 *   a 100 MB JSONL `POST /jobs` upload (until the 201);
 *   24 custom verifiers, uploaded beforehand and never used, in one batch (cold isolates).
 *
 * npm run build && npx tsx bench/host-stall.ts   (ASSAY_BENCH_JOB_MB=100 sets the upload's size)
 */
import { startAssay, table } from "./lib.js";
import { pollHealthz, clientThread, type Polled, type Post } from "../tests/loop-watch.js";

const server = await startAssay({ ASSAY_SANDBOX: "none", ASSAY_DATA_DIR: ":memory:", ASSAY_LOG_LEVEL: "warn", ASSAY_WORKERS: "1" });
const url = server.url;

async function whilePolling(work: () => Promise<unknown>): Promise<Polled & { ms: number }> {
  const polling = pollHealthz(url);
  const t0 = performance.now();
  await work();
  const ms = performance.now() - t0;
  return { ...(await polling.stop()), ms };
}

const post = async (path: string, body: Buffer, type = "application/json") => {
  const r = await fetch(url + path, { method: "POST", headers: { "content-type": type }, body: new Uint8Array(body) });
  const text = await r.text();
  if (!r.ok) throw new Error(`${path}: ${r.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
};

// Everything a case sends is built before it runs, and sent from another thread, so the poller
// measures the server alone.
const mib = 1024 * 1024;
const encode = (s: string) => new TextEncoder().encode(s);
const exactPosts: Post[] = Array.from({ length: 7 }, (_, i) => ({
  path: "/reward",
  type: "application/json",
  body: encode(JSON.stringify({ verifier: "exact", response: i % 2 ? "a\n".repeat(mib / 2) : "The answer is  42.\t".repeat(mib / 19), reference: "42", deadline_ms: 60_000 })),
}));
const jobMb = Number(process.env.ASSAY_BENCH_JOB_MB ?? 100);
const line = JSON.stringify({ verifier: "exact", response: "x".repeat(1000), reference: "x" }) + "\n";
const jobPost: Post = { path: "/jobs", type: "application/x-ndjson", body: encode(line.repeat(Math.ceil((jobMb * 1e6) / line.length))) };
const client = clientThread(url);
/** The posts, from the client thread; any answer but 2xx stops the bench. */
async function send(posts: Post[]): Promise<void> {
  for (const a of await client.post(posts)) if (a.status >= 300) throw new Error(`${a.status} ${JSON.stringify(a.body).slice(0, 300)}`);
}
for (let i = 0; i < 24; i++) {
  const source = `export function score({ response, reference }) { const hit = response.trim() === String(reference) + ${i} * 0; return { reward: hit ? 1 : 0, reason: "v${i}" }; }`;
  await post("/verifiers/custom", Buffer.from(JSON.stringify({ name: `cold-${i}`, language: "javascript", source })));
}
const customBatch = encode(JSON.stringify({ items: Array.from({ length: 24 }, (_, i) => ({ verifier: `custom:cold-${i}`, response: "ok", reference: "ok" })) }));

const rows: (string | number)[][] = [["case", "case ms", "/healthz polls", "p50 ms", "p99 ms", "max ms", "p99 vs idle"]];
const idle = await whilePolling(() => new Promise((r) => setTimeout(r, 3000)));
const row = (name: string, x: Polled & { ms: number }) => rows.push([name, x.ms.toFixed(0), x.n, x.p50.toFixed(1), x.p99.toFixed(1), x.max.toFixed(1), `${(x.p99 / idle.p99).toFixed(1)}x`]);
row("idle (3 s)", idle);
await send([{ path: "/reward", type: "application/json", body: encode(JSON.stringify({ verifier: "exact", response: "warm", reference: "up" })) }]);
row("7 x 1 MiB to exact", await whilePolling(() => send(exactPosts)));
row(`${jobMb} MB POST /jobs`, await whilePolling(() => send([jobPost])));
// The job scores in the background; cancel it so the next case measures only itself.
for (const j of (await (await fetch(url + "/jobs")).json()).jobs) await fetch(`${url}/jobs/${j.id}/cancel`, { method: "POST" });
row("24 cold custom verifiers", await whilePolling(() => send([{ path: "/reward/batch", type: "application/json", body: customBatch }])));

console.log(table(rows));
await client.close();
server.child.kill("SIGINT");
