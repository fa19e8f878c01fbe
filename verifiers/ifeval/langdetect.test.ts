/**
 * The langdetect port against Python langdetect itself (DetectorFactory.seed = 0) on hand-written
 * texts: langdetect-cases.json, written once by langdetect_cases.py (pinned commit and Python
 * version inside it).
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { langdetect, langdetectLanguages, PyRandom } from "./langdetect.js";
import { isLanguage, knownLanguage, supportedLanguages } from "./language.js";

const fixture = JSON.parse(readFileSync(new URL("./langdetect-cases.json", import.meta.url), "utf8")) as {
  langdetect: string;
  python: string;
  langlist: string[];
  cases: [string, string | null][];
};

describe(`langdetect port vs ${fixture.langdetect} (Python ${fixture.python}, seed 0)`, () => {
  test(`all ${fixture.cases.length} texts get langdetect's answer`, () => {
    const wrong = fixture.cases.filter(([t, want]) => langdetect(t) !== want).map(([t, want]) => [t, want, langdetect(t)]);
    assert.deepEqual(wrong.slice(0, 10), [], `${wrong.length} differ`);
  });
  test("the issue's cases: what langdetect says is what counts", () => {
    const want = Object.fromEntries(fixture.cases);
    assert.equal(want["YES"], "cy"); // IFEval's change_case:english_capital fails "YES"
    assert.equal(want["JOHN, MARY, PETER"], "id");
    assert.equal(want["HELLO WORLD"], "so");
    assert.equal(want["12345"], null); // LangDetectException: IFEval counts it as followed
    assert.equal(isLanguage("YES", "en"), false);
    assert.equal(isLanguage("HELLO WORLD", "en"), false);
    assert.equal(isLanguage("12345", "en"), null);
    assert.equal(isLanguage(fixture.cases.find(([t]) => t.startsWith("The weather today"))![0], "en"), true);
  });
  test("the 55 profiles, and only their codes are known", () => {
    assert.deepEqual(langdetectLanguages(), [...fixture.langlist].sort());
    assert.deepEqual(supportedLanguages(), [...fixture.langlist].sort());
    assert.ok(knownLanguage("zh-cn") && knownLanguage("sw") && !knownLanguage("zh") && !knownLanguage("xx"));
  });
});

describe("Python's random.Random(0)", () => {
  test("random(), getrandbits-based choice and gauss match CPython", () => {
    const r = new PyRandom();
    r.seed(0);
    // python3 -c 'import random; r=random.Random(0); print(r.random(), r.random(), r._randbelow(100), r._randbelow(7), r.gauss(0,1), r.gauss(0,1))'
    assert.equal(r.random(), 0.8444218515250481);
    assert.equal(r.random(), 0.7579544029403025);
    assert.equal(r.randbelow(100), 53);
    assert.equal(r.randbelow(7), 0);
    assert.equal(r.gauss(0, 1), -0.06700651572905797);
    assert.equal(r.gauss(0, 1), 1.1947466787499987);
  });
});

describe("bounded work on hostile input", () => {
  test("64 KB of letters, of @, of URLs: each well under a second of CPU", () => {
    const inputs = ["a".repeat(65_536), "@".repeat(65_536), "a@".repeat(32_768), "http://x".repeat(8192), "ab ".repeat(21_845), "\u0300".repeat(65_536)];
    langdetect("warm up");
    for (const t of inputs) {
      const c0 = process.cpuUsage();
      langdetect(t);
      const c = process.cpuUsage(c0);
      assert.ok((c.user + c.system) / 1000 < 1000, `${JSON.stringify(t.slice(0, 10))}: ${(c.user + c.system) / 1000} ms CPU`);
    }
  });
});
