/**
 * The sql verifier through HTTP on a real SQLite database: labelled equivalent and
 * non-equivalent pairs, partial rewards, failures that are the model's (reward 0) or ours
 * (null), hostile input, /databases, and the configuration's start-up errors.
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import { readFileSync, mkdtempSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSqlService } from "../../src/sql/service.js";
import { testApp, fastestCpu } from "../../tests/helpers.js";
import { loadConfig } from "../../src/core/config.js";
import { CASES } from "./cases.js";
import { sqliteFixture, sha256, SCRIPT } from "./fixtures.js";

const fx = sqliteFixture();
const sum0 = sha256(fx.path);
const { app, runtime } = await testApp({ ASSAY_SQL_DIR: fx.dir, ASSAY_SQL_TIMEOUT_MS: "1000", ASSAY_SQL_WORKERS: "3" });
after(() => runtime.close());

type Item = { response: string; reference: unknown; options?: Record<string, unknown>; deadline_ms?: number };
const item = (response: string, gold: unknown, options: Record<string, unknown> = {}): Item => ({
  response,
  reference: gold,
  options: { database: "concert_singer", ...options },
});
async function score(it: Item) {
  const res = await request(app).post("/reward").send({ verifier: "sql", ...it });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body as { reward: number | null; status: string; reason: string; details: Record<string, any>; elapsed_ms: number };
}

describe("execution match on SQLite: labelled pairs", () => {
  test("every case scores as labelled", async () => {
    const res = await request(app)
      .post("/reward/batch")
      .send({ items: CASES.map((c) => ({ verifier: "sql", ...item("```sql\n" + c.pred + "\n```", c.gold, c.options) })) });
    assert.equal(res.status, 200);
    const wrong = CASES.map((c, i) => ({ c, r: res.body.results[i] })).filter(({ c, r }) => r.status !== "ok" || r.reward !== c.reward);
    assert.deepEqual(wrong.map(({ c, r }) => `${c.name}: got ${r.reward} (${r.status}: ${r.reason})`), []);
  });
  test("details say why: columns, row counts, order, permutation, gold cache", async () => {
    const r = await score(item("SELECT age, name FROM singer", "SELECT name, age FROM singer"));
    assert.equal(r.reward, 1);
    assert.deepEqual(r.details.permutation, [1, 0]);
    assert.deepEqual(r.details.rows, { model: 7, gold: 7 });
    assert.match(r.reason, /columns in another order/);
    const o = await score(item("SELECT name FROM singer WHERE age IS NOT NULL ORDER BY age", "SELECT name FROM singer WHERE age IS NOT NULL ORDER BY age DESC"));
    assert.equal(o.reward, 0);
    assert.equal(o.details.ordered, true);
    assert.match(o.reason, /different order/);
  });
  test("a GRPO group sent together: the items that find the gold running send their query with its digest, and right answers come back without rows", async () => {
    const svc = await runtime.services.sql();
    const gold = "SELECT name, age FROM singer WHERE age > 20 /* group digest test */";
    const preds = ["SELECT name, age FROM singer WHERE age > 20", "SELECT name, age FROM singer WHERE age >= 21 ORDER BY name", "SELECT age, name FROM singer WHERE age > 20", "SELECT name FROM singer"];
    const m0 = svc.stats().matched;
    const res = await request(app)
      .post("/reward/batch")
      .send({ items: Array.from({ length: 16 }, (_, i) => ({ verifier: "sql", ...item(preds[i % 4], gold) })) });
    assert.equal(res.status, 200);
    const rs = res.body.results as { reward: number; reason: string; details: Record<string, any> }[];
    assert.deepEqual(rs.map((r) => r.reward), Array.from({ length: 16 }, (_, i) => (i % 4 === 3 ? 0 : 1)));
    // the first two preds of each four are right in the gold's column order: 8, less the one that started the gold
    assert.ok(svc.stats().matched - m0 >= 7, `${svc.stats().matched - m0} digests matched`);
    for (const r of rs.filter((_, i) => i % 4 < 2)) {
      assert.equal(r.reason, "results match (bag, 6 rows)");
      assert.deepEqual(r.details.rows, { model: 6, gold: 6 });
    }
    assert.deepEqual(rs[2].details.permutation, [1, 0]);
  });
  test("a cold group of 16: the gold runs once (at most once more in each other process), its rows stay in the SQLite process (the server keeps how many), and mismatches still compare the rows (issue 35)", async () => {
    const svc = await runtime.services.sql();
    const gold = "SELECT ticket_id, price FROM ticket WHERE price > 10 /* kept gold */";
    const preds = ["SELECT ticket_id, price FROM ticket WHERE price > 10", "SELECT price, ticket_id FROM ticket WHERE price > 10", "SELECT ticket_id, price FROM ticket WHERE price > 11", "SELECT ticket_id FROM ticket"];
    const s0 = svc.stats();
    const res = await request(app)
      .post("/reward/batch")
      .send({ items: Array.from({ length: 16 }, (_, i) => ({ verifier: "sql", ...item(preds[i % 4], gold) })) });
    assert.equal(res.status, 200);
    const rs = res.body.results as { reward: number; reason: string; details: Record<string, any> }[];
    assert.deepEqual(rs.map((r) => r.reward), Array.from({ length: 16 }, (_, i) => (i % 4 < 2 ? 1 : 0)));
    const s1 = svc.stats();
    // once in the server; the group's model queries go to the process keeping it (affinity),
    // and another process runs it again only when it would otherwise idle: at most once each
    assert.equal(s1.goldRuns - s0.goldRuns, 1);
    assert.ok(s1.goldReruns - s0.goldReruns <= 2, `${s1.goldReruns - s0.goldReruns} reruns with 3 processes`);
    const goldRows = rs[0].details.rows.gold as number;
    assert.ok(goldRows > 300, `${goldRows} gold rows`);
    // the server's gold cache grew by the key and a few fields, not by the gold's rows (16 bytes
    // a row and more, as it held them before)
    assert.ok(s1.gold_cache_bytes - s0.gold_cache_bytes < 1_000, `the gold cache grew ${s1.gold_cache_bytes - s0.gold_cache_bytes} bytes for ${goldRows} rows`);
    for (const r of rs.filter((_, i) => i % 4 === 1)) assert.deepEqual(r.details.permutation, [1, 0]);
    for (const r of rs.filter((_, i) => i % 4 === 2)) assert.ok(r.details.rows.model < goldRows && r.details.rows.gold === goldRows);
  });
  test("after the SQLite processes lose the golds they kept (killed), the same verdicts: the golds run again there", async () => {
    const svc = await runtime.services.sql();
    const gold = "SELECT name, country FROM singer /* lost gold */";
    const items = ["SELECT name, country FROM singer", "SELECT country, name FROM singer", "SELECT name FROM singer"].map((p) => ({ verifier: "sql", ...item(p, gold) }));
    const first = (await request(app).post("/reward/batch").send({ items })).body.results as { reward: number; reason: string }[];
    for (const pid of svc.stats().sqlite!.pids) process.kill(pid, "SIGKILL");
    await new Promise((r) => setTimeout(r, 200));
    const r0 = svc.stats().goldReruns;
    const again = (await request(app).post("/reward/batch").send({ items })).body.results as { reward: number; reason: string; details: Record<string, any> }[];
    assert.deepEqual(again.map((r) => [r.reward, r.reason]), first.map((r) => [r.reward, r.reason]));
    assert.deepEqual(again.map((r) => r.reward), [1, 1, 0]);
    assert.ok(again.every((r) => r.details.gold_cached === true));
    assert.ok(svc.stats().goldReruns - r0 >= 1, "the golds ran again in the new processes");
  });
  test("the answer is the last ```sql block after </think>; the reference may name the database", async () => {
    const r = await score({
      response: "<think>```sql\nSELECT 1\n```</think>Final:\n```sql\nSELECT count(*) FROM stadium\n```",
      reference: { sql: "SELECT count(*) FROM stadium", database: "concert_singer" },
    });
    assert.equal(r.reward, 1);
    assert.equal(r.details.extracted_from, "sql_block");
    const alias = await score({ response: "SELECT 5", reference: "SELECT count(*) FROM stadium", options: { db_id: "concert_singer" } });
    assert.equal(alias.reward, 1);
  });
});

