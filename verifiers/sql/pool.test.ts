/**
 * The SQLite pool sends queries in batches (issue 35: one IPC message per query cost the server's
 * event loop more than the query on a Spider-sized database): the queries enqueued in one turn of
 * the event loop go to a process in one message, each is answered on its own, in order; a task
 * that runs long gives the ones sent behind it back to the queue (another process takes them), and
 * a runaway anywhere in a batch is stopped at its own CPU limit without taking its neighbours with it.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { SqlitePool, MAX_BATCH, STEAL_MS, TaskTimeout } from "../../src/sql/sqlite-pool.js";
import type { QueryOutcome } from "../../src/sql/types.js";
import { sqliteFixture } from "./fixtures.js";

const fx = sqliteFixture();
const pool = new SqlitePool(2);
after(() => pool.close());
await pool.ready();

const RUNAWAY = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) FROM r";
const q = (sql: string, limitMs = 1_000) => pool.query({ kind: "query", path: fx.path, version: "v1", sql, maxRows: 10_000, maxBytes: 1 << 22 }, { limitMs });
const value = (r: QueryOutcome) => (r.ok ? r.rows[0][0] : `failed: ${r.error}`);

test("queries enqueued together go in few messages, and each gets its own answer", async () => {
  const m0 = pool.stats.messages;
  const c0 = pool.stats.completed;
  const n = 96;
  const rs = await Promise.all(Array.from({ length: n }, (_, i) => q(`SELECT ${i} + count(*) * 0 FROM singer`)));
  assert.deepEqual(rs.map(value), Array.from({ length: n }, (_, i) => i));
  const messages = pool.stats.messages - m0;
  assert.equal(pool.stats.completed - c0, n);
  // at most MAX_BATCH a message: at least n / MAX_BATCH messages, and far fewer than n
  assert.ok(messages >= n / MAX_BATCH && messages <= n / 4, `${messages} messages for ${n} queries`);
});

test("a batch of quick queries is answered in slices: far fewer answer messages than queries, each query with its share of CPU time", async () => {
  const r0 = pool.stats.replies;
  const n = 64;
  const rs = await Promise.all(Array.from({ length: n }, (_, i) => q(`SELECT ${i} + count(*) * 0 FROM singer`)));
  assert.deepEqual(rs.map(value), Array.from({ length: n }, (_, i) => i));
  const replies = pool.stats.replies - r0;
  // one answer a query on main: here a slice's (up to 2 ms of them) come back together
  assert.ok(replies <= n / 2, `${replies} answer messages for ${n} queries`);
  for (const r of rs) assert.ok(r.ok && typeof r.cpuMs === "number" && r.cpuMs >= 0, JSON.stringify(r));
});

test("a runaway second in a batch is stopped at its own CPU limit; the queries behind it are taken back and answered by the other process first", async () => {
  const t0 = Date.now();
  const stolen0 = pool.stats.stolen;
  // one turn: a quick query, the runaway, then 30 quick ones; the pool splits them over its two
  // processes (16 each), so 14 quick ones are sent behind the runaway
  const head = q("SELECT count(*) FROM singer");
  const runaway = q(RUNAWAY, 800).then(
    (r) => ({ r, err: null as Error | null, ms: Date.now() - t0 }),
    (err: Error) => ({ r: null, err, ms: Date.now() - t0 }),
  );
  const quick = Array.from({ length: 30 }, (_, i) => q(`SELECT ${i}`).then((r) => ({ v: value(r), ms: Date.now() - t0 })));
  assert.equal(value(await head), 7);
  const done = await Promise.all(quick);
  assert.deepEqual(done.map((d) => d.v), Array.from({ length: 30 }, (_, i) => i));
  const stopped = await runaway;
  assert.ok(stopped.err instanceof TaskTimeout, `the runaway ended with ${stopped.err ?? JSON.stringify(stopped.r)}`);
  assert.equal(stopped.err.started, true);
  // charged from its own start (the quick query before it in the batch is not its time), and
  // stopped at its limit of 800 ms of CPU time, within a few polls
  const cpu = Number(/after (\d+) ms of CPU time/.exec(stopped.err.message)?.[1]);
  assert.ok(cpu >= 800 && cpu < 1_100, stopped.err.message);
  // every quick one was answered before the runaway was stopped: none waited for its limit
  const last = Math.max(...done.map((d) => d.ms));
  assert.ok(last < stopped.ms, `quick queries done at ${last} ms, the runaway stopped at ${stopped.ms} ms`);
  assert.ok(pool.stats.stolen > stolen0, "the queries behind the runaway were taken back");
  assert.ok(pool.stats.killed >= 1);
  // the pool still answers, on a fresh process
  assert.equal(value(await q("SELECT 41 + 1")), 42);
});

test(`a task that runs past ${STEAL_MS} ms but ends by itself keeps its answer; the ones taken back from behind it are answered once`, async () => {
  // ~0.1-0.3 s of CPU, well under the limit
  const slow = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 300000) SELECT max(n) FROM r";
  const c0 = pool.stats.completed;
  const rs = await Promise.all([q(slow, 5_000), ...Array.from({ length: 20 }, (_, i) => q(`SELECT ${i}`, 5_000))]);
  assert.equal(value(rs[0]), 300000);
  assert.deepEqual(rs.slice(1).map(value), Array.from({ length: 20 }, (_, i) => i));
  // each answered exactly once (a skipped duplicate is not counted)
  assert.equal(pool.stats.completed - c0, 21);
});

/** A gold kept in a process with its rows left there (`stay`), and model queries digested against it there (`held`). */
const GOLD = "SELECT name, age FROM singer WHERE country = 'France' /* affinity */";
const rule = { rows: "bag" as const, ordered: false };
const held = (sql: string, affinity: string | undefined, gold = GOLD) =>
  pool.query(
    { kind: "query", path: fx.path, version: "v1", sql, maxRows: 10_000, maxBytes: 1 << 22, digest: { ...rule, of: gold, maxRows: 4_096, held: true } },
    { limitMs: 1_000, ...(affinity ? { affinity } : {}) },
  );

