/**
 * The math verifier through its worker pool and the HTTP service: scoring, a hard deadline that
 * kills a stuck worker (status error, reward null) while other requests are still served, and
 * recovery afterwards. Uses a test-only hook (ASSAY_MATH_TEST_HOOKS=1) that makes a worker spin
 * forever: a pathological input no cap catches, without depending on which inputs are slow today.
 */

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import type { Server } from "node:http";
import { testApp } from "../../tests/helpers.js";
import { BUSY_MARKER, CRASH_MARKER, SPIN_MARKER } from "./worker.js";
import { DeadlineExceeded, MathPool } from "./pool.js";
import { resolveOptions } from "./options.js";
import { math, mathPoolStats } from "./index.js";
import { quiet } from "../../tests/helpers.js";
import type { VerifyContext } from "../../src/core/verifier.js";
import { tempDir } from "../../tests/scratch.js";

let server: Server;
let base: string;
let close: () => Promise<void>;
let scorer: Awaited<ReturnType<typeof testApp>>["scorer"];

async function post(path: string, body: unknown) {
  const res = await fetch(base + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as any };
}

before(async () => {
  const t = await testApp({ ASSAY_WORKERS: "2", ASSAY_MATH_TEST_HOOKS: "1" });
  const { app, registry } = t;
  scorer = t.scorer;
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  close = () => registry.close();
});
after(async () => {
  await close();
  await new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); });
});

test("POST /reward scores a math item in the pool", async () => {
  const { status, json } = await post("/reward", { id: 1, verifier: "math", response: "so \\boxed{\\dfrac{1}{2}}", reference: "0.5" });
  assert.equal(status, 200);
  assert.equal(json.status, "ok");
  assert.equal(json.reward, 1);
  assert.equal(json.details.method, "exact");
  const wrong = await post("/reward", { verifier: "math", response: "\\boxed{0.33}", reference: "\\frac{1}{3}" });
  assert.equal(wrong.json.reward, 0);
  assert.equal(wrong.json.status, "ok");
  const none = await post("/reward", { verifier: "math", response: "I am not sure.", reference: "3" });
  assert.deepEqual([none.json.reward, none.json.reason], [0, "no answer found"]);
});

test("a reference with no answer in it is status invalid, not a 0", async () => {
  for (const response of ["\\boxed{8}", ""]) {
    const { json } = await post("/reward/batch", { items: [{ verifier: "math", response, reference: "$,$" }] });
    const [r] = json.results;
    assert.deepEqual([r.status, r.reward], ["invalid", null]);
    assert.match(r.reason, /no answer once extracted/);
    const single = await post("/reward", { verifier: "math", response, reference: "$,$" });
    assert.equal(single.status, 400); // the single-item endpoint answers an invalid item with 400
  }
  const ok = await post("/reward", { verifier: "math", response: "\\boxed{4, 8}", reference: "8$,$4" });
  assert.deepEqual([ok.json.status, ok.json.reward], ["ok", 1]);
});

test("options are validated by the schema", async () => {
  const { status, json } = await post("/reward", { verifier: "math", response: "1", reference: "1", options: { precision: "six" } });
  assert.equal(status, 400);
  assert.equal(json.field, "options");
});

test("a stuck worker is killed at the deadline; other requests are served meanwhile", async () => {
  const t0 = Date.now();
  const stuck = post("/reward/batch", {
    deadline_ms: 1500,
    items: [
      { id: "spin", verifier: "math", response: SPIN_MARKER, reference: "1" },
      { id: "fine", verifier: "math", response: "\\boxed{2}", reference: "2" },
    ],
  });
  // While one worker spins, the other keeps answering.
  await new Promise((r) => setTimeout(r, 200));
  const during: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = Date.now();
    const r = await post("/reward", { verifier: "math", response: `\\boxed{${i}}`, reference: String(i) });
    assert.equal(r.json.reward, 1);
    during.push(Date.now() - t);
  }
  assert.ok(Date.now() - t0 < 1500, `requests during the spin took ${during.join(",")} ms`);

  const { json } = await stuck;
  const [spin, fine] = json.results;
  assert.equal(spin.status, "error");
  assert.equal(spin.reward, null);
  assert.match(spin.reason, /deadline of 1[45]\d\d ms exceeded/);
  assert.equal(fine.reward, 1);
  const took = Date.now() - t0;
  assert.ok(took < 4000, `the stuck item took ${took} ms to end`);

  // The pool recovered: both workers answer again (the killed one was replaced).
  const after = await post("/reward/batch", {
    items: Array.from({ length: 8 }, (_, i) => ({ verifier: "math", response: `\\boxed{${i}/2}`, reference: String(i / 2) })),
  });
  assert.deepEqual(after.json.results.map((r: any) => r.reward), Array(8).fill(1));
});

