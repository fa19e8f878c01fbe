/**
 * The scorer's dispatch (issue 38): a batch shares one deadline timer instead of arming one per
 * item, and keeps every per-item rule: each item's own deadline counted from its own start, the
 * caller's abort, results in input order, nothing that throws.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { testRuntime } from "../../tests/helpers.js";
import { Cancel, Deadlines } from "./deadlines.js";
import { Type } from "@sinclair/typebox";
import { defineVerifier, type AnyVerifier } from "./verifier.js";
import { exact } from "../../verifiers/text/exact.js";
import { items as rewardItems } from "../../bench/reward-items.js";

const rt = await testRuntime();
after(() => rt.close());

/** How many times `setTimeout` is called while `f` runs. */
async function timersArmed<T>(f: () => Promise<T>): Promise<{ out: T; armed: number }> {
  const real = globalThis.setTimeout;
  let armed = 0;
  globalThis.setTimeout = ((...args: Parameters<typeof real>) => {
    armed++;
    return real(...args);
  }) as typeof real;
  try {
    return { out: await f(), armed };
  } finally {
    globalThis.setTimeout = real;
  }
}

test("a batch of 256 quick items arms a timer or two, not one per item", async () => {
  const items = Array.from({ length: 256 }, (_, i) => ({ id: i, verifier: "exact", response: `The answer is ${i % 7}`, reference: `the answer is ${i % 5}` }));
  await rt.scorer.scoreBatch(items.slice(0, 8)); // warm: compile, first-use caches
  const { out, armed } = await timersArmed(() => rt.scorer.scoreBatch(items));
  assert.deepEqual(out.map((r) => r.id), items.map((it) => it.id));
  assert.deepEqual(out.map((r) => r.reward), items.map((_, i) => (i % 7 === i % 5 ? 1 : 0)));
  assert.ok(armed <= 4, `${armed} timers armed for 256 items`);
});

/** Verifiers whose verify answers without a promise, or waits with its clock stopped. */
const now = defineVerifier({
  name: "test-now",
  description: "answers at once: `ok`, throws on `throw`, returns no Outcome on `junk`",
  reference: Type.Any(),
  options: Type.Object({}),
  verify(item) {
    if (item.response === "throw") throw new Error("broke at once");
    if (item.response === "junk") return undefined as never;
    return { reward: item.response === "ok" ? 1 : 0, reason: "at once" };
  },
});
const waits = defineVerifier({
  name: "test-unclocked",
  description: "waits `wait` ms with its clock stopped (begun before verify returns), then works `work` ms",
  reference: Type.Any(),
  options: Type.Object({ wait: Type.Number(), work: Type.Number() }),
  verify(item, ctx) {
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    return ctx.unclocked!(sleep(item.options.wait)).then(() => sleep(item.options.work)).then(() => ({ reward: 1, reason: "done" }));
  },
});

test("a verify that answers at once is scored without a deadline entry; one that throws or returns junk is an error (null)", async () => {
  const own = await testRuntime({ extra: [now as AnyVerifier], only: ["exact"] });
  try {
    const adds = { n: 0 };
    const real = Deadlines.prototype.add;
    Deadlines.prototype.add = function (this: Deadlines, d) {
      adds.n++;
      return real.call(this, d);
    };
    try {
      const items = Array.from({ length: 256 }, (_, i) => (i % 2 ? { id: i, verifier: "test-now", response: "ok" } : { id: i, verifier: "exact", response: `The answer is ${i % 7}`, reference: `the answer is ${i % 5}` }));
      const out = await own.scorer.scoreBatch(items, { signal: new Cancel() });
      assert.deepEqual(out.map((r) => r.reward), items.map((_, i) => (i % 2 ? 1 : i % 7 === i % 5 ? 1 : 0)));
      assert.equal(adds.n, 0, `${adds.n} items entered the deadline set`);
      // A long answer is normalised in slices (a promise): it does take a deadline.
      const [long] = await own.scorer.scoreBatch([{ verifier: "exact", response: "x ".repeat(40_000), reference: "x" }]);
      assert.equal(long!.reward, 0);
      assert.equal(adds.n, 1);
    } finally {
      Deadlines.prototype.add = real;
    }
    const [thrown, junk] = await own.scorer.scoreBatch([{ verifier: "test-now", response: "throw" }, { verifier: "test-now", response: "junk" }]);
    assert.deepEqual([thrown!.status, thrown!.reward], ["error", null]);
    assert.match(thrown!.reason, /internal error in verifier test-now: broke at once/);
    assert.deepEqual([junk!.status, junk!.reward], ["error", null]);
    // exact itself answers a short item without a promise.
    const got = exact.verify({ verifier: "exact", response: "A", reference: "a", options: { case_sensitive: false, normalize_whitespace: true, strip_punctuation: false, extract: "full", strip_think: true } }, {} as never);
    assert.ok(!(got instanceof Promise));
    assert.equal((got as { reward: number }).reward, 1);
  } finally {
    await own.close();
  }
});