describe("failures: the model's (reward 0) and ours (null)", () => {
  test("model SQL that errors scores 0 with the engine's message; syntax says whether it prepared", async () => {
    const syntax = await score(item("SELEC name FROM singer", "SELECT name FROM singer"));
    assert.equal(syntax.status, "ok");
    assert.equal(syntax.reward, 0);
    assert.match(syntax.reason, /only a SELECT/);
    const col = await score(item("SELECT nam FROM singer", "SELECT name FROM singer"));
    assert.equal(col.reward, 0);
    assert.match(col.reason, /no such column: nam/);
    assert.equal(col.details.rewards.syntax, 0);
    const empty = await score(item("<think>no idea</think>", "SELECT name FROM singer"));
    assert.equal(empty.reward, 0);
    assert.match(empty.reason, /no SQL/);
  });
  test("a gold query that errors is status error, reward null", async () => {
    const r = await score(item("SELECT name FROM singer", "SELECT nope FROM singer"));
    assert.equal(r.status, "error");
    assert.equal(r.reward, null);
    assert.match(r.reason, /gold query failed.*no such column: nope/);
  });
  test("an unknown database or a gold that is not a query is the item's fault (invalid)", async () => {
    const res = await request(app).post("/reward/batch").send({
      items: [
        { verifier: "sql", ...item("SELECT 1", "SELECT 1", { database: "nope" }) },
        { verifier: "sql", ...item("SELECT 1", "DELETE FROM singer") },
        { verifier: "sql", response: "SELECT 1", reference: "SELECT 1" },
      ],
    });
    const [unknown, notQuery, none] = res.body.results;
    assert.equal(unknown.status, "invalid");
    assert.match(unknown.reason, /unknown database "nope"; known: concert_singer/);
    assert.equal(notQuery.status, "invalid");
    assert.match(notQuery.reason, /gold query is not one read-only query/);
    assert.equal(none.status, "invalid");
    assert.match(none.reason, /name the database/);
    // a single /reward answers 400 naming the field
    const one = await request(app).post("/reward").send({ verifier: "sql", ...item("SELECT 1", "SELECT 1", { database: "nope" }) });
    assert.equal(one.status, 400);
    assert.equal(one.body.field, "options");
  });
  test("every write or escape attempt scores 0 and leaves the file unchanged", async () => {
    const attempts = [
      "DELETE FROM singer", "DROP TABLE singer", "UPDATE singer SET age = 0", "INSERT INTO singer VALUES (99, 'x', 'y', 1, 1.0)",
      "ATTACH DATABASE '/tmp/assay-sql-evil.sqlite' AS evil", "PRAGMA query_only = 0", "SELECT load_extension('/tmp/evil')",
      "SELECT 1; DROP TABLE singer", "WITH x AS (SELECT 1) DELETE FROM singer", "VACUUM INTO '/tmp/assay-sql-copy.sqlite'",
      "SELECT randomblob(900000000)", "CREATE TABLE evil (x)",
    ];
    const res = await request(app).post("/reward/batch").send({ items: attempts.map((a) => ({ verifier: "sql", ...item(a, "SELECT name FROM singer") })) });
    for (const [i, r] of res.body.results.entries()) {
      assert.equal(r.status, "ok", attempts[i]);
      assert.equal(r.reward, 0, attempts[i]);
    }
    assert.equal(sha256(fx.path), sum0);
    assert.equal((await score(item("SELECT count(*) FROM singer", "SELECT 7"))).reward, 1);
  });
  test("1 MB of hostile text is scored in linear time (under 150 ms of CPU, ~30 ms quiet), the server still serving", async () => {
    const hostile = "```sql\n" + "SELECT " + "(".repeat(400_000) + "'".repeat(300_000) + "```".repeat(100_000);
    await score(item(hostile.slice(0, 200_000), "SELECT 1")); // warm the code paths (JIT)
    // CPU time of this process (client and server): wall time on a shared machine measures the neighbours
    // CPU time, fastest of three: a garbage collection or a cold path can land in any one run.
    // The bound leaves room for a loaded machine (47 ms was seen beside other tests); a quadratic
    // step on 1 MB costs seconds.
    let { out: r, ms: cpu } = await fastestCpu(() => score(item(hostile, "SELECT 1")), { under: 150 });
    assert.equal(r.status, "ok");
    assert.equal(r.reward, 0);
    assert.ok(cpu < 150, `took ${cpu} ms of CPU (${r.elapsed_ms} ms wall)`);
    const { out: huge, ms: cpu2 } = await fastestCpu(() => score(item("SELECT " + "1+".repeat(15_000) + "1", "SELECT 1", { weights: { execution: 1, schema: 1, ngram: 1 } })), { under: 150 });
    cpu = cpu2;
    assert.equal(huge.status, "ok");
    assert.ok(cpu < 150, `long SQL with partial rewards took ${cpu} ms of CPU (${huge.elapsed_ms} ms wall)`);
    assert.equal((await score(item("SELECT 1", "SELECT 1"))).reward, 1);
  });
  test("a runaway query scores 0 at its deadline while the rest of the batch is scored", async () => {
    const runaway = "SELECT count(*) FROM ticket a, ticket b, ticket c, ticket d, ticket e, ticket f";
    const endless = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) FROM r";
    const items = [item(runaway, "SELECT 1"), item(endless, "SELECT 1"), ...CASES.slice(0, 10).map((c) => item(c.pred, c.gold, c.options))];
    const t0 = Date.now();
    const res = await request(app).post("/reward/batch").send({ items: items.map((i) => ({ verifier: "sql", ...i })) });
    const wall = Date.now() - t0;
    const [a, b, ...rest] = res.body.results;
    for (const r of [a, b]) {
      assert.equal(r.status, "ok");
      assert.equal(r.reward, 0);
      assert.match(r.reason, /time limit/);
      // 1000 ms of CPU time: more wall-clock time on a busy machine
      assert.match(r.details.error, /after 1\d\d\d ms of CPU time/);
      assert.ok(r.elapsed_ms >= 1_000, `runaway took ${r.elapsed_ms} ms`);
    }
    const firstStopped = Math.min(a.elapsed_ms, b.elapsed_ms);
    rest.forEach((r: { reward: number; elapsed_ms: number }, i: number) => {
      assert.equal(r.reward, CASES[i].reward, CASES[i].name);
      assert.ok(r.elapsed_ms < firstStopped, `${CASES[i].name} waited ${r.elapsed_ms} ms behind the runaways (stopped at ${firstStopped} ms)`);
    });
    assert.ok(wall < 60_000, `batch took ${wall} ms`);
  });
});