test("the wait for a free worker does not count against an item's deadline", async () => {
  // 16 tasks of 100 ms each on the pool's 2 threads: the last waits ~700 ms for a worker, past
  // its 500 ms deadline, though each takes a fifth of it. All score: the clock runs from when a
  // worker takes the task. (Before, the queued half came back null: "deadline ... exceeded".)
  const n = 16;
  const t0 = Date.now();
  const { json } = await post("/reward/batch", {
    deadline_ms: 500,
    items: Array.from({ length: n }, (_, i) => ({ id: i, verifier: "math", response: BUSY_MARKER, reference: "1 + x" })),
  });
  const took = Date.now() - t0;
  const bad = json.results.filter((r: any) => r.reward !== 1).map((r: any) => `${r.id}: ${r.status} ${r.reason}`);
  assert.deepEqual(bad, [], `took ${took} ms`);
  assert.ok(took >= 700, `the batch took ${took} ms: the tasks did queue`);
});

test("aborting a task terminates its worker thread", async () => {
  const pool = new MathPool(1, { testHooks: true });
  try {
    const ac = new AbortController();
    const t = pool.run({ response: SPIN_MARKER, reference: "1", options: {} }, ac.signal);
    setTimeout(() => ac.abort(new Error("deadline")), 300);
    await assert.rejects(t);
    const r = await pool.run({ response: "\\boxed{3}", reference: "3", options: {} });
    assert.equal("reward" in r && r.reward, 1);
  } finally {
    await pool.close();
  }
});

test("a request that goes away stops the wait but does not kill a worker", async () => {
  await post("/reward", { verifier: "math", response: "\\boxed{1}", reference: "1" }); // pool up
  const before = mathPoolStats()!.threadIds;
  const ac = new AbortController();
  // the scorer stops waiting (math's verify does not race the signal itself: issue 38)
  const pending = scorer.score({ verifier: "math", response: "\\boxed{x^2+2x+1}", reference: "(x+1)^2" }, { signal: ac.signal });
  ac.abort(new Error("client went away"));
  const aborted = await pending;
  assert.deepEqual([aborted.status, aborted.reward], ["error", null]);
  assert.match(aborted.reason, /aborted/);
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(mathPoolStats()!.threadIds, before);
  const r = await post("/reward", { verifier: "math", response: "\\boxed{2}", reference: "2" });
  assert.equal(r.json.reward, 1);
});

test("math's verify does not read ctx.signal (an AbortController and a listener per item): the scorer races the deadline and the caller", async () => {
  await post("/reward", { verifier: "math", response: "\\boxed{1}", reference: "1" }); // pool up
  let reads = 0;
  const ctx = { deadline: Date.now() + 5000, get signal() { reads++; return new AbortController().signal; }, log: quiet, services: { workers: 2, config: { math: { appeal: false } } } } as unknown as VerifyContext;
  const out = await math.verify({ verifier: "math", response: "\\boxed{x^2+2x+1}", reference: "(x+1)^2", options: resolveOptions() }, ctx);
  assert.equal(out.reward, 1);
  assert.equal(reads, 0);
});

test("a worker that cannot start is reported by ready(), not a crash", async () => {
  const { writeFileSync } = await import("node:fs");
  const { join } = await import("node:path");
  const bad = join(tempDir("assay-math-"), "broken-worker.mjs");
  writeFileSync(bad, "throw new Error('cannot load');\nexport default () => 1;\n");
  const pool = new MathPool(1, { filename: bad });
  try {
    await assert.rejects(pool.ready(5000), /failed to start|not ready/);
  } finally {
    await pool.close().catch(() => {});
  }
});