/** What a verify saw of its context: Stoppers (objects with a numeric `due`) held by it, at each step. */
const seen: { before: number; afterDeadline: number; after: number; deadline: number }[] = [];
const peek = defineVerifier({
  name: "test-ctx",
  description: "answers at once; records whether its context holds a deadline clock before and after reading it",
  reference: Type.Any(),
  options: Type.Object({}),
  verify(item, ctx) {
    const stoppers = () => Object.values(ctx).filter((v) => v && typeof v === "object" && typeof (v as { due?: unknown }).due === "number").length;
    const before = stoppers();
    const deadline = ctx.deadline;
    const afterDeadline = stoppers();
    if (item.response === "signal") void ctx.signal;
    seen.push({ before, afterDeadline, after: stoppers(), deadline });
    return { reward: 1, reason: "at once" };
  },
});

test("an item's deadline clock (Stopper) is made only when its verify asks for the signal; ctx.deadline reads without one", async () => {
  const own = await testRuntime({ extra: [peek as AnyVerifier], only: ["exact"] });
  try {
    seen.length = 0;
    const t = Date.now();
    const out = await own.scorer.scoreBatch(
      [
        { verifier: "test-ctx", response: "quiet", deadline_ms: 5_000 },
        { verifier: "test-ctx", response: "signal", deadline_ms: 5_000 },
      ],
      { signal: new Cancel() },
    );
    assert.deepEqual(out.map((r) => r.reward), [1, 1]);
    assert.deepEqual(seen.map((s) => [s.before, s.afterDeadline, s.after]), [[0, 0, 0], [0, 0, 1]]);
    // The deadline is the item's start plus its deadline_ms, Stopper or not.
    for (const s of seen) assert.ok(s.deadline >= t + 5_000 && s.deadline <= Date.now() + 5_000, `${s.deadline - t}`);
  } finally {
    await own.close();
  }
});

test("the light verifiers (text, ifeval, json, tool_call, overlap, iou) answer without a promise", async () => {
  const sample: Record<string, unknown>[] = [
    { verifier: "choice", response: "The answer is (B).", reference: "B" },
    { verifier: "regex", response: "order 66 shipped", reference: "\\d+" },
    { verifier: "ifeval", response: "No commas here at all.", reference: { instruction_id_list: ["punctuation:no_comma"], kwargs: [{}] } },
    ...["json", "tool_call", "bleu", "rouge", "chrf", "iou"].filter((v) => rewardItems[v]).map((v) => rewardItems[v]!(1)),
  ];
  assert.ok(sample.length >= 8, `${sample.length} samples`);
  const ctx = { deadline: Date.now() + 60_000, signal: new AbortController().signal, log: rt.log, services: rt.services };
  await rt.registry.warmUp({ log: rt.log, services: rt.services });
  for (const it of sample) {
    const r = rt.registry.resolve(it as never);
    assert.ok(!("invalid" in r), `${it.verifier}: ${"invalid" in r ? r.invalid : ""}`);
    const got = r.verifier.verify(r.item, ctx as never);
    assert.ok(!(got instanceof Promise), `${it.verifier} returned a promise`);
    assert.equal(typeof (got as { reward: unknown }).reward, "number", `${it.verifier}: ${JSON.stringify(got)}`);
  }
});

