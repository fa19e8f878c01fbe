/**
 * The SQL service on a real SQLite file: nothing can write, runaway queries stop at their
 * deadline while other queries keep being answered, gold results are computed once per group,
 * uploads and schema listing.
 */
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { SqlService, scriptProblem, type SqlServiceOptions } from "../../src/sql/service.js";
import { checkQuery } from "../../src/sql/lex.js";
import { resultDigest } from "../../src/sql/digest.js";
import { sqliteFixture, sha256, SCRIPT } from "./fixtures.js";

const fx = sqliteFixture();
const sum0 = sha256(fx.path);
export function serviceOptions(dir: string, o: Partial<SqlServiceOptions> = {}): SqlServiceOptions {
  return {
    dir, uploadDir: join(dir, "uploads"), postgres: [], timeoutMs: 1_000, maxRows: 10_000, maxResultBytes: 4 * 1024 * 1024,
    goldCacheEntries: 256, goldCacheBytes: 16 * 1024 * 1024, threads: 3, pgPoolSize: 4, allowUrlUpload: false, ...o,
  };
}
const svc = new SqlService(serviceOptions(fx.dir));
const far = () => ({ deadline: Date.now() + 20_000 });

after(() => svc.close());

describe("databases by id", () => {
  test("Spider's database/<db_id>/<db_id>.sqlite layout is found recursively, id = file stem", () => {
    const ids = svc.list().map((d) => d.id);
    assert.deepEqual(ids, ["concert_singer"]);
    assert.equal(svc.database("concert_singer").engine, "sqlite");
  });
  test("schema: tables, columns, keys, row counts", async () => {
    const d = await svc.describe("concert_singer");
    const singer = d.tables.find((t) => t.name === "singer")!;
    assert.equal(singer.rows, 7);
    assert.deepEqual(singer.columns.map((c) => c.name), ["singer_id", "name", "country", "age", "net_worth"]);
    const concert = d.tables.find((t) => t.name === "concert")!;
    assert.deepEqual(concert.foreign_keys, [{ column: "stadium_id", references: "stadium(stadium_id)" }]);
    assert.equal(d.tables.find((t) => t.name === "ticket")!.rows, 400);
  });
  test("an unknown id names the known ones", () => {
    assert.throws(() => svc.database("nope"), /unknown database "nope"; known: concert_singer/);
  });
});

