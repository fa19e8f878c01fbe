/** Result comparison, extraction and the lexer, without a database. */
import { test, describe } from "node:test";
import Database from "better-sqlite3";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { compareResults, compareResultsSync, cellKey, digestMatch, digestRule, goldDigest, type CompareOptions, type Comparison } from "./compare.js";
import { resultDigest } from "../../src/sql/digest.js";
import { extractSql, MAX_SQL_CHARS } from "./extract.js";
import { ngramSimilarity, schemaLinking, jaccard, unparsable } from "./partial.js";
import { ParseProcess, PARSE_BUDGET_MS } from "./parse-process.js";
import { checkQuery, dqsRewrite, hasTopLevelOrderBy, MAX_DQS_LITERALS, prepareWithDqs, tokenize } from "../../src/sql/lex.js";
import { intCell, textCell, blobCell, INT_TAG, type Cell } from "../../src/sql/types.js";

/** CPU milliseconds `fn` costs this process: what "fast" means on a shared, overloaded machine, where wall time mostly measures the neighbours. */
export function cpuMs(fn: () => void): number {
  const u0 = process.cpuUsage();
  fn();
  const u = process.cpuUsage(u0);
  return (u.user + u.system) / 1000;
}

/** The same for asynchronous work (nothing else runs in this process meanwhile). */
async function cpuMsAsync(fn: () => Promise<unknown>): Promise<number> {
  const u0 = process.cpuUsage();
  await fn();
  const u = process.cpuUsage(u0);
  return (u.user + u.system) / 1000;
}

const spider: CompareOptions = { rows: "bag", ordered: false, columnOrder: "any", floatDigits: 0 };
const bird: CompareOptions = { rows: "set", ordered: false, columnOrder: "strict", floatDigits: 0 };
const eq = async (g: Cell[][], p: Cell[][], o = spider) => (await compareResults(g, p, o)).match;

describe("compareResults: Spider test-suite rules (exec_eval.py result_eq)", () => {
  test("row order is ignored unless ordered", async () => {
    assert.equal(await eq([[1], [2]], [[2], [1]]), true);
    assert.equal(await eq([[1], [2]], [[2], [1]], { ...spider, ordered: true }), false);
    assert.equal(await eq([[1], [2]], [[1], [2]], { ...spider, ordered: true }), true);
  });
  test("duplicates count under bag semantics, not under set semantics", async () => {
    assert.equal(await eq([["a"], ["b"]], [["a"], ["a"], ["b"]]), false);
    assert.equal(await eq([["a"], ["b"]], [["a"], ["b"], ["b"]], bird), true);
    // same length, different multiplicities
    assert.equal(await eq([["a"], ["a"], ["b"]], [["a"], ["b"], ["b"]]), false);
  });
  test("columns match up to a permutation", async () => {
    const r = await compareResults([["x", 1], ["y", 2]], [[2, "y"], [1, "x"]], spider);
    assert.equal(r.match, true);
    assert.deepEqual(r.permutation, [1, 0]);
    // BIRD compares tuples as they come
    assert.equal(await eq([["x", 1]], [[1, "x"]], bird), false);
  });
  test("a permutation must hold for every row at once, not per row", async () => {
    // each row's values agree as a multiset, but no single column order maps one table onto the other
    assert.equal(await eq([[1, 2], [3, 4]], [[1, 2], [4, 3]]), false);
  });
  test("columns with the same values in several places still pair up", async () => {
    assert.equal(await eq([[1, 1, 2], [1, 2, 1]], [[1, 2, 1], [2, 1, 1]]), true);
    assert.equal(await eq([[1, 1, 2], [1, 2, 1]], [[2, 1, 1], [2, 1, 1]]), false);
  });
  test("an extra or missing column never matches", async () => {
    assert.equal(await eq([["a"]], [["a", 1]]), false);
    assert.equal((await compareResults([["a"]], [["a", 1]], spider)).reason, "different number of columns: model 2, gold 1");
  });
  test("two empty results are equal whatever their columns (both evaluators)", async () => {
    assert.equal(await eq([], []), true);
    assert.equal(await eq([], [[1]]), false);
    assert.equal(await eq([[1]], []), false);
  });
  test("values compare as Python does: 1 == 1.0, None == None, '1' != 1, case-sensitive text", async () => {
    assert.equal(await eq([[1]], [[1.0]]), true);
    assert.equal(await eq([[null]], [[null]]), true);
    assert.equal(await eq([["1"]], [[1]]), false);
    assert.equal(await eq([[null]], [[0]]), false);
    assert.equal(await eq([[null]], [["None"]]), false);
    assert.equal(await eq([["France"]], [["FRANCE"]]), false);
    assert.equal(await eq([[0]], [[-0]]), true);
  });
  test("floats: exact by default in the evaluators, within a relative tolerance of 10^-digits on request", async () => {
    const a = 0.1 + 0.2;
    assert.equal(await eq([[0.3]], [[a]]), false);
    assert.equal(await eq([[0.3]], [[a]], { ...spider, floatDigits: 12 }), true);
    assert.equal(await eq([[0.3]], [[0.31]], { ...spider, floatDigits: 12 }), false);
    assert.equal(await eq([[1e20]], [[1e20 + 2 ** 14]], { ...spider, floatDigits: 12 }), false); // two integers: exact
  });
  test("float_digits is a relative tolerance of 10^-digits, not buckets of rounded values (a probe's false positive)", () => {
    const at = (d: number): CompareOptions => ({ ...spider, floatDigits: d });
    const eqs = (g: Cell[][], p: Cell[][], o = at(12)) => compareResultsSync(g, p, o).match;
    // 12 significant digits rounded 1234567890123.45 to 1234567890120, which an integer-valued real matched
    assert.equal(eqs([[1234567890123.45]], [[1234567890120]]), false);
    assert.equal(eqs([[1234567890123.45]], [[1234567890119.6]]), false);
    assert.equal(eqs([[1234567890120]], [[1234567890123.45]]), false);
    // within 10^-12 of it, an integer or not, is the same number
    assert.equal(eqs([[1234567890123.45]], [[1234567890123.449]]), true);
    assert.equal(eqs([[3]], [[2.9999999999999996]]), true);
    assert.equal(eqs([[2.9999999999999996]], [[3]]), true);
    // two integers: exact, however large
    assert.equal(eqs([[1e13]], [[1e13 + 1]]), false);
    // 1 and 1.0 are one value; float noise matches; the exact rule (0) does not
    assert.equal(eqs([[1]], [[1.0]], at(0)), true);
    assert.equal(eqs([[0.3]], [[0.1 + 0.2]]), true);
    assert.equal(eqs([[0.3]], [[0.1 + 0.2]], at(0)), false);
    // noise across a rounding boundary of the old buckets (12 digits): adjacent doubles
    const next = (x: number) => {
      const f = new Float64Array([x]);
      new BigInt64Array(f.buffer)[0] += 1n;
      return f[0];
    };
    let x = 0.1234567890125;
    while (Number(x.toPrecision(12)) === Number(next(x).toPrecision(12))) x = next(x);
    assert.equal(eqs([[x]], [[next(x)]]), true);
    // gold values equal within the tolerance count as one value; columns still pair up
    assert.equal(eqs([[0.3], [0.1 + 0.2]], [[0.3], [0.3]]), true);
    assert.equal(eqs([[0.3, "a"], [0.7, "b"]], [["b", 0.7000000000000001], ["a", 0.30000000000000004]]), true);
    assert.equal(eqs([[0.3, 1], [0.3, 2]], [[0.30000000000000004, 1], [0.7, 2]]), false);
    // float_digits 3: within 0.1%
    assert.equal(eqs([[0.3]], [[0.3003]], at(3)), true);
    assert.equal(eqs([[0.3]], [[0.302]], at(3)), false);
  });
  test("a text cannot pose as a tagged integer or blob: a text that starts with NUL is tagged itself", () => {
    assert.equal(textCell("abc"), "abc");
    assert.notEqual(textCell(`${INT_TAG}7`), intCell(2n ** 63n - 1n));
    assert.notEqual(cellKey(textCell(`${INT_TAG}7`)), cellKey(7));
    assert.notEqual(cellKey(textCell("\u0000blob:41")), cellKey(blobCell(Buffer.from("A"))));
    assert.notEqual(cellKey(textCell("\u0000text:x")), cellKey(textCell("x")));
    assert.notEqual(cellKey(textCell(String.fromCharCode(0, 0))), cellKey(textCell("\u0000")));
    assert.equal(cellKey(textCell("\u0000a")), cellKey(textCell("\u0000a")));
  });
  test("ordered mismatch says so", async () => {
    const r = await compareResults([[1], [2]], [[2], [1]], { ...spider, ordered: true });
    assert.equal(r.match, false);
    assert.match(r.reason, /different order/);
  });
  test("BIRD's set rule: set(pred) == set(gold)", async () => {
    assert.equal(await eq([[1, "a"], [1, "a"]], [[1, "a"]], bird), true);
    assert.equal(await eq([[1, "a"]], [[1, "b"]], bird), false);
  });
  test("wide results with repeated values stay bounded", async () => {
    const row = Array.from({ length: 12 }, () => 7);
    const g = Array.from({ length: 50 }, () => row);
    const p = Array.from({ length: 50 }, () => [...row.slice(1), 8]);
    const t0 = performance.now();
    assert.equal(await eq(g, p), false);
    assert.equal(await eq(g, g.map((r) => [...r])), true);
    assert.ok(performance.now() - t0 < 500);
  });
});