test("affinity: a gold's rows stay in the process that ran it, and the model queries sent to it by affinity find them there (issue 35)", async () => {
  const key = `${fx.path}\0v1\0${GOLD}`;
  await pool.ready(); // both processes (an earlier test's runaway killed one)
  const g = await pool.query({ kind: "query", path: fx.path, version: "v1", sql: GOLD, maxRows: 10_000, maxBytes: 1 << 22, keep: true, stay: true }, { limitMs: 1_000, affinity: key });
  assert.ok(g.ok);
  assert.deepEqual(g.rows, [], "the gold's rows stayed in the process");
  assert.deepEqual(g.kept, { rows: 4 });
  // 15 model queries of the group in one turn: all go to the process keeping the gold, none runs it again
  const preds = Array.from({ length: 15 }, (_, i) => (i % 3 === 2 ? "SELECT age, name FROM singer WHERE country = 'France'" : `SELECT name, age FROM singer WHERE country = 'France' AND ${i} = ${i}`));
  const rs = await Promise.all(preds.map((p) => held(p, key)));
  assert.deepEqual(rs.map((r) => r.ok && r.reran), Array(15).fill(undefined), "no model query ran the gold again");
  for (const [i, r] of rs.entries()) {
    assert.ok(r.ok);
    if (i % 3 === 2) {
      // a mismatch (the columns swapped): its rows and the gold's come back for the comparison
      assert.equal(r.matched, undefined);
      assert.equal(r.rows.length, 4);
      assert.equal(r.gold?.length, 4);
    } else {
      assert.deepEqual(r.matched, { rows: 4 });
      assert.equal(r.gold, undefined);
    }
  }
  // without affinity the same 16 spread over both processes: the other one runs the gold again
  const spread = await Promise.all(Array.from({ length: 16 }, (_, i) => held(`SELECT name, age FROM singer WHERE country = 'France' AND ${i} < 100`, undefined)));
  assert.ok(spread.some((r) => r.ok && r.reran), "a process without the gold ran it again");
  assert.ok(spread.every((r) => r.ok && r.matched?.rows === 4));
});

test("affinity never starves a query: with its process held by a runaway, another process answers it (running its gold there)", async () => {
  await pool.ready();
  const gold = "SELECT count(*) FROM singer /* starve */";
  const key = `${fx.path}\0v1\0${gold}`;
  const t0 = Date.now();
  const runaway = pool
    .query({ kind: "query", path: fx.path, version: "v1", sql: RUNAWAY, maxRows: 10_000, maxBytes: 1 << 22 }, { limitMs: 1_500, affinity: key })
    .catch((e: Error) => ({ e, ms: Date.now() - t0 }));
  await new Promise((r) => setTimeout(r, 100)); // the runaway is running
  const r = await held("SELECT count(*) FROM singer", key, gold);
  const ms = Date.now() - t0;
  assert.ok(r.ok && r.matched?.rows === 1 && r.reran, JSON.stringify(r));
  // answered while the runaway still held its process (stopped at 1,500 ms of its CPU time)
  const stopped = (await runaway) as { e: Error; ms: number };
  assert.ok(stopped.e instanceof TaskTimeout);
  assert.ok(ms < stopped.ms, `answered after ${ms} ms, the runaway stopped at ${stopped.ms} ms`);
});
