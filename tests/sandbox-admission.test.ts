/**
 * Queueing never makes an item null, and overload is refused up front.
 *
 * - Time an item spends waiting for a sandbox slot (RunRequest.queued = ctx.unclocked) does not
 *   count against its deadline; time it spends running does.
 * - The sandbox's backlog (sandbox/load.ts) is estimated from the runs' own limits over the
 *   slots; past ASSAY_SANDBOX_MAX_WAIT_MS a request for a sandboxed verifier is refused with 429
 *   and Retry-After (/reward, /reward/batch). OpenRLHF's /get_reward and NeMo-Gym's /verify,
 *   whose clients cannot use a refusal, are held instead for as long as their caller waits;
 *   /run_code waits within its caller's budget (tests/dropins-run-code.test.ts).
 *   Requests for other verifiers pass.
 * - On the real backends, 32 half-second programs on 2 slots (8 s or more of queue) all score 1
 *   with a deadline of 4.5 s.
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import type { RunOutcome, RunRequest, Sandbox, SandboxLoad } from "../sandbox/types.js";
import { Ledger } from "../sandbox/load.js";
import { parseCpuPressure } from "../src/core/pressure.js";
import { testApp, fakeSandbox } from "./helpers.js";
import { openDockerForTests, openBwrapForTests, type Opened } from "./sandboxes.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ok = (stdout: string): RunOutcome => ({ status: "finished", exitCode: 0, signal: null, stdout, stderr: "", truncated: false, wallMs: 5, cpuMs: 5 });
const item = (over: Record<string, unknown> = {}) => ({
  verifier: "code",
  response: "```python\nprint(int(input()) * 2)\n```",
  reference: { inputs: ["21\n"], outputs: ["42\n"] },
  options: { time_limit_ms: 100 },
  ...over,
});

/**
 * A fake backend: each run waits `queueMs` for a slot (through req.queued), then `runMs` running,
 * of which it reports `cpuWaitMs` as time spent waiting for a CPU (the host's load).
 */
function slowSandbox(queueMs: number, runMs: number, load?: SandboxLoad, cpuWaitMs = 0): Sandbox {
  return {
    name: "fake", languages: ["python"],
    run: async (req: RunRequest) => {
      const slot = sleep(queueMs);
      await (req.queued ? req.queued(slot) : slot);
      const t0 = performance.now();
      await sleep(runMs);
      return { ...ok("42\n"), wallMs: performance.now() - t0, waitMs: Math.min(cpuWaitMs, performance.now() - t0) };
    },
    load: load ? () => load : undefined,
    close: async () => {},
  };
}

describe("waiting for a slot does not count against the item's deadline", () => {
  // ASSAY_MAX_DEADLINE_MS caps the item's deadline at 600 ms.
  const env = { ASSAY_DEADLINE_MS: "600", ASSAY_MAX_DEADLINE_MS: "600" };

  test("1.5 s queued behind other items, 600 ms deadline: scored 1, not null", async () => {
    const { app } = await testApp(env, [], { sandbox: fakeSandbox(slowSandbox(1500, 10)) });
    const res = await request(app).post("/reward").send(item()).expect(200);
    assert.equal(res.body.reward, 1, JSON.stringify(res.body));
    assert.ok(res.body.elapsed_ms >= 1400);
  });

  test("a code part of a combined item: its wait stops its parent's clock too", async () => {
    const { app } = await testApp(env, [], { sandbox: fakeSandbox(slowSandbox(1500, 10)) });
    const part = item();
    const res = await request(app).post("/reward").send({ verifier: "combine", response: part.response, reference: [{ verifier: "code", reference: part.reference, options: part.options }] }).expect(200);
    assert.equal(res.body.reward, 1, JSON.stringify(res.body));
  });

  test("the program's own running time counts: 1.5 s of running past a 600 ms deadline is null", async () => {
    const { app } = await testApp(env, [], { sandbox: fakeSandbox(slowSandbox(0, 1500)) });
    const res = await request(app).post("/reward").send(item()).expect(200);
    assert.equal(res.body.reward, null);
    assert.match(res.body.reason, /deadline of 600 ms exceeded/);
  });

  test("a run's wait for a CPU does not count: 1.5 s of running, 1.4 s of it waiting for a CPU, 600 ms deadline: scored 1", async () => {
    const { app } = await testApp(env, [], { sandbox: fakeSandbox(slowSandbox(0, 1500, undefined, 1400)) });
    const res = await request(app).post("/reward").send(item()).expect(200);
    assert.equal(res.body.reward, 1, JSON.stringify(res.body));
  });

  test("tests run side by side are charged their own time once, not once each", async () => {
    // Four tests at once (concurrency 4), each 400 ms of its own: 400 ms of the item's 600 ms, not 1.6 s.
    const { app } = await testApp(env, [], { sandbox: fakeSandbox(slowSandbox(0, 400)) });
    const res = await request(app).post("/reward").send(item({ reference: { inputs: Array(4).fill("21\n"), outputs: Array(4).fill("42\n") } })).expect(200);
    assert.equal(res.body.reward, 1, JSON.stringify(res.body));
  });

  test("a batch whose items queue one after another: every item scores", async () => {
    // One slot: item k waits k x 150 ms, far past the 600 ms deadline for the last ones.
    let tail: Promise<unknown> = Promise.resolve();
    const serial: Sandbox = {
      name: "fake", languages: ["python"],
      run: async (req) => {
        const mine = tail.then(() => sleep(150));
        tail = mine;
        await (req.queued ? req.queued(mine) : mine);
        return ok("42\n");
      },
      close: async () => {},
    };
    const { app } = await testApp(env, [], { sandbox: fakeSandbox(serial) });
    const res = await request(app).post("/reward/batch").send({ items: Array.from({ length: 12 }, () => item()) }).expect(200);
    assert.deepEqual(res.body.results.map((r: { reward: number | null }) => r.reward), Array(12).fill(1));
  });
});

