/**
 * The sql verifier on a real PostgreSQL server (scripts/setup-postgres.sh starts one): the same
 * labelled pairs as on SQLite, writes refused with the data unchanged, statement_timeout.
 * Without a server the tests skip with a notice; under CI (CI=true) they fail instead.
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import pg from "pg";
import { testApp } from "../../tests/helpers.js";
import { loadConfig } from "../../src/core/config.js";
import { startServer } from "../../src/server/start.js";
import { PostgresEngine, UnsafeRoleError } from "../../src/sql/postgres.js";
import { createSqlService, stoppedByLoad } from "../../src/sql/service.js";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CASES } from "./cases.js";
import { SCRIPT } from "./fixtures.js";

const OWNER = process.env.ASSAY_SQL_TEST_POSTGRES ?? "postgres://assay:assay@127.0.0.1:5432/assay_test";
const READER = process.env.ASSAY_SQL_TEST_POSTGRES_RO ?? "postgres://assay_ro:assay_ro@127.0.0.1:5432/assay_test";

async function connect(): Promise<pg.Client | string> {
  const c = new pg.Client({ connectionString: OWNER, connectionTimeoutMillis: 3_000 });
  try {
    await c.connect();
    return c;
  } catch (err) {
    return (err as Error).message;
  }
}

const owner = await connect();
const missing = typeof owner === "string" ? `PostgreSQL not reachable at ${OWNER.replace(/:[^:@/]*@/, ":***@")} (${owner}); bash scripts/setup-postgres.sh starts one` : null;
if (missing && process.env.CI === "true") {
  test("PostgreSQL is available under CI", () => assert.fail(missing));
} else if (missing) {
  console.log(`sql/pg tests skipped: ${missing}`);
  test("PostgreSQL tests", { skip: missing }, () => {});
} else {
  await suite(owner as pg.Client);
}

/** A checksum of every fixture table's rows, read as the owner. */
async function checksum(c: pg.Client): Promise<string> {
  const parts: string[] = [];
  for (const t of ["stadium", "singer", "concert", "singer_in_concert", "ticket"]) {
    const r = await c.query(`SELECT md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), '')) AS h, count(*) AS n FROM ${t} AS x`);
    parts.push(`${t}:${r.rows[0].n}:${r.rows[0].h}`);
  }
  const tables = await c.query("SELECT string_agg(tablename, ',' ORDER BY tablename) AS t FROM pg_tables WHERE schemaname = 'public'");
  return parts.join(";") + "|" + tables.rows[0].t;
}