describe("nothing can write", () => {
  const attempts = [
    "DELETE FROM singer",
    "DROP TABLE singer",
    "UPDATE singer SET age = 1",
    "INSERT INTO singer VALUES (99, 'x', 'y', 1, 1.0)",
    "REPLACE INTO singer VALUES (1, 'x', 'y', 1, 1.0)",
    "CREATE TABLE evil (x)",
    "CREATE TEMP TABLE evil (x)",
    "ALTER TABLE singer ADD COLUMN evil TEXT",
    "ATTACH DATABASE '/tmp/assay-evil.sqlite' AS evil",
    "ATTACH DATABASE ':memory:' AS evil",
    "DETACH DATABASE main",
    "PRAGMA query_only = 0",
    "PRAGMA writable_schema = 1",
    "PRAGMA journal_mode = WAL",
    "PRAGMA user_version = 7",
    "VACUUM",
    "VACUUM INTO '/tmp/assay-evil-copy.sqlite'",
    "SELECT load_extension('/tmp/evil')",
    "SELECT 1; DROP TABLE singer",
    "SELECT 1; PRAGMA query_only = 0; DELETE FROM singer",
    "WITH d AS (SELECT 1) DELETE FROM singer",
    "WITH d AS (SELECT 1) INSERT INTO singer SELECT * FROM singer",
    "REINDEX",
    "ANALYZE",
    "BEGIN IMMEDIATE",
    "SAVEPOINT x",
    "CREATE TRIGGER t AFTER INSERT ON singer BEGIN DELETE FROM singer; END",
    // writes that prepare only once their double-quoted literals are read as SQLite reads them
    // (lex.ts prepareWithDqs): the retry still meets sqlite3_stmt_readonly
    'INSERT INTO singer (name) VALUES ("x")',
    'UPDATE singer SET name = "x" WHERE country = "France"',
    'ATTACH "/tmp/assay-evil.sqlite" AS evil',
    'SELECT "France"; DROP TABLE singer',
    // a `;` followed by a comment ends the statement only when nothing but `;` follows it
    "SELECT 1; -- done\nDELETE FROM singer",
    "SELECT 1; /* done */ PRAGMA query_only = 0",
    "SELECT 1;\n-- x\nATTACH DATABASE '/tmp/assay-evil.sqlite' AS evil",
    "WITH d AS (SELECT 1) MERGE INTO singer USING d ON 1 WHEN MATCHED THEN DELETE",
  ];
  test("each attempt is refused by the lexer AND by the engine on its own; the file is unchanged", async () => {
    for (const q of attempts) {
      assert.equal(checkQuery(q).ok, false, `lexer let through: ${q}`);
      // the engine wall alone (the lexer bypassed)
      const r = await svc.query("concert_singer", q, far());
      assert.equal(r.ok, false, `engine ran: ${q}`);
    }
    assert.equal(sha256(fx.path), sum0);
    assert.deepEqual(readdirSync(dirname(fx.path)), ["concert_singer.sqlite"]); // no journal, WAL or attached file
    assert.equal(existsSync("/tmp/assay-evil.sqlite"), false);
    assert.equal(existsSync("/tmp/assay-evil-copy.sqlite"), false);
    const r = await svc.query("concert_singer", "SELECT count(*) FROM singer", far());
    assert.ok(r.ok);
    assert.deepEqual(r.rows, [[7]]);
  });
  test("the lexer: `;` then only comments (or more `;`) is cut off the text; statement words are names inside a query", () => {
    for (const d of ["sqlite", "postgres", undefined] as const) {
      for (const q of ["SELECT 1;\n-- counts", "SELECT 1; /* done */", "SELECT 1;; -- a\n;", "SELECT 1 ; /* unclosed"]) {
        const r = checkQuery(q, d);
        assert.ok(r.ok && r.sql === "SELECT 1" && r.tokens.length === 2, `${d}: ${q}: ${JSON.stringify(r)}`);
      }
      for (const q of ["SELECT 1; -- x\nSELECT 2", "SELECT (1;)", ";", "-- only a comment"]) assert.equal(checkQuery(q, d).ok, false, `${d}: ${q}`);
      for (const q of ["SELECT count(*) AS merge FROM t", "SELECT grant, revoke, truncate FROM t", "SELECT attach, detach, pragma, vacuum FROM t AS pragma"]) {
        assert.ok(checkQuery(q, d).ok, `${d}: ${q}`);
      }
    }
  });
  test("memory bombs and file functions are refused", async () => {
    for (const q of ["SELECT randomblob(1000000000)", "SELECT zeroblob(1000000000)", "SELECT writefile('/tmp/x', 'y')", "SELECT readfile('/etc/passwd')"]) {
      assert.equal(checkQuery(q).ok, false, q);
    }
  });
});