test("items submitted together go to a thread as one chunk, each held to its own budget", async () => {
  const pool = new MathPool(1, { testHooks: true });
  try {
    await pool.ready(120_000);
    const before = pool.stats.chunks;
    // six items of 100 ms each in one chunk: 600 ms for the chunk, 100 ms for each item, under a
    // 400 ms budget each (an item's wait behind the others of its chunk is not its own time)
    const jobs = Array.from({ length: 6 }, () => pool.submit({ response: BUSY_MARKER, reference: "1 + x", options: {} }, 400));
    const done = await Promise.all(jobs.map((j) => j.done));
    assert.deepEqual(done.map((d) => "reward" in d.result && d.result.reward), Array(6).fill(1));
    assert.equal(pool.stats.chunks - before, 1, "the six items were sent as one chunk");
    for (const d of done) assert.ok(d.ownMs >= 90 && d.ownMs < 400, `an item's own time: ${d.ownMs} ms`);
    // a burst larger than a chunk is cut into several
    const many = Array.from({ length: 150 }, (_, i) => pool.submit({ response: `\\boxed{${i}/2}`, reference: String(i / 2), options: {} }));
    const rs = await Promise.all(many.map((j) => j.done));
    assert.deepEqual(rs.map((d) => "reward" in d.result && d.result.reward), Array(150).fill(1));
  } finally {
    await pool.close();
  }
});

test("a runaway item is killed at its budget; the rest of its chunk is sent again and graded", async () => {
  const pool = new MathPool(1, { testHooks: true });
  try {
    await pool.ready(120_000);
    const ids = pool.stats.threadIds;
    const { chunks, resent } = pool.stats;
    const t0 = Date.now();
    const task = (i: number) => ({ response: `\\boxed{${i}x}`, reference: `x \\cdot ${i}`, options: {} });
    // one chunk: two items graded before the runaway, two after it
    const jobs = [pool.submit(task(2), 5000), pool.submit(task(3), 5000), pool.submit({ response: SPIN_MARKER, reference: "1", options: {} }, 400), pool.submit(task(4), 5000), pool.submit(task(5))];
    const settled = await Promise.allSettled(jobs.map((j) => j.done));
    const took = Date.now() - t0;
    const spin = settled[2];
    assert.equal(spin.status, "rejected");
    assert.ok((spin as PromiseRejectedResult).reason instanceof DeadlineExceeded);
    assert.equal(((spin as PromiseRejectedResult).reason as DeadlineExceeded).budgetMs, 400);
    const others = settled.filter((_, i) => i !== 2).map((r) => r.status === "fulfilled" && "reward" in r.value.result && r.value.result.reward);
    assert.deepEqual(others, [1, 1, 1, 1], "the chunk's other items were graded");
    assert.ok(took >= 400, `the runaway ended after ${took} ms, before its budget`);
    const s = pool.stats;
    assert.equal(s.chunks - chunks, 2, "one chunk, then its other items again as one");
    assert.equal(s.resent - resent, 4);
    assert.notDeepEqual(s.threadIds, ids, "the runaway's thread was replaced");
  } finally {
    await pool.close();
  }
});

test("a busy thread is sent the next chunk before it answers the one it is on", async () => {
  const pool = new MathPool(1, { testHooks: true });
  try {
    await pool.ready(120_000);
    const before = pool.stats.chunks;
    const first = pool.submit({ response: BUSY_MARKER, reference: "x + 1", options: {} });
    await new Promise((r) => setImmediate(r)); // the first chunk is sent
    const second = pool.submit({ response: "\\boxed{7}", reference: "7", options: {} });
    await new Promise((r) => setImmediate(r));
    // the thread is still on the first (100 ms), and already holds the second: it begins it
    // without waiting for this thread to read the first answer and send another (before, the
    // second waited here until the first came back)
    assert.equal(pool.stats.chunks - before, 2, "the second chunk was sent while the first was graded");
    const [a, b] = await Promise.all([first.done, second.done]);
    assert.deepEqual([(a.result as { reward: number }).reward, (b.result as { reward: number }).reward], [1, 1]);
  } finally {
    await pool.close();
  }
});

