/**
 * Scale-out on Redis: two `assay worker` processes take a job's chunks; one is SIGKILLed in the
 * middle of a chunk; the job still completes with every item exactly once, in input order.
 * Needs a Redis on 127.0.0.1:6379 (bash scripts/setup-redis.sh): skipped with a notice when there
 * is none, except under CI=true, where it fails.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:net";
import request from "supertest";
import { testApp } from "./helpers.js";
import { openQueue } from "../src/jobs/queue.js";
import { startWorkerProcess, type Proc } from "./jobs-procs.js";

// A database of its own, so that nothing else on this Redis shares the queue.
const REDIS = "redis://127.0.0.1:6379/7";

async function redisAnswers(): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(6379, "127.0.0.1");
    s.setTimeout(1000);
    s.once("connect", () => s.write("PING\r\n"));
    s.once("data", (d) => (s.destroy(), resolve(String(d).startsWith("+PONG"))));
    s.once("error", () => resolve(false));
    s.once("timeout", () => (s.destroy(), resolve(false)));
  });
}

const have = await redisAnswers();
if (!have && process.env.CI === "true") throw new Error("CI=true but no Redis answers on 127.0.0.1:6379; scripts/setup-redis.sh starts one");
if (!have) console.log("jobs-redis tests skipped: no Redis on 127.0.0.1:6379 (bash scripts/setup-redis.sh starts one)");

const procs: Proc[] = [];
after(() => {
  for (const p of procs) p.kill("SIGKILL");
});

test("two workers, one SIGKILLed mid-chunk: the job completes, every item once, in order", { skip: !have, timeout: 180_000 }, async () => {
  const q = openQueue(REDIS);
  await q.obliterate({ force: true });
  await q.close();
  const workerEnv = { ASSAY_REDIS_URL: REDIS, ASSAY_JOB_LEASE_MS: "1000", ASSAY_VERIFIER_PATH: "tests/fixtures/job-verifiers", ASSAY_DATA_DIR: ":memory:" };
  const [a, b] = await Promise.all([startWorkerProcess(workerEnv), startWorkerProcess(workerEnv)]);
  procs.push(a, b);
  const server = await testApp({ ASSAY_REDIS_URL: REDIS, ASSAY_JOB_LOCAL_WORKER: "0", ASSAY_JOB_CHUNK: "20" });
  try {
    const N = 400;
    const items = Array.from({ length: N }, (_, i) => JSON.stringify({ id: i, verifier: "test-slow", response: "", options: { ms: 300 } })).join("\n");
    const created = await request(server.app).post("/jobs").set("content-type", "application/x-ndjson").send(items).expect(201);
    const id = created.body.id as string;

    const started = await a.waitLog((l) => l.msg === "chunk started");
    a.kill("SIGKILL");
    await a.exited;
    const killedChunk = started.chunk as string;
    assert.ok(!a.logs.some((l) => l.msg === "chunk scored" && l.chunk === killedChunk), "worker A died in the middle of its chunk");

    let job: any;
    for (const t0 = Date.now(); ; ) {
      job = (await request(server.app).get(`/jobs/${id}`).expect(200)).body;
      if (job.status !== "running" && job.status !== "queued") break;
      assert.ok(Date.now() - t0 < 120_000, `job still ${job.status} at ${job.done}/${N}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(job.status, "done");
    assert.deepEqual(job.counts, { ok: N, error: 0, invalid: 0 });
    // The chunk A held was taken again, by B.
    assert.ok(b.logs.some((l) => l.msg === "chunk scored" && l.chunk === killedChunk), "worker B scored the dead worker's chunk");

    const res = await request(server.app).get(`/jobs/${id}/results`).expect(200);
    const ids = res.text.trim().split("\n").map((l) => JSON.parse(l).id as number);
    assert.equal(ids.length, N);
    assert.equal(new Set(ids).size, N);
    assert.ok(ids.every((v, i) => v === i));
  } finally {
    await server.runtime.close();
    b.kill();
    await b.exited;
  }
});

test("on Redis, the server takes chunks itself by default; cancelling drops the job's waiting chunks", { skip: !have, timeout: 120_000 }, async () => {
  const q = openQueue(REDIS);
  await q.obliterate({ force: true });
  const server = await testApp({ ASSAY_REDIS_URL: REDIS, ASSAY_JOB_CHUNK: "50", ASSAY_JOB_LEASE_MS: "1000" });
  try {
    const N = 300;
    const items = Array.from({ length: N }, (_, i) => JSON.stringify({ id: i, verifier: "exact", response: String(i % 2), reference: "1" })).join("\n");
    const { body } = await request(server.app).post("/jobs").set("content-type", "application/x-ndjson").send(items).expect(201);
    // Results stream in order even though chunks may come back out of order.
    const res = await request(server.app).get(`/jobs/${body.id}/results`).expect(200);
    const out = res.text.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(out.map((r) => r.id), [...Array(N).keys()]);
    const job = (await request(server.app).get(`/jobs/${body.id}`).expect(200)).body;
    assert.equal(job.status, "done");
    assert.equal(job.mean_reward, 0.5);

    const slow = Array.from({ length: 400 }, (_, i) => JSON.stringify({ id: i, verifier: "test-sleep", response: "", options: { ms: 200 } })).join("\n");
    const s = await request(server.app).post("/jobs").set("content-type", "application/x-ndjson").send(slow).expect(201);
    await new Promise((r) => setTimeout(r, 300));
    const c = await request(server.app).post(`/jobs/${s.body.id}/cancel`);
    assert.equal(c.status, 200, JSON.stringify(c.body));
    assert.equal(c.body.status, "cancelled");
    const counts = await q.getJobCounts("waiting", "prioritized", "delayed");
    assert.equal(counts.waiting + counts.prioritized + counts.delayed, 0, "no chunk of the cancelled job waits on");
    await new Promise((r) => setTimeout(r, 1500));
    const after = (await request(server.app).get(`/jobs/${s.body.id}`).expect(200)).body;
    assert.equal(after.status, "cancelled");
    assert.ok(after.done < 400);
  } finally {
    await server.runtime.close();
    await q.close();
  }
});

test("on Redis, DELETE /jobs/{id} of a running job: 204, and none of its chunks stays in Redis, even one a worker held", { skip: !have, timeout: 120_000 }, async () => {
  const q = openQueue(REDIS);
  await q.obliterate({ force: true });
  const server = await testApp({ ASSAY_REDIS_URL: REDIS, ASSAY_JOB_CHUNK: "20", ASSAY_JOB_LEASE_MS: "1000" });
  try {
    const slow = Array.from({ length: 200 }, (_, i) => JSON.stringify({ id: i, verifier: "test-sleep", response: "", options: { ms: 50 } })).join("\n");
    const s = await request(server.app).post("/jobs").set("content-type", "application/x-ndjson").send(slow).expect(201);
    await new Promise((r) => setTimeout(r, 400));
    await request(server.app).delete(`/jobs/${s.body.id}`).expect(204);
    await request(server.app).get(`/jobs/${s.body.id}`).expect(404);
    // the chunk a worker held comes back and is dropped at the next gather
    let left = -1;
    for (let i = 0; i < 40 && left !== 0; i++) {
      await new Promise((r) => setTimeout(r, 250));
      const jobs = await q.getJobs(["waiting", "prioritized", "delayed", "active", "completed", "failed"], 0, 1000);
      left = jobs.filter((j) => j?.data?.job === s.body.id).length;
    }
    assert.equal(left, 0, "chunks of the deleted job left in Redis");
    const store = await server.runtime.services.store();
    assert.equal(await store.jobs.find(s.body.id), undefined);
    assert.equal((await store.jobs.results(s.body.id, 0, 1000)).length, 0);
  } finally {
    await server.runtime.close();
    await q.close();
  }
});

test("on Redis, 150 finished chunks of a job no server here knows do not hide a later job's chunks", { skip: !have, timeout: 120_000 }, async () => {
  // Before: gather looked at the 100 oldest finished chunks only and left another server's in
  // place, so 100 of them (a server gone for good) kept every later job running forever.
  const q = openQueue(REDIS);
  await q.obliterate({ force: true });
  const gone = await testApp({ ASSAY_REDIS_URL: REDIS, ASSAY_JOB_LOCAL_WORKER: "0", ASSAY_JOB_CHUNK: "1" });
  const items = (n: number) => Array.from({ length: n }, (_, i) => JSON.stringify({ id: i, verifier: "exact", response: "a", reference: "a" })).join("\n");
  await request(gone.app).post("/jobs").set("content-type", "application/x-ndjson").send(items(150)).expect(201);
  await gone.runtime.close(); // its chunks stay in Redis, and its store (in memory) is gone
  const server = await testApp({ ASSAY_REDIS_URL: REDIS, ASSAY_JOB_CHUNK: "100" });
  try {
    for (const t0 = Date.now(); (await q.getJobCounts("completed")).completed < 150; ) {
      assert.ok(Date.now() - t0 < 60_000, "this server's worker scores the other server's chunks");
      await new Promise((r) => setTimeout(r, 100));
    }
    const id = (await request(server.app).post("/jobs").set("content-type", "application/x-ndjson").send(items(10)).expect(201)).body.id as string;
    let job: any;
    for (const t0 = Date.now(); ; ) {
      job = (await request(server.app).get(`/jobs/${id}`).expect(200)).body;
      if (job.status === "done") break;
      assert.ok(Date.now() - t0 < 20_000, `job still ${job.status} at ${job.done}/10`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(job.counts, { ok: 10, error: 0, invalid: 0 });
    assert.equal((await q.getJobCounts("completed")).completed, 150, "the other server's chunks stay for it");
  } finally {
    await server.runtime.close();
    await q.obliterate({ force: true });
    await q.close();
  }
});

test("a cancel in the middle of a re-queue pass: the pass's chunks leave Redis too, none is scored", { skip: !have, timeout: 60_000 }, async () => {
  const q = openQueue(REDIS);
  await q.obliterate({ force: true });
  // No worker anywhere: whatever is queued stays waiting, where it can be counted.
  const server = await testApp({ ASSAY_REDIS_URL: REDIS, ASSAY_JOB_LOCAL_WORKER: "0", ASSAY_JOB_CHUNK: "20" });
  try {
    const store = await server.runtime.services.store();
    const service = await server.runtime.services.jobs();
    let cancelled: Promise<unknown> | undefined;
    const doneIn = store.jobs.doneIn.bind(store.jobs);
    // The pass reads each chunk's progress; halfway through, the job is cancelled (as a DELETE
    // or POST /jobs/{id}/cancel from a user would) before the pass has added its chunks.
    store.jobs.doneIn = async (id, from, to) => {
      if (from === 200 && !cancelled) cancelled = service.cancel(id);
      if (cancelled) await cancelled;
      return doneIn(id, from, to);
    };
    const items = Array.from({ length: 400 }, (_, i) => JSON.stringify({ id: i, verifier: "exact", response: "a", reference: "a" })).join("\n");
    const created = await request(server.app).post("/jobs").set("content-type", "application/x-ndjson").send(items).expect(201);
    for (const t0 = Date.now(); !cancelled; ) {
      assert.ok(Date.now() - t0 < 20_000, "the pass never reached the middle of the job");
      await new Promise((r) => setTimeout(r, 20));
    }
    await cancelled;
    assert.equal((await request(server.app).get(`/jobs/${created.body.id}`).expect(200)).body.status, "cancelled");
    let counts: Record<string, number> = {};
    // The pass finishes within milliseconds of the cancel; give it ample time, then count.
    for (const t0 = Date.now(); Date.now() - t0 < 1500; ) {
      await new Promise((r) => setTimeout(r, 100));
      counts = await q.getJobCounts("waiting", "prioritized", "delayed", "active");
    }
    // Before: the pass added all 20 chunks after the cancel had removed the (none) it found.
    assert.equal(Object.values(counts).reduce((a, b) => a + b, 0), 0, `chunks still queued: ${JSON.stringify(counts)}`);
  } finally {
    await server.runtime.close();
    await q.close();
  }
});

test("Redis unreachable: POST /jobs still answers 201 with the job stored, and the server still shuts down", { timeout: 60_000 }, async () => {
  // Nothing listens on port 1. Before, the submit awaited its chunks' queueing, which ioredis
  // holds until Redis answers (maxRetriesPerRequest: null): the request never ended, and an
  // error there answered 500 for a job that was stored and would run (a client submits it twice).
  const server = await testApp({ ASSAY_REDIS_URL: "redis://127.0.0.1:1/0", ASSAY_JOB_LOCAL_WORKER: "0" });
  try {
    const t0 = Date.now();
    const res = await request(server.app)
      .post("/jobs")
      .set("content-type", "application/x-ndjson")
      .send(JSON.stringify({ verifier: "exact", response: "a", reference: "a" }) + "\n")
      .timeout(20_000);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.ok(Date.now() - t0 < 15_000, `${Date.now() - t0} ms`);
    const view = await request(server.app).get(`/jobs/${res.body.id}`).expect(200);
    assert.ok(["queued", "running"].includes(view.body.status), view.body.status);
  } finally {
    // And the shutdown ends: it drops the connections that wait for Redis.
    const t1 = Date.now();
    await server.runtime.close();
    assert.ok(Date.now() - t1 < 20_000, `close took ${Date.now() - t1} ms`);
  }
});