describe("caps and deadlines", () => {
  test("a result over the row cap stops and says so", async () => {
    const small = new SqlService(serviceOptions(fx.dir, { maxRows: 100, threads: 1 }));
    try {
      const r = await small.query("concert_singer", "SELECT * FROM ticket", far());
      assert.equal(r.ok, false);
      assert.equal(!r.ok && r.limit, "rows");
    } finally {
      await small.close();
    }
  });
  test("runaway queries (6-way cross join, endless recursive CTE) stop at their deadline while others keep being answered", async () => {
    const runaways = [
      "SELECT count(*) FROM ticket a, ticket b, ticket c, ticket d, ticket e, ticket f",
      "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
    ];
    const t0 = Date.now();
    const slow = runaways.map((q) => svc.query("concert_singer", q, far()).then((r) => ({ r, ms: Date.now() - t0 })));
    // let both take a process (on a busy machine, processes may take a while to start)
    for (let i = 0; i < 600 && svc.stats().sqlite!.busy < 2; i++) await new Promise((r) => setTimeout(r, 50));
    const pidsBefore = svc.stats().sqlite!.pids;
    // the third process keeps answering while two are stuck
    const quick: number[] = [];
    for (let i = 0; i < 20; i++) {
      const s = Date.now();
      const r = await svc.query("concert_singer", `SELECT name FROM singer WHERE singer_id = ${(i % 7) + 1}`, far());
      assert.ok(r.ok);
      quick.push(Date.now() - s);
    }
    const quickDone = Date.now() - t0;
    const done = await Promise.all(slow);
    for (const { r, ms } of done) {
      assert.equal(r.ok, false);
      assert.equal(!r.ok && r.limit, "timeout");
      // stopped at its limit of 1000 ms of CPU time (+ one 20 ms reading), not at its natural
      // end; on a busy machine that is more wall-clock time, by as much as it waited for a CPU
      const cpu = Number(/after (\d+) ms of CPU time/.exec(!r.ok ? r.error : "")?.[1]);
      assert.ok(cpu >= 1_000 && cpu < 1_300, `stopped after ${!r.ok && r.error}`);
      assert.ok(ms >= 1_000 && ms < 60_000, `stopped after ${ms} ms`);
    }
    assert.ok(quickDone < done[0].ms, `quick queries finished at ${quickDone} ms, before the runaways stopped`);
    quick.sort((a, b) => a - b);
    assert.ok(quick[Math.floor(quick.length / 2)] < 100, `median quick query ${quick[10]} ms`);
    // the runaways' processes are really gone (no core left spinning), replaced by fresh ones
    // (on a loaded machine the kill and the respawn take a while: wait up to 5 s for both)
    const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };
    const goneNow = () => pidsBefore.filter((p) => !svc.stats().sqlite!.pids.includes(p));
    for (let i = 0; i < 50 && (goneNow().length < 2 || goneNow().some(alive)); i++) await new Promise((r) => setTimeout(r, 100));
    const gone = goneNow();
    assert.equal(gone.length, 2);
    for (const p of gone) assert.equal(alive(p), false, `process ${p} still running`);
    const r = await svc.query("concert_singer", "SELECT count(*) FROM concert", far());
    assert.ok(r.ok);
    assert.ok(svc.stats().sqlite!.killed >= 2);
  });
  test("a query that cannot start before the item deadline is machinery, not the model's fault", async () => {
    const one = new SqlService(serviceOptions(fx.dir, { threads: 1, timeoutMs: 1_500 }));
    try {
      const stuck = one.query("concert_singer", "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r", far());
      await new Promise((r) => setTimeout(r, 100));
      await assert.rejects(one.query("concert_singer", "SELECT 1", { deadline: Date.now() + 300 }), { name: "MachineryError" });
      const r = await stuck;
      assert.equal(!r.ok && r.limit, "timeout");
    } finally {
      await one.close();
    }
  });
});

describe("gold cache", () => {
  test("a GRPO group of 16 runs the gold query once; a new version runs it again", async () => {
    const gold = "SELECT country, count(*) FROM singer GROUP BY country";
    const before = { ...svc.counters };
    const rs = await Promise.all(Array.from({ length: 16 }, () => svc.goldQuery("concert_singer", gold, far())));
    assert.equal(svc.counters.goldRuns - before.goldRuns, 1);
    assert.equal(svc.counters.goldHits - before.goldHits, 15);
    for (const r of rs) assert.ok(r.ok && r.rows.length === 3);
    await svc.goldQuery("concert_singer", gold, far());
    assert.equal(svc.counters.goldRuns - before.goldRuns, 1);
  });
  test("a failing gold query is not cached", async () => {
    const before = svc.counters.goldRuns;
    const a = await svc.goldQuery("concert_singer", "SELECT nope FROM singer", far());
    const b = await svc.goldQuery("concert_singer", "SELECT nope FROM singer", far());
    assert.equal(a.ok || b.ok, false);
    assert.equal(svc.counters.goldRuns - before, 2);
  });
});

