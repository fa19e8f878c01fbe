/**
 * The corpus in Spider's shapes (corpus/): every (gold, prediction) pair scored through HTTP with
 * the default options against test-suite-sql-eval's eval_exec_match (keep_distinct=True), and
 * with BIRD's rule against BIRD's execute_sql, whose verdicts corpus/run_references.py recorded
 * by running both unmodified on Python's sqlite3 (corpus/README.md). Assay agrees on every pair
 * but those in DIFFERENT, each with why Assay is right; no item is null. Also the options and
 * details the corpus exercises: empty_gold, gold_empty, dqs, extraction from <answer>.
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { testApp } from "../../tests/helpers.js";
import { tempDir } from "../../tests/scratch.js";

const here = join(import.meta.dirname, "corpus");
type Pair = { id: string; db: string; gold: string; pred: string; response: string };
const pairs = JSON.parse(readFileSync(join(here, "pairs.json"), "utf8")) as Pair[];
const refs = JSON.parse(readFileSync(join(here, "references.json"), "utf8")) as {
  verdicts: Record<string, { test_suite: number | string; test_suite_strip_distinct: number | string; bird: number | string }>;
};

/** Where Assay's default (Spider's rule) differs from eval_exec_match, and why Assay is right. */
const DIFFERENT: Record<string, { assay: number; why: string }> = {
  "order-by-in-subquery": {
    assay: 1,
    why: "the gold's only ORDER BY picks the rows inside a subquery; its result has no order, so the model's ORDER BY name DESC is a right answer (test-suite looks for the substring 'order by' anywhere)",
  },
};
const BIRD_RULE = { rows: "set", order: "ignore", column_order: "strict", float_digits: 0 };

const dir = tempDir("assay-corpus-");
for (const db of new Set(pairs.map((p) => p.db))) {
  mkdirSync(join(dir, db));
  const d = new Database(join(dir, db, `${db}.sqlite`));
  d.exec(readFileSync(join(here, `${db}.sql`), "utf8"));
  d.close();
}
const { app, runtime } = await testApp({ ASSAY_SQL_DIR: dir, ASSAY_SQL_TIMEOUT_MS: "5000" });
after(() => runtime.close());

type Result = { reward: number | null; status: string; reason: string; details: Record<string, any> };
async function batch(options: Record<string, unknown>, list = pairs): Promise<Result[]> {
  const res = await request(app)
    .post("/reward/batch")
    .send({ items: list.map((p) => ({ verifier: "sql", response: p.response, reference: p.gold, options: { database: p.db, ...options } })) });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.results as Result[];
}

describe("the Spider-shaped corpus against the references", () => {
  test("the references ran every gold (no gold error), and the corpus holds what the issue asks for", () => {
    for (const p of pairs) assert.equal(typeof refs.verdicts[p.id]?.test_suite, "number", `${p.id}: ${refs.verdicts[p.id]?.test_suite}`);
    const has = (re: RegExp, where: "gold" | "pred" | "response") => pairs.some((p) => re.test(p[where]));
    assert.ok(has(/= "/, "gold") && has(/= "/, "pred"), "double-quoted literals in gold and prediction");
    assert.ok(has(/<answer>/, "response") && has(/<reasoning>/, "response"));
    assert.ok(pairs.some((p) => refs.verdicts[p.id].bird !== refs.verdicts[p.id].test_suite), "pairs where the two rules differ");
  });
  test("default options agree with eval_exec_match (keep_distinct) on every pair but the listed ones", async () => {
    const results = await batch({});
    const got: string[] = [];
    for (const [i, p] of pairs.entries()) {
      const r = results[i];
      assert.equal(r.status, "ok", `${p.id}: ${r.reason}`);
      assert.equal(r.details.sql.replace(/;$/, ""), p.pred, `${p.id}: extracted ${r.details.sql}`);
      const want = DIFFERENT[p.id]?.assay ?? refs.verdicts[p.id].test_suite;
      if (r.reward !== want) got.push(`${p.id}: Assay ${r.reward} (${r.reason}), expected ${want}`);
    }
    assert.deepEqual(got, []);
    // each listed difference is still a difference
    for (const id of Object.keys(DIFFERENT)) assert.notEqual(refs.verdicts[id].test_suite, DIFFERENT[id].assay, id);
  });
  test("BIRD's rule agrees with BIRD's execute_sql on every pair", async () => {
    const results = await batch(BIRD_RULE);
    const got = pairs.flatMap((p, i) => (results[i].status === "ok" && results[i].reward === refs.verdicts[p.id].bird ? [] : [`${p.id}: Assay ${results[i].reward} (${results[i].reason}), BIRD ${refs.verdicts[p.id].bird}`]));
    assert.deepEqual(got, []);
  });
});

describe("with every gold cached, the model's query goes with the gold's digest (issue 35)", () => {
  /** A result without what differs between two runs of the same item (timings, whether the gold came from the cache). */
  const verdict = (r: Result) => {
    const { ms: _ms, cpu_ms: _cpu, gold_cached: _cached, ...details } = r.details;
    return { reward: r.reward, status: r.status, reason: r.reason, details };
  };
  for (const [name, options] of [["default options", {}], ["BIRD's rule", BIRD_RULE]] as const) {
    test(`${name}: the same verdicts, reasons and details as the rows compared on the server`, async () => {
      const svc = await runtime.services.sql();
      const cold = await batch(options);
      const m0 = svc.stats().matched;
      const warm = await batch(options);
      const matched = svc.stats().matched - m0;
      assert.ok(warm.every((r) => r.details.gold_cached === true));
      assert.deepEqual(warm.map(verdict), cold.map(verdict));
      // every right answer in the gold's column order came back as a digest, without its rows
      const own = warm.filter((r) => r.reward === 1 && r.details.permutation === undefined).length;
      assert.ok(own >= 10 && matched === own, `${matched} digests matched, ${own} right answers in the gold's column order`);
    });
  }
});

describe("what the corpus exercises, in details and options", () => {
  const pair = (id: string) => pairs.find((p) => p.id === id)!;
  test("double-quoted literals are reported; a double-quoted column stays a column", async () => {
    const [gold, pred, column] = await batch({}, [pair("dq-gold"), pair("dq-pred"), pair("dq-column")]);
    assert.deepEqual(gold.details.gold_dqs, ["France"]);
    assert.equal(gold.details.dqs, undefined);
    assert.deepEqual(pred.details.dqs, ["France"]);
    assert.equal(pred.details.extracted_from, "answer");
    assert.equal(column.details.dqs, undefined);
  });
  test("an empty gold: details.gold_empty, and empty_gold match | zero | invalid", async () => {
    const p = pair("empty-gold");
    const [match] = await batch({}, [p]);
    assert.equal(match.reward, 1);
    assert.equal(match.details.gold_empty, true);
    const [zero] = await batch({ empty_gold: "zero" }, [p]);
    assert.equal(zero.status, "ok");
    assert.equal(zero.reward, 0);
    assert.match(zero.reason, /empty_gold is "zero"/);
    const [invalid] = await batch({ empty_gold: "invalid" }, [p]);
    assert.equal(invalid.status, "invalid");
    assert.match(invalid.reason, /returns no rows.*empty_gold/);
    const [full] = await batch({ empty_gold: "invalid" }, [pair("dq-gold")]);
    assert.equal(full.reward, 1);
    assert.equal(full.details.gold_empty, false);
  });
});