describe("column order without a search over orders (issue 25)", () => {
  const R = 8_000;
  const C = 8;
  const gold = Array.from({ length: R }, (_, r) => Array.from({ length: C }, (_, c) => r + c));
  test("8,000 rows x 8 columns, each row rotated: every row's values agree, no column order does; 0 in under 1 s of CPU", async () => {
    // every column holds every value of 0..7, and every row too: quick rejection passes and all
    // 40,320 orders pass per-column pruning; the old search tried 5,000 of them over all rows
    // (~2.5 ms of CPU a row: ~20 s here, 140 s on a loaded server)
    const cyclic = Array.from({ length: R }, (_, r) => Array.from({ length: C }, (_, c) => (r + c) % C));
    const rotated = cyclic.map((row, r) => row.map((_, c) => row[(c + r) % C]));
    let r: Comparison | undefined;
    const ms = await cpuMsAsync(async () => (r = await compareResults(cyclic, rotated, spider)));
    assert.equal(r!.match, false);
    assert.match(r!.reason, /no one column order/);
    assert.ok(ms < 1_000, `took ${ms} ms of CPU`);
  });
  test("the 8,000-row rotation runs in bounded slices: the event loop keeps turning meanwhile (/healthz p99 < 100 ms)", async (t) => {
    const cyclic = Array.from({ length: R }, (_, r) => Array.from({ length: C }, (_, c) => (r + c) % C));
    const rotated = cyclic.map((row, r) => row.map((_, c) => row[(c + r) % C]));
    // a 1 ms timer stands in for /healthz: each time it runs, the turn that held it up kept the
    // main thread for at most the smaller of the wall time and the process's CPU since it last ran
    // (the wall alone measures the neighbours on a loaded machine; the CPU alone counts V8's
    // helper threads too, which GC in parallel: 67 ms of CPU in a 44 ms gap on CI once); in one go
    // the comparison held it for all of it
    let turns = 0;
    let worst = 0;
    let worstCpu = 0;
    let worstGap = 0;
    let lastCpu = process.cpuUsage();
    let lastAt = performance.now();
    const tick = setInterval(() => {
      const u = process.cpuUsage(lastCpu);
      const now = performance.now();
      const cpu = (u.user + u.system) / 1000;
      worst = Math.max(worst, Math.min(cpu, now - lastAt));
      worstCpu = Math.max(worstCpu, cpu);
      worstGap = Math.max(worstGap, now - lastAt);
      lastCpu = process.cpuUsage();
      lastAt = now;
      turns++;
    }, 1);
    await new Promise((r) => setTimeout(r, 5));
    turns = 0;
    worst = 0;
    worstCpu = 0;
    worstGap = 0;
    let r: Comparison | undefined;
    const ms = await cpuMsAsync(async () => (r = await compareResults(cyclic, rotated, spider)));
    const during = turns;
    await new Promise((r) => setTimeout(r, 5)); // the timer's next turn: it measures the last one
    clearInterval(tick);
    const seen = `longest turn ${worst.toFixed(1)} ms (most CPU in a turn ${worstCpu.toFixed(1)} ms, longest gap ${worstGap.toFixed(1)} ms wall), ${during} timer turns during it, ${ms.toFixed(0)} ms of CPU in all`;
    t.diagnostic(seen);
    assert.equal(r!.match, false);
    assert.match(r!.reason, /no one column order/);
    assert.deepEqual(r, compareResultsSync(cyclic, rotated, spider)); // slicing changes nothing
    assert.ok(ms < 1_000, seen);
    assert.ok(during >= 5, `the loop hardly turned: ${seen}`);
    // a turn is a slice (SLICE_MS) plus at most STRIDE rows and now and then a young-generation
    // GC (scavenges of 20-26 ms in this file's 100 MB heap: 33-45 ms turns here, 44 ms on CI); in
    // one go it was the whole comparison (126 ms of CPU on CI, 260-380 ms here). The floor of
    // 50 ms keeps a fast machine's GC pause from reading as one go; one go there has no timer
    // turns at all (the check above).
    assert.ok(worst < 100 && worst < Math.max(ms / 2, 50), seen);
  });
  test("the same result with its columns permuted and its rows shuffled still matches, with the permutation, in under 1 s of CPU", async () => {
    const P = [3, 0, 7, 1, 6, 2, 5, 4]; // model column k holds gold column P[k]
    const permuted = gold.map((row) => P.map((c) => row[c])).reverse();
    let r: Comparison | undefined;
    const ms = await cpuMsAsync(async () => (r = await compareResults(gold, permuted, spider)));
    assert.equal(r!.match, true, r!.reason);
    assert.deepEqual(r!.permutation, P.map((_, i) => P.indexOf(i)));
    assert.ok(ms < 1_000, `took ${ms} ms of CPU`);
    // the same under set semantics with duplicated rows, and with ordered rows
    assert.equal(await eq(gold, [...permuted, ...permuted.slice(0, 10)], { ...spider, rows: "set" }), true);
    assert.equal(await eq(gold, gold.map((row) => P.map((c) => row[c])), { ...spider, ordered: true }), true);
    assert.equal(await eq(gold, permuted, { ...spider, ordered: true }), false);
  });
  test("columns that no value tells apart: duplicated columns, a Latin square, an orthogonal array", async () => {
    // SELECT name, name, age
    const dup = await compareResults([["a", "a", 1], ["b", "b", 2]], [[2, "b", "b"], [1, "a", "a"]], spider);
    assert.equal(dup.match, true);
    assert.deepEqual(dup.permutation, [1, 2, 0]); // ties broken in index order
    // every column holds every value once and every row every value: only the right order matches
    const L = [[1, 2, 3, 4, 5], [2, 3, 4, 5, 1], [3, 4, 5, 1, 2], [4, 5, 1, 2, 3], [5, 1, 2, 3, 4]];
    const Q = [0, 2, 4, 1, 3];
    const model = L.map((row) => Q.map((c) => row[c]));
    const lr = await compareResults(L, model, spider);
    assert.equal(lr.match, true);
    // the permutation it reports maps the model's rows onto the gold's
    const key = (rows: number[][]) => rows.map((r) => r.join(",")).sort();
    assert.deepEqual(key(model.map((row) => lr.permutation!.map((c) => row[c]))), key(L));
    assert.equal(await eq(L, L.map((row) => [row[0], row[1], row[2], row[4], row[3]])), true);
    // one row's values swapped: the rows still agree sorted, but no column order fits them all
    assert.equal(await eq(L, L.map((row, i) => (i === 0 ? [row[0], row[1], row[2], row[4], row[3]] : row))), false);
    // an orthogonal array of strength 2 (121 rows, 12 columns): every pair of columns holds every
    // value pair once, so no single column or pair tells them apart; 12! orders
    const p = 11;
    const oa: number[][] = [];
    for (let i = 0; i < p; i++) for (let j = 0; j < p; j++) oa.push([i, ...Array.from({ length: p }, (_, k) => (j + k * i) % p)]);
    const S = Array.from({ length: p + 1 }, (_, c) => (c * 5 + 1) % (p + 1));
    let r: Comparison | undefined;
    const ms = await cpuMsAsync(async () => (r = await compareResults(oa, oa.map((row) => S.map((c) => row[c])), spider)));
    assert.equal(r!.match, true, r!.reason);
    assert.ok(ms < 1_000, `took ${ms} ms of CPU`);
  });
});