describe("the model's result against the gold's digest; statements and file versions reused (issue 35)", () => {
  const rule = { rows: "bag" as const, ordered: false };
  test("a result with the gold's digest comes back without its rows, saying how many; any other with them", async () => {
    const gold = await svc.goldQuery("concert_singer", "SELECT name, age FROM singer WHERE country = 'France'", far());
    assert.ok(gold.ok && gold.rows.length === 4);
    const digest = { ...rule, gold: resultDigest(gold.rows, rule) };
    const m0 = svc.counters.matched;
    // the same rows in another order (a bag): matched, no rows sent
    const same = await svc.query("concert_singer", "SELECT name, age FROM singer WHERE country = 'France' ORDER BY age DESC", { ...far(), digest });
    assert.ok(same.ok);
    assert.deepEqual(same.rows, []);
    assert.deepEqual(same.matched, { rows: 4 });
    assert.deepEqual(same.columns, ["name", "age"]);
    assert.equal(svc.counters.matched - m0, 1);
    // one row fewer, or the columns swapped: the rows come back for the comparison
    const fewer = await svc.query("concert_singer", "SELECT name, age FROM singer WHERE country = 'France' AND age > 26", { ...far(), digest });
    assert.ok(fewer.ok && fewer.matched === undefined && fewer.rows.length === 2);
    const swapped = await svc.query("concert_singer", "SELECT age, name FROM singer WHERE country = 'France'", { ...far(), digest });
    assert.ok(swapped.ok && swapped.matched === undefined && swapped.rows.length === 4);
    // under the ordered rule the other order is another digest
    const ordered = { ...rule, ordered: true };
    const od = { ...ordered, gold: resultDigest(gold.rows, ordered) };
    const reordered = await svc.query("concert_singer", "SELECT name, age FROM singer WHERE country = 'France' ORDER BY age DESC", { ...far(), digest: od });
    assert.ok(reordered.ok && reordered.matched === undefined && reordered.rows.length === 4);
    assert.equal(svc.counters.matched - m0, 1);
  });
  test("cold: the gold and the model's query go in one message to one process, which digests the model's result against the gold's it kept", async () => {
    const goldSql = "SELECT name, age FROM singer WHERE country = 'France' /* cold pair */";
    const pool = () => svc.stats().sqlite!;
    await svc.query("concert_singer", "SELECT 1", far()); // the pool is started
    for (const [pred, matched] of [
      ["SELECT name, age FROM singer WHERE country = 'France' ORDER BY age DESC", true],
      ["SELECT name, age FROM singer WHERE country = 'France' AND age > 26", false],
    ] as const) {
      const sql = `${goldSql} -- ${pred.length}`;
      const m0 = svc.counters.matched;
      const msg0 = pool().messages;
      const g = svc.goldQuery("concert_singer", sql, far());
      const p = svc.query("concert_singer", pred, { ...far(), digest: { ...rule, of: sql, maxRows: 4_096 } });
      const [gr, pr] = await Promise.all([g, p]);
      assert.ok(gr.ok && gr.rows.length === 4 && !gr.cached);
      assert.equal(pool().messages - msg0, 1, "both in one message");
      assert.ok(pr.ok);
      if (matched) {
        assert.deepEqual(pr.matched, { rows: 4 });
        assert.deepEqual(pr.rows, []);
        assert.equal(svc.counters.matched - m0, 1);
      } else {
        assert.equal(pr.matched, undefined);
        assert.equal(pr.rows.length, 2);
      }
    }
    // a gold the process did not keep (never run there): the rows come back, as without a digest
    const alone = await svc.query("concert_singer", "SELECT name, age FROM singer WHERE country = 'France'", { ...far(), digest: { ...rule, of: "SELECT 'never run'", maxRows: 4_096 } });
    assert.ok(alone.ok && alone.matched === undefined && alone.rows.length === 4);
  });
  test("a statement kept from an earlier run still reads double-quoted literals as SQLite does, and refusals are not kept", async () => {
    const sql = 'SELECT count(*) FROM singer WHERE country = "France"';
    for (let i = 0; i < 3; i++) {
      const r = await svc.query("concert_singer", sql, far());
      assert.ok(r.ok, JSON.stringify(r));
      assert.deepEqual([r.rows, r.dqs], [[[4]], ["France"]]);
    }
    for (let i = 0; i < 2; i++) {
      const r = await svc.query("concert_singer", "SELECT nope FROM singer", far());
      assert.ok(!r.ok && r.stage === "prepare" && /no such column: nope/.test(r.error), JSON.stringify(r));
    }
  });
  test("the items a batch starts together stat the database file once, not three times each", async () => {
    const s0 = svc.counters.stats;
    const q0 = svc.counters.queries;
    // what the verifier does per item, 32 items in one turn: the id, the gold, the model's query
    const runs = Array.from({ length: 32 }, (_, i) => {
      svc.database("concert_singer");
      return Promise.all([svc.goldQuery("concert_singer", "SELECT count(*) FROM ticket", far()), svc.query("concert_singer", `SELECT ${i}`, far())]);
    });
    await Promise.all(runs);
    assert.ok(svc.counters.queries - q0 >= 32);
    assert.ok(svc.counters.stats - s0 <= 2, `${svc.counters.stats - s0} statSyncs for 32 items`);
    // the next turn stats again: a file replaced between turns is seen
    await new Promise((r) => setImmediate(r));
    svc.database("concert_singer");
    assert.ok(svc.counters.stats - s0 <= 3);
    assert.ok(svc.counters.stats - s0 >= 2);
  });
});