describe("reward defects a probe against the reference scorers found (each was a false positive or a false negative)", () => {
  const Q = "SELECT count(*) FROM singer";
  const rewards = async (pairs: [string, string, Record<string, unknown>?][]) => {
    const res = await request(app).post("/reward/batch").send({ items: pairs.map(([r, g, o]) => ({ verifier: "sql", ...item(r, g, o) })) });
    assert.equal(res.status, 200);
    return res.body.results as { reward: number | null; status: string; reason: string; details: Record<string, any> }[];
  };
  test("a truncated completion is not paid for a draft inside an unclosed <think> or <reasoning>", async () => {
    const rs = await rewards([
      ["<think>Let me try:\n```sql\n" + Q + "\n```\nHmm, wait, maybe I should", Q],
      ["<reasoning>draft:\n```sql\n" + Q + "\n```\nbut", Q],
      ["<think>first</think>\n```sql\nSELECT 1\n```\n<think>on second thought:\n```sql\n" + Q + "\n```\nor", Q],
      ["<think>ok</think>\n```sql\n" + Q + "\n```", Q],
    ]);
    assert.deepEqual(rs.map((r) => [r.status, r.reward]), [["ok", 0], ["ok", 0], ["ok", 0], ["ok", 1]]);
    assert.match(rs[0].reason, /no SQL found/);
  });
  test("a `;` followed only by a comment ends the one statement; anything after it is still a second statement", async () => {
    const rs = await rewards([
      [Q + ";\n-- counts the singers", Q],
      [Q + "; /* done */", Q],
      [Q + ";; -- done\n;", Q],
      [Q + "; -- done\nDROP TABLE singer", Q],
    ]);
    assert.deepEqual(rs.map((r) => r.reward), [1, 1, 1, 0]);
    assert.match(rs[3].reason, /more than one statement/);
    assert.equal(sha256(fx.path), sum0);
  });
  test("merge, grant, revoke, truncate, attach, detach, pragma, vacuum are legal SQLite names", async () => {
    const words = ["merge", "grant", "revoke", "truncate", "attach", "detach", "pragma", "vacuum"];
    const rs = await rewards([
      ["SELECT count(*) AS merge FROM singer", Q],
      [`SELECT ${words.join(", ")} FROM (SELECT ${words.map((w, i) => `${i} AS ${w}`).join(", ")})`, `SELECT ${words.map((_, i) => i).join(", ")}`],
      ["SELECT name FROM singer AS pragma WHERE pragma.age > 40", "SELECT name FROM singer WHERE age > 40"],
    ]);
    assert.deepEqual(rs.map((r) => [r.reward, r.reason]), rs.map((r) => [1, r.reason]));
    // the statements themselves still cannot run: behind a WITH the lexer lets them through, SQLite refuses them
    const evil = "/tmp/assay-sql-evil-words.sqlite";
    const hostile = await rewards([
      ["WITH x AS (SELECT 1) PRAGMA query_only = 0", Q],
      [`WITH x AS (SELECT 1) ATTACH DATABASE '${evil}' AS evil`, Q],
      [`WITH x AS (SELECT 1) VACUUM INTO '${evil}'`, Q],
      ["WITH x AS (SELECT 1) DETACH DATABASE main", Q],
      ["SELECT 1 AS pragma; PRAGMA query_only = 0", Q],
    ]);
    assert.deepEqual(hostile.map((r) => [r.status, r.reward]), hostile.map(() => ["ok", 0]));
    assert.equal(existsSync(evil), false);
    assert.equal(sha256(fx.path), sum0);
  });
  test("a text value cannot pose as a tagged integer or blob", async () => {
    const rs = await rewards([
      ["SELECT char(0)||'int:'||count(*) FROM singer", Q],
      ["SELECT char(0)||'int:'||age FROM singer WHERE age IS NOT NULL", "SELECT age FROM singer WHERE age IS NOT NULL"],
      ["SELECT char(0)||'blob:41'", "SELECT x'41'"],
      ["SELECT char(0)||'text:'||char(0)||'blob:41'", "SELECT char(0)||'blob:41'"],
      ["SELECT x'41'", "SELECT x'41'"],
      ["SELECT char(0)||'int:7'", "SELECT char(0)||'int:'||count(*) FROM singer"],
      ["SELECT 'A'", "SELECT x'41'"],
    ]);
    assert.deepEqual(rs.map((r) => r.reward), [0, 0, 0, 0, 1, 1, 0]);
  });
  test("fenced blocks: a stray ``` in prose, four backticks, another tag", async () => {
    const rs = await rewards([
      ["I'll use a ``` block.\n```sql\n" + Q + "\n```", Q],
      ["````sql\n" + Q + "\n````", Q],
      ["```mysql\n" + Q + "\n```", Q],
      ["```sql title=x\n" + Q + "\n```", Q],
      ["```sql\n" + Q + "\n```\nNo <answer> tag needed.", Q],
    ]);
    assert.deepEqual(rs.map((r) => [r.reward, r.details.extracted_from]), [[1, "sql_block"], [1, "sql_block"], [1, "code_block"], [1, "sql_block"], [1, "sql_block"]]);
  });
  test("float_digits is a relative tolerance: large non-integers are not bucketed, integers stay exact, noise still matches", async () => {
    const big = "SELECT 1234567890123.45";
    const rs = await rewards([
      ["SELECT 1234567890120.0", big],
      ["SELECT 1234567890119.6", big],
      ["SELECT 1234567890123.4500001", big],
      ["SELECT 1.0", "SELECT 1"],
      ["SELECT 0.1 + 0.2", "SELECT 0.3"],
      ["SELECT 0.1 + 0.2", "SELECT 0.3", { float_digits: 0 }],
      ["SELECT 1000000000001", "SELECT 1000000000000"],
      ["SELECT 2.9999999999999996", "SELECT 3"],
      ["SELECT 0.3 UNION ALL SELECT 0.3", "SELECT 0.3 UNION ALL SELECT 0.1 + 0.2"],
      ["SELECT 0.3001", "SELECT 0.3", { float_digits: 3 }],
      ["SELECT 0.302", "SELECT 0.3", { float_digits: 3 }],
    ]);
    assert.deepEqual(rs.map((r) => r.reward), [0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 0]);
  });
  test("a result equal to the gold's only within the tolerance has another digest, and is compared on its rows (a GRPO group)", async () => {
    const gold = "SELECT 0.3 AS x /* tolerance group */";
    const rs = await rewards(Array.from({ length: 8 }, (_, i): [string, string] => [i % 2 ? "SELECT 0.1 + 0.2" : "SELECT 0.3", gold]));
    assert.deepEqual(rs.map((r) => r.reward), [1, 1, 1, 1, 1, 1, 1, 1]);
  });
  test("a NUL character is refused (0), not cut at: SQLite would run `SELECT name FROM singer` and pay it with `WHERE 0` after the NUL", async () => {
    const rs = await rewards([
      ["SELECT name FROM singer\u0000 WHERE 0", "SELECT name FROM singer"],
      ["```sql\nSELECT name FROM singer\u0000 WHERE 0\n```", "SELECT name FROM singer"],
    ]);
    assert.deepEqual(rs.map((r) => [r.status, r.reward]), [["ok", 0], ["ok", 0]]);
    assert.match(rs[0].reason, /NUL/);
  });
});

