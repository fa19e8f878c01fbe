/** /jobs over HTTP: every endpoint, its errors (400/404/409/413), summaries and pass@k, in one process without Redis. */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import { once } from "node:events";
import { connect } from "node:net";
import type { AddressInfo } from "node:net";
import { testApp } from "./helpers.js";

type App = Awaited<ReturnType<typeof testApp>>;
const apps: App[] = [];
async function app(env: Record<string, string> = {}) {
  const a = await testApp({ ASSAY_JOB_CHUNK: "7", ...env });
  apps.push(a);
  return a;
}
after(async () => {
  for (const a of apps) await a.runtime.close();
});

const jsonl = (items: unknown[]) => items.map((i) => (typeof i === "string" ? i : JSON.stringify(i))).join("\n") + "\n";

async function waitDone(a: App, id: string, ms = 20_000) {
  const t0 = Date.now();
  for (;;) {
    const r = await request(a.app).get(`/jobs/${id}`).expect(200);
    if (["done", "failed", "cancelled"].includes(r.body.status)) return r.body;
    if (Date.now() - t0 > ms) throw new Error(`job ${id} still ${r.body.status} after ${ms} ms: ${JSON.stringify(r.body)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function submit(a: App, body: string, query = "") {
  return request(a.app).post(`/jobs${query}`).set("content-type", "application/x-ndjson").send(body);
}

test("JSONL job: scored in input order, bad lines become invalid results, counts and summary add up", async () => {
  const a = await app();
  const items = Array.from({ length: 40 }, (_, i) => ({ id: i, verifier: "exact", response: i % 4 === 0 ? "wrong" : "paris", reference: "Paris" }));
  const lines = [...items.slice(0, 10).map((x) => JSON.stringify(x)), "{not json", "", "[1,2]", ...items.slice(10).map((x) => JSON.stringify(x))];
  const created = await submit(a, lines.join("\r\n") + "\r\n").expect(201);
  assert.equal(created.body.total, 43); // the blank line keeps its place (an invalid result), so result N is line N
  assert.equal(created.body.status, "queued");
  assert.equal(created.headers.location, `/jobs/${created.body.id}`);
  const job = await waitDone(a, created.body.id);
  assert.equal(job.status, "done");
  assert.equal(job.done, 43);
  assert.deepEqual(job.counts, { ok: 40, error: 0, invalid: 3 });
  assert.equal(job.mean_reward, 0.75);
  assert.equal(job.summary.mean_reward, 0.75);
  assert.equal(job.summary.histogram.bins[0].count, 10);
  assert.equal(job.summary.histogram.bins[9].count, 30);
  assert.equal(job.summary.slowest.length, 5);
  assert.equal(job.summary.groups, null); // no prompts: nothing to group
  assert.ok(job.items_per_s > 0);
  assert.equal(job.eta_s, 0);

  const res = await request(a.app).get(`/jobs/${created.body.id}/results`).expect(200);
  assert.match(res.headers["content-type"], /application\/x-ndjson/);
  const out = res.text.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(out.length, 43);
  assert.deepEqual(out.slice(0, 10).map((r) => r.id), [...Array(10).keys()]);
  assert.equal(out[10].status, "invalid");
  assert.match(out[10].reason, /item 11 is not valid JSON/);
  assert.equal(out[11].status, "invalid");
  assert.match(out[11].reason, /item 12 is a blank line/);
  assert.match(out[12].reason, /item 13 must be a JSON object/); // "[1,2]" is line 13
  assert.deepEqual(out.slice(13).map((r) => r.id), [...Array(30).keys()].map((i) => i + 10));
  assert.equal(out[13].reward, 1);
  assert.equal(out[2 + 13].reward, 0); // id 12 % 4 == 0

  const from = await request(a.app).get(`/jobs/${created.body.id}/results?from=41`).expect(200);
  assert.deepEqual(from.text.trim().split("\n").map((l) => JSON.parse(l).id), [38, 39]);

  const list = await request(a.app).get("/jobs").expect(200);
  assert.equal(list.body.jobs[0].id, created.body.id);
  assert.equal(list.body.jobs[0].summary, undefined);
});

test("several samples per prompt: unbiased pass@k and per-prompt mean reward", async () => {
  const a = await app();
  // Prompt A: 4 samples, 1 correct. Prompt B: 4 samples, 3 correct. Prompt C: 1 sample, wrong.
  const right = [["A", 1], ["A", 0], ["A", 0], ["A", 0], ["B", 1], ["B", 1], ["B", 0], ["B", 1], ["C", 0]] as const;
  const items = right.map(([p, ok]) => ({ verifier: "exact", prompt: p, response: ok ? "yes" : "no", reference: "yes" }));
  const { body } = await submit(a, jsonl(items), "?k=1,2,4").expect(201);
  const job = await waitDone(a, body.id);
  const g = job.summary.groups;
  assert.equal(g.field, "prompt");
  assert.equal(g.count, 3);
  // pass@1 = mean(1/4, 3/4, 0/1) over 3 groups; pass@2 over A and B: A 1-C(3,2)/C(4,2)=0.5, B 1.
  assert.ok(Math.abs(g.pass_at_k["1"].value - (0.25 + 0.75 + 0) / 3) < 1e-12);
  assert.equal(g.pass_at_k["1"].groups, 3);
  assert.ok(Math.abs(g.pass_at_k["2"].value - 0.75) < 1e-12);
  assert.equal(g.pass_at_k["2"].groups, 2);
  assert.equal(g.pass_at_k["4"].value, 1); // any 4 of A's 4 samples hold its correct one; same for B
  assert.equal(g.pass_at_k["4"].groups, 2);
  assert.deepEqual(g.per_group.map((x: any) => [x.group, x.samples, x.passed, x.mean_reward]), [["A", 4, 1, 0.25], ["B", 4, 3, 0.75], ["C", 1, 0, 0]]);
});

test("group_by an explicit field outside RewardItem: grouped on it, and removed before scoring", async () => {
  const a = await app();
  const items = [0, 1, 2, 3].map((i) => ({ problem: `p${i % 2}`, verifier: "exact", response: i < 2 ? "x" : "y", reference: "x" }));
  const { body } = await submit(a, jsonl(items), "?group_by=problem&pass_threshold=0.5").expect(201);
  const job = await waitDone(a, body.id);
  assert.deepEqual(job.counts, { ok: 4, error: 0, invalid: 0 });
  assert.equal(job.summary.groups.field, "problem");
  assert.deepEqual(job.summary.groups.per_group.map((x: any) => [x.group, x.passed]), [["p0", 1], ["p1", 1]]);
  assert.equal(job.summary.groups.pass_at_k["1"].value, 0.5);
  assert.equal(job.options.pass_threshold, 0.5);
});

test("JSON body {items, ...options} is validated from openapi.yaml", async () => {
  const a = await app();
  const ok = await request(a.app).post("/jobs").send({ verifier: "exact", items: [{ response: "a", reference: "a" }, { response: "b", reference: "a" }] }).expect(201);
  const job = await waitDone(a, ok.body.id);
  assert.equal(job.mean_reward, 0.5);
  const bad = await request(a.app).post("/jobs").send({ items: "nope" }).expect(400);
  assert.equal(bad.body.field, "items");
  const extra = await request(a.app).post("/jobs").send({ items: [{}], colour: "red" }).expect(400);
  assert.match(extra.body.error, /colour|unevaluated|additional/i);
  await request(a.app).post("/jobs").send({ items: [] }).expect(400);
  const k = await request(a.app).post("/jobs").send({ items: [{}], k: [0] }).expect(400);
  assert.equal(k.body.field, "k.0");
});

test("multipart upload: option fields, then the file", async () => {
  const a = await app();
  const text = jsonl([{ response: "a", reference: "a" }, { response: "a", reference: "a" }, { response: "c", reference: "a" }]);
  const r = await request(a.app).post("/jobs").field("verifier", "exact").attach("file", Buffer.from(text), "data.jsonl").expect(201);
  assert.equal(r.body.total, 3);
  const job = await waitDone(a, r.body.id);
  assert.deepEqual(job.counts, { ok: 3, error: 0, invalid: 0 });
  assert.equal(job.options.verifier, "exact");
  const none = await request(a.app).post("/jobs").field("verifier", "exact").expect(400);
  assert.equal(none.body.field, "file");
  const badField = await request(a.app).post("/jobs").field("colour", "red").attach("file", Buffer.from(text), "d.jsonl").expect(400);
  assert.match(badField.body.error, /colour/);
  const late = await request(a.app).post("/jobs").attach("file", Buffer.from(text), "d.jsonl").field("verifier", "exact").expect(400);
  assert.match(late.body.error, /"verifier" comes after the file/);
  // A second file was dropped unread (the job scored the first alone), and a repeated field was last-wins.
  const two = await request(a.app).post("/jobs").field("verifier", "exact").attach("file", Buffer.from(text), "a.jsonl").attach("file2", Buffer.from(text), "b.jsonl").expect(400);
  assert.match(two.body.error, /more than one file/);
  const twice = await request(a.app).post("/jobs").field("verifier", "exact").field("verifier", "math").attach("file", Buffer.from(text), "d.jsonl").expect(400);
  assert.match(twice.body.error, /"verifier" is given more than once/);
  assert.equal(twice.body.field, "verifier");
  const listed = (await request(a.app).get("/jobs").expect(200)).body.jobs;
  assert.equal(listed.length, 1, "the refused uploads left no job");
});

test("a multipart upload the client cuts off leaves no job and no items behind", async () => {
  const a = await app();
  const store = await a.runtime.services.store();
  const created: string[] = [];
  const create = store.jobs.create.bind(store.jobs);
  store.jobs.create = (id, options) => (created.push(id), create(id, options));
  const server = a.app.listen(0, "127.0.0.1");
  await once(server, "listening");
  try {
    const { port } = server.address() as AddressInfo;
    const sock = connect(port, "127.0.0.1");
    await once(sock, "connect");
    const head = "--XX\r\nContent-Disposition: form-data; name=\"verifier\"\r\n\r\nexact\r\n" +
      "--XX\r\nContent-Disposition: form-data; name=\"file\"; filename=\"d.jsonl\"\r\nContent-Type: application/octet-stream\r\n\r\n";
    sock.write(`POST /jobs HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=XX\r\nContent-Length: 10000000\r\n\r\n${head}`);
    sock.write(jsonl(Array(2500).fill({ response: "a", reference: "a" }))); // over one stored slice (2,000 items)
    for (let i = 0; i < 200 && !(created.length && (await store.jobs.items(created[0]!, 0, 100)).length); i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(created.length, 1, "the upload began");
    assert.ok((await store.jobs.items(created[0]!, 0, 100)).length > 0, "its first items were stored");
    sock.destroy();
    let row = await store.jobs.find(created[0]!);
    for (let i = 0; i < 200 && row; i++) {
      await new Promise((r) => setTimeout(r, 25));
      row = await store.jobs.find(created[0]!);
    }
    // Before: the job stayed `uploading` with its items until the server restarted.
    assert.equal(row, undefined, `the cut-off upload is still stored: ${JSON.stringify(row)}`);
    assert.equal((await store.jobs.items(created[0]!, 0, 100)).length, 0);
    await submit(a, jsonl([{ verifier: "exact", response: "a", reference: "a" }])).expect(201); // still serving
  } finally {
    server.close();
  }
});

test("400s: bad options in the query, an empty dataset, bad results parameters", async () => {
  const a = await app();
  const line = jsonl([{ verifier: "exact", response: "a", reference: "a" }]);
  assert.equal((await submit(a, line, "?k=1,x").expect(400)).body.field, "k.1");
  assert.match((await submit(a, line, "?colour=red").expect(400)).body.error, /colour/);
  assert.equal((await submit(a, line, "?deadline_ms=0").expect(400)).body.field, "deadline_ms");
  assert.match((await submit(a, "\n\n").expect(400)).body.error, /no items/);
  const { body } = await submit(a, line).expect(201);
  await waitDone(a, body.id);
  assert.equal((await request(a.app).get(`/jobs/${body.id}/results?from=-1`).expect(400)).body.field, "from");
  for (const bad of ["0x2", "1e1", "", "2&from=3", " 2"]) assert.equal((await request(a.app).get(`/jobs/${body.id}/results?from=${bad}`).expect(400)).body.field, "from", bad);
  assert.equal((await request(a.app).get("/jobs?limit=0x10").expect(400)).body.field, "limit");
  assert.equal((await request(a.app).get(`/jobs/${body.id}/results?follow=maybe`).expect(400)).body.field, "follow");
  assert.equal((await request(a.app).get("/jobs?limit=0").expect(400)).body.field, "limit");
});

test("413: over the upload's byte cap or item cap, and nothing is left behind", async () => {
  const a = await app({ ASSAY_JOB_MAX_BODY: "2kb", ASSAY_JOB_MAX_ITEMS: "5" });
  const item = { verifier: "exact", response: "a", reference: "a" };
  const big = await submit(a, jsonl(Array(100).fill(item))).expect(413);
  assert.match(big.body.error, /ASSAY_JOB_MAX_BODY/);
  const many = await submit(a, jsonl(Array(6).fill(item))).expect(413);
  assert.match(many.body.error, /ASSAY_JOB_MAX_ITEMS/);
  await submit(a, jsonl(Array(5).fill(item))).expect(201);
  const list = await request(a.app).get("/jobs").expect(200);
  assert.equal(list.body.jobs.length, 1);
  // A large upload that fails is dropped in slices, each its own short transaction (before: one
  // transaction over every item stored, which on SQLite held the event loop for seconds).
  const c = await app({ ASSAY_JOB_MAX_ITEMS: "12000" });
  const store = await c.runtime.services.store();
  const slices: number[] = [];
  const deleteSome = store.jobs.deleteSome.bind(store.jobs);
  store.jobs.deleteSome = async (id: string, rows: number) => (slices.push(rows), deleteSome(id, rows));
  const huge = await submit(c, jsonl(Array(12_001).fill(item))).expect(413);
  assert.match(huge.body.error, /ASSAY_JOB_MAX_ITEMS/);
  assert.ok(slices.length >= 3, `${slices.length} slices of ${slices[0]}`);
  assert.equal((await request(c.app).get("/jobs").expect(200)).body.jobs.length, 0);
  // The JSON body keeps the server-wide cap (ASSAY_MAX_BODY).
  const b = await testApp({ ASSAY_MAX_BODY: "1kb" });
  apps.push(b);
  await request(b.app).post("/jobs").send({ items: Array(100).fill(item) }).expect(413);
});

test("404 for a job that does not exist, on every route", async () => {
  const a = await app();
  for (const [method, path] of [["get", "/jobs/nope"], ["get", "/jobs/nope/results"], ["post", "/jobs/nope/cancel"]] as const) {
    const r = await request(a.app)[method](path).expect(404);
    assert.match(r.body.error, /no job "nope"/);
  }
});

test("results stream while the job runs, in order, and the stream ends when it is done", async () => {
  const a = await app({ ASSAY_BATCH_CONCURRENCY: "4" });
  const items = Array.from({ length: 30 }, (_, i) => ({ id: i, verifier: "test-sleep", response: "", options: { ms: 20 } }));
  const { body } = await submit(a, jsonl(items)).expect(201);
  const running = await request(a.app).get(`/jobs/${body.id}`).expect(200);
  assert.ok(["queued", "running"].includes(running.body.status));
  // Mid-run, the summary (a scan of every result) comes only when asked for.
  assert.equal(running.body.summary, undefined);
  const asked = await request(a.app).get(`/jobs/${body.id}?summary=true`).expect(200);
  assert.ok(asked.body.summary.histogram);
  assert.equal((await request(a.app).get(`/jobs/${body.id}?summary=maybe`).expect(400)).body.field, "summary");
  const res = await request(a.app).get(`/jobs/${body.id}/results`).expect(200);
  assert.deepEqual(res.text.trim().split("\n").map((l) => JSON.parse(l).id), [...Array(30).keys()]);
  const job = await request(a.app).get(`/jobs/${body.id}`).expect(200);
  assert.equal(job.body.status, "done");
  // follow=false: what is there now, without waiting.
  const now = await request(a.app).get(`/jobs/${body.id}/results?follow=false&from=29`).expect(200);
  assert.equal(now.text.trim().split("\n").length, 1);
});

test("cancel: a running job stops, keeps what it scored, and cannot be cancelled twice; the next job runs", async () => {
  const a = await app({ ASSAY_BATCH_CONCURRENCY: "2", ASSAY_JOB_CHUNK: "2" });
  const slow = Array.from({ length: 2500 }, (_, i) => ({ id: i, verifier: "test-sleep", response: "", options: { ms: 20 } }));
  const { body } = await submit(a, jsonl(slow)).expect(201);
  const second = await submit(a, jsonl([{ verifier: "exact", response: "a", reference: "a" }])).expect(201);
  await new Promise((r) => setTimeout(r, 100));
  const c = await request(a.app).post(`/jobs/${body.id}/cancel`).expect(200);
  assert.equal(c.body.status, "cancelled");
  assert.ok(c.body.done < 2500);
  const again = await request(a.app).post(`/jobs/${body.id}/cancel`).expect(409);
  assert.match(again.body.error, /cancelled already/);
  const next = await waitDone(a, second.body.id);
  assert.equal(next.status, "done");
  const after = await request(a.app).get(`/jobs/${body.id}`).expect(200);
  assert.equal(after.body.status, "cancelled");
  // One line per item still (before: the unscored ones were skipped, so `assay score -o` wrote
  // result N on another item's line and a resumed download, ?from=<lines>, repeated rows).
  const res = await request(a.app).get(`/jobs/${body.id}/results`).expect(200);
  const lines = res.text.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines.length, 2500, "past the store's pages of 1000");
  const scored = lines.filter((l) => l.id !== null);
  assert.equal(scored.length, after.body.done);
  for (const [i, l] of lines.entries()) {
    if (l.id !== null) assert.equal(l.id, i, "result N is item N");
    else assert.deepEqual([l.status, l.reward, l.reason], ["error", null, "not scored: the job was cancelled before this item was scored"]);
  }
  const tail = await request(a.app).get(`/jobs/${body.id}/results?from=1500`).expect(200);
  assert.deepEqual(tail.text.trim().split("\n").map((l) => JSON.parse(l)), lines.slice(1500));
});

test("a store error while a job runs is a retry, not the job's end; an error that stays fails it", async () => {
  const a = await app();
  const store = await a.runtime.services.store();
  const pending = store.jobs.pending.bind(store.jobs);
  let throws = 2;
  store.jobs.pending = async (...args: Parameters<typeof pending>) => {
    if (throws > 0) {
      throws--;
      throw new Error("Connection terminated unexpectedly");
    }
    return pending(...args);
  };
  const items = Array.from({ length: 20 }, (_, i) => ({ id: i, verifier: "exact", response: "a", reference: "a" }));
  const { body } = await submit(a, jsonl(items)).expect(201);
  // Before: the first error finished the job "failed" with no result.
  const job = await waitDone(a, body.id);
  assert.equal(job.status, "done", JSON.stringify(job));
  assert.equal(job.done, 20);
  assert.equal(throws, 0);
  throws = Infinity;
  const stuck = await submit(a, jsonl(items.slice(0, 3))).expect(201);
  const failed = await waitDone(a, stuck.body.id, 30_000);
  assert.equal(failed.status, "failed");
  assert.match(failed.error, /internal error: Connection terminated unexpectedly/);
  store.jobs.pending = pending;
});

test("hostile lines: 1 MB of nesting is an invalid result, a 1 MB prompt is a group whose label is cut; the server keeps serving", async () => {
  const a = await app();
  const deep = "[".repeat(1 << 20);
  const prompt = "p".repeat(1 << 20);
  const lines = [deep, JSON.stringify({ verifier: "exact", prompt, response: "a", reference: "a" }), JSON.stringify({ verifier: "exact", prompt, response: "b", reference: "a" })];
  const t0 = performance.now();
  const { body } = await submit(a, lines.join("\n")).expect(201);
  const job = await waitDone(a, body.id);
  const ms = performance.now() - t0;
  assert.ok(ms < 5000, `took ${ms} ms`);
  assert.deepEqual(job.counts, { ok: 2, error: 0, invalid: 1 });
  const res = await request(a.app).get(`/jobs/${body.id}/results`).expect(200);
  const out = res.text.trim().split("\n").map((l) => JSON.parse(l));
  assert.match(out[0].reason, /item 1 is nested deeper than 64 levels/);
  const g = job.summary.groups;
  assert.equal(g.count, 1);
  assert.equal(g.per_group[0].group.length, 201);
  assert.equal(g.per_group[0].mean_reward, 0.5);
  await request(a.app).get("/healthz").expect(200);
});

test("NUL characters: an escaped one in a prompt and a raw one in a line are stored on every store (PostgreSQL's text holds none)", async () => {
  // Before: on PostgreSQL each of these uploads was a 500 ("invalid byte sequence for encoding UTF8: 0x00").
  const a = await app();
  const lines = [
    JSON.stringify({ verifier: "exact", prompt: "a\u0000b", response: "x", reference: "x" }),
    '{"verifier":"exact","prompt":"a\\u0000b","response":"y\u0000","reference":"y"}', // a raw NUL inside a JSON string (TypeScript's \u0000 is the character)
    "\u0000",
  ];
  const { body } = await submit(a, lines.join("\n") + "\n").expect(201);
  const job = await waitDone(a, body.id);
  assert.equal(job.total, 3);
  const out = (await request(a.app).get(`/jobs/${body.id}/results`).expect(200)).text.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(out[0].reward, 1);
  assert.equal(out[1].reward, 0, "the raw NUL reads as U+FFFD: y\uFFFD is not y");
  assert.equal(out[2].status, "invalid");
  assert.equal(job.summary.groups.per_group[0].group, "a\uFFFDb");
  const viaJson = await request(a.app).post("/jobs").send({ verifier: "exact", items: [{ prompt: "p\u0000", response: "a", reference: "a" }] }).expect(201);
  assert.equal((await waitDone(a, viaJson.body.id)).counts.ok, 1);
});

test("DELETE /jobs/{id}: a finished job goes with its items and results; a running one is cancelled and goes; 404 after", async () => {
  const a = await app({ ASSAY_BATCH_CONCURRENCY: "2", ASSAY_JOB_CHUNK: "2" });
  const store = await a.runtime.services.store();
  const done = await submit(a, jsonl(Array.from({ length: 12 }, (_, i) => ({ id: i, verifier: "exact", response: "a", reference: "a" })))).expect(201);
  await waitDone(a, done.body.id);
  assert.equal((await store.jobs.results(done.body.id, 0, 100)).length, 12);
  await request(a.app).delete(`/jobs/${done.body.id}`).expect(204);
  for (const path of [`/jobs/${done.body.id}`, `/jobs/${done.body.id}/results`]) await request(a.app).get(path).expect(404);
  await request(a.app).delete(`/jobs/${done.body.id}`).expect(404);
  assert.equal(await store.jobs.find(done.body.id), undefined);
  assert.deepEqual([(await store.jobs.items(done.body.id, 0, 100)).length, (await store.jobs.results(done.body.id, 0, 100)).length], [0, 0]);
  assert.equal((await request(a.app).get("/jobs").expect(200)).body.jobs.some((j: { id: string }) => j.id === done.body.id), false);

  // running: cancelled, then deleted; a results stream that follows it ends; the next job runs
  const slow = await submit(a, jsonl(Array.from({ length: 200 }, (_, i) => ({ id: i, verifier: "test-sleep", response: "", options: { ms: 20 } })))).expect(201);
  const next = await submit(a, jsonl([{ verifier: "exact", response: "a", reference: "a" }])).expect(201);
  await new Promise((r) => setTimeout(r, 100));
  const following = request(a.app).get(`/jobs/${slow.body.id}/results`).then((r) => r);
  await new Promise((r) => setTimeout(r, 50));
  await request(a.app).delete(`/jobs/${slow.body.id}`).expect(204);
  assert.equal((await following).status, 200);
  await request(a.app).get(`/jobs/${slow.body.id}`).expect(404);
  assert.equal(await store.jobs.find(slow.body.id), undefined);
  assert.equal((await waitDone(a, next.body.id)).status, "done");
  // nothing of the deleted job came back later (a chunk in flight when it went)
  await new Promise((r) => setTimeout(r, 200));
  assert.equal((await store.jobs.results(slow.body.id, 0, 1000)).length, 0);
});

test("ASSAY_JOB_RETENTION_DAYS: finished jobs older than it are deleted; younger ones, unfinished ones, and everything with 0 stay", async () => {
  const a = await app({ ASSAY_JOB_RETENTION_DAYS: "30" });
  const jobs = await a.runtime.services.jobs();
  const one = await submit(a, jsonl([{ verifier: "exact", response: "a", reference: "a" }])).expect(201);
  await waitDone(a, one.body.id);
  assert.equal(await jobs.sweep(Date.now() + 29 * 86_400_000), 0, "finished 29 days ago: kept");
  await request(a.app).get(`/jobs/${one.body.id}`).expect(200);
  assert.equal(await jobs.sweep(Date.now() + 31 * 86_400_000), 1, "finished 31 days ago: deleted");
  await request(a.app).get(`/jobs/${one.body.id}`).expect(404);

  const keep = await app({ ASSAY_JOB_RETENTION_DAYS: "0" });
  const kept = await submit(keep, jsonl([{ verifier: "exact", response: "a", reference: "a" }])).expect(201);
  await waitDone(keep, kept.body.id);
  assert.equal(await (await keep.runtime.services.jobs()).sweep(Date.now() + 10 * 365 * 86_400_000), 0);
  await request(keep.app).get(`/jobs/${kept.body.id}`).expect(200);
});

test("a delete cut off between slices is finished at the next start, never shown half-deleted", async () => {
  const a = await app();
  const store = await a.runtime.services.store();
  const { body } = await submit(a, jsonl(Array.from({ length: 30 }, () => ({ verifier: "exact", response: "a", reference: "a" })))).expect(201);
  await waitDone(a, body.id);
  assert.equal(await store.jobs.deleteSome(body.id, 10), false); // 10 of 60 rows gone, then "the server stops"
  await request(a.app).get(`/jobs/${body.id}`).expect(404);
  assert.equal((await request(a.app).get("/jobs").expect(200)).body.jobs.some((j: { id: string }) => j.id === body.id), false);
  assert.equal(await store.jobs.dropUnsealed(), 1); // what a start does
  assert.equal(await store.jobs.find(body.id), undefined);
  assert.equal((await store.jobs.items(body.id, 0, 100)).length, 0);
});

test("a JSONL line's cap counts UTF-8 bytes: 6 Mi CJK characters (18 MiB) are over 16 MiB", async () => {
  const { lines } = await import("../src/server/routes/jobs.js");
  async function* chunks(text: string) {
    const buf = Buffer.from(text);
    for (let i = 0; i < buf.length; i += 65_536) yield buf.subarray(i, i + 65_536);
  }
  const read = async (text: string) => {
    const out: number[] = [];
    for await (const l of lines(chunks(text), 1 << 30)) out.push(l.length);
    return out;
  };
  // Before: the cap counted UTF-16 units (6 Mi), and the 18 MiB line was taken.
  await assert.rejects(read("中".repeat(6 * 1024 * 1024) + "\n"), /line 1 is over 16777216 bytes/);
  assert.deepEqual(await read("x".repeat(8 * 1024 * 1024) + "\n" + "中".repeat(1000) + "\n"), [8 * 1024 * 1024, 1000]);
});
