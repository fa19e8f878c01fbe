/**
 * Everything that reads model text or program output on the host is linear with a cap: each
 * adversarial 1 MB input below is handled in under 150 ms of CPU (each shape once took seconds to
 * minutes: a lazy fence regex, a /\s+$/ trim, /[…]+$/ punctuation, "answer is" + spaces). The
 * slowest here takes ~25 ms on a quiet machine and 53 ms was seen under a full CI run, so the
 * bound leaves room for a loaded machine while a quadratic step still exceeds it many times.
 * Each is timed in CPU time (fastestCpu: this process's user + system, fastest of three runs
 * after a warm-up): on a busy machine wall time measures the neighbours, while a quadratic step
 * still shows in CPU time.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { extractProgram } from "../verifiers/code/extract.js";
import { outputsMatch, shortDiff } from "../verifiers/code/compare.js";
import { extractChoice } from "../verifiers/text/choice.js";
import { extractAnswer } from "../verifiers/text/exact.js";
import { normalize } from "../verifiers/text/normalize.js";
import { lines } from "../sandbox/docker/worker.js";
import { dropTrailing } from "../src/core/completion.js";
import { spellRaised } from "../src/core/raised.js";
import { mulberry32 } from "../verifiers/math/compare.js";
import { fastestCpu } from "./helpers.js";

const MB = 1 << 20;
const LIMIT_MS = 150;

const cases: [string, () => unknown][] = [
  ["unclosed code fences", () => extractProgram("```python\n".repeat(MB / 10), "python")],
  ["fences of growing length", () => extractProgram(Array.from({ length: 2000 }, (_, i) => "`".repeat(3 + (i % 500))).join("\n") + "x".repeat(MB), "python")],
  ["a long run of spaces inside a line", () => outputsMatch("a" + " ".repeat(MB) + "b", "a b", "lines")],
  ["a long line of spaces, diffed", () => shortDiff(" ".repeat(MB) + "x", "y")],
  ["a million digits then a letter", () => outputsMatch("1".repeat(MB) + "x", "1", "float")],
  ["many numeric tokens", () => outputsMatch("1.5 ".repeat(MB / 4), "1.5 ".repeat(MB / 4), "float")],
  ["'answer is' then spaces", () => extractChoice("the answer is" + " ".repeat(MB) + "1")],
  ["colons after 'answer'", () => extractChoice("answer" + ":".repeat(MB))],
  ["blank lines", () => extractChoice(" \n".repeat(MB / 2) + "ab")],
  ["unclosed <answer> tags", () => extractAnswer("<answer>".repeat(MB / 8), { extract: "answer_tag", strip_think: true })],
  ["punctuation inside the text", () => normalize("a" + "!".repeat(MB) + "b", { stripPunctuation: true })],
  ["a run inside the text, its trailing run dropped", () => dropTrailing("a" + ". ".repeat(MB / 2) + "b.", /[^.\s][.\s]*$/)],
  ["superscripts, subscripts and fractions spelled out", () => spellRaised("1½x²₁⅒".repeat(MB / 6), "math")],
];

for (const [name, f] of cases) {
  test(`linear on 1 MB: ${name}`, async () => {
    const { ms } = await fastestCpu(f, { under: LIMIT_MS });
    assert.ok(ms < LIMIT_MS, `${name}: ${ms.toFixed(1)} ms of CPU`);
  });
}

test("the runner channel splits a 12 MB line arriving in 64 KB chunks in linear time, and never tears a character", () => {
  const got: string[] = [];
  const feed = lines((l) => got.push(l));
  const line = Buffer.from(JSON.stringify({ stdout: "\u0000é".repeat(2 * MB) }) + "\n");
  const c0 = process.cpuUsage();
  for (let i = 0; i < line.length; i += 65_536) feed(line.subarray(i, i + 65_536));
  const c = process.cpuUsage(c0);
  const ms = (c.user + c.system) / 1000;
  assert.equal(got.length, 1);
  assert.equal((JSON.parse(got[0]).stdout as string).length, 4 * MB);
  assert.ok(ms < 500, `${ms.toFixed(0)} ms for ${(line.length / MB).toFixed(1)} MB`);
  // A two-byte character split across chunks survives.
  const split: string[] = [];
  const f2 = lines((l) => split.push(l));
  const e = Buffer.from("é\n");
  f2(e.subarray(0, 1));
  f2(e.subarray(1));
  assert.deepEqual(split, ["é"]);
});

test("dropTrailing gives what /[X]+$/ gives, on random strings, astral characters included", () => {
  const rnd = mulberry32(11);
  const alphabet = ["a", "1", ".", " ", ",", ";", ":", "*", "\"", "'", "!", "\n", "😀", "é", "𝟙", "«"];
  // [the quadratic trim, the linear regex dropTrailing takes]: math's (no flag) and the text verifiers' (u)
  const cases: [RegExp, RegExp][] = [
    [/[.\s*"']+$/, /[^.\s*"'][.\s*"']*$/],
    [/[,;.:\s]+$/, /[^,;.:\s][,;.:\s]*$/],
    [/[\p{P}\p{S}\s]+$/u, /[^\p{P}\p{S}\s][\p{P}\p{S}\s]*$/u],
  ];
  for (let i = 0; i < 20_000; i++) {
    let s = "";
    for (let n = Math.floor(rnd() * 12); n > 0; n--) s += alphabet[Math.floor(rnd() * alphabet.length)];
    for (const [run, lastKept] of cases) assert.equal(dropTrailing(s, lastKept), s.replace(run, ""), JSON.stringify(s));
  }
});

test("fence scanning still finds the blocks people write", () => {
  assert.equal(extractProgram("text\n```python\nprint(1)\n```\nmore\n```python\nprint(2)\n```\n", "python").code, "print(2)");
  assert.equal(extractProgram("```py\na\n```", "python", "first_block").code, "a");
  assert.equal(extractProgram("````python\n```\nx\n````", "python").code, "```\nx");
  const unclosed = extractProgram("```python\nprint(1)\n```\n```python\nprint(2)", "python");
  assert.equal(unclosed.code, "print(1)", "an unclosed final fence is not a block");
  assert.equal(extractProgram("~~~cpp\nint main(){}\n~~~", "cpp").code, "int main(){}");
  assert.equal(extractProgram("no fences", "python").via, "whole text");
});