describe("partial rewards (Reasoning-SQL)", () => {
  test("default reward is execution match alone; the parts are in details", async () => {
    const r = await score(item("SELECT name FROM singer WHERE age >= 30", "SELECT name FROM singer WHERE age > 30"));
    assert.equal(r.reward, 0);
    assert.equal(r.details.rewards.execution, 0);
    assert.equal(r.details.rewards.syntax, 1);
    assert.ok(r.details.rewards.ngram > 0.5 && r.details.rewards.ngram < 1);
    assert.equal(r.details.rewards.schema, null); // computed when weighted
  });
  test("weights blend the parts: sum(w*r)/sum(w)", async () => {
    const w = { execution: 3, syntax: 1, schema: 1, ngram: 1 };
    const r = await score(item("SELECT name FROM singer WHERE age >= 30", "SELECT name FROM singer WHERE age > 30", { weights: w }));
    const p = r.details.rewards;
    assert.equal(p.schema, 1); // same tables and columns
    assert.equal(r.reward, (3 * 0 + 1 * 1 + 1 * 1 + p.ngram) / 6);
    const bad = await score(item("SELECT nam FROM singer", "SELECT name FROM singer", { weights: w }));
    assert.equal(bad.details.rewards.syntax, 0);
    assert.ok(bad.reward! > 0 && bad.reward! < 0.5);
    const right = await score(item("SELECT name FROM singer", "SELECT name FROM singer", { weights: w }));
    assert.equal(right.reward, 1);
  });
  test("all-zero weights are the item's fault", async () => {
    const r = await request(app).post("/reward").send({ verifier: "sql", ...item("SELECT 1", "SELECT 1", { weights: { execution: 0 } }) });
    assert.equal(r.status, 400);
    assert.match(r.body.error, /at least one weight/);
  });
});