describe("column pairing is exact (individualization-refinement)", () => {
  const incidence = (n: number, edges: [number, number][]) => edges.map(([a, b]) => Array.from({ length: n }, (_, c) => (c === a || c === b ? 1 : 0)));
  const shuffle = <T>(xs: T[], rnd: () => number) => {
    const a = [...xs];
    for (let i = a.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [a[i], a[j]] = [a[j], a[i]];
    }
    return a;
  };
  const lcg = (seed: number) => () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  test("eight 0/1 columns (the [8,4] Hamming code's words, every column alike) in any order match", async () => {
    const pts = Array.from({ length: 8 }, (_, i) => [i & 1, (i >> 1) & 1, (i >> 2) & 1]);
    const code = Array.from({ length: 16 }, (_, a) => pts.map((x) => ((a & 1) * x[0]) ^ (((a >> 1) & 1) * x[1]) ^ (((a >> 2) & 1) * x[2]) ^ ((a >> 3) & 1)));
    const rnd = lcg(3);
    for (let t = 0; t < 20; t++) {
      const P = shuffle([0, 1, 2, 3, 4, 5, 6, 7], rnd);
      const model = shuffle(code.map((r) => P.map((c) => r[c])), rnd);
      const r = await compareResults(code, model, spider);
      assert.equal(r.match, true, r.reason);
      const key = (rows: number[][]) => rows.map((x) => x.join("")).sort().join();
      assert.equal(key(model.map((row) => (r.permutation ?? P.map((_, i) => i)).map((c) => row[c]))), key(code));
    }
    // one cell flipped: every column still has eight 1s in one of them, but no order fits
    const flipped = code.map((r, i) => (i === 5 ? r.map((v, c) => (c < 2 ? 1 - v : v)) : r));
    assert.equal(await eq(code, flipped), false);
  });
  test("the incidence of a Paley graph (29 columns alike, 29! orders) permuted matches; the Shrikhande graph is not the 4x4 rook's graph", async () => {
    // on main this scored 0: "could not be paired within 16 checks"
    const q = 29;
    const squares = new Set(Array.from({ length: q - 1 }, (_, x) => ((x + 1) * (x + 1)) % q));
    const edges: [number, number][] = [];
    for (let a = 0; a < q; a++) for (let b = a + 1; b < q; b++) if (squares.has(b - a)) edges.push([a, b]);
    const gold = incidence(q, edges);
    const rnd = lcg(7);
    const P = shuffle(Array.from({ length: q }, (_, c) => c), rnd);
    let r: Comparison | undefined;
    const ms = await cpuMsAsync(async () => (r = await compareResults(gold, shuffle(gold.map((row) => P.map((c) => row[c])), rnd), spider)));
    assert.equal(r!.match, true, r!.reason);
    assert.ok(ms < 1_000, `took ${ms} ms of CPU`);
    // two strongly regular graphs with the same parameters (16, 6, 2, 2): every column, pair and
    // row count agrees, and yet no column order maps one onto the other; said so, not "gave up"
    const shrikhande: [number, number][] = [];
    const rook: [number, number][] = [];
    const steps = [[0, 1], [0, 3], [1, 0], [3, 0], [1, 1], [3, 3]];
    for (let a = 0; a < 16; a++) {
      for (let b = a + 1; b < 16; b++) {
        const dx = ((b >> 2) - (a >> 2) + 4) % 4;
        const dy = ((b & 3) - (a & 3) + 4) % 4;
        if (steps.some(([x, y]) => x === dx && y === dy)) shrikhande.push([a, b]);
        if (a >> 2 === b >> 2 || (a & 3) === (b & 3)) rook.push([a, b]);
      }
    }
    const no = await compareResults(incidence(16, shrikhande), incidence(16, rook), spider);
    assert.equal(no.match, false);
    assert.match(no.reason, /no one column order matches/);
  });
  test("agrees with trying every column order on 400 random 0/1 results (6 columns, 720 orders)", async () => {
    const rnd = lcg(11);
    const orders: number[][] = [];
    const permute = (xs: number[], k = 0): void => {
      if (k === xs.length) return void orders.push([...xs]);
      for (let i = k; i < xs.length; i++) {
        [xs[k], xs[i]] = [xs[i], xs[k]];
        permute(xs, k + 1);
        [xs[k], xs[i]] = [xs[i], xs[k]];
      }
    };
    permute([0, 1, 2, 3, 4, 5]);
    const key = (rows: number[][]) => rows.map((r) => r.join("")).sort().join();
    let matches = 0;
    for (let t = 0; t < 400; t++) {
      const n = 2 + Math.floor(rnd() * 7);
      const gold = Array.from({ length: n }, () => Array.from({ length: 6 }, () => (rnd() < 0.5 ? 1 : 0)));
      const P = shuffle([0, 1, 2, 3, 4, 5], rnd);
      let model = shuffle(gold.map((r) => P.map((c) => r[c])), rnd);
      // half of them: swap two cells of a row (its values stay, so quick rejection passes)
      if (t % 2) model = model.map((r, i) => (i === 0 ? [r[1], r[0], ...r.slice(2)] : r));
      const truth = orders.some((o) => key(model.map((r) => o.map((c) => r[c]))) === key(gold));
      const r = await compareResults(gold, model, spider);
      assert.equal(r.match, truth, `${JSON.stringify(gold)} vs ${JSON.stringify(model)}: ${r.reason}`);
      if (truth) assert.equal(key(model.map((row) => r.permutation ? r.permutation.map((c) => row[c]) : row)), key(gold));
      matches += truth ? 1 : 0;
    }
    assert.ok(matches > 200 && matches < 400, `${matches} matches`); // both kinds were tried
  });
});