describe("uploads", () => {
  test("a SQL script builds a database; a SQLite file is stored as is; both are listed with their schema", async () => {
    const d = await svc.upload({ id: "built", script: SCRIPT });
    assert.equal(d.source, "upload");
    assert.equal(d.tables.find((t) => t.name === "stadium")!.rows, 5);
    const f = await svc.upload({ id: "copied", sqlite: readFileSync(fx.path) });
    assert.equal(f.tables.length, 5);
    const r = await svc.query("copied", "SELECT count(*) FROM ticket", far());
    assert.ok(r.ok && r.rows[0][0] === 400);
    assert.deepEqual(svc.list().map((x) => x.id), ["built", "concert_singer", "copied"]);
  });
  test("refusals: a taken id, a bad header, a script that reaches other files", async () => {
    await assert.rejects(svc.upload({ id: "concert_singer", script: "CREATE TABLE t (a)" }), { status: 409 });
    await assert.rejects(svc.upload({ id: "built", script: "CREATE TABLE t (a)" }), /replace/);
    await assert.rejects(svc.upload({ id: "junk", sqlite: Buffer.alloc(4096, 1) }), /not a SQLite 3 database/);
    await assert.rejects(svc.upload({ id: "../escape", script: "CREATE TABLE t (a)" }), /must match/);
    await assert.rejects(svc.upload({ id: "bad", script: "CREATE TABLE t (a); INSERT INTO nope VALUES (1)" }), /the script failed: no such table: nope/);
    assert.match(scriptProblem("ATTACH '/work/x.sqlite' AS x; DROP TABLE x.t") ?? "", /ATTACH/);
    assert.match(scriptProblem("SELECT load_extension('x')") ?? "", /load_extension/);
    assert.equal(scriptProblem("CREATE TABLE t (a TEXT DEFAULT 'attach'); INSERT INTO t VALUES ('pragma')"), null);
    await assert.rejects(svc.upload({ id: "pg", postgres: "postgres://x@127.0.0.1/y" }), { status: 403 });
  });
  test("replacing an upload changes its version, so its gold results are recomputed", async () => {
    const v1 = svc.database("built").version;
    const gold = "SELECT count(*) FROM singer";
    const a = await svc.goldQuery("built", gold, far());
    await new Promise((r) => setTimeout(r, 20));
    await svc.upload({ id: "built", script: "CREATE TABLE singer (a); INSERT INTO singer VALUES (1);", replace: true });
    assert.notEqual(svc.database("built").version, v1);
    const b = await svc.goldQuery("built", gold, far());
    assert.ok(a.ok && b.ok);
    assert.deepEqual([a.rows, b.rows], [[[7]], [[1]]]);
  });
});