describe("/databases", () => {
  test("GET lists ids, tables, columns and row counts", async () => {
    const res = await request(app).get("/databases");
    assert.equal(res.status, 200);
    const cs = res.body.databases.find((d: { id: string }) => d.id === "concert_singer");
    assert.equal(cs.engine, "sqlite");
    const singer = cs.tables.find((t: { name: string }) => t.name === "singer");
    assert.equal(singer.rows, 7);
    assert.ok(singer.columns.some((c: { name: string; primary_key: boolean }) => c.name === "singer_id" && c.primary_key));
    assert.equal((await request(app).get("/databases/nope")).status, 404);
  });
  test("POST a SQL script or a SQLite file; the new database is scored at once", async () => {
    const a = await request(app).post("/databases").send({ id: "pets", sql: "CREATE TABLE pet (id INTEGER PRIMARY KEY, name TEXT, age INTEGER); INSERT INTO pet VALUES (1, 'Rex', 3), (2, 'Tom', 5);" });
    assert.equal(a.status, 201, JSON.stringify(a.body));
    assert.equal(a.body.tables[0].rows, 2);
    const r = await score(item("SELECT name FROM pet WHERE age > 4", "SELECT name FROM pet WHERE id = 2", { database: "pets" }));
    assert.equal(r.reward, 1);
    const f = await request(app).post("/databases").send({ id: "cs_copy", sqlite: readFileSync(fx.path).toString("base64") });
    assert.equal(f.status, 201);
    assert.equal((await request(app).get("/databases/cs_copy")).body.tables.length, 5);
    const full = await request(app).post("/databases").send({ id: "cs_full", sql: SCRIPT });
    assert.equal(full.status, 201);
  });
  test("POST refusals name what to change", async () => {
    const taken = await request(app).post("/databases").send({ id: "concert_singer", sql: "CREATE TABLE t (a)" });
    assert.equal(taken.status, 409);
    const both = await request(app).post("/databases").send({ id: "x", sql: "CREATE TABLE t (a)", sqlite: "AAAA" });
    assert.equal(both.status, 400);
    const attach = await request(app).post("/databases").send({ id: "x", sql: "ATTACH '/tmp/x.sqlite' AS x" });
    assert.equal(attach.status, 400);
    assert.match(attach.body.error, /ATTACH/);
    const url = await request(app).post("/databases").send({ id: "x", postgres: "postgres://u:p@127.0.0.1/db" });
    assert.equal(url.status, 403);
    const badId = await request(app).post("/databases").send({ id: "../../etc", sql: "CREATE TABLE t (a)" });
    assert.equal(badId.status, 400);
  });
  test("a failed upload answers 4xx with what to change and stays unregistered; a view never slows GET /databases", async () => {
    const failed = await request(app).post("/databases").send({ id: "half", sql: "CREATE TABLE t (a); INSERT INTO nope VALUES (1);" });
    assert.equal(failed.status, 400);
    assert.match(failed.body.error, /the script failed: no such table: nope/);
    assert.equal((await request(app).get("/databases/half")).status, 404);
    const viewy = await request(app).post("/databases").send({ id: "endless_view", sql: "CREATE TABLE t (a); CREATE VIEW v AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) AS m FROM r;" });
    assert.equal(viewy.status, 201, JSON.stringify(viewy.body));
    const t0 = Date.now();
    const all = await request(app).get("/databases").expect(200);
    assert.ok(Date.now() - t0 < 10_000, `GET /databases took ${Date.now() - t0} ms`);
    const v = all.body.databases.find((d: { id: string }) => d.id === "endless_view").tables.find((t: { name: string }) => t.name === "v");
    assert.deepEqual([v.view, v.rows, v.columns], [true, null, []]);
    assert.equal(all.body.databases.some((d: { id: string }) => d.id === "half"), false);
  });
});

