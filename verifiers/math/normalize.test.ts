/** normalizeLatex's shortcut for plain numbers gives what its rules give. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { normalizeByRules, normalizeLatex, PLAIN_NUMBER } from "./normalize.js";
import { mulberry32 } from "./compare.js";

const rnd = mulberry32(20261127);
const pick = (s: string) => s[Math.floor(rnd() * s.length)]!;
const digits = (n: number) => Array.from({ length: n }, () => pick("0123456789")).join("");

test("every plain number is one the rules leave as it is", () => {
  let n = 0;
  for (let i = 0; i < 20_000; i++) {
    const int = digits(1 + Math.floor(rnd() * 12));
    const r = rnd();
    const s = (rnd() < 0.3 ? "-" : "") + (r < 0.4 ? int : r < 0.8 ? `${int}.${digits(1 + Math.floor(rnd() * 6))}` : `.${digits(1 + Math.floor(rnd() * 6))}`);
    assert.ok(PLAIN_NUMBER.test(s), s);
    for (const plain of [true, false]) for (const comma of [true, false]) {
      assert.equal(normalizeByRules(s, plain, comma), s, `${s} plain=${plain} decimalComma=${comma}`);
      n++;
    }
  }
  assert.equal(n, 80_000);
});

test("near-numbers (commas, spaces, dots, signs, units, letters) are normalised by the rules as before", () => {
  const alphabet = "0123456789,. -+%$\\{}ecdgthrsnd";
  let plainOnes = 0;
  for (let i = 0; i < 20_000; i++) {
    const s = Array.from({ length: 1 + Math.floor(rnd() * 10) }, () => (rnd() < 0.6 ? pick("0123456789") : pick(alphabet))).join("");
    if (PLAIN_NUMBER.test(s)) plainOnes++;
    for (const plain of [true, false]) for (const comma of [true, false]) assert.equal(normalizeLatex(s, plain, comma), normalizeByRules(s, plain, comma), JSON.stringify(s));
  }
  assert.ok(plainOnes > 100, `the sample holds plain numbers too (${plainOnes})`);
});

test("a plain number costs well under the rules' time", () => {
  const time = (f: () => void) => {
    for (let i = 0; i < 2000; i++) f();
    const t0 = performance.now();
    for (let i = 0; i < 10_000; i++) f();
    return ((performance.now() - t0) * 1000) / 10_000;
  };
  const rules = time(() => normalizeByRules("263", true));
  const quick = time(() => normalizeLatex("263", true));
  assert.ok(quick * 5 < rules, `shortcut ${quick.toFixed(2)} µs, rules ${rules.toFixed(2)} µs`);
});