test("a wait begun with the clock stopped before verify returns is not counted; the work after it is", async () => {
  const own = await testRuntime({ extra: [waits as AnyVerifier], only: ["exact"] });
  try {
    const out = await own.scorer.scoreBatch([
      { verifier: "test-unclocked", response: "", options: { wait: 150, work: 0 }, deadline_ms: 40 },
      { verifier: "test-unclocked", response: "", options: { wait: 0, work: 2_000 }, deadline_ms: 60 },
    ]);
    assert.deepEqual(out.map((r) => r.status), ["ok", "error"], JSON.stringify(out.map((r) => r.reason)));
    assert.match(out[1]!.reason, /deadline of 60 ms exceeded/);
  } finally {
    await own.close();
  }
});

test("each item keeps its own deadline inside a shared batch", async () => {
  const sleep = (ms: number, deadline_ms?: number) => ({ verifier: "test-sleep", response: "", options: { ms }, ...(deadline_ms ? { deadline_ms } : {}) });
  // Concurrency 1 would serialise; the default runs them side by side: the 40 ms item ends at its
  // deadline while the quick one and the long-deadline one finish; the batch default covers the rest.
  const t0 = Date.now();
  const out = await rt.scorer.scoreBatch([sleep(2_000, 40), sleep(5), sleep(60, 5_000), sleep(2_000)], { deadlineMs: 120 });
  const ms = Date.now() - t0;
  assert.deepEqual(out.map((r) => [r.status, r.reward]), [["error", null], ["ok", 1], ["ok", 1], ["error", null]]);
  assert.match(out[0]!.reason, /deadline of 40 ms exceeded/);
  assert.match(out[3]!.reason, /deadline of 120 ms exceeded/);
  assert.equal(out[0]!.details.deadline_ms, 40);
  assert.ok(ms < 1_900, `the batch waited ${ms} ms for items whose deadlines had passed`);
});

test("an item that starts late in a batch counts its deadline from its own start", async () => {
  const low = await testRuntime({ env: { ASSAY_BATCH_CONCURRENCY: "1" } });
  try {
    // One at a time: three 50 ms items under an 80 ms deadline each all finish, though the last
    // starts 100 ms after the batch did.
    const out = await low.scorer.scoreBatch(Array.from({ length: 3 }, () => ({ verifier: "test-sleep", response: "", options: { ms: 50 }, deadline_ms: 80 })));
    assert.deepEqual(out.map((r) => r.status), ["ok", "ok", "ok"], JSON.stringify(out.map((r) => r.reason)));
  } finally {
    await low.close();
  }
});

test("the caller's abort ends a batch's items as errors (null), never as 0", async () => {
  const cancel = new Cancel();
  const pending = rt.scorer.scoreBatch(Array.from({ length: 5 }, () => ({ verifier: "test-sleep", response: "", options: { ms: 5_000 } })), { signal: cancel });
  setTimeout(() => cancel.abort(new Error("client closed the connection")), 20);
  const out = await pending;
  assert.deepEqual(out.map((r) => [r.status, r.reward]), Array(5).fill(["error", null]));
  assert.match(out[0]!.reason, /aborted by the client/);
  // A real AbortSignal works the same (jobs pass one).
  const ac = new AbortController();
  ac.abort();
  const [r] = await rt.scorer.scoreBatch([{ verifier: "exact", response: "a", reference: "a" }], { signal: ac.signal });
  assert.equal(r!.status, "error");
});

test("Deadlines: one timer, each due item expired once, re-armed for the next, idle when empty", async () => {
  const d = new Deadlines();
  const fired: string[] = [];
  const due = (name: string, inMs: number) => ({ due: Date.now() + inMs, expire: () => fired.push(name) });
  const a = due("a", 10), b = due("b", 30), c = due("c", 20);
  d.add(b);
  d.add(a);
  d.add(c);
  d.delete(c);
  assert.equal(d.size, 2);
  await new Promise((r) => setTimeout(r, 80));
  assert.deepEqual(fired, ["a", "b"]);
  assert.equal(d.size, 0);
});

test("Cancel: listeners called once on abort, removed ones not at all", () => {
  const c = new Cancel();
  let n = 0;
  const gone = () => (n += 100);
  c.addEventListener("abort", () => n++);
  c.addEventListener("abort", gone);
  c.removeEventListener("abort", gone);
  c.abort(new Error("x"));
  c.abort(new Error("again"));
  assert.equal(n, 1);
  assert.equal(c.aborted, true);
  assert.equal((c.reason as Error).message, "x");
});
