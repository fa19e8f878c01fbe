/** Output comparison: integers exactly, tolerance only for numbers with a fraction or exponent. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { exactJson, isSetResult, outputsMatch, stringifyExact, valuesMatch } from "./compare.js";

test("integers compare exactly in float mode: no tolerance turns 1000000000 into 1000000007", () => {
  assert.equal(outputsMatch("1000000000\n", "1000000007\n", "float"), false);
  assert.equal(outputsMatch("1000000007\n", "1000000007\n", "float"), true);
  assert.equal(outputsMatch("+5", "5", "float"), true, "the same integer written differently");
  assert.equal(outputsMatch("12345678901234567890", "12345678901234567891", "float"), false, "beyond 2^53");
  assert.equal(outputsMatch("12345678901234567890", "12345678901234567890", "float"), true);
  // written as a float, an answer to an integer is still that integer or not: no tolerance
  assert.equal(outputsMatch("1000000000.0\n", "1000000007\n", "float"), false);
  assert.equal(outputsMatch("1e9", "1000000007", "float"), false);
  assert.equal(outputsMatch("1000000007.0 1.00e3", "1000000007 1000", "float"), true, "the same integers in float form");
  assert.equal(outputsMatch("2.9999999", "3", "float"), false);
  assert.equal(outputsMatch("3", "2.9999999", "float"), true, "the expected float keeps its tolerance");
});

test("non-integers keep their tolerance", () => {
  assert.equal(outputsMatch("0.3333333", "0.33333333", "float"), true);
  assert.equal(outputsMatch("0.33", "0.3333333", "float"), false);
  assert.equal(outputsMatch("1e3", "1000.0000001", "float"), true);
  assert.equal(outputsMatch("1 2 3", "1 2", "float"), false);
  assert.equal(outputsMatch("  1\n2  ", "1 2", "tokens"), true);
  assert.equal(outputsMatch("1 2", "1 3", "tokens"), false);
});

test("function results: 20-digit integers that differ by one are different", () => {
  const want = exactJson("[12345678901234567890]");
  assert.equal(valuesMatch(exactJson('[{"$int": "12345678901234567891"}]'), want), false);
  assert.equal(valuesMatch(exactJson('[{"$int": "12345678901234567890"}]'), want), true);
  assert.equal(valuesMatch(exactJson("[3]"), exactJson("[3]")), true);
  assert.equal(valuesMatch(exactJson("[3]"), exactJson("[3.0000000001]")), true, "a float side keeps its tolerance");
  assert.equal(valuesMatch(exactJson("12345678901234567890"), 12345678901234567000), false, "a big int never equals a double");
});

test("a program's return value without big integers is read by JSON.parse: the same values, at its cost", () => {
  assert.equal((exactJson('[{"$int": "9"}, 1.5, "$int"]') as unknown[])[0], 9n, "a $int object still reads as its BigInt");
  assert.equal(typeof (exactJson("[9007199254740993]") as unknown[])[0], "bigint", "a 16-digit run still reads exactly");
  assert.deepEqual(exactJson('{"a": [1, 2.5e3, -0.125, "x\\u00e9"], "b": null}'), { a: [1, 2500, -0.125, "x\u00e9"], b: null });
  // a megabyte string: lossless-json took ~30x JSON.parse on the event loop (150 ms here)
  const text = JSON.stringify("x".repeat(1_000_000));
  const best = (f: () => unknown) => Math.min(...[0, 1, 2, 3, 4].map(() => { const t = performance.now(); f(); return performance.now() - t; }));
  const ratio = best(() => exactJson(text)) / best(() => JSON.parse(text));
  assert.ok(ratio < 5, `exactJson took ${ratio.toFixed(1)}x JSON.parse`);
});

test("lines mode agrees with LiveCodeBench's grade_stdio, run on 203 pairs (lcb-stdio-cases.json)", () => {
  // Before: leading spaces, leading blank lines and numbers written two ways (`1.0`, `1`) were
  // refused, 86 disagreements, every one a right output scored 0.
  const { source, cases } = JSON.parse(readFileSync(new URL("./lcb-stdio-cases.json", import.meta.url), "utf8"));
  assert.match(source, /LiveCodeBench 28fef95/);
  const differ = cases.filter((c: any) => outputsMatch(c.actual, c.expected, "lines") !== c.lcb);
  // The one kind left: a number over NUM_MAX (400) characters compares as text here, by value there.
  const known = (c: any) => /^(7\n)?1e400\n?$/.test(c.actual) && c.expected.replace(/\n/g, "").length > 400;
  assert.deepEqual(differ.filter((c: any) => !known(c)), []);
  assert.equal(differ.length, 3);
  assert.ok(cases.filter((c: any) => !c.lcb).length >= 60, "the set holds wrong outputs too");
});

test("float mode: numbers past a double's range compare by exact value, not as equal infinities", () => {
  // Before: both sides read as Infinity and matched.
  assert.equal(outputsMatch("1e400", "2e400", "float"), false);
  assert.equal(outputsMatch("1e999", "1" + "0".repeat(320), "float"), false);
  assert.equal(outputsMatch("-1e400", "-" + "1" + "0".repeat(320), "float"), false);
  assert.equal(outputsMatch("2" + "0".repeat(320) + ".0", "1" + "0".repeat(320), "float"), false);
  assert.equal(outputsMatch("1e320", "1" + "0".repeat(320), "float"), true, "the same value");
  assert.equal(outputsMatch("1.0e320", "10e319", "float"), true);
});

test("function results: a whole double in the reference is an exact integer against a big result", () => {
  // Before: a result past 2^53 (a BigInt from the harness) never equalled a reference number:
  // `return 10**18` against APPS's outputs [[1000000000000000000]] scored 0.
  assert.equal(valuesMatch(exactJson('{"$int": "1000000000000000000"}'), JSON.parse("1000000000000000000")), true);
  assert.equal(valuesMatch(exactJson('{"$int": "9007199254740992"}'), 2 ** 53), true);
  assert.equal(valuesMatch(exactJson('{"$int": "1000000000000000001"}'), JSON.parse("1000000000000000000")), false, "exact, not rounded");
  assert.equal(valuesMatch(exactJson('[{"$int": "1000000000000000000"}]'), [1e18]), true);
});

test("a reference's big integers reach the harness as digits and come back exact", () => {
  // APPS's input_output string is read with exactJson: an argument or expected value past 2^53
  // is a BigInt, written back as its digits for the harness (JSON.stringify throws on a BigInt).
  const ref = exactJson('{"inputs": [[12345678901234567891, 1.5, "x"]], "outputs": [[12345678901234567891]]}') as any;
  assert.equal(typeof ref.inputs[0][0], "bigint");
  assert.equal(stringifyExact({ args: ref.inputs[0] }), '{"args":[12345678901234567891,1.5,"x"]}');
  assert.equal(stringifyExact({ a: "é\n", b: [1, null] }), JSON.stringify({ a: "é\n", b: [1, null] }));
  assert.equal(valuesMatch(exactJson('{"$int": "12345678901234567891"}'), ref.outputs[0]), false, "a list, unwrapped by the caller");
  assert.equal(valuesMatch(exactJson('{"$int": "12345678901234567891"}'), ref.outputs[0][0]), true);
});

test("function results: an integer against a non-integer within an absolute tolerance, not a relative one", () => {
  // Before: relative 1e-6 whenever either side had a fraction: 777777777 * 1.0000004 = 777778088.1
  // passed for 777777777, where Python's == (LiveCodeBench's, APPS's check) says False.
  assert.equal(valuesMatch(777777777 * 1.0000004, 777777777), false);
  assert.equal(valuesMatch(777778088.1, 777777777), false);
  assert.equal(valuesMatch(1000000.4, 1000000), false);
  assert.equal(valuesMatch(123456850.5, 123456789), false);
  assert.equal(valuesMatch([1000000.5, 123456789.5], [1000000, 123456789]), false);
  assert.equal(valuesMatch(777777777, 777777777 * 1.0000004), false, "either side");
  // float noise still passes
  assert.equal(valuesMatch(1.9999999999999998, 2), true);
  assert.equal(valuesMatch(0.1 + 0.2 - 0.3, 0), true);
  assert.equal(valuesMatch(3, 3.0000000001), true);
  assert.equal(valuesMatch(777777777.0000001, 777777777), true);
  // two non-integers keep the relative tolerance
  assert.equal(valuesMatch(777777777.5 * (1 + 1e-7), 777777777.5), true);
  assert.equal(valuesMatch(0.3333333, 0.33333333), true);
  assert.equal(valuesMatch(Infinity, 5), false);
});

test("function results: a bool equals 0 or 1, as Python's == has it", () => {
  // Before: `a === b`, so `return 1` for an expected true (and True for 1) scored 0; Python's
  // True == 1, and LiveCodeBench's and APPS's checkers pass it.
  assert.equal(valuesMatch(1, true), true);
  assert.equal(valuesMatch(true, 1), true);
  assert.equal(valuesMatch(0, false), true);
  assert.equal(valuesMatch(false, 0), true);
  assert.equal(valuesMatch([true, 0], [1, false]), true);
  assert.equal(valuesMatch({ a: true }, { a: 1 }), true);
  assert.equal(valuesMatch(1n, true), true);
  assert.equal(valuesMatch(true, 1.0000000001), true, "1.0 == True; float noise as for 1");
  assert.equal(valuesMatch(2, true), false, "True != 2");
  assert.equal(valuesMatch(true, 2), false);
  assert.equal(valuesMatch(0, true), false);
  assert.equal(valuesMatch(1, false), false);
  assert.equal(valuesMatch(true, false), false);
  assert.equal(valuesMatch(true, "1"), false, "never a string");
  assert.equal(valuesMatch(false, null), false, "False != None");
  assert.equal(valuesMatch(false, []), false);
});

test("function results: a set (the harness's {\"$set\": [...]}) equals nothing a reference holds", () => {
  // Before: the harness turned a set into a sorted list, and {1, 2, 3} passed for [1, 2, 3];
  // Python says {1,2,3} != [1,2,3], and JSON has no sets.
  const set = exactJson('{"$set": [1, 2, 3]}');
  assert.equal(isSetResult(set), true);
  assert.equal(valuesMatch(set, [1, 2, 3]), false);
  assert.equal(valuesMatch(set, { $set: [1, 2, 3] }), false);
  assert.equal(valuesMatch([set], [[1, 2, 3]]), false, "nested too");
  assert.equal(valuesMatch({ $set: [1, 2, 3], b: 1 }, { $set: [1, 2, 3], b: 1 }), true, "a dict with other keys is a dict");
  assert.equal(isSetResult({ $set: 1 }), false);
});
