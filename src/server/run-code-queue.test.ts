import { test } from "node:test";
import assert from "node:assert/strict";
import { RunCodeQueue } from "./run-code-queue.js";

const far = () => Date.now() + 60_000;

test("a program that ran into its time limit waits behind programs not known to (verl's other cases of a loop)", async () => {
  const q = new RunCodeQueue();
  const loop = (stdin: string) => RunCodeQueue.keys("python", "while True: pass", stdin);
  const add = (stdin: string) => RunCodeQueue.keys("python", "print(sum(map(int, input().split())))", stdin);
  const first = (await q.take("python", 1, loop("1"), far()))!;
  const order: string[] = [];
  const waits = [
    q.take("python", 1, loop("2"), far()).then((t) => (order.push("loop 2"), t!)),
    q.take("python", 1, add("3"), far()).then((t) => (order.push("add 3"), t!)),
  ];
  assert.deepEqual(q.stats("python"), { running: 1, waiting: 2 });
  first.end(true); // the loop's first case hit its limit
  const t1 = await Promise.race(waits);
  t1.end(false);
  (await Promise.all(waits)).forEach((t) => t.end(false));
  assert.deepEqual(order, ["add 3", "loop 2"], "the quick program went first though it arrived later");
});

test("a retry (the same request again) keeps the place of its first arrival", async () => {
  const q = new RunCodeQueue();
  const k = (c: string) => RunCodeQueue.keys("python", c, "");
  const hold = (await q.take("python", 1, k("hold"), far(), undefined, 1_000))!;
  // "early" was first seen at t=2000 (turned away then), "late" first at t=3000.
  assert.equal(await q.take("python", 1, k("early"), 2_000, undefined, 2_000), null, "startBy already passed: no turn");
  const order: string[] = [];
  const late = q.take("python", 1, k("late"), far(), undefined, 3_000).then((t) => (order.push("late"), t!));
  const early = q.take("python", 1, k("early"), far(), undefined, 4_000).then((t) => (order.push("early"), t!));
  hold.end(false);
  (await early).end(false);
  (await late).end(false);
  assert.deepEqual(order, ["early", "late"]);
});

test("a waiter gives up at startBy, and a free slot is taken at once", async () => {
  const q = new RunCodeQueue();
  const k = RunCodeQueue.keys("python", "x", "");
  const t = (await q.take("python", 1, k, far()))!;
  const t0 = Date.now();
  assert.equal(await q.take("python", 1, RunCodeQueue.keys("python", "y", ""), Date.now() + 150), null);
  assert.ok(Date.now() - t0 >= 140);
  assert.deepEqual(q.stats("python"), { running: 1, waiting: 0 });
  t.end(false);
  t.end(false); // idempotent
  assert.deepEqual(q.stats("python"), { running: 0, waiting: 0 });
  const ac = new AbortController();
  const held = (await q.take("python", 1, k, far()))!;
  const w = q.take("python", 1, RunCodeQueue.keys("python", "z", ""), far(), ac.signal);
  ac.abort();
  assert.equal(await w, null, "a client that went away leaves the queue");
  held.end(false);
});
