/**
 * The NLTK ports against NLTK itself: Punkt sentence counts (PunktSentenceTokenizer run with the
 * same parameters: the default ones, punkt-pd/english with ENGLISH_ABBREVIATIONS) and the all-capitals token counts of nltk.word_tokenize.
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { countPunktSentences, ENGLISH } from "./punkt.js";
import { capitalTokensUpTo, nltkWordTokenize, pyIsUpper } from "./text.js";

/** Written by punkt_cases.py: [text, len(PunktSentenceTokenizer(params).tokenize(text))]. */
const fixture = JSON.parse(readFileSync(new URL("./punkt-cases.json", import.meta.url), "utf8")) as { nltk: string; cases: [string, number][] };

describe(`Punkt port vs NLTK ${fixture.nltk}`, () => {
  test(`all ${fixture.cases.length} texts get NLTK's sentence count`, () => {
    const wrong = fixture.cases.filter(([t, n]) => countPunktSentences(t) !== n);
    assert.deepEqual(wrong.slice(0, 5).map(([t, n]) => [t, n, countPunktSentences(t)]), []);
  });
  test("NLTK's decisions on familiar cases", () => {
    const want = Object.fromEntries(fixture.cases.slice(0, 27));
    assert.equal(want["Yes. I agree."], 2);
    assert.equal(want["Dr. Smith arrived at 3 p.m. He was late."], 2);
    // Two with these parameters, one with NLTK's trained model (the initial heuristic reads the
    // trained model's orthographic context of "k" and "rowling": punkt-model.test.ts lists the gap).
    assert.equal(want["J. K. Rowling wrote it."], 2);
    assert.equal(want["Wait... what?"], 1);
    assert.equal(want["Wait... What?"], 1); // as with the trained model (the old defaults said 2)
    assert.equal(want["e.g. this one. And that."], 3); // e.g. is no abbreviation to the trained model either
    for (const t of Object.keys(want)) assert.equal(countPunktSentences(t), want[t], t);
  });
  test("a limit stops counting without changing the answer below it", () => {
    for (const [t, n] of fixture.cases.slice(0, 300)) {
      for (const limit of [1, 2, 3, 5]) assert.equal(countPunktSentences(t, ENGLISH, limit), Math.min(n, limit), `${JSON.stringify(t)} limit ${limit}`);
    }
  });
});

/** Written by capital_cases.py: [text, number of word_tokenize tokens that are isupper()]. */
const capitals = JSON.parse(readFileSync(new URL("./capital-cases.json", import.meta.url), "utf8")) as { nltk: string; cases: [string, number][] };

describe(`nltk.word_tokenize port vs NLTK ${capitals.nltk}`, () => {
  test(`all ${capitals.cases.length} texts get NLTK's count of all-capital tokens`, () => {
    const count = (t: string) => nltkWordTokenize(t).filter(pyIsUpper).length;
    const wrong = capitals.cases.filter(([t, n]) => count(t) !== n);
    assert.deepEqual(wrong.slice(0, 5).map(([t, n]) => [t, n, count(t)]), []);
  });
  test("capitalTokensUpTo(text, k) is below k exactly when the count is", () => {
    for (const [t, n] of capitals.cases) {
      for (const k of [1, 2, 3, 6]) assert.equal(capitalTokensUpTo(t, k) < k, n < k, `${JSON.stringify(t)} k=${k}`);
    }
  });
});