describe("extractSql: R1-style <answer> tags", () => {
  test("an unfenced <answer> is the SQL; a fenced one inside <answer> too", () => {
    assert.deepEqual(extractSql("<think>x</think>\n<answer>SELECT name FROM singer</answer>"), { sql: "SELECT name FROM singer", source: "answer" });
    assert.deepEqual(extractSql("<answer>\n```sql\nSELECT 1\n```\n</answer>"), { sql: "SELECT 1", source: "answer_sql_block" });
    assert.deepEqual(extractSql("<answer>```\nSELECT 2\n```</answer>"), { sql: "SELECT 2", source: "answer_code_block" });
    assert.deepEqual(extractSql("<answer>SELECT 3"), { sql: "SELECT 3", source: "answer" }); // unclosed runs to the end
  });
  test("the last <answer> after the last </think> wins over drafts in <reasoning> and <think>", () => {
    const r1 = "<reasoning>Try:\n```sql\nSELECT draft FROM singer\n```\nbetter</reasoning>\n<answer>SELECT name FROM singer</answer>";
    assert.deepEqual(extractSql(r1), { sql: "SELECT name FROM singer", source: "answer" });
    const think = "<think><answer>SELECT draft</answer>```sql\nSELECT draft2\n```</think><answer>SELECT 1</answer> then <answer>SELECT 2</answer>";
    assert.equal(extractSql(think).sql, "SELECT 2");
    // a draft fence inside <reasoning> with the answer as plain text after it
    assert.deepEqual(extractSql("<reasoning>```sql\nSELECT draft\n```</reasoning>\nSELECT 4"), { sql: "SELECT 4", source: "text" });
    // an <answer> inside <think> only, nothing after: the text after </think> is the answer
    assert.equal(extractSql("<think><answer>SELECT draft</answer></think>SELECT 5").sql, "SELECT 5");
  });
  test("1 MB of hostile <answer> and </reasoning> tags: linear", () => {
    const hostile = "<answer>".repeat(60_000) + "</reasoning>".repeat(20_000) + "<answer>" + "```".repeat(50_000) + "</answer>".repeat(20_000);
    extractSql(hostile.slice(-100_000)); // warm-up
    const ex = cpuMs(() => extractSql(hostile));
    assert.ok(ex < 50, `extraction took ${ex} ms of CPU`);
  });
});

