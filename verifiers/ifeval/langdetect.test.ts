/**
 * The langdetect port against Python langdetect itself (DetectorFactory.seed = 0) on hand-written
 * texts: langdetect-cases.json, written once by langdetect_cases.py (pinned commit and Python
 * version inside it).
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { IntTable, langdetect, langdetectLanguages, PyRandom } from "./langdetect.js";
import { isLanguage, knownLanguage, supportedLanguages } from "./language.js";

/** The parity test's responses too (parity-cases.json): a second set of texts for the early stop. */
const parityTexts = [...new Set((JSON.parse(readFileSync(new URL("./parity-cases.json", import.meta.url), "utf8")) as { cases: { response: string }[] }).cases.map((c) => c.response))];
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
  test("stopping once the answer is settled gives the answer of all 7 trials, in fewer", () => {
    const texts = [...fixture.cases.map(([t]) => t), ...parityTexts];
    let saved = 0;
    for (const t of texts) {
      const early = { trials: 0 };
      const all = { trials: 0, all: true };
      assert.equal(langdetect(t, 0, early), langdetect(t, 0, all), t);
      assert.ok(early.trials <= all.trials);
      if (early.trials < all.trials) saved++;
    }
    // a clear English paragraph needs 4 trials of 7; the mixed and short texts may need all 7
    const s = { trials: 0 };
    assert.equal(langdetect("The weather today is lovely and I think we should go for a walk in the park before it rains.", 0, s), "en");
    assert.equal(s.trials, 4);
    assert.ok(saved > texts.length / 2, `${saved} of ${texts.length} texts stopped early`);
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

describe("IntTable (the n-gram scan's lookups)", () => {
  test("answers as a Map does, through growth, and refuses what it cannot hold", () => {
    const t = new IntTable(2);
    const m = new Map<number, number>();
    let x = 12345;
    for (let i = 0; i < 5000; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 1;
      const k = i % 3 === 0 ? i : x % 50_000_000;
      t.set(k, i);
      m.set(k, i);
    }
    assert.equal(t.size, m.size);
    for (const [k, v] of m) assert.equal(t.get(k), v);
    for (const k of [1, 7, 2 ** 31 - 1, 49_999_999]) if (!m.has(k)) assert.equal(t.get(k), -1);
    assert.throws(() => t.set(2 ** 31, 1), RangeError);
    assert.throws(() => t.set(-1, 1), RangeError);
  });
});
