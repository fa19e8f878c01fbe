/**
 * A mistake that affects every item is an error the caller sees (issue 26): a misspelt verifier
 * on the drop-in routes, in `assay score` and in a batch job; a misspelt ASSAY_* variable; a test
 * filter that matches nothing. Each answer names what was probably meant.
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import request from "supertest";
import { testApp } from "./helpers.js";
import { loadConfig, NOT_SETTINGS, settingsList } from "../src/core/config.js";
import { editDistance, nearest } from "../src/core/nearest.js";
import { formatSeconds } from "../src/cli/format.js";
import { createRequire } from "node:module";
import { tempDir } from "./scratch.js";

/** cli-progress's own duration formatter, which the bars no longer use. */
const formatTime = createRequire(import.meta.url)("cli-progress/lib/format-time.js") as (t: number, o: { autopaddingChar: string }, round: number) => string;

const run = promisify(execFile);
const root = new URL("..", import.meta.url).pathname;
const cli = (args: string[], env: Record<string, string> = {}) =>
  run(process.execPath, ["--import", "tsx", join(root, "src/cli/main.ts"), ...args], { cwd: root, env: { ...process.env, ASSAY_LOG_LEVEL: "silent", ASSAY_SANDBOX: "none", ...env } });
const failure = (e: unknown) => e as { code?: number; stderr?: string };

describe("nearest names", () => {
  test("edit distance and the nearest candidate, only when near enough", () => {
    assert.equal(editDistance("mathh", "math"), 1);
    assert.equal(editDistance("kitten", "sitting"), 3);
    assert.equal(editDistance("exatc", "exact"), 1, "a swap is one edit");
    assert.equal(nearest("mathh", ["code", "math", "exact"]), "math");
    assert.equal(nearest("ASSAY_WORKRS", ["ASSAY_PORT", "ASSAY_WORKERS"]), "ASSAY_WORKERS");
    assert.equal(nearest("Exact", ["exact"]), "exact", "case-insensitive");
    assert.equal(nearest("zzzzzz", ["math", "code"]), undefined, "nothing near: no guess");
    const t0 = performance.now();
    nearest("x".repeat(1_000_000), ["math", "code", "exact"]);
    assert.ok(performance.now() - t0 < 500, "a huge name is cut before comparing");
  });
});

describe("a misspelt verifier on the drop-in routes is a 400 naming the nearest one", () => {
  test("/get_reward?verifier=mathh is 400 (OpenRLHF's client raises on it), never 200 with zeros", async () => {
    const { app } = await testApp();
    const body = { query: ["Q 4"], prompts: ["Q "], labels: ["4"] };
    const res = await request(app).post("/get_reward?verifier=mathh").send(body).expect(400);
    assert.equal(res.body.field, "verifier");
    assert.match(res.body.error, /unknown verifier "mathh"; did you mean math\?/);
    assert.equal(res.body.rewards, undefined);
    // A label naming a verifier that does not exist is the same mistake, in the dataset.
    const label = await request(app).post("/get_reward").send({ ...body, labels: [JSON.stringify({ verifier: "exatc", reference: "4" })] }).expect(400);
    assert.equal(label.body.field, "labels");
    assert.match(label.body.error, /label 0: unknown verifier "exatc"; did you mean exact\?/);
    // The right name still scores.
    assert.deepEqual((await request(app).post("/get_reward?verifier=exact").send(body).expect(200)).body.rewards, [1]);
  });

  test("/get_reward: a misspelt label key or option is 400 naming it, never 200 with zeros or defaults", async () => {
    const { app } = await testApp();
    const body = (label: unknown) => ({ query: ["Q Paris"], prompts: ["Q "], labels: [JSON.stringify(label)] });
    const refused: Array<[string, unknown, RegExp]> = [
      // read as a reference string, it scored every answer 0
      ["?verifier=exact", { referense: "paris" }, /label 0: key "referense"; did you mean reference\?/],
      // an option that does not exist made every item invalid: null_reward 0, said only in extra_logs
      ["", { verifier: "exact", reference: "Paris", options: { case_sensitve: true } }, /label 0: .*case_sensitve/],
      // a misspelt `options` was dropped: the defaults scored it (1 where case_sensitive meant 0)
      ["", { verifier: "exact", reference: "paris", option: { case_sensitive: true } }, /label 0: unknown key "option"; did you mean options\?/],
    ];
    for (const [query, label, says] of refused) {
      const res = await request(app).post(`/get_reward${query}`).send(body(label)).expect(400);
      assert.equal(res.body.field, "labels");
      assert.match(res.body.error, says);
    }
    // Right labels still score, and a reference object for ?verifier= is not a label's keys.
    assert.deepEqual((await request(app).post("/get_reward").send(body({ verifier: "exact", reference: "paris", options: { case_sensitive: true } })).expect(200)).body.rewards, [0]);
    assert.deepEqual((await request(app).post("/get_reward?verifier=exact").send(body({ reference: "Paris" })).expect(200)).body.rewards, [1]);
  });

  test("an option named __proto__ is an unknown option, not the options' prototype", async () => {
    const { app } = await testApp();
    const res = await request(app).post("/reward").send({ verifier: "exact", response: "A", reference: "a", options: JSON.parse('{"__proto__": {"case_sensitive": true}}') }).expect(400);
    assert.match(res.body.error, /__proto__/);
  });

  test("NeMo-Gym /verify with a misspelt verifier is 400, not a masked sample", async () => {
    const { app } = await testApp();
    const response = { output: [{ type: "message", content: [{ type: "output_text", text: "4" }] }] };
    const res = await request(app).post("/verify").send({ responses_create_params: { input: "2+2?" }, response, verifier: "exactt", reference: "4" }).expect(400);
    assert.match(res.body.error, /did you mean exact\?/);
    assert.equal((await request(app).post("/verify").send({ responses_create_params: { input: "2+2?" }, response, verifier: "exact", reference: "4" }).expect(200)).body.reward, 1);
  });

  test("POST /jobs?verifier=mathh is 400 before anything is stored; /reward's invalid reason suggests too", async () => {
    const { app } = await testApp();
    const res = await request(app).post("/jobs?verifier=mathh").set("content-type", "application/x-ndjson").send('{"response":"4","reference":"4"}\n').expect(400);
    assert.match(res.body.error, /did you mean math\?/);
    const item = await request(app).post("/reward").send({ verifier: "mathh", response: "4", reference: "4" }).expect(400);
    assert.match(item.body.error, /unknown verifier "mathh"; did you mean math\?/);
  });
});