describe("double-quoted literals (SQLite's DQS rule) and exact integers", () => {
  const msg = (x: string) => `no such column: "${x}" - should this be a string literal in single-quotes?`;
  test("the token SQLite names becomes a literal everywhere it is unqualified; qualified ones stay identifiers", () => {
    const q = `SELECT "name" FROM singer AS s WHERE country = "France" OR s."France" = 1 OR "France".x = 2 OR 'it''s "France"' = "France"`;
    const r = dqsRewrite(q, msg("France"));
    assert.deepEqual(r, {
      sql: `SELECT "name" FROM singer AS s WHERE country = 'France' OR s."France" = 1 OR "France".x = 2 OR 'it''s "France"' = 'France'`,
      literal: "France",
    });
    // quotes inside: "O""Neil" is O"Neil, and a ' in it is doubled in the literal
    // (SQLite names it unescaped, as better-sqlite3's engine prints it: `"O"Ne'il"`)
    assert.equal(dqsRewrite(`SELECT * FROM t WHERE a = "O""Ne'il"`, msg(`O"Ne'il`))?.sql, `SELECT * FROM t WHERE a = 'O"Ne''il'`);
    assert.equal(dqsRewrite(`SELECT "a""b"`, msg(`a"b`))?.sql, `SELECT 'a"b'`);
    assert.equal(dqsRewrite(`SELECT "a""""b"`, msg(`a""b`))?.sql, `SELECT 'a""b'`);
    // other errors, other quotes, a name no token has: no rewrite
    assert.equal(dqsRewrite(`SELECT nam FROM t`, "no such column: nam"), null);
    assert.equal(dqsRewrite("SELECT `France` FROM t", msg("France")), null);
    assert.equal(dqsRewrite(`SELECT "Paris" FROM t`, msg("France")), null);
    // PostgreSQL's wording
    assert.equal(dqsRewrite(`SELECT 1 FROM t WHERE c = "France"`, `column "France" does not exist`, "postgres")?.sql, `SELECT 1 FROM t WHERE c = 'France'`);
  });
  test("prepareWithDqs retries once per token and gives up on any other error", () => {
    const cols = new Set(["name", "country"]);
    const seen: string[] = [];
    const prepare = (s: string) => {
      seen.push(s);
      for (const t of tokenize(s)) if (t.kind === "quoted" && !cols.has(t.text)) throw new Error(msg(t.text));
      return s.length;
    };
    const r = prepareWithDqs(`SELECT "name" FROM t WHERE "country" = "France" AND x = "Paris"`, prepare);
    assert.deepEqual(r.literals, ["France", "Paris"]);
    assert.equal(r.sql, `SELECT "name" FROM t WHERE "country" = 'France' AND x = 'Paris'`);
    assert.equal(seen.length, 3);
    assert.throws(() => prepareWithDqs("SELECT 1", () => { throw new Error("no such table: t"); }), /no such table/);
    // one prepare per distinct literal, so at most MAX_DQS_LITERALS of them (3,000 cost 6.6 s of CPU)
    const many = `SELECT name FROM t WHERE x IN (${Array.from({ length: MAX_DQS_LITERALS + 8 }, (_, i) => `"v${i}"`).join(", ")})`;
    seen.length = 0;
    assert.throws(() => prepareWithDqs(many, prepare), /more than 32 double-quoted literals: write string literals in single quotes/);
    assert.equal(seen.length, MAX_DQS_LITERALS + 1);
  });
  test("a double-quoted literal with a doubled quote inside, as the engine itself names it", () => {
    const db = new Database(":memory:");
    db.exec("CREATE TABLE t (a)");
    const r = prepareWithDqs(`SELECT "a""b", "it's" FROM t`, (q) => db.prepare(q));
    assert.deepEqual(r.literals, ['a"b', "it's"]);
    assert.equal(r.sql, `SELECT 'a"b', 'it''s' FROM t`);
    db.close();
  });
  test("integers beyond 2^53 compare exactly, as Python compares int and float", async () => {
    const big = (s: string) => intCell(BigInt(s));
    assert.equal(typeof big("9007199254740991"), "number");
    assert.notEqual(cellKey(big("9223372036854775807")), cellKey(big("9223372036854775806")));
    assert.notEqual(cellKey(big("9007199254740993")), cellKey(9007199254740992));
    // 2^62 as an integer and as a real are one value; 2^63-1 is not the double 2^63
    assert.equal(cellKey(big("4611686018427387904")), cellKey(4611686018427387904));
    assert.notEqual(cellKey(big("9223372036854775807")), cellKey(2 ** 63));
    // never equal to text spelling the same digits
    assert.notEqual(cellKey(big("9223372036854775807")), cellKey("9223372036854775807"));
    assert.equal(await eq([[big("9223372036854775807"), 1]], [[1, big("9223372036854775807")]]), true);
    assert.equal(await eq([[big("9223372036854775807")]], [[big("9223372036854775806")]]), false);
    assert.equal(await eq([[big("-9223372036854775808")]], [[-(2 ** 63)]]), true);
  });
});