describe("configuration", () => {
  test("bad values are start-up errors that name the variable", () => {
    assert.throws(() => loadConfig({ ASSAY_SQL_TIMEOUT_MS: "soon" }), /ASSAY_SQL_TIMEOUT_MS="soon" is not an integer/);
    assert.throws(() => loadConfig({ ASSAY_SQL_POSTGRES: "mysql://x/y" }), /ASSAY_SQL_POSTGRES=.*not postgres:\/\//);
    assert.throws(() => loadConfig({ ASSAY_SQL_POSTGRES: "a b=postgres://h/db" }), /ASSAY_SQL_POSTGRES=.*must match/);
    assert.throws(() => loadConfig({ ASSAY_SQL_MAX_RESULT: "lots" }), /ASSAY_SQL_MAX_RESULT/);
    const c = loadConfig({ ASSAY_SQL_POSTGRES: "pg1=postgres://u:p@127.0.0.1:5432/x, postgresql://h/spider" });
    assert.deepEqual(c.sql.postgres.map((p) => p.id), ["pg1", "spider"]);
  });
  test("uploads land under ASSAY_DATA_DIR (databases/), not ./data/sql; with :memory: in a temporary folder removed on close", async () => {
    const data = mkdtempSync(join(tmpdir(), "assay-data-"));
    const kept = createSqlService(loadConfig({ ASSAY_DATA_DIR: data }));
    assert.equal(kept.opts.uploadDir, join(data, "databases"));
    await kept.upload({ id: "kept", script: "CREATE TABLE t (a);" });
    assert.ok(existsSync(join(data, "databases", "kept.sqlite")));
    await kept.close();
    assert.ok(existsSync(join(data, "databases", "kept.sqlite")));
    const mem = createSqlService(loadConfig({ ASSAY_DATA_DIR: ":memory:" }));
    assert.ok(mem.opts.uploadDir.startsWith(tmpdir()));
    await mem.upload({ id: "gone", script: "CREATE TABLE t (a);" });
    await mem.close();
    assert.equal(existsSync(mem.opts.uploadDir), false);
    assert.equal(createSqlService(loadConfig({ ASSAY_DATA_DIR: data, ASSAY_SQL_UPLOAD_DIR: "/srv/x" })).opts.uploadDir, "/srv/x");
    rmSync(data, { recursive: true, force: true });
  });
});