describe("assay score: a mistake on every line is a failure", () => {
  test("a misspelt --verifier exits non-zero before scoring, naming the nearest verifier", async () => {
    const dir = tempDir("assay-silent-");
    writeFileSync(join(dir, "in.jsonl"), '{"response":"4","reference":"4"}\n');
    await assert.rejects(cli(["score", join(dir, "in.jsonl"), "-o", join(dir, "out.jsonl"), "--verifier", "mathh"]), (e) => {
      assert.notEqual(failure(e).code, 0);
      assert.match(failure(e).stderr ?? "", /--verifier: unknown verifier "mathh"; did you mean math\?/);
      return true;
    });
  });

  test("every line invalid exits non-zero and names the invalid lines on stderr; some invalid lines do not", async () => {
    const dir = tempDir("assay-silent-");
    const input = join(dir, "in.jsonl");
    writeFileSync(input, Array.from({ length: 12 }, (_, i) => JSON.stringify({ id: i, verifier: "exatc", response: "a", reference: "a" })).join("\n") + "\n");
    await assert.rejects(cli(["score", input, "-o", join(dir, "out.jsonl")]), (e) => {
      const err = failure(e).stderr ?? "";
      assert.equal(failure(e).code, 1);
      assert.match(err, /invalid: line 1: unknown verifier "exatc"; did you mean exact\?/);
      assert.match(err, /and 7 more/);
      assert.match(err, /every line was invalid/);
      return true;
    });
    writeFileSync(input, '{"verifier":"exact","response":"a","reference":"a"}\n{"verifier":"exatc","response":"a"}\n');
    const { stderr } = await cli(["score", input, "-o", join(dir, "out.jsonl")]);
    assert.match(stderr, /invalid: line 2: unknown verifier/);
    assert.match(stderr, /1 ok, 0 error, 1 invalid/);
  });

  test("output line N is input line N: a blank line is an invalid result in its place; blank lines at the end are no items", async () => {
    const dir = tempDir("assay-silent-");
    const input = join(dir, "in.jsonl");
    const item = (id: number) => JSON.stringify({ id, verifier: "exact", response: "a", reference: "a" });
    writeFileSync(input, [item(1), "", "  ", item(4), "", ""].join("\n") + "\n");
    const out = join(dir, "out.jsonl");
    await cli(["score", input, "-o", out]);
    const results = readFileSync(out, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(results.map((r) => r.status), ["ok", "invalid", "invalid", "ok"]);
    assert.match(results[1].reason, /line 2 is blank/);
    assert.equal(results[3].id, 4);
  });

  test("a missing output folder or input file is a one-line error, not a stack trace", async () => {
    const dir = tempDir("assay-silent-");
    writeFileSync(join(dir, "in.jsonl"), '{"verifier":"exact","response":"a","reference":"a"}\n');
    await assert.rejects(cli(["score", join(dir, "in.jsonl"), "-o", join(dir, "no/such/dir/out.jsonl")]), (e) => {
      const err = failure(e).stderr ?? "";
      assert.match(err, /output's folder .*no\/such\/dir does not exist; create it/);
      assert.doesNotMatch(err, /\n\s+at /, "no stack trace");
      return true;
    });
    await assert.rejects(cli(["score", join(dir, "missing.jsonl"), "-o", join(dir, "out.jsonl")]), /missing\.jsonl does not exist/);
  });

  test("the ETA never reads 3m60s (cli-progress's own formatter does, so neither bar uses it)", () => {
    assert.equal(formatTime(239, { autopaddingChar: "0" }, 5), "03m60s", "the formatter this replaces");
    assert.equal(formatSeconds(239.6), "4m00s");
    assert.equal(formatSeconds(59.6), "1m00s");
    assert.equal(formatSeconds(3599.7), "1h00m");
    assert.equal(formatSeconds(125), "2m05s");
    assert.equal(formatSeconds(7), "7s");
    assert.equal(formatSeconds("INF"), "-");
  });
});

describe("a misspelt ASSAY_* variable stops start-up", () => {
  test("loadConfig names it and the nearest setting; every other variable of the project is accepted", () => {
    assert.throws(() => loadConfig({ ASSAY_WORKRS: "2" }), /ASSAY_WORKRS is not a setting; did you mean ASSAY_WORKERS\?/);
    assert.throws(() => loadConfig({ ASSAY_NOTHING_LIKE_IT: "1" }), /ASSAY_NOTHING_LIKE_IT is not a setting; `npx assay config` lists every setting/);
    const all = Object.fromEntries([...settingsList().map((s) => s.env), ...Object.keys(NOT_SETTINGS)].map((k) => [k, ""]));
    assert.doesNotThrow(() => loadConfig({ ...all, NOT_OURS_WORKRS: "x" }));
    for (const k of Object.keys(NOT_SETTINGS)) assert.ok(!settingsList().some((s) => s.env === k), `${k} is both a setting and not one`);
  });

  test("ASSAY_WORKRS=2 assay serve exits non-zero naming ASSAY_WORKERS", async () => {
    await assert.rejects(cli(["serve", "--port", "0"], { ASSAY_WORKRS: "2" }), (e) => {
      assert.equal(failure(e).code, 1);
      assert.match(failure(e).stderr ?? "", /ASSAY_WORKRS is not a setting; did you mean ASSAY_WORKERS\?/);
      return true;
    });
  });

  test("every ASSAY_* name the project's scripts, tests, CI and clients use is a setting or listed as not one", () => {
    const text = execFileSync("git", ["grep", "-h", "-o", "-E", "ASSAY_[A-Z0-9_]*[A-Z0-9]", "--", "scripts", "tests", ".ci", "clients/python", "bench", "src", "sandbox", "verifiers", "Dockerfile", "deploy"], { cwd: root, encoding: "utf8" });
    const used = new Set(text.split("\n").filter(Boolean));
    const known = new Set([...settingsList().map((s) => s.env), ...Object.keys(NOT_SETTINGS)]);
    // Names in prose (a prefix such as ASSAY_JUDGE_*) and this test's own misspellings are not variables.
    const prose = new Set(["ASSAY_JUDGE", "ASSAY_SESSION", "ASSAY_WORKRS", "ASSAY_NOTHING_LIKE_IT"]);
    const missing = [...used].filter((n) => !known.has(n) && !prose.has(n));
    assert.deepEqual(missing, [], "declare these in src/core/config.ts (SETTINGS, or NOT_SETTINGS with where they are read)");
  });
});

describe("npm test -- FILTER", () => {
  test("a filter that matches no test file fails, saying where test files are", async () => {
    await assert.rejects(run(process.execPath, [join(root, "scripts/run-tests.mjs"), "no-such-test-file-anywhere"], { cwd: root }), (e) => {
      assert.equal(failure(e).code, 1);
      assert.match(failure(e).stderr ?? "", /no test file's path contains "no-such-test-file-anywhere"/);
      return true;
    });
  });
  test("ASSAY_TEST_CONCURRENCY that is not a whole number of files fails before any test runs", async () => {
    for (const value of ["two", "0", "1.5"]) {
      await assert.rejects(run(process.execPath, [join(root, "scripts/run-tests.mjs"), "verifiers/math/options"], { cwd: root, env: { ...process.env, ASSAY_TEST_CONCURRENCY: value } }), (e) => {
        assert.equal(failure(e).code, 1, value);
        assert.match(failure(e).stderr ?? "", new RegExp(`ASSAY_TEST_CONCURRENCY=${value.replace(".", "\\.")}: not a whole number`));
        return true;
      });
    }
  });
});
