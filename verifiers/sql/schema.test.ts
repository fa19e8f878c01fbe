/**
 * Schema linking under hostile text: a query that runs node-sql-parser to its budget earns the
 * schema part 0 with a note, never null, and neither its item nor anyone else's becomes null
 * while it queues for a parse process (the wait does not count against the deadline). Queries
 * whose item has ended are dropped without running; a query never runs past what is left of its
 * item's deadline; the invalid shapes the parser is exponential on are 0 at once, by the lexer.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import { testApp } from "../../tests/helpers.js";
import { sqliteFixture } from "./fixtures.js";
import { ParseProcess } from "./parse-process.js";
import { unparsable } from "./partial.js";

const fx = sqliteFixture();
// a short deadline: before the fix, six queries each holding the one parse process for its
// budget (and a new process after it) made items wait past it, null
const { app, runtime } = await testApp({ ASSAY_SQL_DIR: fx.dir, ASSAY_SQL_TIMEOUT_MS: "1000", ASSAY_SQL_WORKERS: "2", ASSAY_DEADLINE_MS: "1000" });
after(() => runtime.close());

const W = { execution: 1, schema: 1 };
const item = (response: string, gold: string) => ({ verifier: "sql", response, reference: gold, options: { database: "concert_singer", weights: W } });
type R = { reward: number | null; status: string; reason: string; details: Record<string, any> };
const batch = async (items: object[]) => {
  const res = await request(app).post("/reward/batch").send({ items });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.results as R[];
};
/** Valid SQL (a simple CASE on a CASE) that node-sql-parser cannot read, in time exponential in the depth: seconds at 13. */
const slow = (i: number) => "SELECT " + "CASE (".repeat(13) + "1" + ") WHEN 1 THEN 1 END".repeat(13) + ` FROM singer -- ${i}`;
/** CAST without AS, eight deep (the prober's text): 3 s in the parser, refused by the lexer at once. */
const cast = (i: number) => "SELECT " + "CAST(".repeat(8) + "1" + ")".repeat(8) + ` FROM singer -- ${i}`;

test("hostile queries earn the schema part 0, never null, and right answers in the same and a concurrent batch still score 1", async () => {
  const gold = "SELECT name FROM singer";
  const hostile = batch([...Array.from({ length: 6 }, (_, i) => item(slow(i), gold)), ...Array.from({ length: 4 }, (_, i) => item(cast(i), gold)), item(gold, gold)]);
  await new Promise((r) => setTimeout(r, 200));
  const right = batch(Array.from({ length: 8 }, (_, i) => item(`SELECT name FROM singer -- ${i}`, gold)));
  const [h, g] = await Promise.all([hostile, right]);
  const show = (rs: R[]) => rs.map((r) => `${r.status} ${r.reward}: ${r.reason} ${r.details?.rewards?.schema_note ?? ""}`);
  assert.deepEqual(show(h.slice(0, 10)).filter((s) => !s.startsWith("ok 0:")), [], "every hostile item is ok with reward 0");
  for (const r of h.slice(0, 6)) assert.match(r.details.rewards.schema_note, /ran past \d+ ms/);
  for (const r of h.slice(6, 10)) assert.match(r.details.rewards.schema_note, /CAST without AS/);
  assert.deepEqual(show([h[10], ...g]).filter((s) => !s.startsWith("ok 1:")), [], "every right answer scores 1");
});

test("a query whose item has ended leaves the queue without running; none runs past what is left of its item's deadline", async () => {
  const parser = new ParseProcess(250, 1);
  try {
    await parser.items("SELECT 1", "sqlite"); // the process is up
    const ac = new AbortController();
    const first = parser.items(slow(0), "sqlite", { signal: ac.signal });
    const queued = [1, 2, 3].map((i) => parser.items(slow(i), "sqlite", { signal: ac.signal }));
    await new Promise((r) => setTimeout(r, 20));
    ac.abort();
    const t0 = performance.now();
    for (const r of await Promise.all(queued)) assert.deepEqual(r, { unreadable: "not parsed: the item had ended", stopped: true });
    assert.ok(performance.now() - t0 < 100, "dropped at once, not after the query ahead of them");
    assert.equal(parser.dropped, 3);
    const f = await first; // it was running: the budget stops it
    assert.match("unreadable" in f ? f.unreadable : "", /ran past 250 ms/);
    assert.equal(parser.killed, 1); // the three never reached a process
    await parser.items("SELECT 1", "sqlite"); // a new process is up
    // an item with 60 ms left: its query gets 60 ms, not the whole budget
    const short = await parser.items(slow(9), "sqlite", { deadline: Date.now() + 60 });
    assert.match("unreadable" in short ? short.unreadable : "", /ran past (5\d|60) ms/);
    // an ended item's query is not even queued
    assert.deepEqual(await parser.items("SELECT a FROM t", "sqlite", { signal: AbortSignal.abort() }), { unreadable: "not parsed: the item had ended", stopped: true });
    const ok = await parser.items("SELECT a FROM t", "sqlite");
    assert.deepEqual("items" in ok ? [...ok.items].sort() : ok, ["column:a", "table:t"]);
  } finally {
    parser.close();
  }
});

test("the shapes the parser is exponential on, and no engine accepts, are refused by the lexer in linear time", () => {
  assert.match(unparsable(cast(0), "sqlite") ?? "", /CAST without AS/);
  assert.match(unparsable("SELECT CAST((SELECT a AS b FROM t)) FROM t", "postgres") ?? "", /CAST without AS/);
  assert.match(unparsable("SELECT " + "CASE WHEN(".repeat(8) + "1" + ")".repeat(8) + " FROM t", "postgres") ?? "", /CASE without END/);
  assert.match(unparsable("SELECT CASE WHEN a THEN 1 FROM t", "sqlite") ?? "", /CASE without END/);
  for (const q of ["SELECT CAST(CAST(a AS INT) AS REAL) FROM t", "SELECT CAST((a) AS INT), (CASE WHEN a THEN (1) ELSE 2 END) FROM t", "SELECT CASE a WHEN 1 THEN 'x' END AS c FROM t", "SELECT try_cast(a AS int) FROM t"]) {
    assert.equal(unparsable(q, "sqlite"), null, q);
  }
  // linear: 2,000 characters of either shape, at once
  const t0 = performance.now();
  for (let k = 0; k < 100; k++) unparsable("SELECT " + "CAST(".repeat(390) + "1" + ")".repeat(390), "sqlite");
  assert.ok(performance.now() - t0 < 1_000);
});
