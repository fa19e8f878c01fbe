/**
 * SQL work is admitted like sandbox work (issue 25), and its limit is the work a query did
 * (issue 36):
 *
 * - An accepted `sql` item's clock stops while its query waits for a SQLite process (and while
 *   the pool runs it under what was left of the deadline, counted in CPU time): 8 endless
 *   queries and 2 right answers on a pool of 2 processes score 8 zeros (time limit) and 2 ones,
 *   never null.
 * - Past ASSAY_SQL_MAX_WAIT_MS of SQL backlog a request with `sql` items gets 429 + Retry-After;
 *   other verifiers pass.
 * - A query that takes most of its limit scores the same with a CPU hog running (the hog is
 *   started and stopped here, bounded in time); on PostgreSQL (its backend's CPU time) too, and an
 *   endless PostgreSQL query scores 0 under the hog, never null.
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import { spawn, type ChildProcess } from "node:child_process";
import { availableParallelism } from "node:os";
import { pgMissingAt, testApp } from "./helpers.js";
import { sqliteFixture } from "../verifiers/sql/fixtures.js";

const fx = sqliteFixture();
const ENDLESS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) FROM r";
const RIGHT = "SELECT name FROM singer WHERE age > 40 ORDER BY name";
const sqlItem = (response: string) => ({ verifier: "sql", response, reference: RIGHT, options: { database: "concert_singer" } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Result = { reward: number | null; status: string; reason: string; details: Record<string, any>; elapsed_ms: number };

describe("SQL admission: queueing never makes an item null", () => {
  // The default pool's shape (2 processes) at small limits: each endless query holds a process for
  // 300 ms of CPU time, so the last ones wait far past the 1 s deadline for a process.
  const env = { ASSAY_SQL_DIR: fx.dir, ASSAY_SQL_WORKERS: "2", ASSAY_SQL_TIMEOUT_MS: "300", ASSAY_DEADLINE_MS: "1000", ASSAY_MAX_DEADLINE_MS: "1000" };

  test("8 endless queries + 2 right answers on 2 processes: 8 zeros (time limit) and 2 ones", async () => {
    const { app, runtime } = await testApp(env);
    after(() => runtime.close());
    const items = [...Array.from({ length: 8 }, () => sqlItem(ENDLESS)), sqlItem(RIGHT), sqlItem("SELECT name FROM singer WHERE age >= 41 ORDER BY 1")];
    const res = await request(app).post("/reward/batch").send({ items }).expect(200);
    const results = res.body.results as Result[];
    assert.deepEqual(results.map((r) => r.reward), [0, 0, 0, 0, 0, 0, 0, 0, 1, 1], JSON.stringify(results.map((r) => r.reason)));
    for (const r of results.slice(0, 8)) {
      assert.equal(r.status, "ok");
      assert.match(r.reason, /query stopped at its time limit/);
      assert.equal(r.details.limit, "timeout");
    }
    // they really queued: the batch as a whole took longer than one deadline
    assert.ok(Math.max(...results.map((r) => r.elapsed_ms)) > 1000, `slowest item ${Math.max(...results.map((r) => r.elapsed_ms))} ms`);
  });

  test("the SQL backlog past ASSAY_SQL_MAX_WAIT_MS: 429 with Retry-After for sql items; other verifiers pass", async () => {
    const { app, runtime } = await testApp({ ...env, ASSAY_SQL_MAX_WAIT_MS: "500", ASSAY_DEADLINE_MS: "60000", ASSAY_MAX_DEADLINE_MS: "60000" });
    after(() => runtime.close());
    // 8 endless queries x 300 ms over 2 processes: about 1.2 s of backlog, past the 500 ms bound
    // (each expected to take its limit: no query has ended yet to say a shorter typical length)
    // Each with a gold of its own: items that share a gold which is already running wait for it
    // and only then queue their query (the digest path), so a shared gold would put the backlog
    // in the ledger only after the first probe had been admitted.
    const busy = request(app).post("/reward/batch").send({ items: Array.from({ length: 8 }, (_, i) => ({ ...sqlItem(ENDLESS), reference: `SELECT name FROM singer WHERE age > ${40 - i} ORDER BY name` })) }).then((r) => r);
    let refused: request.Response | undefined;
    for (let i = 0; i < 50 && !refused; i++) {
      await sleep(20);
      const r = await request(app).post("/reward").send(sqlItem(RIGHT));
      if (r.status === 429) refused = r;
      else assert.equal(r.status, 200);
    }
    assert.ok(refused, "never refused while 8 endless queries were queued");
    assert.ok(Number(refused.headers["retry-after"]) >= 1);
    assert.match(refused.body.error, /SQL engines busy: .* raise ASSAY_SQL_WORKERS/);
    // a composed item with a sql part counts; an item of another verifier is admitted
    await request(app).post("/reward").send({ verifier: "combine", response: RIGHT, reference: [{ verifier: "sql", reference: RIGHT, options: { database: "concert_singer" } }] }).expect(429);
    const text = await request(app).post("/reward").send({ verifier: "exact", response: "a", reference: "a" }).expect(200);
    assert.equal(text.body.reward, 1);
    const done = await busy;
    assert.deepEqual(done.body.results.map((r: Result) => r.reward), Array(8).fill(0));
    // the backlog drained: admitted again
    assert.equal((await request(app).post("/reward").send(sqlItem(RIGHT)).expect(200)).body.reward, 1);
  });
});

// PostgreSQL (scripts/setup-postgres.sh's read-only role): the same rule for its connections.
const PG_ENDLESS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) FROM r";
const READER = process.env.ASSAY_SQL_TEST_POSTGRES_RO ?? "postgres://assay_ro:assay_ro@127.0.0.1:5432/assay_test";
const pgMissing = await pgMissingAt(READER);
if (pgMissing && process.env.CI === "true") throw new Error(pgMissing);

describe("PostgreSQL admission: a query's wait for a connection is not charged to its item", { skip: pgMissing ?? undefined }, () => {
  test("8 endless queries + 2 right answers on 2 connections: 8 zeros and 2 ones", async () => {
    const { app, runtime } = await testApp({ ASSAY_SQL_POSTGRES: `pgadm=${READER}`, ASSAY_SQL_DIR: "/nonexistent", ASSAY_SQL_PG_POOL: "2", ASSAY_SQL_TIMEOUT_MS: "300", ASSAY_DEADLINE_MS: "1000", ASSAY_MAX_DEADLINE_MS: "1000" });
    after(() => runtime.close());
    const pgItem = (response: string) => ({ verifier: "sql", response, reference: "SELECT 41 + 1 AS answer", options: { database: "pgadm" } });
    const endless = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) FROM r";
    const items = [...Array.from({ length: 8 }, () => pgItem(endless)), pgItem("SELECT 42"), pgItem("SELECT 6 * 7")];
    const res = await request(app).post("/reward/batch").send({ items }).expect(200);
    const results = res.body.results as Result[];
    assert.deepEqual(results.map((r) => r.reward), [0, 0, 0, 0, 0, 0, 0, 0, 1, 1], JSON.stringify(results.map((r) => r.reason)));
    for (const r of results.slice(0, 8)) {
      assert.equal(r.status, "ok");
      // stopped at its CPU limit, read from its backend's /proc (PostgreSQL is on this host)
      assert.match(r.reason, /ms of CPU time \(limit 300 ms of CPU time\)/, r.reason);
    }
  });

  test("GET /databases/{id} lists a view without evaluating it (an endless view costs nothing)", async () => {
    const { default: pg } = await import("pg");
    const owner = new pg.Client({ connectionString: process.env.ASSAY_SQL_TEST_POSTGRES ?? "postgres://assay:assay@127.0.0.1:5432/assay_test" });
    await owner.connect();
    const { app, runtime } = await testApp({ ASSAY_SQL_POSTGRES: `pgview=${READER}`, ASSAY_SQL_DIR: "/nonexistent" });
    try {
      await owner.query("CREATE OR REPLACE VIEW assay_endless_view AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) AS m FROM r");
      await owner.query("GRANT SELECT ON assay_endless_view TO PUBLIC");
      const t0 = Date.now();
      const res = await request(app).get("/databases/pgview").expect(200);
      const ms = Date.now() - t0;
      const v = res.body.tables.find((t: { name: string }) => t.name === "assay_endless_view");
      assert.deepEqual([v.view, v.rows], [true, null]);
      // counting it would run until statement_timeout (10 s for schema reads)
      assert.ok(ms < 9_000, `GET took ${ms} ms`);
    } finally {
      await owner.query("DROP VIEW IF EXISTS assay_endless_view");
      await owner.end();
      await runtime.close();
    }
  });
});

describe("the SQLite limit is the work the query did", () => {
  /** Busy-loop processes on every core (and then some), each ending by itself after `ms`. */
  function hog(ms: number, perCore = 2, detached = false): ChildProcess[] {
    const code = `const end = Date.now() + ${ms}; let x = 0; while (Date.now() < end) x = (x * 31 + 7) % 1000003;`;
    return Array.from({ length: availableParallelism() * perCore }, () => spawn(process.execPath, ["-e", code], { stdio: "ignore", detached }));
  }
  const stop = (ps: ChildProcess[]) => Promise.all(ps.map((p) => new Promise<void>((res) => {
    if (p.exitCode !== null || p.signalCode !== null) return res();
    p.once("exit", () => res());
    p.kill("SIGKILL");
  })));
  /** A right answer that counts through a recursive CTE of n steps before it answers. */
  const slowRight = (n: number) => `SELECT name FROM singer WHERE age > 40 AND (WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < ${n}) SELECT max(i) FROM r) = ${n} ORDER BY name`;

  test("a query that takes most of its limit scores the same with a CPU hog running", async () => {
    const limitMs = 1000;
    const { app, runtime } = await testApp({ ASSAY_SQL_DIR: fx.dir, ASSAY_SQL_WORKERS: "2", ASSAY_SQL_TIMEOUT_MS: String(limitMs), ASSAY_DEADLINE_MS: "20000" });
    after(() => runtime.close());
    const score = async (n: number) => (await request(app).post("/reward").send(sqlItem(slowRight(n))).expect(200)).body as Result;
    // calibrate: n steps that take about half the limit in CPU time on this machine
    let n = 200_000;
    for (let i = 0; i < 6; i++) {
      const r = await score(n);
      assert.equal(r.reward, 1, r.reason);
      const ms = r.details.cpu_ms as number; // the query's CPU time in its process
      if (ms > limitMs * 0.4 && ms < limitMs * 0.7) break;
      n = Math.max(1000, Math.round((n * limitMs * 0.55) / Math.max(1, ms)));
    }
    const idle = [await score(n), await score(n)];
    const hogs = hog(30_000);
    let loaded: Result[];
    try {
      await sleep(300); // let the hog take the cores
      loaded = [await score(n), await score(n)];
    } finally {
      await stop(hogs);
    }
    assert.deepEqual(loaded.map((r) => r.reward), idle.map((r) => r.reward));
    assert.deepEqual(idle.map((r) => r.reward), [1, 1]);
    assert.deepEqual(loaded.map((r) => r.status), ["ok", "ok"]);
    // most of the limit, idle and loaded alike
    for (const r of [...idle, ...loaded]) assert.ok(r.details.cpu_ms > limitMs * 0.3 && r.details.cpu_ms < limitMs, `cpu ${r.details.cpu_ms} ms`);
    const show = (rs: Result[]) => rs.map((r) => `${Math.round(r.details.ms)} ms wall / ${Math.round(r.details.cpu_ms)} ms CPU`).join(", ");
    console.log(`# n=${n}: idle ${show(idle)}; under the hog ${show(loaded)} (limit ${limitMs} ms of CPU time)`);
  });

  test("PostgreSQL: a query that takes half its limit scores 1 with a CPU hog running (4 busy loops a core), an endless one 0", { skip: pgMissing ?? undefined }, async () => {
    // its limit is its backend's CPU time (/proc/<pid>/schedstat, PostgreSQL on this host)
    const limitMs = 500;
    const { app, runtime } = await testApp({ ASSAY_SQL_POSTGRES: `pgcpu=${READER}`, ASSAY_SQL_DIR: "/nonexistent", ASSAY_SQL_TIMEOUT_MS: String(limitMs), ASSAY_DEADLINE_MS: "20000" });
    after(() => runtime.close());
    const score = async (response: string, reference: string) =>
      (await request(app).post("/reward").send({ verifier: "sql", response, reference, options: { database: "pgcpu" } }).expect(200)).body as Result;
    // a right answer that counts n rows (streamed, no tuplestore) before it answers
    const counting = (n: number) => score(`SELECT count(*) FROM (SELECT generate_series(1, ${n})) s`, `SELECT ${n}`);
    let n = 1_000_000;
    for (let i = 0; i < 6; i++) {
      const r = await counting(n);
      assert.equal(r.reward, 1, r.reason);
      const ms = r.details.cpu_ms as number; // the backend's CPU time for the query
      assert.equal(typeof ms, "number", "no CPU time read from the backend's /proc");
      if (ms > limitMs * 0.4 && ms < limitMs * 0.6) break;
      n = Math.max(1000, Math.round((n * limitMs * 0.5) / Math.max(1, ms)));
    }
    const idle = [await counting(n), await counting(n)];
    const idleEndless = await score(PG_ENDLESS, "SELECT 1");
    // each busy loop in a session of its own: with autogroup scheduling (Linux's default on a
    // desktop kernel) a hog in the test's session would only compete with the test itself,
    // while these compete with the PostgreSQL server's processes as well
    const hogs = hog(30_000, 4, true);
    let loaded: Result[];
    let loadedEndless: Result;
    try {
      await sleep(300); // let the hog take the cores
      loaded = [await counting(n), await counting(n)];
      loadedEndless = await score(PG_ENDLESS, "SELECT 1");
    } finally {
      await stop(hogs);
    }
    assert.deepEqual(idle.map((r) => r.reward), [1, 1]);
    assert.deepEqual(loaded.map((r) => r.reward), [1, 1], loaded.map((r) => r.reason).join("; "));
    for (const r of [idleEndless, loadedEndless]) {
      assert.equal(r.status, "ok", r.reason);
      assert.equal(r.reward, 0, r.reason);
      assert.match(r.reason, new RegExp(`ms of CPU time \\(limit ${limitMs} ms of CPU time\\)`), r.reason);
    }
    for (const r of [...idle, ...loaded]) assert.ok(r.details.cpu_ms > limitMs * 0.25 && r.details.cpu_ms < limitMs, `cpu ${r.details.cpu_ms} ms`);
    const show = (rs: Result[]) => rs.map((r) => `${Math.round(r.details.ms)} ms wall / ${Math.round(r.details.cpu_ms)} ms CPU`).join(", ");
    console.log(`# PostgreSQL n=${n}: idle ${show(idle)}; under the hog ${show(loaded)}; endless under the hog: ${loadedEndless.reason} (limit ${limitMs} ms of CPU time)`);
  });
});