test("items held to a budget cost no timer each: one watchdog per busy thread", async () => {
  const pool = new MathPool(2, { testHooks: true });
  const real = globalThis.setTimeout;
  let armed = 0;
  try {
    await pool.ready(120_000);
    globalThis.setTimeout = ((...a: Parameters<typeof setTimeout>) => { armed++; return real(...a); }) as typeof setTimeout;
    const jobs = Array.from({ length: 256 }, (_, i) => pool.submit({ response: `\\boxed{${i}x}`, reference: `x \\cdot ${i}`, options: {} }, 30_000));
    const done = await Promise.all(jobs.map((j) => j.done));
    assert.deepEqual(done.map((d) => "reward" in d.result && d.result.reward), Array(256).fill(1));
    // a chunk arms its thread's watchdog at most once or twice (sent, answered); polls for a
    // thread that has not begun its chunk add a few on a loaded machine: far fewer than items
    assert.ok(armed < 64, `${armed} timers armed for 256 items`);
  } finally {
    globalThis.setTimeout = real;
    await pool.close();
  }
});

test("a runaway item does not change its neighbours' results", async () => {
  const pool = new MathPool(1, { testHooks: true });
  try {
    await pool.ready(120_000);
    const tasks = ["\\boxed{x^2+2x+1}", "\\boxed{\\frac{1}{3}}", "so the answer is 0.3333", "\\boxed{(1,2)\\cup[3,4)}", "\\boxed{\\sec^2 y}", "\\boxed{x = \\pm 2}"]
      .map((response, i) => ({ response, reference: ["(x+1)^2", "1/3", "\\frac13", "(1,2) \\cup [3,4)", "\\tan^2 y + 1", "x^2 = 4"][i], options: {} }));
    const alone: unknown[] = [];
    for (const t of tasks) alone.push(await pool.run(t)); // one by one: chunks of one
    // the same items as one chunk with a runaway in the middle, twice over (before and after it)
    const jobs = [...tasks.map((t) => pool.submit(t, 10_000)), pool.submit({ response: SPIN_MARKER, reference: "1", options: {} }, 300), ...tasks.map((t) => pool.submit(t, 10_000))];
    const settled = await Promise.allSettled(jobs.map((j) => j.done));
    assert.equal(settled[tasks.length].status, "rejected");
    const got = settled.filter((_, i) => i !== tasks.length).map((r) => (r.status === "fulfilled" ? r.value.result : r.reason));
    assert.deepEqual(got, [...alone, ...alone]);
  } finally {
    await pool.close();
  }
});

test("killing an item that waits behind others of its chunk leaves its thread alone", async () => {
  const pool = new MathPool(1, { testHooks: true });
  try {
    await pool.ready(120_000);
    const ids = pool.stats.threadIds;
    const first = pool.submit({ response: BUSY_MARKER, reference: "x + 1", options: {} });
    const second = pool.submit({ response: "\\boxed{7}", reference: "7", options: {} });
    await new Promise((r) => setTimeout(r, 30)); // the chunk is in the thread, on its first item
    second.kill(new Error("gone"));
    await assert.rejects(second.done, /gone/);
    assert.equal(((await first.done).result as { reward: number }).reward, 1);
    assert.deepEqual(pool.stats.threadIds, ids);
  } finally {
    await pool.close();
  }
});

test("a thread that dies under a chunk: its items are graded again one by one, and only the culprit fails", async () => {
  const pool = new MathPool(1, { testHooks: true });
  try {
    await pool.ready(120_000);
    const task = (i: number) => ({ response: `\\boxed{${i}}`, reference: String(i), options: {} });
    const jobs = [pool.submit(task(1)), pool.submit({ response: CRASH_MARKER, reference: "1", options: {} }), pool.submit(task(2)), pool.submit(task(3))];
    const settled = await Promise.allSettled(jobs.map((j) => j.done));
    assert.equal(settled[1].status, "rejected");
    assert.deepEqual(settled.filter((_, i) => i !== 1).map((r) => r.status === "fulfilled" && "reward" in r.value.result && r.value.result.reward), [1, 1, 1]);
    // the whole chunk was sent again, each item alone (and any item queued behind the culprit on its thread, again)
    assert.ok(pool.stats.resent >= 4, `${pool.stats.resent} items sent again`);
    // the pool goes on: a later batch is chunked again
    const later = await Promise.all([4, 5].map((i) => pool.run(task(i))));
    assert.deepEqual(later.map((r) => "reward" in r && r.reward), [1, 1]);
  } finally {
    await pool.close();
  }
});
