/** The TypeScript client against a live in-process server, and retries against a scripted fake. */
import { test, describe, after, before } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { testApp } from "../../tests/helpers.js";
import { AssayClient, AssayError } from "../index.js";
import type { RewardItem } from "../core/types.js";

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

/** Even items right (1), odd wrong (0), every 7th malformed (null). */
function items(n: number): RewardItem[] {
  return Array.from({ length: n }, (_, i) => (i % 7 === 3
    ? { id: i, verifier: "no-such-verifier", response: "x" }
    : { id: i, verifier: "exact", response: `answer ${i}`, reference: i % 2 === 0 ? `answer ${i}` : "else" }));
}
const expected = (i: number) => (i % 7 === 3 ? null : i % 2 === 0 ? 1 : 0);

describe("AssayClient against a live server", () => {
  let server: Server;
  let url: string;
  before(async () => {
    const { app } = await testApp();
    server = createServer(app);
    url = await listen(server);
  });
  after(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));

  test("one item: reward and full result; a malformed one throws naming the field", async () => {
    const c = new AssayClient({ url });
    assert.equal(await c.reward({ verifier: "exact", response: " Paris ", reference: "paris" }), 1);
    const r = await c.score({ id: "q", verifier: "exact", response: "Lyon", reference: "paris" });
    assert.equal(r.id, "q");
    assert.equal(r.reward, 0);
    await assert.rejects(c.reward({ verifier: "exact", response: "x", reference: { no: 1 } }),
      (e: unknown) => e instanceof AssayError && e.status === 400 && typeof e.field === "string");
  });

  test("a batch keeps its order over concurrent chunks and gives null for unscored items", async () => {
    const c = new AssayClient({ url, chunkSize: 37, concurrency: 4 });
    const all = items(1000);
    const results = await c.scoreBatch(all);
    assert.deepEqual(results.map((r) => r.id), all.map((x) => x.id));
    assert.deepEqual(await c.rewardBatch(all), all.map((_, i) => expected(i)));
    assert.deepEqual(await c.rewardBatch([]), []);
  });

  test("OpenRLHF route and discovery", async () => {
    const c = new AssayClient({ url });
    const body = await c.getReward(["Q: a? A: yes", "Q: b? A: no"], ["Q: a? A:", "Q: b? A:"], ["yes", "yes"], { verifier: "exact" });
    assert.deepEqual(body.rewards, [1, 0]);
    assert.ok((await c.verifiers()).some((v) => v.name === "exact"));
    assert.equal((await c.health()).status, "ok");
  });
});

type Planned = { status: number; headers?: Record<string, string>; body?: string } | "drop";

/** Answers /reward/batch from a script, then echoes reward = response length (null when item.null). */
async function fake(script: Planned[] = [], delayMs = 0) {
  const seen: { at: number; items: number; auth?: string }[] = [];
  let inflight = 0;
  let maxInflight = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", async () => {
      const body = JSON.parse(raw || "{}");
      seen.push({ at: Date.now(), items: body.items?.length ?? 1, auth: req.headers.authorization });
      const planned = script.shift();
      inflight++;
      maxInflight = Math.max(maxInflight, inflight);
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      inflight--;
      if (planned === "drop") { req.socket.destroy(); return; }
      if (planned) { res.writeHead(planned.status, { "content-type": "application/json", ...planned.headers }); res.end(planned.body ?? "{}"); return; }
      const results = (body.items as Array<{ response: string; null?: boolean }>).map((it) => ({
        verifier: "v", reward: it.null ? null : it.response.length, status: it.null ? "error" : "ok", reason: "fake", details: {}, elapsed_ms: 0,
      }));
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ results }));
    });
  });
  const url = await listen(server);
  return { url, seen, maxInflight: () => maxInflight, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

const fast = { maxRetries: 3, backoffMs: 5, maxBackoffMs: 3000 };
const one = (response: string, extra: Record<string, unknown> = {}) => ({ verifier: "v", response, ...extra });

describe("AssayClient retries", () => {
  test("5xx then success; nulls pass through", async () => {
    const f = await fake([{ status: 503 }, { status: 502, body: "bad gateway" }, { status: 500 }]);
    try {
      assert.deepEqual(await new AssayClient({ url: f.url, ...fast }).rewardBatch([one("abcd"), one("", { null: true })]), [4, null]);
      assert.equal(f.seen.length, 4);
    } finally { await f.close(); }
  });

  test("429 waits as long as Retry-After says", async () => {
    const f = await fake([{ status: 429, headers: { "retry-after": "1" }, body: '{"error":"busy"}' }]);
    try {
      assert.deepEqual(await new AssayClient({ url: f.url, ...fast }).rewardBatch([one("ab")]), [2]);
      const waited = f.seen[1]!.at - f.seen[0]!.at;
      assert.ok(waited >= 900 && waited < 3000, `waited ${waited} ms`);
    } finally { await f.close(); }
  });

  test("dropped connections are retried; a refused one gives up with a clear error", async () => {
    const f = await fake(["drop", "drop"]);
    try {
      assert.deepEqual(await new AssayClient({ url: f.url, ...fast }).rewardBatch([one("xyz")]), [3]);
      assert.equal(f.seen.length, 3);
    } finally { await f.close(); }
    const dead = createServer();
    const url = await listen(dead);
    await new Promise<void>((r) => dead.close(() => r()));
    await assert.rejects(new AssayClient({ url, maxRetries: 2, backoffMs: 5 }).rewardBatch([one("x")]), /cannot reach Assay/);
  });

  test("4xx is not retried; persistent 5xx runs out of retries", async () => {
    let f = await fake([{ status: 400, body: JSON.stringify({ error: "items[0].verifier is required", field: "verifier" }) }]);
    try {
      await assert.rejects(new AssayClient({ url: f.url, ...fast }).rewardBatch([one("x")]),
        (e: unknown) => e instanceof AssayError && e.status === 400 && e.field === "verifier");
      assert.equal(f.seen.length, 1);
    } finally { await f.close(); }
    f = await fake(Array.from({ length: 10 }, () => ({ status: 500, body: '{"error":"boom"}' })));
    try {
      await assert.rejects(new AssayClient({ url: f.url, ...fast }).rewardBatch([one("x")]), (e: unknown) => e instanceof AssayError && e.status === 500);
      assert.equal(f.seen.length, fast.maxRetries + 1);
    } finally { await f.close(); }
  });

  test("a failing chunk is retried alone, order is kept, concurrency is capped, the key is sent", async () => {
    const f = await fake([{ status: 503 }], 100);
    try {
      const c = new AssayClient({ url: f.url, apiKey: "sekrit", chunkSize: 10, concurrency: 3, ...fast });
      const all = Array.from({ length: 60 }, (_, i) => one("x".repeat(i)));
      assert.deepEqual(await c.rewardBatch(all), all.map((_, i) => i));
      assert.equal(f.seen.length, 7);
      assert.ok(f.seen.every((s) => s.items === 10 && s.auth === "Bearer sekrit"));
      assert.ok(f.maxInflight() >= 2 && f.maxInflight() <= 3, `max in flight ${f.maxInflight()}`);
    } finally { await f.close(); }
  });
});
