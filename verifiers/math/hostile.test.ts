/**
 * Hostile completions against the math verifier: families of shapes, not single strings. Each
 * family is a run of one unit (every printable ASCII character, the line terminators, the
 * tokens extraction and normalisation look for) laid out the ways that have made a regex or
 * compute-engine's parser go quadratic or worse, timed in CPU time (fastest of three runs).
 * Found this way (2026-11-27), each once a null or a frozen event loop:
 * - a run of line breaks: GSM8K's `^\s*####` retried at every line start, ~1.5 s for 32K of
 *   them in a worker (1 MiB would outlast any deadline and end as null, which a trainer masks);
 * - "The answer is" and a run of full stops: the sentence's `/[.\s*"']+$/` trim;
 * - `$~~~…~$`, `\,\,…`, `$$$…` inside a box: each a run of spaces once normalised, then
 *   `\s*\b(?:and|or)\b`, ~70 ms on the event loop's quick path at its 4,096-character cap;
 * - bars, `\boxed{||||…}`: compute-engine pairs bars in exponential time (32: 29 s);
 * - a run of signs, `\boxed{----…}`: compute-engine, quadratic (2,000: ~0.8 s).
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { grade } from "./grade.js";
import { quickGrade, QUICK_MAX_LENGTH } from "./answer.js";
import { resolveOptions } from "./options.js";
import { LIMITS } from "./parse.js";
import { fastestCpu } from "../../tests/helpers.js";

/** The fastest of three runs after a first, in ms of CPU time; the first alone when it took over a second (a quadratic case is not run four times). */
const cpuMs = async (f: () => unknown) => (await fastestCpu(f, { runs: 3, giveUp: 1000 })).ms;

const units: string[] = [];
for (let c = 32; c < 127; c++) units.push(String.fromCharCode(c));
units.push("\n", "\r", "\t", "\u2028", "\u00a0", "−", "٣", "°");
units.push("\\boxed{", "answer is ", "answer:", "####", "$$", "\\(", "\\[", "\\,", "\\text{", "</think>", "<answer>", "\\frac", "1,", "1 ", "1.", ". ", " \n", "\n\n", "and ", "\\%", "percent ", "\\|", "\\lvert ", "\\left|", "1!", "^{", "(A) ");

/** Shapes of a unit run `n` characters long. */
const shapes: [string, (u: string, n: number) => string][] = [
  ["a run", (u, n) => u.repeat(Math.ceil(n / u.length))],
  ["a run, then a box", (u, n) => u.repeat(Math.ceil(n / u.length)) + " so \\boxed{5}"],
  ["an answer phrase, then a run", (u, n) => "The answer is " + u.repeat(Math.ceil(n / u.length)) + "5"],
  ["a run in math mode", (u, n) => "$" + u.repeat(Math.ceil(n / u.length)) + "$"],
  ["unit and line break, repeated", (u, n) => (u + "\n").repeat(Math.ceil(n / (u.length + 1)))],
];

describe("hostile shapes", () => {
  test("grade() reads 64 KiB of every shape in milliseconds, and never answers null", async () => {
    const N = 64 * 1024;
    const slow: string[] = [];
    for (const [name, shape] of shapes) {
      for (const u of units) {
        const response = shape(u, N);
        let r: ReturnType<typeof grade> | undefined;
        const ms = await cpuMs(() => { r = grade(response, "5"); });
        assert.notEqual(r!.reward, null, `${name} of ${JSON.stringify(u)}: ${r!.reason}`);
        // ~1-5 ms each on an idle core (the quadratic ones took 1-6 s at this size)
        if (ms > 150) slow.push(`${name} of ${JSON.stringify(u)}: ${ms.toFixed(0)} ms`);
      }
    }
    assert.deepEqual(slow, []);
  });

  test("the event loop's quick path reads every shape at its length cap in a few ms", async () => {
    const o = resolveOptions({});
    const slow: string[] = [];
    for (const [name, shape] of shapes) {
      for (const u of units) {
        const response = shape(u, QUICK_MAX_LENGTH).slice(0, QUICK_MAX_LENGTH);
        const ms = await cpuMs(() => quickGrade(response, "12", o));
        // at most ~5 ms on an idle core; the quadratic ones took 20-70 ms
        if (ms > 15) slow.push(`${name} of ${JSON.stringify(u)}: ${ms.toFixed(1)} ms`);
      }
    }
    assert.deepEqual(slow, []);
  });

  test("a run of line breaks before the answer, and GSM8K's #### after blank lines, are still read", () => {
    assert.equal(grade("\n".repeat(200_000) + "so \\boxed{5}", "5").reward, 1);
    assert.equal(grade("Work.\n\n  \n#### 18", "18").reward, 1);
    assert.equal(grade("Work.\r\n\r\n#### 18\r\n", "18").reward, 1);
    assert.equal(grade("The answer is 5...", "5").reward, 1);
    assert.equal(grade("The answer is **7**.\" ", "7").reward, 1);
  });

  test("past LIMITS.bars bars, or LIMITS.signs signs in a row, an answer is too complex: 0 at once, not a parse that outlasts the deadline", async () => {
    for (const a of ["|".repeat(32), "\\|".repeat(20), "\\lvert ".repeat(20), "\\left|".repeat(24), "|x".repeat(LIMITS.bars + 1), "-".repeat(1990), "+ ".repeat(900) + "1", "−".repeat(LIMITS.signs + 1) + "5"]) {
      let r: ReturnType<typeof grade> | undefined;
      const ms = await cpuMs(() => { r = grade(`\\boxed{${a}}`, "5"); });
      assert.equal(r!.reward, 0, a.slice(0, 20));
      assert.match(r!.reason, /answer too complex: more than \d+ (?:absolute-value or norm bars|signs in a row)/, a.slice(0, 20));
      assert.ok(ms < 100, `${JSON.stringify(a.slice(0, 20))}…: ${ms.toFixed(0)} ms`);
    }
    // answers with bars and signs that people write are still compared
    assert.equal(grade("\\boxed{|x| + |y|}", "|y|+|x|").reward, 1);
    assert.equal(grade("\\boxed{|x|+|y|+|z|+|w|}", "|w|+|z|+|y|+|x|").reward, 1);
    assert.equal(grade("\\boxed{\\|v\\|}", "\\|v\\|").reward, 1);
    assert.equal(grade("\\boxed{|-3|}", "3").reward, 1);
    assert.equal(grade("\\boxed{-(-3)}", "3").reward, 1);
    // the same bars in the reference leave string equality, and nothing is parsed
    const many = "|a|+|b|+|c|+|d|+|e|+|f|";
    assert.equal(grade(`\\boxed{${many}}`, many).reward, 1);
  });
});