async function suite(c: pg.Client) {
  await c.query("DROP TABLE IF EXISTS ticket, singer_in_concert, concert, singer, stadium, evil CASCADE");
  await c.query(SCRIPT);
  const sum0 = await checksum(c);
  const { app, runtime } = await testApp({ ASSAY_SQL_POSTGRES: `concert_pg=${READER}`, ASSAY_SQL_TIMEOUT_MS: "1000", ASSAY_SQL_DIR: "/nonexistent" });
  after(async () => {
    await runtime.close();
    await c.end();
  });
  const item = (response: string, gold: string, options: Record<string, unknown> = {}) => ({ verifier: "sql", response, reference: gold, options: { database: "concert_pg", ...options } });
  const batch = async (items: object[]) => {
    const res = await request(app).post("/reward/batch").send({ items });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.results as { reward: number | null; status: string; reason: string; details: Record<string, any>; elapsed_ms: number }[];
  };

  describe("execution match on PostgreSQL", () => {
    test("every labelled case scores as on SQLite", async () => {
      const rs = await batch(CASES.map((k) => item(k.pred, k.gold, k.options)));
      const wrong = CASES.map((k, i) => ({ k, r: rs[i] })).filter(({ k, r }) => r.status !== "ok" || r.reward !== k.reward);
      assert.deepEqual(wrong.map(({ k, r }) => `${k.name}: got ${r.reward} (${r.status}: ${r.reason})`), []);
      assert.equal(rs[0].details.engine, "postgres");
    });
    test("a gold written with SQLite's double-quoted literals is converted once; integers past 2^53 compare exactly", async () => {
      const dq = 'SELECT name FROM singer WHERE country = "France"';
      const [first] = await batch([item("SELECT name FROM singer WHERE country = 'France'", dq)]);
      assert.equal(first.reward, 1, first.reason);
      assert.deepEqual(first.details.gold_dqs, ["France"]);
      const [again, quotedColumn, wrong] = await batch([
        item("SELECT name FROM singer WHERE country = 'France'", dq),
        item("SELECT name FROM singer", 'SELECT "name" FROM singer'),
        item("SELECT name FROM singer WHERE country = 'Peru'", dq),
      ]);
      assert.equal(again.reward, 1);
      assert.equal(again.details.gold_cached, true); // the converted gold ran straight away
      assert.deepEqual(again.details.gold_dqs, ["France"]);
      assert.equal(quotedColumn.reward, 1);
      assert.equal(quotedColumn.details.gold_dqs, undefined);
      assert.equal(wrong.reward, 0);
      // the model's double quotes stay PostgreSQL's identifiers: its dialect is the model's to get right
      const [pred] = await batch([item('SELECT name FROM singer WHERE country = "France"', dq)]);
      assert.equal(pred.reward, 0);
      assert.match(pred.reason, /column "France" does not exist/);
      const big = await batch([
        item("SELECT 9223372036854775806::bigint", "SELECT 9223372036854775807::bigint"),
        item("SELECT 9223372036854775807::numeric", "SELECT 9223372036854775807::bigint"),
        item("SELECT 9007199254740992::bigint", "SELECT 9007199254740993::bigint"),
      ]);
      assert.deepEqual(big.map((r) => r.reward), [0, 1, 0]);
    });
    test("a gold wholly wrapped in parentheses with ORDER BY is ordered; a parenthesised UNION branch's ORDER BY is not", async () => {
      const rs = await batch([
        item("SELECT name FROM singer ORDER BY singer_id DESC", "(SELECT name FROM singer ORDER BY singer_id)"),
        item("SELECT name FROM singer ORDER BY singer_id DESC", "((SELECT name FROM singer ORDER BY singer_id))"),
        item("SELECT name FROM singer ORDER BY singer_id", "(SELECT name FROM singer ORDER BY singer_id)"),
        item("SELECT name FROM singer ORDER BY singer_id DESC", "(SELECT name FROM singer ORDER BY singer_id) UNION ALL (SELECT name FROM singer WHERE false)"),
      ]);
      assert.deepEqual(rs.map((r) => [r.status, r.reward, r.details.ordered]), [["ok", 0, true], ["ok", 0, true], ["ok", 1, true], ["ok", 1, false]]);
    });
    test("errors: the model's query scores 0 with PostgreSQL's message; a failing gold is null", async () => {
      const [col, gold] = await batch([item("SELECT nam FROM singer", "SELECT name FROM singer"), item("SELECT 1", "SELECT nope FROM singer")]);
      assert.equal(col.reward, 0);
      assert.match(col.reason, /column "nam" does not exist/);
      assert.equal(col.details.rewards.syntax, 0);
      assert.equal(gold.status, "error");
      assert.equal(gold.reward, null);
    });
    test("probe defects on PostgreSQL: `;` then a comment, statement words as names, a bytea is no text, the float tolerance", async () => {
      const q = "SELECT count(*) FROM singer";
      const rs = await batch([
        item(q + ";\n-- counts the singers", q),
        item(q + "; /* done */", q),
        item(q + "; -- x\nDELETE FROM singer", q),
        item("SELECT count(*) AS merge FROM singer", q),
        item("SELECT 1 AS grant, 2 AS revoke, 3 AS truncate, 4 AS attach, 5 AS pragma, 6 AS vacuum", "SELECT 1, 2, 3, 4, 5, 6"),
        item("SELECT '\\x41'", "SELECT '\\x41'::bytea"),
        item("SELECT 'A'::bytea", "SELECT '\\x41'::bytea"),
        item("SELECT 1234567890120.0::float8", "SELECT 1234567890123.45::float8"),
        item("SELECT 0.1::float8 + 0.2::float8", "SELECT 0.3::float8"),
      ]);
      assert.deepEqual(rs.map((r) => r.reward), [1, 1, 0, 1, 1, 0, 1, 0, 1], JSON.stringify(rs.map((r) => r.reason)));
      assert.equal(await checksum(c), sum0);
    });
    test("GET /databases describes it", async () => {
      const res = await request(app).get("/databases/concert_pg");
      assert.equal(res.status, 200);
      const singer = res.body.tables.find((t: { name: string }) => t.name === "singer");
      assert.equal(singer.rows, 7);
      const concert = res.body.tables.find((t: { name: string }) => t.name === "concert");
      assert.deepEqual(concert.foreign_keys, [{ column: "stadium_id", references: "stadium(stadium_id)" }]);
    });
  });

  describe("nothing can write on PostgreSQL", () => {
    test("every attempt scores 0 and the data is unchanged", async () => {
      const attempts = [
        "DELETE FROM singer", "DROP TABLE singer", "UPDATE singer SET age = 0", "INSERT INTO singer VALUES (99, 'x', 'y', 1, 1.0)",
        "CREATE TABLE evil (x int)", "SELECT 1; DROP TABLE singer", "WITH d AS (DELETE FROM singer RETURNING *) SELECT * FROM d",
        "SELECT * INTO evil FROM singer", "SELECT * FROM singer FOR UPDATE", "SELECT set_config('default_transaction_read_only', 'off', false)",
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity", "SELECT pg_advisory_lock(1)", "COPY singer TO '/tmp/x'",
        "SELECT nextval('x')", "SELECT pg_read_file('/etc/passwd')", "SELECT lo_import('/etc/passwd')",
      ];
      const rs = await batch(attempts.map((a) => item(a, "SELECT name FROM singer")));
      rs.forEach((r, i) => {
        assert.equal(r.status, "ok", attempts[i]);
        assert.equal(r.reward, 0, attempts[i]);
      });
      assert.equal(await checksum(c), sum0);
    });
    test("the engine wall holds without the lexer: READ ONLY transaction and a SELECT-only role", async () => {
      const svc = await runtime.services.sql();
      const far = { deadline: Date.now() + 10_000 };
      for (const q of ["DELETE FROM singer", "WITH d AS (DELETE FROM singer RETURNING *) SELECT * FROM d", "SELECT 1; DELETE FROM singer", "SELECT * INTO evil FROM singer"]) {
        const r = await svc.query("concert_pg", q, far);
        assert.equal(r.ok, false, q);
      }
      assert.equal(await checksum(c), sum0);
      // the reader role cannot write even outside our transaction
      const ro = new pg.Client({ connectionString: READER });
      await ro.connect();
      try {
        await assert.rejects(ro.query("BEGIN READ WRITE; DELETE FROM singer"), /permission denied|read-only/);
      } finally {
        await ro.end();
      }
      assert.equal(await checksum(c), sum0);
    });
    test("runaway queries stop at their limit (CPU time; a sleeping one at the wall-clock net) while other items are scored", async () => {
      const t0 = Date.now();
      const rs = await batch([
        item("SELECT count(*) FROM ticket a, ticket b, ticket c, ticket d, ticket e, ticket f", "SELECT 1"),
        item("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) FROM r", "SELECT 1"),
        item("SELECT pg_sleep(30)", "SELECT 1"),
        ...CASES.slice(0, 6).map((k) => item(k.pred, k.gold, k.options)),
      ]);
      const wall = Date.now() - t0;
      // the limit is the backend's CPU time (PostgreSQL on this host): a CPU-bound runaway stops at
      // 1000 ms of it however long the load makes that take, and scores 0, never null
      for (const r of rs.slice(0, 2)) {
        assert.equal(r.status, "ok", r.reason);
        assert.equal(r.reward, 0);
        assert.match(r.reason, /time limit: .*ms of CPU time \(limit 1000 ms of CPU time\)/);
        assert.ok(r.details.work.cpu_ms >= 1_000, JSON.stringify(r.details.work));
        assert.ok(r.elapsed_ms >= 1_000 && r.elapsed_ms < 15_000, `stopped after ${r.elapsed_ms} ms`);
      }
      // pg_sleep uses no CPU: the wall-clock safety net (2 x 1000 ms + 1 s, less waits for a CPU) stops it, 0
      assert.equal(rs[2].status, "ok", rs[2].reason);
      assert.equal(rs[2].reward, 0);
      assert.match(rs[2].reason, /time limit: .*wall-clock time not spent waiting for a CPU/);
      assert.ok(rs[2].elapsed_ms >= 3_000 && rs[2].elapsed_ms < 6_000, `stopped after ${rs[2].elapsed_ms} ms`);
      rs.slice(3).forEach((r, i) => {
        assert.equal(r.reward, CASES[i].reward, CASES[i].name);
        assert.ok(r.elapsed_ms < 900, `${CASES[i].name} took ${r.elapsed_ms} ms`);
      });
      assert.ok(wall < 15_000, `batch took ${wall} ms`);
      const idle = await c.query("SELECT count(*) AS n FROM pg_stat_activity WHERE usename = 'assay_ro' AND state = 'active' AND query NOT LIKE '%pg_stat_activity%'");
      assert.equal(Number(idle.rows[0].n), 0); // nothing left running on the server
    });
  });

  // one connection, so every item below runs on the session the one before it used
  const one = await testApp({ ASSAY_SQL_POSTGRES: `concert_pg=${READER}`, ASSAY_SQL_TIMEOUT_MS: "1000", ASSAY_SQL_PG_POOL: "1", ASSAY_SQL_DIR: "/nonexistent" });
  after(() => one.runtime.close());
  const svc = await one.runtime.services.sql();
  describe("one statement, read-only, every time (issue 25)", () => {
    // its result depends on the session's search_path, TimeZone and DateStyle
    const GOLD = "SELECT name, '2024-01-02 03:04:05+00'::timestamptz::text AS t FROM singer ORDER BY name";
    const RIGHT = "SELECT name, '2024-01-02 03:04:05+00'::timestamptz::text FROM singer ORDER BY 1";
    const score = async (response: string) => {
      const res = await request(one.app).post("/reward").send(item(response, GOLD));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body as { reward: number | null; status: string; reason: string; details: Record<string, any>; elapsed_ms: number };
    };
    const attacks = [
      "SELECT $$'$$; COMMIT; SET TimeZone = 'Asia/Tokyo'; SELECT '$$'",
      "SELECT $t$'$t$; COMMIT; SET search_path TO pg_catalog; SELECT '$t$'",
      "SELECT E'\\'' ; COMMIT; SET DateStyle = 'SQL, DMY'; SELECT ''",
      "SELECT 1 /* /* */ ' */ ; COMMIT; SET TimeZone = 'America/Caracas'; -- '",
      "SELECT $$'$$; COMMIT; SET statement_timeout = 0; SELECT pg_sleep(30) -- '$$",
      "SELECT $$'$$; COMMIT; SET default_transaction_read_only = off; CREATE TEMP TABLE singer AS SELECT 'evil' AS name; SELECT '$$'",
    ];

    test("each hidden second statement scores 0 with a reason; a right answer right after scores 1 from the unchanged gold cache", async () => {
      const first = await score(RIGHT);
      assert.equal(first.reward, 1, first.reason);
      const cached = JSON.stringify((svc as any).gold.dump());
      const runs = svc.counters.goldRuns;
      for (const a of attacks) {
        const r = await score(a);
        assert.equal(r.status, "ok", `${a}: ${r.reason}`);
        assert.equal(r.reward, 0, a);
        assert.ok(r.reason.length > 0);
        assert.ok(r.elapsed_ms < 3_000, `${a} took ${r.elapsed_ms} ms`);
        const right = await score(RIGHT);
        assert.equal(right.reward, 1, `after ${a}: ${right.reason}`);
        assert.equal(right.details.gold_cached, true);
      }
      assert.equal(svc.counters.goldRuns, runs);
      assert.equal(JSON.stringify((svc as any).gold.dump()), cached);
      const sleeping = await c.query("SELECT count(*) AS n FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()");
      assert.equal(Number(sleeping.rows[0].n), 0);
    });

    test("the engine alone (no lexer) runs exactly one statement, in a READ ONLY transaction with its own limits", async () => {
      const far = () => ({ deadline: Date.now() + 10_000 });
      for (const q of [
        "SELECT 1; COMMIT; SET search_path TO pg_catalog",
        "SET statement_timeout = 0; SELECT pg_sleep(30)",
        "SELECT 1; COMMIT; CREATE TEMP TABLE singer AS SELECT 'evil' AS name",
      ]) {
        const t0 = Date.now();
        const r = await svc.query("concert_pg", q, far());
        assert.equal(r.ok, false, q);
        assert.match(!r.ok ? r.error : "", /multiple commands|syntax error/); // the second statement never runs
        assert.ok(Date.now() - t0 < 3_000);
      }
      // a setting changed inside the one statement goes with its transaction; the limit is ours
      // (the backend's CPU time and the wall-clock net, 3 s here, read from /proc), not the setting's
      const t0 = Date.now();
      const lifted = await svc.query("concert_pg", "SELECT set_config('statement_timeout', '0', false), pg_sleep(8)", far());
      assert.equal(lifted.ok, false);
      assert.equal(!lifted.ok && lifted.limit, "timeout");
      assert.ok(Date.now() - t0 < 6_000, `ran ${Date.now() - t0} ms`);
      const r = await svc.query("concert_pg", "SELECT current_setting('statement_timeout'), current_setting('TimeZone') = (SELECT reset_val FROM pg_settings WHERE name = 'TimeZone'), count(*) FROM singer", { deadline: Date.now() + 60_000 });
      assert.ok(r.ok);
      // SET LOCAL's last-resort limit (10 x 1 s + 5 s: PostgreSQL is on this host), the default zone, the real table
      assert.deepEqual(r.rows, [["15s", 1, 7]]);
    });

    test("a pooled session whose settings or temp tables changed behind our back is destroyed, not reused", async () => {
      const engine = (svc as any).pg as PostgresEngine;
      const pool = (engine as any).pools.get(READER).pool as pg.Pool;
      const before = engine.counters.tainted;
      const client = await pool.connect();
      await client.query("SET search_path TO pg_catalog"); // as if a reset had been skipped
      client.release();
      const r = await svc.query("concert_pg", "SELECT count(*) FROM singer", { deadline: Date.now() + 10_000 });
      assert.ok(r.ok, !r.ok ? r.error : "");
      assert.deepEqual(r.rows, [[7]]);
      assert.equal(engine.counters.tainted, before + 1);
    });

    test("a role that may create temporary tables or objects: the server refuses to start, naming what to REVOKE", async () => {
      const config = loadConfig({ ASSAY_SQL_POSTGRES: `concert_own=${OWNER}`, ASSAY_SQL_DIR: "/nonexistent", ASSAY_PORT: "0", ASSAY_LOG_LEVEL: "silent", ASSAY_SANDBOX: "none", ASSAY_DATA_DIR: ":memory:" });
      await assert.rejects(startServer(config), (err: Error) => {
        assert.ok(err instanceof UnsafeRoleError, String(err));
        assert.match(err.message, /concert_own/);
        assert.match(err.message, /create temporary tables/);
        assert.match(err.message, /REVOKE TEMPORARY, CREATE ON DATABASE assay_test FROM PUBLIC, assay;/);
        assert.match(err.message, /REVOKE CREATE ON SCHEMA public FROM PUBLIC, assay;/);
        return true;
      });
      // a database that does not answer yet does not stop the start (its role is checked before its first query)
      const down = createSqlService(loadConfig({ ASSAY_SQL_POSTGRES: `gone=postgres://x:y@127.0.0.1:1/none`, ASSAY_SQL_DIR: "/nonexistent" }));
      try {
        const { unreachable } = await down.checkPostgres();
        assert.deepEqual(unreachable.map((u) => u.id), ["gone"]);
      } finally {
        await down.close();
      }
      // the SELECT-only role passes the same check, and items on the owner's URL are null, never run
      assert.deepEqual(await svc.checkPostgres(), { unreachable: [] });
      const own = new PostgresEngine({ poolSize: 1, connectTimeoutMs: 3_000 });
      try {
        await assert.rejects(own.query(OWNER, "SELECT 1", { runMs: 1_000, maxRows: 10, maxBytes: 1_000 }), UnsafeRoleError);
      } finally {
        await own.close();
      }
    });

    test("under load a CPU-bound runaway is 0 (its CPU limit), a sleeping one 0 (the net less CPU waits); only the last-resort statement_timeout after waiting for a CPU is null (issue 36's SQL rule)", async (t) => {
      // the backend and three busy processes share one CPU: the backend waits for it much of the time
      const far = () => ({ deadline: Date.now() + 30_000 });
      const who = await svc.query("concert_pg", "SELECT pg_backend_pid()", far());
      assert.ok(who.ok);
      const pid = Number(who.rows[0][0]);
      if (spawnSync("taskset", ["-pc", "0", String(pid)]).status !== 0) return t.skip("taskset cannot pin the PostgreSQL backend here");
      const hogs: ChildProcess[] = [0, 1, 2].map(() => spawn("taskset", ["-c", "0", process.execPath, "-e", "const end = Date.now() + 20000; while (Date.now() < end);"], { stdio: "ignore" }));
      const own = new PostgresEngine({ poolSize: 1, connectTimeoutMs: 3_000 });
      try {
        await new Promise((r) => setTimeout(r, 200));
        const spin = await svc.query("concert_pg", "SELECT count(*) FROM generate_series(1, 2000000000)", far());
        assert.ok(!spin.ok && spin.limit === "timeout", JSON.stringify(spin));
        assert.match(!spin.ok ? spin.error : "", /ms of CPU time \(limit 1000 ms of CPU time\)/);
        assert.ok(!spin.ok && spin.work && spin.work.cpu_ms >= 1_000 && spin.work.wait_ms > 100, JSON.stringify(spin));
        const slept = await svc.query("concert_pg", "SELECT pg_sleep(10)", far());
        assert.ok(!slept.ok && slept.limit === "timeout", JSON.stringify(slept));
        assert.match(!slept.ok ? slept.error : "", /wall-clock time not spent waiting for a CPU/);
        assert.ok(!slept.ok && slept.work && slept.work.wait_ms < 250, JSON.stringify(slept));
        const res = await request(one.app).post("/reward").send(item("SELECT count(*) FROM generate_series(1, 2000000000)", "SELECT 1"));
        assert.equal(res.body.reward, 0, JSON.stringify(res.body));
        assert.match(res.body.reason, /time limit: .*ms of CPU time/);
        // statement_timeout (the last resort) reached before the CPU limit or the net: only by waiting for a CPU
        const p2 = await own.query(READER, "SELECT pg_backend_pid()", { runMs: 1_000, maxRows: 10, maxBytes: 1_000 });
        assert.ok(p2.ok);
        spawnSync("taskset", ["-pc", "0", String(p2.rows[0][0])]);
        const last = await own.query(READER, "SELECT count(*) FROM generate_series(1, 2000000000)", { runMs: 2_000, netMs: 2_000, lastMs: 2_000, maxRows: 10, maxBytes: 1_000 });
        assert.ok(!last.ok && last.stopped === "statement_timeout" && last.statement_ms === 2_000, JSON.stringify(last));
        assert.ok(stoppedByLoad(last), JSON.stringify(last)); // the service makes it null, naming the load
        assert.ok(!stoppedByLoad({ ...last, stopped: "cpu" }));
      } finally {
        for (const h of hogs) h.kill("SIGKILL");
        spawnSync("taskset", ["-pc", "0-1023", String(pid)]);
        await own.close();
      }
    });

    test("even a role with TEMP (check off) cannot make a shadowing temp table through the engine", async () => {
      const own = new PostgresEngine({ poolSize: 1, connectTimeoutMs: 3_000, checkRole: false });
      const o = { runMs: 1_000, maxRows: 100, maxBytes: 100_000 };
      try {
        for (const q of ["SELECT 1; COMMIT; CREATE TEMP TABLE singer AS SELECT 'evil' AS name", "CREATE TEMP TABLE singer AS SELECT 'evil' AS name", "SELECT * INTO TEMP singer FROM singer"]) {
          const r = await own.query(OWNER, q, o);
          assert.equal(r.ok, false, q);
        }
        const r = await own.query(OWNER, "SELECT count(*), (SELECT count(*) FROM pg_class WHERE relnamespace = pg_my_temp_schema()) FROM singer", o);
        assert.ok(r.ok);
        assert.deepEqual(r.rows, [[7, 0]]);
      } finally {
        await own.close();
      }
    });
  });

  describe("a PostgreSQL URL registered by upload (several replicas, one folder)", () => {
    test("is known to every service sharing the upload folder and after a restart; a replacement is seen by all", async () => {
      const folder = mkdtempSync(join(tmpdir(), "assay-pg-upload-"));
      const env = { ASSAY_SQL_DIR: "/nonexistent", ASSAY_SQL_UPLOAD_DIR: folder, ASSAY_SQL_ALLOW_URL_UPLOAD: "1", ASSAY_SQL_TIMEOUT_MS: "5000" };
      const far = () => ({ deadline: Date.now() + 30_000 });
      const [a, b] = [createSqlService(loadConfig(env)), createSqlService(loadConfig(env))];
      let c: ReturnType<typeof createSqlService> | null = null;
      try {
        const made = await a.upload({ id: "shared_pg", postgres: READER });
        assert.equal(made.engine, "postgres");
        assert.equal(statSync(join(folder, "shared_pg.postgres")).mode & 0o777, 0o600, "the URL holds a password: the server's alone");
        // The other replica: listed, described, and its gold queries run there.
        assert.deepEqual(b.list().filter((d) => d.id === "shared_pg").map((d) => [d.engine, d.source, d.version]), [["postgres", "upload", made.version]]);
        const r = await b.goldQuery("shared_pg", "SELECT count(*) FROM singer", far());
        assert.ok(r.ok, JSON.stringify(r));
        // A restart (a new service on the same folder) still knows it.
        c = createSqlService(loadConfig(env));
        assert.equal(c.database("shared_pg").engine, "postgres");
        // Replaced by a SQLite script on one replica: every replica sees the SQLite database, and the URL is gone.
        await b.upload({ id: "shared_pg", script: "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2);", replace: true });
        await new Promise((r) => setTimeout(r, 1_100)); // each service re-reads the folder at most once a second
        for (const s of [a, b, c]) {
          const seen = await s.goldQuery("shared_pg", "SELECT count(*) FROM t", far());
          assert.ok(seen.ok && seen.rows[0][0] === 2, JSON.stringify(seen));
          assert.equal(s.database("shared_pg").engine, "sqlite");
        }
        assert.throws(() => statSync(join(folder, "shared_pg.postgres")), "the replaced URL's file is removed");
        // And back: a URL replacing the SQLite upload is a new version everywhere.
        const again = await a.upload({ id: "shared_pg", postgres: READER, replace: true });
        assert.notEqual(again.version, made.version);
        await new Promise((r) => setTimeout(r, 1_100)); // each service re-reads the folder at most once a second
        for (const s of [a, b, c]) assert.equal(s.database("shared_pg").engine, "postgres");
      } finally {
        await Promise.all([a.close(), b.close(), c?.close()]);
        rmSync(folder, { recursive: true, force: true });
      }
    });
  });
}
