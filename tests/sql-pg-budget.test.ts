/**
 * PostgreSQL's connections under one budget across databases (issue 35): with pg's Pool per
 * database (8 each, 30 s idle) 20 databases asked a default server (max_connections = 100) for
 * 160 connections and 522 of 2,031 items came back null ("too many clients already").
 *
 * - 20 databases on the loopback server (scripts/setup-postgres.sh), PostgreSQL's default
 *   settings and Assay's, 400 items across them in one batch, each query holding its connection
 *   a little (pg_sleep): no null, every verdict right, and never more than
 *   ASSAY_SQL_PG_CONNECTIONS connections open, as Assay counts them and as the server sees them.
 *   (The 20 databases are 20 ids, each its own connection URL, to the one test database: a URL
 *   is what Assay keeps connections for, and the role may not create databases.)
 * - A budget that does not fit the server's max_connections stops start-up, saying what to set.
 * - The budget itself: a database with no idle connection of its own takes another's idle one
 *   when the budget is spent; idle connections close after the idle time.
 */
import { test, describe, after, before } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import pg from "pg";
import { pgMissingAt, testApp } from "./helpers.js";
import { loadConfig } from "../src/core/config.js";
import { startServer } from "../src/server/start.js";
import { ConnectionBudgetError } from "../src/sql/postgres.js";
import { ConnectionBudget } from "../src/sql/pg-budget.js";
import { Gate, createSqlService } from "../src/sql/service.js";

const OWNER = process.env.ASSAY_SQL_TEST_POSTGRES ?? "postgres://assay:assay@127.0.0.1:5432/assay_test";
const READER = process.env.ASSAY_SQL_TEST_POSTGRES_RO ?? "postgres://assay_ro:assay_ro@127.0.0.1:5432/assay_test";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const pgMissing = await pgMissingAt(OWNER);
if (pgMissing && process.env.CI === "true") throw new Error(pgMissing);

/** The reader's URL as database `i`: its own application_name, so the server can count its connections. */
const dbUrl = (i: number) => `${READER}${READER.includes("?") ? "&" : "?"}application_name=assay_budget_${i}`;
const TABLE = "assay_budget_probe";

