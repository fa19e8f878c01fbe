/**
 * Runs waiting for a slot or container are served earliest deadline first (waiters.ts): a run
 * with a `startBy` (a `/run_code` request) that arrives behind a backlog of runs without one
 * (`/reward` items) starts before its start deadline, where first come first served left it
 * `not_started` (SandboxFusion's `/run_code` answered 504 to every correct program).
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { Waiters, DEFAULT_HORIZON_MS } from "./waiters.js";
import { NotStartedError } from "./job.js";
import type { RunOutcome, Sandbox } from "./types.js";
import { openBwrapForTests, openDockerForTests, type Opened } from "../tests/sandboxes.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Gives `n` items, 1..n, and returns which waiter (by label) got each, in order. */
async function serve(q: Waiters<number>, waits: [string, Promise<number>][], n: number): Promise<string[]> {
  const got = new Map<number, string>();
  for (const [label, p] of waits) p.then((x) => got.set(x, label), () => {});
  for (let i = 1; i <= n; i++) assert.ok(q.give(i), `a waiter for item ${i}`);
  await sleep(0);
  return Array.from({ length: n }, (_, i) => got.get(i + 1)!);
}

describe("Waiters: earliest deadline first", () => {
  test("a startBy before the horizon goes first; a no-startBy waiter's deadline is its arrival plus the horizon", async () => {
    const q = new Waiters<number>(10_000);
    const t = Date.now();
    const waits: [string, Promise<number>][] = [
      ["reward1", q.wait({ now: t })], // deadline t+10 s
      ["reward2", q.wait({ now: t + 1 })], // t+10.001 s
      ["runCode", q.wait({ startBy: t + 5_000, now: t + 2 })], // t+5 s: first
      ["late", q.wait({ startBy: t + 20_000, now: t + 3 })], // t+20 s: after both rewards
    ];
    assert.equal(q.length, 4);
    assert.deepEqual(await serve(q, waits, 4), ["runCode", "reward1", "reward2", "late"]);
    assert.equal(q.length, 0);
    assert.equal(q.give(5), false, "none waits: the caller keeps the item");
  });

  test("no waiter waits for ever behind later arrivals: an old no-startBy waiter beats a later startBy", async () => {
    const q = new Waiters<number>(10_000);
    const t = Date.now();
    const waits: [string, Promise<number>][] = [
      ["old", q.wait({ now: t - 8_000 })], // waited 8 s already: deadline t+2 s
      ["runCode", q.wait({ startBy: t + 5_000 })],
    ];
    assert.deepEqual(await serve(q, waits, 2), ["old", "runCode"]);
  });

  test("equal deadlines go in order of arrival", async () => {
    const q = new Waiters<number>(1_000);
    const t = Date.now();
    const waits: [string, Promise<number>][] = [
      ["a", q.wait({ now: t })],
      ["b", q.wait({ startBy: t + 1_000 })],
      ["c", q.wait({ now: t })],
      ["d", q.wait({ startBy: t + 1_000 })],
    ];
    assert.deepEqual(await serve(q, waits, 4), ["a", "b", "c", "d"]);
  });

  test("startBy passing and an abort take the waiter out; rejectAll ends the rest", async () => {
    const q = new Waiters<number>(1_000);
    const ac = new AbortController();
    const soon = q.wait({ startBy: Date.now() + 30, late: "too late" });
    const aborted = q.wait({ signal: ac.signal });
    const rest = q.wait();
    const later = q.wait({ startBy: Date.now() + 60_000 });
    await assert.rejects(soon, (e: Error) => e instanceof NotStartedError && e.message === "too late");
    ac.abort();
    await assert.rejects(aborted, /aborted while waiting/);
    assert.equal(q.length, 2);
    assert.ok(q.give(7));
    assert.equal(await rest, 7, "the no-startBy waiter (deadline 1 s out) before one 60 s out");
    q.rejectAll(new Error("sandbox closed"));
    await assert.rejects(later, /sandbox closed/);
    assert.equal(q.length, 0);
    await assert.rejects(q.wait({ signal: AbortSignal.abort() }), /aborted/, "already aborted: never queued");
    assert.equal(q.length, 0);
  });

  test("no horizon (absent or 0) is the default's 30 s", () => {
    assert.equal(new Waiters().horizonMs, DEFAULT_HORIZON_MS);
    assert.equal(new Waiters(0).horizonMs, DEFAULT_HORIZON_MS);
    assert.equal(DEFAULT_HORIZON_MS, 30_000);
  });
});

/**
 * One slot or container: a run holds it for 1.2 s, three runs without a startBy (1 s each) queue
 * behind it, then a quick run that must start within 2.5 s. First come first served would start
 * it after 3.2 s at the earliest (not_started); earliest deadline first starts it after the first.
 */
async function startByBehindBacklog(opened: Opened): Promise<void> {
  const sb = opened.sandbox!;
  const run = (code: string, startBy?: number) => sb.run({ language: "python", code, stdin: "hello\n", limits: { wallMs: 5_000, cpuMs: 1_000 }, ...(startBy ? { startBy } : {}) });
  // Warm the slot first, so the timing below is the queue's, not a sandbox's start.
  const warm = await run("print(1)");
  assert.equal(warm.status, "finished", `${warm.message ?? ""} ${warm.stderr}`);
  const order: string[] = [];
  const track = (label: string, p: Promise<RunOutcome>) => p.then((o) => (order.push(label), o));
  const holder = track("holder", run("import time; time.sleep(1.2)"));
  await sleep(50);
  const backlog: Promise<RunOutcome>[] = [];
  for (let i = 0; i < 3; i++) {
    backlog.push(track(`reward${i}`, run("import time; time.sleep(1)")));
    await sleep(20);
  }
  const t0 = Date.now();
  const quick = await track("runCode", run("print(input()[::-1])", t0 + 2_500));
  assert.equal(quick.status, "finished", `the run with a startBy never started (${quick.status}: ${quick.message ?? ""}): it waited behind later deadlines`);
  assert.equal(quick.stdout, "olleh\n");
  const rest = await Promise.all([holder, ...backlog]);
  for (const o of rest) assert.equal(o.status, "finished", `${o.message ?? ""} ${o.stderr}`);
  assert.deepEqual(order, ["holder", "runCode", "reward0", "reward1", "reward2"], "the run with a startBy went first; the others kept their order");
}

const bwrap = await openBwrapForTests(1);
after(() => bwrap.sandbox?.close());
describe("bwrap: a run with a startBy behind a backlog of runs without one", { skip: bwrap.skip }, () => {
  test("starts before its startBy, ahead of the backlog", { timeout: 30_000 }, () => startByBehindBacklog(bwrap));
});

const docker = await openDockerForTests(1);
after(() => docker.sandbox?.close());
describe("docker: a run with a startBy behind a backlog of runs without one (one image's pool)", { skip: docker.skip }, () => {
  test("starts before its startBy, ahead of the backlog", { timeout: 60_000 }, () => startByBehindBacklog(docker));
});