describe("uploads are checked before they are registered; a refusal leaves nothing behind", () => {
  const leftovers = (dir: string, id: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => n.includes(id)) : []);

  test("a 200-byte build script cannot write a large database: max_page_count at ASSAY_SQL_MAX_DB_MB (413)", async () => {
    const small = new SqlService(serviceOptions(fx.dir, { uploadDir: join(fx.dir, "up-cap"), maxDbBytes: 2 * 1024 ** 2, threads: 1 }));
    try {
      // 100,000 rows of 2 kB: 200 MB uncapped
      const script = "CREATE TABLE t (b); WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 100000) INSERT INTO t SELECT randomblob(2000) FROM r;";
      assert.ok(script.length < 200);
      await assert.rejects(small.upload({ id: "bomb", script }), (e: Error & { status?: number }) => {
        assert.equal(e.status, 413);
        assert.match(e.message, /grew past ASSAY_SQL_MAX_DB_MB \(2 MiB\).*insert less, or raise ASSAY_SQL_MAX_DB_MB/);
        return true;
      });
      assert.deepEqual(leftovers(join(fx.dir, "up-cap"), "bomb"), []);
      assert.throws(() => small.database("bomb"), /unknown database/);
      // under the cap it builds
      const ok = await small.upload({ id: "fits", script: "CREATE TABLE t (b); INSERT INTO t SELECT randomblob(1000) FROM (SELECT 1 UNION ALL SELECT 2);" });
      assert.equal(ok.tables[0].rows, 2);
      // a file past the cap is refused before anything is written
      await assert.rejects(small.upload({ id: "big", sqlite: Buffer.concat([readFileSync(fx.path), Buffer.alloc(3 * 1024 ** 2)]) }), { status: 413, message: /past ASSAY_SQL_MAX_DB_MB/ });
      assert.deepEqual(leftovers(join(fx.dir, "up-cap"), "big"), []);
    } finally {
      await small.close();
    }
  });

  test("a build script that runs past ASSAY_SQL_BUILD_TIMEOUT_MS is refused, and nothing is kept", async () => {
    const small = new SqlService(serviceOptions(fx.dir, { uploadDir: join(fx.dir, "up-time"), buildTimeoutMs: 300, threads: 1 }));
    try {
      const endless = "CREATE TABLE t (n); INSERT INTO t WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r;";
      await assert.rejects(small.upload({ id: "slow", script: endless }), { status: 422, message: /300 ms of CPU time \(ASSAY_SQL_BUILD_TIMEOUT_MS\)/ });
      assert.deepEqual(leftovers(join(fx.dir, "up-time"), "slow"), []);
      assert.throws(() => small.database("slow"), /unknown database/);
    } finally {
      await small.close();
    }
  });

  test("a damaged file fails integrity_check: 400 naming it, no file, no entry", async () => {
    const bytes = Buffer.from(readFileSync(fx.path));
    // scribble over the middle of the table pages, keeping the header
    for (let i = 4096 * 2; i < bytes.length - 4096; i += 97) bytes[i] ^= 0x5a;
    await assert.rejects(svc.upload({ id: "damaged", sqlite: bytes }), (e: Error & { status?: number }) => {
      assert.equal(e.status, 400);
      assert.match(e.message, /damaged|malformed|cannot be (read|opened)/);
      return true;
    });
    assert.deepEqual(leftovers(join(fx.dir, "uploads"), "damaged"), []);
    assert.throws(() => svc.database("damaged"), /unknown database/);
  });

  test("a view is listed by its text, never evaluated: an endless view does not slow the schema", async () => {
    const script = "CREATE TABLE t (a); INSERT INTO t VALUES (1); CREATE VIEW endless AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) AS m FROM r;";
    const killedBefore = svc.stats().sqlite!.killed;
    const t0 = Date.now();
    const d = await svc.upload({ id: "viewy", script });
    const again = await svc.describe("viewy");
    assert.ok(Date.now() - t0 < 10_000, `took ${Date.now() - t0} ms`);
    const v = again.tables.find((t) => t.name === "endless")!;
    assert.equal(v.view, true);
    assert.equal(v.rows, null);
    assert.match(v.sql!, /^CREATE VIEW endless AS WITH RECURSIVE/);
    assert.equal(d.tables.find((t) => t.name === "t")!.rows, 1);
    // nothing ran the view: the process that read the schema was not killed
    assert.equal(svc.stats().sqlite!.killed, killedBefore);
  });
});