describe("extractSql", () => {
  test("the last ```sql block after </think>", () => {
    const r = "<think>```sql\nSELECT draft\n```</think>Here:\n```sql\nSELECT 1;\n```\nand\n```sql\nSELECT name FROM singer\n```\nDone.";
    assert.deepEqual(extractSql(r), { sql: "SELECT name FROM singer", source: "sql_block" });
  });
  test("a tagged block beats a later untagged one; untagged beats plain text", () => {
    assert.equal(extractSql("```sql\nSELECT 1\n```\n```\nnot sql\n```").sql, "SELECT 1");
    assert.deepEqual(extractSql("```\nSELECT 2\n```"), { sql: "SELECT 2", source: "code_block" });
    assert.deepEqual(extractSql("<think>hmm</think> SELECT 3 "), { sql: "SELECT 3", source: "text" });
    assert.equal(extractSql("```SQL\nSELECT 4").sql, "SELECT 4"); // unclosed fence runs to the end
  });
  test("1 MB of hostile fences and text: linear, well under 50 ms, and the SQL it yields is capped", () => {
    const hostile = "```sql\n" + "```".repeat(100_000) + "x".repeat(700_000) + "</think>".repeat(1000);
    extractSql(hostile.slice(-100_000)); // warm-up
    // the least of three runs, as for the lexer below: a GC pause on a loaded machine is not
    // the extractor's cost (once 64 ms against 9 ms alone); a quadratic scan takes seconds every time
    const ex = Math.min(...[0, 1, 2].map(() => cpuMs(() => {
      extractSql(hostile);
      extractSql("<think>" + "```sql\n(".repeat(100_000));
    })));
    assert.ok(ex < 50, `extraction took ${ex} ms of CPU`);
    // what reaches the lexer is at most MAX_SQL_CHARS (first a warm-up: a cold JIT is 10x slower)
    // each engine's dialect on its own, as the verifier calls it
    for (const dialect of ["sqlite", "postgres"] as const) {
      const hostile = [
        "SELECT " + "('".repeat(MAX_SQL_CHARS / 4) + "(".repeat(MAX_SQL_CHARS / 2),
        "SELECT " + "a,".repeat(MAX_SQL_CHARS / 2),
        "SELECT " + "$a$ ".repeat(MAX_SQL_CHARS / 8) + "E'\\".repeat(MAX_SQL_CHARS / 8) + "/*".repeat(MAX_SQL_CHARS / 4),
      ];
      for (const q of hostile) checkQuery(q.slice(0, 2_000), dialect);
      for (const [i, q] of hostile.entries()) {
        // the least of three runs: a GC pause on a loaded machine is not the lexer's cost; a quadratic lexer would take seconds every time
        const lex = Math.min(...[0, 1, 2].map(() => cpuMs(() => checkQuery(q, dialect))));
        assert.ok(lex < 50, `lexing hostile text ${i} (${dialect}) took ${lex} ms of CPU`);
      }
    }
  });
});

describe("lexer", () => {
  test("top-level ORDER BY only", () => {
    assert.equal(hasTopLevelOrderBy(tokenize("SELECT a FROM t ORDER BY a")), true);
    assert.equal(hasTopLevelOrderBy(tokenize("SELECT a FROM (SELECT a FROM t ORDER BY a LIMIT 3)")), false);
    assert.equal(hasTopLevelOrderBy(tokenize("SELECT 'order by' FROM t -- order by\n")), false);
    assert.equal(hasTopLevelOrderBy(tokenize('SELECT "order" FROM t /* ORDER BY */')), false);
  });
  test("a query wholly wrapped in parentheses has its top level inside them; a parenthesised branch of a UNION does not", () => {
    for (const q of ["(SELECT name FROM singer ORDER BY singer_id)", "((SELECT a FROM t ORDER BY a))", "( ( (SELECT a FROM t ORDER BY a LIMIT 2) ) )", "(SELECT a FROM t) ORDER BY a"]) {
      assert.equal(hasTopLevelOrderBy(tokenize(q, "postgres")), true, q);
    }
    for (const q of [
      "(SELECT a FROM t ORDER BY a) UNION (SELECT b FROM u)",
      "((SELECT a FROM t ORDER BY a) UNION (SELECT b FROM u))",
      "(SELECT a FROM (SELECT a FROM t ORDER BY a LIMIT 3) x)",
      "(SELECT a FROM t ORDER BY a LIMIT 1) UNION ALL SELECT b FROM u",
      "(SELECT a FROM t)",
      "(((",
    ]) {
      assert.equal(hasTopLevelOrderBy(tokenize(q, "postgres")), false, q);
    }
  });
  test("a NUL character is refused: SQLite's prepare would stop at it and run the text before it", () => {
    for (const d of ["sqlite", "postgres"] as const) {
      const r = checkQuery("SELECT name FROM t\u0000 WHERE 0", d);
      assert.equal(r.ok, false);
      assert.match(!r.ok ? r.reason : "", /NUL/);
      assert.equal(checkQuery("SELECT 'a\u0000b'", d).ok, false);
    }
  });
  test("refuses what a read-only scorer must not run", () => {
    const refused = [
      "DELETE FROM singer", "DROP TABLE singer", "UPDATE singer SET age = 1", "INSERT INTO singer VALUES (9)",
      "ATTACH DATABASE 'x.db' AS x", "PRAGMA query_only = 0", "SELECT 1; DROP TABLE singer", "SELECT load_extension('x')",
      "WITH d AS (DELETE FROM singer RETURNING *) SELECT * FROM d", "SELECT * INTO t2 FROM singer", "VACUUM INTO '/tmp/x'",
      "REPLACE INTO singer VALUES (1)", "SELECT pg_terminate_backend(1)", "SELECT set_config('a', 'b', false)",
      "SELECT * FROM singer FOR UPDATE", "SELECT randomblob(1000000000)", 'SELECT "zeroblob"(1000000000)', "SELECT length([RandomBlob](9))", "SELECT `zeroblob`(9)", "CREATE TABLE x (a)", "",
    ];
    for (const q of refused) assert.equal(checkQuery(q).ok, false, q);
  });
  test("PostgreSQL: a ';' hidden by a dollar quote, an E'' escape string or a nested comment is seen (issue 25)", () => {
    const hidden = [
      "SELECT $$'$$; COMMIT; SET search_path = pg_catalog; SELECT '$$'",
      "SELECT $t$'$t$; COMMIT; SET TimeZone = 'Asia/Tokyo'; SELECT '$t$'",
      "SELECT E'\\'' ; COMMIT; SET DateStyle = 'SQL, DMY'; SELECT ''",
      "SELECT e'\\'' ; COMMIT; SET statement_timeout = 0; SELECT pg_sleep(30) -- '",
      "SELECT 1 /* /* */ ' */ ; COMMIT; SET search_path TO pg_catalog; -- '",
      "SELECT $$'$$, set_config('statement_timeout', '0', true), '$$'",
      "SELECT $" + "a".repeat(70) + "$ ' $" + "a".repeat(70) + "$; COMMIT; -- '",
    ];
    for (const q of hidden) {
      assert.equal(checkQuery(q, "postgres").ok, false, q);
      assert.equal(checkQuery(q).ok, false, q); // engine unknown: both readings
    }
    // what PostgreSQL reads as one string stays one token
    const ok = checkQuery("SELECT $$ ; DROP $$, $x$ $$ ; $x$, E'a\\'; b', 'it''s' /* a /* nested */ ; */ FROM t", "postgres");
    assert.equal(ok.ok, true);
    assert.deepEqual(ok.ok && ok.tokens.filter((t) => t.kind === "string").map((t) => t.text), ["$$ ; DROP $$", "$x$ $$ ; $x$", "E'a\\'; b'", "'it''s'"]);
    // PostgreSQL array subscripts are not SQLite's [identifiers]
    assert.equal(checkQuery("SELECT a[1] FROM t", "postgres").ok, true);
  });
  test("accepts ordinary queries, with or without a trailing semicolon, keywords inside strings", () => {
    for (const q of ["SELECT 1;", "with x as (select 1) select * from x", "(SELECT 1) UNION (SELECT 2)", "SELECT 'DROP TABLE x; DELETE' AS s", 'SELECT "update" FROM t', "VALUES (1)"]) {
      assert.equal(checkQuery(q).ok, true, q);
    }
  });
});

