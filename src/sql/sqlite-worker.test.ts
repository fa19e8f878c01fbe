/**
 * The SQLite process's query runner, in this process (run() is what the child runs per task):
 * a query reads plain numbers, and runs a second time with safeIntegers only where a value could
 * have been rounded (issue 35: a BigInt per integer cell cost a tenth of the process's CPU time),
 * so integers beyond 2^53 stay exact and nothing else pays for them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { run, runs, type QueryTask } from "./sqlite-worker.js";
import { INT_TAG, type QueryOutcome } from "./types.js";

const dir = mkdtempSync(join(tmpdir(), "assay-sqlite-worker-"));
const path = join(dir, "t.sqlite");
{
  const db = new Database(path);
  db.exec(`CREATE TABLE t (id INTEGER, big INTEGER, r REAL, s TEXT);
    INSERT INTO t VALUES (1, 9007199254740993, 1.5, 'a'), (2, -9007199254740993, 2.5, 'b'), (3, 42, 1e300, 'c');`);
  db.close();
}
test.after(() => rmSync(dir, { recursive: true, force: true }));

const q = (sql: string, extra: Partial<QueryTask> = {}) =>
  run({ kind: "query", path, version: "1", sql, maxRows: 100, maxBytes: 1 << 20, ...extra }) as QueryOutcome;
const counted = (f: () => QueryOutcome) => {
  const p = runs.plain, e = runs.exact;
  const r = f();
  return { r, plain: runs.plain - p, exact: runs.exact - e };
};

test("a result of small integers, reals and text runs once, with plain numbers", () => {
  const { r, plain, exact } = counted(() => q("SELECT id, r, s FROM t WHERE id < 3 ORDER BY id"));
  assert.equal(r.ok, true);
  assert.deepEqual(r.ok && r.rows, [[1, 1.5, "a"], [2, 2.5, "b"]]);
  assert.equal(plain, 1);
  assert.equal(exact, 0);
});

test("integers beyond 2^53 run again with safeIntegers and come back exact", () => {
  const { r, plain, exact } = counted(() => q("SELECT id, big FROM t ORDER BY id"));
  assert.equal(plain, 1);
  assert.equal(exact, 1);
  assert.equal(r.ok, true);
  assert.deepEqual(r.ok && r.rows, [[1, `${INT_TAG}9007199254740993`], [2, `${INT_TAG}-9007199254740993`], [3, 42]]);
  // the statement is back to plain numbers for the next run
  const again = counted(() => q("SELECT id, big FROM t WHERE id = 3"));
  assert.deepEqual(again.r.ok && again.r.rows, [[3, 42]]);
  assert.equal(again.exact, 0);
});

test("a large real costs the second run, and stays the same real", () => {
  const { r, exact } = counted(() => q("SELECT r FROM t WHERE id = 3"));
  assert.equal(exact, 1);
  assert.deepEqual(r.ok && r.rows, [[1e300]]);
});

test("a model query's digest against a kept gold holding big integers: equal only when exact", () => {
  const gold = "SELECT big FROM t WHERE id = 1";
  const kept = q(gold, { keep: true, stay: true });
  assert.equal(kept.ok && kept.kept?.rows, 1);
  const digest = { rows: "bag" as const, ordered: false, floatDigits: 0, of: gold, maxRows: 100, held: true };
  const same = q("SELECT 9007199254740993", { digest });
  assert.equal(same.ok && same.matched?.rows, 1);
  // 2^53 + 1 and 2^53 + 3 read as plain numbers would both round; exact, they differ
  const other = q("SELECT 9007199254740995", { digest });
  assert.equal(other.ok && other.matched, undefined);
  assert.deepEqual(other.ok && other.rows, [[`${INT_TAG}9007199254740995`]]);
});

test("the row and byte caps hold on the exact run too", () => {
  const rows = q("SELECT big FROM t", { maxRows: 2 });
  assert.equal(rows.ok, false);
  assert.equal(!rows.ok && rows.limit, "rows");
});