describe("one PostgreSQL connection budget across databases", { skip: pgMissing ?? undefined }, () => {
  let owner: pg.Client;
  before(async () => {
    owner = new pg.Client({ connectionString: OWNER });
    await owner.connect();
    // a table of its own, so this file never races other tests' fixtures
    await owner.query(`CREATE TABLE IF NOT EXISTS ${TABLE} AS SELECT generate_series(1, 200) AS n`);
    await owner.query(`GRANT SELECT ON ${TABLE} TO PUBLIC`);
  });
  after(async () => {
    await owner.end();
  });

  test("20 databases, default settings, 400 items: no null from connections, never over the budget", async () => {
    const server = Number((await owner.query("SHOW max_connections")).rows[0].max_connections);
    const N = 20;
    const dbs = Array.from({ length: N }, (_, i) => `budget${i}=${dbUrl(i)}`).join(",");
    // Assay's defaults for PostgreSQL (ASSAY_SQL_PG_POOL 8, ASSAY_SQL_PG_CONNECTIONS 16); many items at once
    const { app, runtime } = await testApp({ ASSAY_SQL_POSTGRES: dbs, ASSAY_SQL_DIR: "/nonexistent", ASSAY_BATCH_CONCURRENCY: "400", ASSAY_DEADLINE_MS: "10000" });
    after(() => runtime.close());
    const budget = runtime.config.sql.pgConnections;
    assert.ok(N * runtime.config.sql.pgPoolSize > server, `the shape must ask a per-database pool for more than max_connections (${server})`);
    const gold = `SELECT n FROM ${TABLE} WHERE n % 7 = 0 ORDER BY n`;
    const items = Array.from({ length: 400 }, (_, i) => ({
      verifier: "sql",
      // each prediction holds its connection 20 ms; every third one is wrong
      response: i % 3 ? `SELECT n FROM ${TABLE}, pg_sleep(0.02) WHERE n % 7 = 0 ORDER BY n` : `SELECT n FROM ${TABLE}, pg_sleep(0.02) WHERE n % 5 = 0 ORDER BY n`,
      reference: gold,
      options: { database: `budget${i % N}` },
    }));
    // the server's count of our connections, sampled while the batch runs
    let most = 0;
    let sampling = true;
    const sampler = (async () => {
      const c = new pg.Client({ connectionString: OWNER });
      await c.connect();
      try {
        while (sampling) {
          const r = await c.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE 'assay_budget_%'");
          most = Math.max(most, r.rows[0].n);
          await sleep(10);
        }
      } finally {
        await c.end();
      }
    })();
    let res: request.Response;
    try {
      res = await request(app).post("/reward/batch").send({ items }).expect(200);
    } finally {
      sampling = false;
      await sampler;
    }
    const results = res.body.results as { reward: number | null; status: string; reason: string }[];
    const nulls = results.filter((r) => r.reward === null);
    assert.equal(nulls.length, 0, `${nulls.length} null, e.g. ${nulls[0]?.reason}`);
    assert.deepEqual(results.map((r) => r.reward), items.map((_, i) => (i % 3 ? 1 : 0)));
    const st = (await runtime.services.sql()).stats().postgres!;
    assert.ok(st.peak <= budget, `Assay opened ${st.peak} connections at once, budget ${budget}`);
    assert.ok(most <= budget, `the server saw ${most} of our connections at once, budget ${budget}`);
    assert.ok(st.evicted > 0, "with 20 databases over 16 connections, some idle ones were handed to another database");
    console.log(`# 20 databases, 400 items: 0 null; at most ${st.peak} connections open (server saw ${most}), ${st.opened} opened, ${st.evicted} idle ones moved to another database; max_connections ${server}`);
  });

  test("a budget past half of max_connections (less the reserved ones) stops start-up, saying what to set", async () => {
    const server = Number((await owner.query("SHOW max_connections")).rows[0].max_connections);
    const reserved = Number((await owner.query("SHOW superuser_reserved_connections")).rows[0].superuser_reserved_connections);
    const rc = (await owner.query("SELECT current_setting('reserved_connections', true) AS rc")).rows[0].rc;
    const fits = Math.floor((server - reserved - Number(rc ?? 0)) / 2);
    const env = { ASSAY_SQL_POSTGRES: `budget0=${dbUrl(0)}`, ASSAY_SQL_DIR: "/nonexistent", ASSAY_PORT: "0", ASSAY_LOG_LEVEL: "silent", ASSAY_SANDBOX: "none", ASSAY_DATA_DIR: ":memory:" };
    await assert.rejects(startServer(loadConfig({ ...env, ASSAY_SQL_PG_CONNECTIONS: String(fits + 1) })), (err: Error) => {
      assert.ok(err instanceof ConnectionBudgetError, String(err));
      assert.match(err.message, new RegExp(`ASSAY_SQL_PG_CONNECTIONS is ${fits + 1}`));
      assert.match(err.message, new RegExp(`max_connections = ${server}`));
      assert.match(err.message, new RegExp(`set ASSAY_SQL_PG_CONNECTIONS to ${fits} or less`));
      return true;
    });
    // the most that fits passes the same check
    const svc = createSqlService(loadConfig({ ...env, ASSAY_SQL_PG_CONNECTIONS: String(fits) }));
    try {
      assert.deepEqual(await svc.checkPostgres(), { unreachable: [] });
      assert.deepEqual((await svc.checkConnectionBudget()).map((x) => [x.max, x.fits]), [[server, fits]]);
    } finally {
      await svc.close();
    }
  });

  test("the budget: a database without an idle connection takes another's when all are open; idle ones close", async () => {
    const b = new ConnectionBudget({ max: 2, perDatabase: 2, idleMs: 300, connectTimeoutMs: 3_000 });
    try {
      const [a1, a2] = [await b.connect(dbUrl(0)), await b.connect(dbUrl(0))];
      // a third connection waits while both are busy
      let third: pg.Client | null = null;
      const waiting = b.connect(dbUrl(1)).then((c) => (third = c));
      await sleep(100);
      assert.equal(third, null);
      assert.equal(b.stats.waiting, 1);
      a1.release();
      await waiting;
      assert.ok(third);
      assert.deepEqual([b.stats.open, b.stats.evicted], [2, 1]);
      assert.equal((await (third as pg.Client).query("SELECT 1 AS x")).rows[0].x, 1);
      (third as unknown as { release(): void }).release();
      a2.release();
      assert.deepEqual([b.stats.open, b.stats.idle], [2, 2]);
      // its own idle connection is reused, not a new one opened
      const opened = b.stats.opened;
      const again = await b.connect(dbUrl(1));
      assert.equal(b.stats.opened, opened);
      again.release();
      await sleep(700);
      assert.deepEqual([b.stats.open, b.stats.idle, b.stats.peak], [0, 0, 2]);
    } finally {
      await b.close();
    }
  });
});

test("the service's gate: at most n in all and perKey per database, waiters of a full database do not block others", async () => {
  const g = new Gate(3, 2);
  await g.acquire("a");
  await g.acquire("a");
  const order: string[] = [];
  const a3 = g.acquire("a").then(() => order.push("a"));
  const b1 = g.acquire("b").then(() => order.push("b"));
  await b1;
  assert.deepEqual(order, ["b"]); // "a" is at its cap of 2; "b" went past it
  const c1 = g.acquire("c").then(() => order.push("c"));
  await sleep(20);
  assert.deepEqual(order, ["b"]); // 3 in all
  g.release("a");
  await a3;
  assert.deepEqual(order, ["b", "a"]); // first come among those with room
  g.release("b");
  await c1;
  assert.deepEqual(order, ["b", "a", "c"]);
});