describe("partial rewards (Reasoning-SQL)", () => {
  test("n-gram Jaccard", () => {
    assert.equal(ngramSimilarity("SELECT name FROM singer", "select NAME from singer", 2), 1);
    // bigrams {select name, name from, from singer} vs {select age, age from, from singer}: 1/5
    assert.equal(ngramSimilarity("SELECT name FROM singer", "SELECT age FROM singer", 2), 1 / 5);
  });
  test("schema linking Jaccard of tables and columns", async () => {
    const r = await schemaLinking("SELECT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id", "SELECT name FROM singer WHERE singer_id IN (SELECT singer_id FROM singer_in_concert)", "sqlite");
    assert.equal(r.score, 1);
    const w = await schemaLinking("SELECT age FROM singer", "SELECT name FROM singer", "sqlite");
    assert.equal(w.score, 1 / 3); // {table:singer} shared of {table:singer, column:age, column:name}
    assert.equal((await schemaLinking("SELEC nonsense (", "SELECT name FROM singer", "sqlite")).score, 0);
    assert.equal(jaccard(new Set(), new Set()), 1);
  });
  test("the parser runs in its own process: a text that takes it seconds, or kills it, is 0 for that query alone and the event loop is not held", async () => {
    const parser = new ParseProcess();
    try {
      // unclosed nesting: 58 characters made V8 abort the server ("invalid size error");
      // refused by the lexer's pairing check without reaching the parser
      const crash = "```sql\nSELECT CAST(CAST(CAST(CAST(CAST(CAST(CAST(CAST(CAST(CAST(1\n```".replace(/```(sql)?\n?/g, "");
      assert.match(unparsable(crash, "sqlite") ?? "", /parentheses do not pair up/);
      assert.equal(unparsable("SELECT (a) FROM t WHERE b IN (SELECT c FROM u) AND d = ')'", "sqlite"), null);
      assert.match(unparsable("SELECT a) FROM (t", "sqlite") ?? "", /pair up/);
      const r = await schemaLinking(crash, "SELECT a FROM t", "sqlite", parser);
      assert.equal(r.score, 0);
      // closed, but CAST without AS eight deep: ~6 s in the parser; stopped at the budget, on
      // the parse process's time, while this thread keeps turning
      let maxGap = 0, last = performance.now();
      const tick = setInterval(() => { const now = performance.now(); maxGap = Math.max(maxGap, now - last); last = now; }, 5);
      const t0 = performance.now();
      // (CAST without AS is now refused by the lexer at once; a simple CASE on a CASE, thirteen
      // deep, is valid SQL the parser still takes seconds on)
      assert.match(unparsable("SELECT " + "CAST(".repeat(8) + "1" + ")".repeat(8) + " FROM t", "sqlite") ?? "", /CAST without AS/);
      const slow = await schemaLinking("SELECT " + "CASE (".repeat(13) + "1" + ") WHEN 1 THEN 1 END".repeat(13) + " FROM t", "SELECT a FROM t", "sqlite", parser);
      clearInterval(tick);
      assert.deepEqual(slow, { score: 0, note: `the SQL parser ran past ${PARSE_BUDGET_MS} ms of CPU time on this query` });
      assert.ok(performance.now() - t0 < 20_000, "stopped long before the parser would have finished");
      assert.ok(maxGap < 200, `event loop held ${maxGap.toFixed(0)} ms`);
      assert.equal(parser.killed, 1);
      // the next query gets a new process
      assert.equal((await schemaLinking("SELECT a FROM t", "SELECT a FROM t", "sqlite", parser)).score, 1);
      // a process that dies under a query fails that query alone
      const dying = parser.items("SELECT " + "CAST(".repeat(8) + "1" + ")".repeat(8) + " FROM u", "sqlite");
      await new Promise((res) => setTimeout(res, 50));
      process.kill(parser.pid!, "SIGKILL");
      assert.deepEqual(await dying, { unreadable: "the SQL parser's process died reading this query", stopped: true });
      assert.equal(parser.died, 1);
      assert.equal((await schemaLinking("SELECT b FROM t", "SELECT a, b FROM t", "sqlite", parser)).score, 2 / 3);
    } finally {
      parser.close();
    }
  });
});

describe("the columns in their own order are tried first (issue 35: per-pair cost on the server)", () => {
  test("a right answer with the gold's column order costs one hashed pass, not the column pairing: under 1/5 of the same rows with columns permuted", async () => {
    // 4,096 rows of 8 columns of 0/1 values, each column half ones: the pairing needs rounds of
    // refinement to tell them apart
    let seed = 11;
    const bit = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) >> 16) & 1;
    const gold = Array.from({ length: 4096 }, () => Array.from({ length: 8 }, bit));
    const shuffled = gold.map((r, i) => gold[(i * 1031) % 4096]); // same rows, another order (1031 is odd: a bijection)
    const P = [3, 0, 7, 1, 6, 2, 5, 4];
    const permuted = shuffled.map((r) => P.map((c) => r[c]));
    const best = async (f: () => Promise<Comparison>) => {
      let ms = Infinity;
      let out: Comparison | undefined;
      for (let i = 0; i < 5; i++) {
        const c0 = process.cpuUsage();
        out = await f();
        const c = process.cpuUsage(c0);
        ms = Math.min(ms, (c.user + c.system) / 1000);
      }
      return { out: out!, ms };
    };
    const same = await best(() => compareResults(gold, shuffled, spider));
    const other = await best(() => compareResults(gold, permuted, spider));
    assert.equal(same.out.match, true, same.out.reason);
    assert.equal(same.out.permutation, undefined); // its own order
    assert.equal(other.out.match, true, other.out.reason);
    assert.ok(same.ms * 5 < other.ms, `own order ${same.ms.toFixed(1)} ms of CPU, permuted ${other.ms.toFixed(1)} ms`);
    // ordered and strict comparisons take the same pass
    assert.equal((await compareResults(gold, gold.map((r) => [...r]), { ...spider, ordered: true })).match, true);
    assert.equal((await compareResults(gold, shuffled, { ...spider, columnOrder: "strict" })).match, true);
    assert.equal((await compareResults(gold, permuted, { ...spider, columnOrder: "strict" })).match, false);
  });
});

describe("result digests (issue 35: a model result equal to the gold's comes back without its rows)", () => {
  const rules: CompareOptions[] = [
    spider,
    bird,
    { ...spider, ordered: true },
    { ...spider, floatDigits: 12 },
    { ...bird, rows: "bag", columnOrder: "any" },
    { rows: "set", ordered: true, columnOrder: "any", floatDigits: 3 },
  ];
  test("two results have the same digest exactly when the exact comparison (no float tolerance) matches them in the gold's column order; then the comparison under the rule matches them too, and digestMatch gives its verdict", () => {
    let seed = 5;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) >> 8) % n;
    // values the rules tell apart or not: 1 and 1.0, '1' and 1, floats equal to 3 or 12 digits, NULL, big integers, blobs
    const values: Cell[] = [1, 1.0, "1", 2, 0.1 + 0.2, 0.3, 0.30000001, null, "", "a", intCell(2n ** 63n - 1n), intCell(2n ** 63n - 2n), 2 ** 63, "\u0000blob:00"];
    const table = () => {
      const ncols = 1 + rnd(2);
      return Array.from({ length: rnd(5) }, () => Array.from({ length: ncols }, () => values[rnd(values.length)]));
    };
    /** Another result near `rows`: rows shuffled, duplicated or dropped, a value changed, columns swapped. */
    const near = (rows: Cell[][]): Cell[][] => {
      let out = rows.map((r) => [...r]);
      switch (rnd(6)) {
        case 0: out.reverse(); break;
        case 1: if (out.length) out.push([...out[rnd(out.length)]]); break;
        case 2: if (out.length) out.splice(rnd(out.length), 1); break;
        case 3: if (out.length) out[rnd(out.length)][0] = values[rnd(values.length)]; break;
        case 4: out = out.map((r) => [...r].reverse()); break;
        case 5: break;
      }
      return out;
    };
    let same = 0;
    let differ = 0;
    for (let i = 0; i < 3_000; i++) {
      const gold = table();
      const pred = near(gold);
      for (const o of rules) {
        const full = compareResultsSync(gold, pred, o);
        const exact = compareResultsSync(gold, pred, { ...o, floatDigits: 0 });
        const ownOrder = exact.match && exact.permutation === undefined;
        const equal = goldDigest(gold, o) === resultDigest(pred, digestRule(o));
        assert.equal(equal, ownOrder, `${JSON.stringify(o)}\ngold ${JSON.stringify(gold)}\npred ${JSON.stringify(pred)}: ${exact.reason}`);
        if (equal) {
          assert.ok(full.match && full.permutation === undefined, full.reason);
          assert.deepEqual(digestMatch(gold.length, pred.length, o), { match: full.match, reason: full.reason });
          same++;
        } else differ++;
      }
    }
    assert.ok(same > 1_000 && differ > 1_000, `${same} equal, ${differ} different`);
  });
  test("two empty results have the same digest whatever their columns; the rule is part of the digest", () => {
    assert.equal(resultDigest([], digestRule(spider)), resultDigest([], digestRule(spider)));
    assert.equal(digestMatch(0, 0, spider).reason, compareResultsSync([], [], spider).reason);
    assert.notEqual(resultDigest([[1]], digestRule(spider)), resultDigest([[1]], digestRule(bird)));
    // a cell's text cannot pose as two cells (length-prefixed keys)
    assert.notEqual(resultDigest([["a", "b"]], digestRule(spider)), resultDigest([["1:sa1:sb"]], digestRule(spider)));
  });
  test("the digest is SHA-256 over the same bytes as one hash update a row key (hashed in one call since issue 35), lone surrogates included", () => {
    // the form before: the header, then each sorted key length-prefixed, one update each
    const incremental = (rows: Cell[][], o: CompareOptions) => {
      const r = digestRule(o);
      let keys = rows.map((row) => row.map((c) => cellKey(c)).map((k) => `${k.length}:${k}`).join(""));
      if (!r.ordered) {
        keys.sort();
        if (r.rows === "set") keys = keys.filter((k, i) => i === 0 || k !== keys[i - 1]);
      }
      const h = createHash("sha256");
      h.update(`${r.ordered ? "ordered" : r.rows} ${keys.length}\n`);
      for (const k of keys) h.update(`${k.length}:${k}`);
      return h.digest("base64");
    };
    const results: Cell[][][] = [
      [],
      [[1, "a"], [2, null], [1, "a"]],
      [["\ud800"], ["\udc00"], ["x\ud83d"], ["\ude00y"], ["é€😀"]],
      [[intCell(2n ** 63n - 1n), 0.1 + 0.2, "\u0000blob:ff"]],
    ];
    for (const rows of results) for (const o of rules) assert.equal(resultDigest(rows, digestRule(o)), incremental(rows, o), JSON.stringify(rows));
  });
});