describe("admission: refused up front past ASSAY_SANDBOX_MAX_WAIT_MS", () => {
  const busy: SandboxLoad = { slots: 4, running: 4, queued: 40, waitMs: 45_000, typicalMs: 4000 };
  const calm: SandboxLoad = { slots: 4, running: 2, queued: 0, waitMs: 0, typicalMs: 50 };

  async function appWith(load: SandboxLoad) {
    const t = await testApp({ ASSAY_SANDBOX_MAX_WAIT_MS: "30000" }, [], { sandbox: fakeSandbox(slowSandbox(0, 1, load)) });
    await t.runtime.services.sandbox(); // started, as after the first code item
    return t;
  }

  test("/reward and /reward/batch: 429 with Retry-After for code items; other verifiers pass", async () => {
    const { app } = await appWith(busy);
    const one = await request(app).post("/reward").send(item()).expect(429);
    assert.equal(one.headers["retry-after"], "15");
    assert.match(one.body.error, /sandbox busy/);
    // Under the configured bound, both the slots and the bound itself are what to raise.
    assert.match(one.body.error, /\(or raise ASSAY_SANDBOX_POOL \/ ASSAY_SANDBOX_MAX_WAIT_MS\)$/);
    await request(app).post("/reward/batch").send({ items: [{ verifier: "exact", response: "a", reference: "a" }, item()] }).expect(429);
    const text = await request(app).post("/reward/batch").send({ items: [{ verifier: "exact", response: "a", reference: "a" }] }).expect(200);
    assert.equal(text.body.results[0].reward, 1);
  });

  test("a code part inside a composed item counts: combine (both reference shapes) and calibrated get 429; text-only ones pass", async () => {
    const { app } = await appWith(busy);
    const code = item();
    const exact = { verifier: "exact", reference: "a" };
    await request(app).post("/reward").send({ verifier: "combine", response: code.response, reference: [exact, { verifier: "code", reference: code.reference }] }).expect(429);
    await request(app).post("/reward").send({ verifier: "combine", response: code.response, reference: { parts: [{ verifier: "code", reference: code.reference }] } }).expect(429);
    await request(app).post("/reward").send({ verifier: "calibrated", response: code.response, reference: { verifier: "code", reference: code.reference } }).expect(429);
    // nested: a combination whose part is a combination with a code part
    await request(app).post("/reward").send({ verifier: "combine", response: code.response, reference: [exact, { verifier: "combine", reference: [{ verifier: "code", reference: code.reference }] }] }).expect(429);
    const text = await request(app).post("/reward").send({ verifier: "combine", response: "a", reference: [exact, { verifier: "exact", reference: "b" }] }).expect(200);
    assert.notEqual(text.body.status, undefined);
    // malformed references are the scorer's to reject, never admission's to crash on
    await request(app).post("/reward").send({ verifier: "combine", response: "a", reference: { parts: "x" } }).expect(400);
  });

  const getReward = (app: Parameters<typeof request>[0]) => request(app).post("/get_reward").send({ query: ["```python\nprint(int(input()) * 2)\n```"], labels: [JSON.stringify(item())] });
  const verify = (app: Parameters<typeof request>[0]) => request(app).post("/verify").send({
    responses_create_params: { input: "x" }, verifier: "code", reference: item().reference, options: item().options,
    response: { output: [{ type: "message", content: [{ type: "output_text", text: item().response }] }] },
  });

  test("OpenRLHF's /get_reward and NeMo-Gym's /verify are held, not refused, past the bound: a 429 buys OpenRLHF one second of its five tries and fails NeMo-Gym's rollout", async () => {
    const { app } = await appWith(busy); // 45 s of backlog, bound 30 s: /reward is refused (above)
    const orl = await getReward(app).expect(200);
    assert.deepEqual([orl.body.rewards, orl.body.extra_logs.assay_unscored], [[1], [0]], JSON.stringify(orl.body));
    const ng = await verify(app).expect(200);
    assert.equal(ng.body.reward, 1, JSON.stringify(ng.body));
    assert.equal(ng.body.mask_sample, undefined);
  });

  test("past what the caller waits, less its items' own time, they are refused with that in the message", async () => {
    // OpenRLHF waits 180 s a try; a code item with a 100 ms limit gets the 10 s default deadline.
    const { app } = await appWith({ ...busy, waitMs: 175_000 });
    const orl = await getReward(app).expect(429);
    assert.match(orl.body.error, /past the bound of 170 s \(OpenRLHF's client waits 180 s for an answer, 10 s of it for scoring\)/);
    assert.match(orl.body.error, /raise ASSAY_SANDBOX_POOL, or have the trainer send fewer requests at once\)$/);
    // The bound is the caller's wait here, not the configured one: that setting is not named.
    assert.doesNotMatch(orl.body.error, /MAX_WAIT_MS/);
    assert.equal(orl.headers["retry-after"], "5");
    await verify(app).expect(200); // the NeMo-Gym proxy waits 900 s
    const far = await appWith({ ...busy, waitMs: 895_000 });
    const ng = await verify(far.app).expect(429);
    assert.match(ng.body.error, /past the bound of 890 s \(the NeMo-Gym resources server \(assay_client.nemo_gym\) waits 900 s/);
    // An item's own limits are its time: a 30 s CPU limit is a 61 s wall limit, so with 125 s of
    // backlog it is refused where the 100 ms one is held.
    const mid = await appWith({ ...busy, waitMs: 125_000 });
    await getReward(mid.app).expect(200);
    const long = JSON.stringify({ ...item(), options: { time_limit_ms: 30_000 } });
    const two = await request(mid.app).post("/get_reward").send({ query: ["a", "b"], labels: [long, JSON.stringify(item())] }).expect(429);
    assert.match(two.body.error, /OpenRLHF's client waits 180 s for an answer, 6\d s of it for scoring/);
  });

  test("/run_code is not refused on the estimate: it waits for its turn within verl's budget (an early 504 spent verl's three tries in 3 s, issue 27)", async () => {
    const { app } = await appWith(busy);
    const res = await request(app).post("/run_code").send({ code: "print(42)", language: "python" }).expect(200);
    assert.equal(res.body.status, "Success");
  });

  test("items of an accepted batch not yet handed to the sandbox count too (one typical run each)", async () => {
    // 20 s of backlog in the sandbox: under the 30 s bound. A batch of 61 code items runs one at
    // a time (ASSAY_BATCH_CONCURRENCY=1), its first item held: 60 waiting x 1 s / 4 slots = 15 s more.
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const held: Sandbox = {
      name: "fake", languages: ["python"],
      run: async () => {
        await gate;
        return ok("42\n");
      },
      load: () => ({ slots: 4, running: 4, queued: 0, waitMs: 20_000, typicalMs: 1000 }),
      close: async () => {},
    };
    const { app, runtime } = await testApp({ ASSAY_SANDBOX_MAX_WAIT_MS: "30000", ASSAY_BATCH_CONCURRENCY: "1" }, [], { sandbox: fakeSandbox(held) });
    await runtime.services.sandbox();
    const big = request(app).post("/reward/batch").send({ items: Array.from({ length: 61 }, () => item()) }).then((r) => r);
    await sleep(300);
    const refused = await request(app).post("/reward").send(item());
    assert.equal(refused.status, 429, JSON.stringify(refused.body));
    assert.equal(refused.headers["retry-after"], "5");
    open();
    const done = await big;
    assert.equal(done.status, 200);
    assert.equal(done.body.results.length, 61);
  });

  test("CPU pressure past ASSAY_SANDBOX_CPU_PRESSURE_MAX: 429 for code items with Retry-After from the stall; other verifiers pass", async () => {
    const { app, runtime } = await testApp({ ASSAY_SANDBOX_CPU_PRESSURE_MAX: "90" }, [], { sandbox: fakeSandbox(slowSandbox(0, 1)) });
    runtime.scorer.hostPressure = () => ({ some10: 97.5, some60: 80 });
    const res = await request(app).post("/reward").send(item()).expect(429);
    assert.equal(res.headers["retry-after"], "10");
    assert.match(res.body.error, /host overloaded.*97\.5%.*ASSAY_SANDBOX_POOL/);
    await request(app).post("/reward/batch").send({ items: [item()] }).expect(429);
    const text = await request(app).post("/reward/batch").send({ items: [{ verifier: "exact", response: "a", reference: "a" }] }).expect(200);
    assert.equal(text.body.results[0].reward, 1);
    runtime.scorer.hostPressure = () => ({ some10: 60, some60: 80 });
    assert.equal((await request(app).post("/reward").send(item()).expect(200)).body.reward, 1);
    const { app: off, runtime: r2 } = await testApp({ ASSAY_SANDBOX_CPU_PRESSURE_MAX: "0" }, [], { sandbox: fakeSandbox(slowSandbox(0, 1)) });
    r2.scorer.hostPressure = () => ({ some10: 100, some60: 100 });
    assert.equal((await request(off).post("/reward").send(item()).expect(200)).body.reward, 1);
  });

  test("/proc/pressure/cpu is read as PSI writes it", () => {
    assert.deepEqual(parseCpuPressure("some avg10=18.60 avg60=9.34 avg300=4.41 total=20612571\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"), { some10: 18.6, some60: 9.34 });
    assert.equal(parseCpuPressure("garbage"), null);
  });

  test("a calm sandbox admits", async () => {
    const { app } = await appWith(calm);
    const res = await request(app).post("/reward").send(item()).expect(200);
    assert.equal(res.body.reward, 1);
    await request(app).post("/run_code").send({ code: "print(1)", language: "python" }).expect(200);
  });
});

describe("the backlog estimate (sandbox/load.ts)", () => {
  test("0 while a slot is free; queued and running work over the slots past that", () => {
    const l = new Ledger(2);
    const a = l.enter(1000);
    a.start();
    assert.equal(l.load().waitMs, 0);
    const b = l.enter(1000);
    b.start();
    const c = l.enter(1000); // queued
    const w = l.load();
    assert.equal(w.running, 2);
    assert.equal(w.queued, 1);
    assert.ok(w.waitMs > 1400 && w.waitMs <= 1500, String(w.waitMs));
    c.end(false);
    a.end();
    b.end();
    const { typicalMs, ...rest } = l.load();
    assert.deepEqual(rest, { slots: 2, running: 0, queued: 0, waitMs: 0 });
    assert.ok(typicalMs < 100, "two runs that took no time");
  });

  test("runs that end long before their limit shrink the estimate (typical run length)", () => {
    const l = new Ledger(1);
    for (let i = 0; i < 5; i++) {
      const t = l.enter(10_000);
      t.start();
      t.end();
    }
    l.enter(10_000).start();
    for (let i = 0; i < 10; i++) l.enter(10_000);
    assert.ok(l.load().waitMs < 1000, `10 queued 10 s-limit runs whose kind takes ~0 ms: ${l.load().waitMs} ms`);
  });
});

/**
 * 32 programs that each sleep 0.5 s, on 2 slots (8 s or more of queue), with deadlines of 4.5 s
 * (ASSAY_DEADLINE_MS=1 leaves the item's own budget: 3 s wall + 1.5 s margin). Each run has 2.5 s
 * of its wall limit to spare for a slow start on a busy machine.
 */
async function queueOnRealBackend(opened: Opened) {
  const sb = opened.sandbox!;
  after(() => sb.close());
  const { app } = await testApp({ ASSAY_DEADLINE_MS: "1" }, [], { sandbox: fakeSandbox(sb) });
  const items = Array.from({ length: 32 }, (_, i) => item({ id: i, response: "```python\nimport time\ntime.sleep(0.5)\nprint(int(input()) * 2)\n```", options: { time_limit_ms: 1000 } }));
  const t0 = performance.now();
  const res = await request(app).post("/reward/batch").send({ items }).expect(200);
  const rewards = res.body.results.map((r: { reward: number | null }) => r.reward);
  assert.deepEqual(rewards, Array(32).fill(1), JSON.stringify(res.body.results.filter((r: { reward: unknown }) => r.reward !== 1).slice(0, 3)));
  assert.ok(performance.now() - t0 > 4500, "the queue outlasted the deadline, so the test means something");
}

const docker = await openDockerForTests(2);
describe("docker: a queue longer than the deadline", { skip: docker.skip }, () => {
  test("32 half-second programs on 2 containers all score 1", { timeout: 90_000 }, () => queueOnRealBackend(docker));
});

const bwrap = await openBwrapForTests(2);
describe("bwrap: a queue longer than the deadline", { skip: bwrap.skip }, () => {
  test("32 half-second programs on 2 slots all score 1", { timeout: 90_000 }, () => queueOnRealBackend(bwrap));
});
