/**
 * Runaway predictions must not cost their neighbours (issue 35), in the shapes the issue
 * measured with the default 2 SQLite processes: 6 runaways ahead of 40 right answers (which once
 * nulled all 40 and 4 of the 6), and 8 runaways mixed into 256 pairs (which once nulled 66).
 * Each runaway scores 0 at its time limit (CPU time of its process, issue 36), every neighbour
 * gets its own verdict, and no item is null: time spent waiting behind a runaway is not charged
 * to a neighbour's deadline. Bounded: each runaway holds a process for 1 s of CPU time.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import { testApp } from "./helpers.js";
import { sqliteFixture } from "../verifiers/sql/fixtures.js";

const fx = sqliteFixture();
const RUNAWAYS = [
  "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) FROM r",
  "SELECT count(*) FROM singer a, singer b, singer c, singer d, singer e, singer f, singer g, singer h, singer i, singer j",
];
const GOLD = "SELECT name FROM singer WHERE age > 40 ORDER BY name";
const RIGHT = ["SELECT name FROM singer WHERE age > 40 ORDER BY name", "SELECT name FROM singer WHERE age >= 41 ORDER BY 1"];
const WRONG = "SELECT name FROM singer WHERE age > 30 ORDER BY name";
const item = (response: string) => ({ verifier: "sql", response, reference: GOLD, options: { database: "concert_singer" } });
type Result = { reward: number | null; status: string; reason: string };

// the default pool's shape (2 processes); a 1 s limit and a 2.5 s deadline, so the items behind
// the runaways wait longer than their deadline (6 x 1 s over 2 processes, and the respawns)
const { app, runtime } = await testApp({ ASSAY_SQL_DIR: fx.dir, ASSAY_SQL_WORKERS: "2", ASSAY_SQL_TIMEOUT_MS: "1000", ASSAY_DEADLINE_MS: "2500", ASSAY_MAX_DEADLINE_MS: "2500", ASSAY_SQL_MAX_WAIT_MS: "600000" });
after(() => runtime.close());
// started before the batches, as the server's warm-up does: a cold start is not what is measured
await (await runtime.services.sql()).warmUp();

function check(results: Result[], expect: (number | "runaway")[]) {
  const nulls = results.filter((r) => r.reward === null);
  assert.equal(nulls.length, 0, `${nulls.length} null, e.g. ${nulls[0]?.reason}`);
  results.forEach((r, i) => {
    if (expect[i] === "runaway") {
      assert.equal(r.reward, 0, r.reason);
      assert.match(r.reason, /query stopped at its time limit/, r.reason);
    } else assert.equal(r.reward, expect[i], `item ${i}: ${r.reason}`);
  });
}

test("6 runaways ahead of 40 right answers: 6 zeros (time limit), 40 ones, no null", async () => {
  const shape: (number | "runaway")[] = [...Array(6).fill("runaway"), ...Array(40).fill(1)];
  const items = shape.map((x, i) => item(x === "runaway" ? RUNAWAYS[i % 2] : RIGHT[i % 2]));
  const res = await request(app).post("/reward/batch").send({ items }).expect(200);
  const results = res.body.results as Result[];
  check(results, shape);
});

test("8 runaways mixed into 256 pairs: 8 zeros (time limit), every other verdict right, no null", async () => {
  const shape: (number | "runaway")[] = Array.from({ length: 256 }, (_, i) => (i % 32 === 7 ? "runaway" : i % 5 === 0 ? 0 : 1));
  const items = shape.map((x, i) => item(x === "runaway" ? RUNAWAYS[i % 2] : x === 1 ? RIGHT[i % 2] : WRONG));
  const res = await request(app).post("/reward/batch").send({ items }).expect(200);
  check(res.body.results as Result[], shape);
});
