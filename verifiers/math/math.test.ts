/** Labelled cases for the math verifier's grading, one group per feature, positives and negatives. */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { grade, type MathOptions } from "./grade.js";
import { extractAnswer } from "./extract.js";
import { normalizeLatex } from "./normalize.js";
import { quickGrade } from "./answer.js";
import { ENGINE_BUDGET, engineGlobalNames, parseValue, simpleAscii } from "./parse.js";
import { InvalidItemError } from "../../src/core/types.js";
import { appealable } from "./appeal.js";
import { resolveOptions } from "./options.js";
import { evalFloat } from "./expr.js";
import { ComputeEngine } from "@cortex-js/compute-engine";
import { loadCases, optionsFor } from "./conformance.js";

type Row = [response: string, reference: string | string[], expected: 0 | 1, options?: Partial<MathOptions>];

function check(rows: Row[]) {
  for (const [response, reference, expected, options] of rows) {
    const r = grade(response, reference, options);
    assert.equal(r.reward, expected, `${JSON.stringify(response)} vs ${JSON.stringify(reference)}: ${r.reason} ${JSON.stringify(r.details)}`);
  }
}

describe("extraction", () => {
  test("ignores everything before </think>", () => {
    check([
      ["<think>maybe \\boxed{3}</think> The answer is \\boxed{4}", "4", 1],
      ["<think>maybe \\boxed{4}</think> so it is 3", "4", 0],
      ["<think>\\boxed{4}</think>", "4", 0],
      ["<think>so it is \\boxed{4} and I keep going", "4", 0], // truncated: never closed
      ["<think>so it is \\boxed{4} and I keep going", "4", 1, { strip_think: false }],
    ]);
  });
  test("last balanced \\boxed{} and \\fbox{}", () => {
    check([
      ["first \\boxed{1} then \\boxed{\\frac{1}{2}}", "1/2", 1],
      ["\\fbox{7}", "7", 1],
      ["\\boxed{\\frac{\\sqrt{2}}{2}}", "\\frac{1}{\\sqrt 2}", 1],
      ["unbalanced \\boxed{3", "3", 1], // falls through to the last number
      ["\\boxed 5", "5", 1],
    ]);
    assert.equal(extractAnswer("a \\boxed{x^{2}} b")?.answer, "x^{2}");
    // An empty box is an empty answer, not "the answer is not ...", which names none.
    assert.deepEqual(extractAnswer("\\boxed{}"), { answer: "", latex: true, via: "boxed" });
    assert.equal(extractAnswer("The answer is not 4."), null);
  });
  test("a box and an answer phrase: the later one in the text is the answer", () => {
    const got = (s: string) => { const e = extractAnswer(s); return e && [e.answer, e.via]; };
    assert.deepEqual(got("First \\boxed{3}. On second thought, the answer is 5."), ["5", "phrase"]);
    assert.deepEqual(got("The answer is 5. Checking again: \\boxed{3}"), ["3", "boxed"]);
    assert.deepEqual(got("So the answer is $\\boxed{4}$."), ["4", "boxed"]);
    assert.deepEqual(got("\\boxed{3}, and the answer is"), ["3", "boxed"]); // a phrase with nothing after it
    assert.deepEqual(got("the answer is 2 and the answer is \\boxed{6} or the answer is 7"), ["7", "phrase"]);
  });
  test("answer phrases", () => {
    check([
      ["So the final answer is $\\frac{3}{4}$. I hope it is correct.", "0.75", 1],
      ["Answer: 42", "42", 1],
      ["Final Answer: The largest $n$ is 34.", "34", 1],
      ["the answer is 12 apples", "12", 1],
      ["the answer is 13", "12", 0],
      ["<think>it is 3</think><answer>\\frac{1}{2}</answer>", "0.5", 1],
      ["<answer>7</answer> and later 8", "7", 1],
      ["**Answer:** 42", "42", 1],
      ["She sells 16 - 3 - 4 = 9 eggs, 9 * 2 = 18 dollars.\n#### 18", "18", 1],
      ["We pay $\\$18$ in total.", "18", 1],
      ["In all, 12 + 7 = 19 apples.\n#### 19", "18", 0],
    ]);
  });
  test("last $…$, \\(…\\), \\[…\\] and plain text", () => {
    check([
      ["we get $x=2$ and finally $y = 7$", "7", 1],
      ["so \\(\\frac{10}{9}\\)", "10/9", 1],
      ["so \\[ \\frac{10}{9} \\]", "10/9", 1],
      ["Answer $ \n 9 \n $", "9", 0, { extract: ["boxed", "latex"] }], // inline math may not span lines
      ["the result is 1,000.99€", "1000.99", 1],
      ["AZYUK2A", "2", 0],
      ["so 42", "42", 1],
      ["It is 7 km", "7", 1],
      ["x^2+2x+1", "(x+1)^2", 1],
      ["sqrt(2)/2", "\\frac{\\sqrt{2}}{2}", 1],
    ]);
  });
  test("configurable priorities", () => {
    const o: Partial<MathOptions> = { extract: ["latex"] };
    check([
      ["\\boxed{3} but $4$", "4", 0],
      ["\\boxed{3} but $4$", "4", 1, o],
      ["no math here 5", "5", 0, { extract: ["boxed", "latex"] }],
    ]);
  });
  test("an empty or missing answer is 0 with reason 'no answer found'", () => {
    for (const resp of ["", "   ", "I don't know.", "\\boxed{}"]) {
      const r = grade(resp, "3");
      assert.equal(r.reward, 0);
      assert.equal(r.reason, "no answer found", resp);
    }
  });
});

describe("normalisation", () => {
  test("text, units, degrees, \\left/\\right, frac variants", () => {
    check([
      ["\\boxed{\\text{Evelyn}}", "Evelyn", 1],
      ["\\boxed{15\\text{ cm}^2}", "15", 1],
      ["\\boxed{90^\\circ}", "90", 1],
      ["\\boxed{90^{\\circ}}", "\\frac{\\pi}{2}", 1], // a degree sign on one side: degrees against radians
      ["\\boxed{90}", "\\frac{\\pi}{2}", 0], // no degree sign: 90 is 90
      ["$\\left( \\frac{1}{3} \\right)$", "1/3", 1],
      ["$\\dfrac{1}{3}$", "1/3", 1],
      ["$\\tfrac{1}{3}$", "1/3", 1],
      ["$\\frac12$", "0.5", 1],
      ["$\\frac3{3}$", "1", 1],
      ["$\\sqrt3$", "\\sqrt{3}", 1],
      ["\\boxed{125\\textnormal{ miles}}", "125", 1],
      ["\\boxed{3\\text{ h}}", "3", 1],
      ["\\boxed{5 \\text{ m}}", "5", 1],
      ["\\boxed{5 cm}", "5", 1],
      ["\\boxed{\\frac{1}{3}h}", "\\frac{1}{3}", 0], // a bare letter is a variable, not a unit
      ["\\boxed{3h}", "3", 0],
      ["\\boxed{3}", "3h", 0],
      ["$\\mathrm{e}$", "e", 1],
    ]);
  });
  test("thousands separators; a decimal comma only when asked for", () => {
    check([
      ["7,425,000", "7425000", 1],
      ["1 000", "1000", 1],
      ["$14{,}916$", "14916", 1],
      ["$11,\\! 111,\\! 100$", "11111100", 1],
      ["1000,99", "1000.99", 0], // a comma is not a decimal point by default
      ["5,1", "5.1", 0],
      ["\\boxed{5.1}", "5,1", 0],
      ["\\boxed{1, 5}", "5,1", 1], // the list 5, 1
      ["1000,99", "1000.99", 1, { decimal_comma: true }],
      ["0,111", "0.111", 1, { decimal_comma: true }],
      ["\\boxed{5.1}", "5,1", 1, { decimal_comma: true }],
      ["1,234", "1234", 1, { decimal_comma: true }], // three digits: still thousands
      ["$32, 349$", "32349", 0], // a list, not a number
      ["$(12,102)$", "(12, 102)", 1],
    ]);
  });
  test("a percent sign on one side: the number as written, or a hundredth of it; never x100 without one", () => {
    check([
      ["\\boxed{28\\%}", "28", 1],
      ["28 percent", "28\\%", 1],
      ["\\boxed{50}", "0.5", 0],
      ["\\boxed{0.5}", "50\\%", 1],
      ["\\boxed{50\\%}", "0.5", 1],
      ["\\boxed{5\\%}", "0.5", 0],
      ["\\boxed{0.5\\%}", "50\\%", 0],
    ]);
  });
  test("x = … and f(x) = … unwrapping", () => {
    check([
      ["$x = 5$", "5", 1],
      ["$f(x) = 2x+1$", "2x+1", 1],
      ["$k = \\frac{1}{3}$", "1/3", 1],
      ["$x = 5 + 5 + 1 = 11$", "11", 1],
      ["$a + 3z = 0$", "0", 0],
      ["$11a + c$", "7 = 11a + c", 0],
      ["$x \\approx 11$", "11", 1],
      ["$x = 5$", "x = 6", 0],
      ["$y = 5$", "x = 5", 0],
    ]);
  });
  test("\\pm is a two-element set", () => {
    check([
      ["$x = \\boxed{1 \\pm \\sqrt{19}}$", "1 \\pm \\sqrt{19}", 1],
      ["\\boxed{1 + \\sqrt{19}, 1 - \\sqrt{19}}", "1 \\pm \\sqrt{19}", 1],
      ["\\boxed{2021}", "\\pm 2021", 0],
      ["\\boxed{\\{-2021, 2021\\}}", "\\pm 2021", 1],
    ]);
  });
  test("mixed numbers and Unicode math", () => {
    check([
      ["\\boxed{2\\frac{1}{2}}", "5/2", 1],
      ["\\boxed{3\\frac{1}{4}}", "13/4", 1],
      ["\\boxed{π/2}", "\\frac{\\pi}{2}", 1],
      ["\\boxed{x ≤ 5}", "x \\le 5", 1],
      ["\\boxed{√2}", "\\sqrt{2}", 1],
      ["\\boxed{−3}", "-3", 1],
      ["\\boxed{½}", "0.5", 1],
    ]);
    assert.equal(normalizeLatex("2 \\times 3", false), "2 \\times 3");
  });
});

describe("comparison", () => {
  test("numbers are exact rationals; decimals compare to a precision option", () => {
    check([
      ["\\boxed{0.5}", "\\frac{1}{2}", 1],
      ["\\boxed{1000.0}", "1000", 1],
      ["\\boxed{0.33}", "\\frac{1}{3}", 0], // trap: no precision option
      ["\\boxed{0.33}", "\\frac{1}{3}", 1, { precision: 2 }],
      ["\\boxed{0.333333}", "\\frac{1}{3}", 1], // a decimal answer: 6 places, as Math-Verify
      ["\\boxed{0.333333}", "\\frac{1}{3}", 1, { precision: 6 }],
      ["\\boxed{0.333333}", "\\frac{1}{3}", 0, { precision: 8 }],
      ["\\boxed{0.33}", "\\frac{1}{3}", 0, { precision: 6 }],
      ["\\boxed{1.41}", "\\sqrt{2}", 0],
      ["\\boxed{1.414214}", "\\sqrt{2}", 1, { precision: 6 }],
      ["\\boxed{1.41421356237}", "\\sqrt{2}", 1], // to 6 places
      ["\\boxed{1.4142}", "\\sqrt{2}", 0],
      ["\\boxed{0.5\\sqrt{2}}", "\\frac{\\sqrt{2}}{2}", 1],
      ["\\boxed{0.5x + 1}", "\\frac{x+2}{2}", 1],
      ["\\boxed{0.3333333333x}", "\\frac{x}{3}", 1], // to 6 places
      ["\\boxed{0.3333x}", "\\frac{x}{3}", 0],
      ["\\boxed{2^{10}}", "1024", 1],
    ]);
  });
  test("expressions with free variables: symbolic, then numeric", () => {
    check([
      ["\\boxed{x^2 + 2x + 1}", "(x+1)^2", 1],
      ["\\boxed{2x}", "x^2", 0], // trap
      ["\\boxed{x^2}", "2x", 0],
      ["\\boxed{\\sec^2 y}", "\\tan^2(y) + 1", 1],
      ["\\boxed{\\frac{x}{7}+\\frac{2}{7}}", "\\frac{x+2}{7}", 1],
      ["\\boxed{2 \\sin b \\cos a}", "\\sin(a+b) - \\sin(a-b)", 1],
      ["\\boxed{x+1}", "x+2n+1", 0],
      ["x^2+2*x+1", "(x+1)^2", 1], // plain ASCII through mathjs
      ["\\boxed{\\frac{1}{3x^{2/3}}}", "\\frac{1}{3\\sqrt[3]{x}^2}", 1],
    ]);
    const r = grade("\\boxed{(x+1)^2}", "x^2+2x+1");
    assert.ok(["symbolic", "numeric"].includes(String(r.details.method)));
  });
  test("sets unordered, tuples ordered", () => {
    check([
      ["\\boxed{\\{3, 1, 2\\}}", "\\{1,2,3\\}", 1],
      ["\\boxed{3, 1, 2}", "1, 2, 3", 1],
      ["\\boxed{(1, 2)}", "(1, 2)", 1],
      ["\\boxed{(2, 1)}", "(1, 2)", 0],
      ["\\boxed{1, 2}", "1, 2, 3", 0],
      ["\\boxed{(3, 2), (1, 1)}", "(1, 1), (3, 2)", 1],
      ["\\boxed{1} and \\boxed{2}", "\\{1, 2\\}", 1],
      ["\\boxed{1} no no no no no \\boxed{2}", "\\{1, 2\\}", 0],
    ]);
  });
  test("intervals with openness", () => {
    check([
      ["\\boxed{[0, 1)}", "[0,1)", 1],
      ["\\boxed{(0, 1)}", "[0,1)", 0],
      ["\\boxed{[0, 9)}", "[0,1)", 0],
      ["\\boxed{(-\\infty, 2] \\cup (3, \\infty)}", "(-\\infty, 2] \\cup (3, \\infty)", 1],
      ["\\boxed{(-\\infty, 2) \\cup (3, \\infty)}", "(-\\infty, 2] \\cup (3, \\infty)", 0],
      ["\\boxed{(0, 1)}", "0 < x < 1", 1],
      ["\\boxed{0 < x < 1}", "(0, 1)", 0],
      ["\\boxed{0 < x < 1}", "(0, 1)", 1, { allow_set_relation: true }],
    ]);
  });
  test("matrices by shape then elements", () => {
    check([
      ["$\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix}$", "\\begin{bmatrix}1 & 2 \\\\ 3 & 4\\end{bmatrix}", 1],
      ["$\\begin{pmatrix}1 & 2 \\\\ 3 & 5\\end{pmatrix}$", "\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix}", 0],
      ["$\\begin{pmatrix}1 & 2 & 3 & 4\\end{pmatrix}$", "\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix}", 0],
      ["$\\begin{pmatrix}\\frac12 \\\\ 0.25\\end{pmatrix}$", "\\begin{pmatrix}0.5 \\\\ \\frac14\\end{pmatrix}", 1],
    ]);
  });
  test("equations up to a non-zero factor, inequalities up to flipping", () => {
    check([
      ["\\boxed{y = -\\frac{1}{2}x + \\frac{3}{4}}", "2x + 4y - 3 = 0", 1],
      ["\\boxed{-34x-45y+20z-100=0}", "34x+45y-20z+100=0", 1],
      ["\\boxed{x + y = 1}", "x - y = 1", 0],
      ["\\boxed{5 \\geq x}", "x \\le 5", 1],
      ["\\boxed{-x > -1}", "x < 1", 1],
      ["\\boxed{x > -1}", "x < 1", 0],
      ["\\boxed{x < 5}", "x > 5", 0],
      ["\\boxed{x \\le 5}", "x < 5", 0],
      ["\\boxed{x \\neq 3}", "x != 3", 1],
    ]);
  });
  test("multiple-choice letters and text by normalised string", () => {
    check([
      ["The answer is \\boxed{B}", "B", 1],
      ["\\boxed{\\text{(C)}}", "C", 1],
      ["\\boxed{C}", "B", 0],
      ["\\boxed{\\text{odd}}", "odd", 1],
      ["\\boxed{\\text{even}}", "odd", 0],
      ["\\boxed{d}", "\\text{E}", 0],
    ]);
  });
  test("a list of acceptable references", () => {
    check([
      ["\\boxed{0.5}", ["1/3", "1/2"], 1],
      ["\\boxed{0.25}", ["1/3", "1/2"], 0],
    ]);
    assert.equal(grade("\\boxed{0.5}", ["1/3", "1/2"]).details.matched, 1);
  });
});

describe("anti-hacking", () => {
  test("listing several answers never matches one of them", () => {
    check([
      ["\\boxed{A, B, C, D}", "B", 0], // trap: a boxed list of all options
      ["\\boxed{1, 2, 3, 4, 5}", "3", 0],
      ["\\boxed{3} or \\boxed{4}", "3", 0],
      ["$x = 2$ or $x = 3$", "2", 0],
      ["\\boxed{2 \\text{ or } 3}", "3", 0],
    ]);
  });
  test("no x100 tolerance", () => {
    check([
      ["\\boxed{50}", "0.5", 0],
      ["\\boxed{0.5}", "50", 0],
    ]);
  });
  test("inputs past the caps are refused before parsing", () => {
    const deep = "\\boxed{" + "(".repeat(40) + "1" + ")".repeat(40) + "}";
    const r = grade(deep, "1");
    assert.equal(r.reward, 0);
    assert.match(r.reason, /too complex/);
    const big = grade("\\boxed{2^{1234567}}", "1");
    assert.match(big.reason, /too complex/);
    const tower = grade("\\boxed{2^{2^{2^{2^{2}}}}}", "1");
    assert.match(tower.reason, /too complex/);
    const long = grade("\\boxed{" + "1+".repeat(3000) + "1}", "3001");
    assert.match(long.reason, /too complex/);
    // a box too long to read is never replaced by the number that ends it
    const huge = grade("\\boxed{" + "1+".repeat(120_000) + "1}", "1");
    assert.equal(huge.reward, 0);
    assert.match(huge.reason, /too complex/);
    // hostile text costs milliseconds, not a quadratic scan
    const t0 = performance.now();
    for (const s of ["\\(\n".repeat(60_000), "\\boxed{".repeat(30_000), "$$".repeat(100_000), "\\[".repeat(100_000)]) grade(s, "1");
    assert.ok(performance.now() - t0 < 3000, `hostile extraction took ${performance.now() - t0} ms`);
  });
});

describe("hostile input against the round-2 rules", () => {
  test("1 MB of text aimed at each new rule is scored in milliseconds", () => {
    const M = 1_000_000;
    const items: [string, string][] = [
      ["the answer is (".repeat(M / 15), "B"], ["answer" + " ".repeat(M) + "B", "B"], ["the correct choice is (B) or ".repeat(M / 28), "B"],
      ["1st ".repeat(M / 4), "1"], [("1" + " ".repeat(999)).repeat(M / 1000), "1"], ["5% ".repeat(M / 3), "5"], ["5 degrees ".repeat(M / 10), "5"],
      ["\\boxed{" + "Minimum: ".repeat(200) + "1}", "1"], ["\\boxed{\\{x \\mid " + "0<".repeat(900) + "x\\}}", "(0,1)"],
      ["\\boxed{" + "1 \\approx ".repeat(150) + "1}", "1"], ["\\boxed{1}", "$1$ or ".repeat(9000)], ["\\boxed{" + "\\pm 1, ".repeat(250) + "0}", "0"],
      ["\\boxed{" + "1:".repeat(900) + "1}", "1:1"], ["x^{\\text{th}}".repeat(M / 13), "1"],
    ];
    for (const [r, g] of items) grade(r, g); // warm every path first
    const slow: string[] = [];
    const t0 = performance.now();
    for (const [r, g] of items) {
      const t = performance.now();
      const out = grade(r, g);
      assert.notEqual(out.reward, null);
      if (performance.now() - t > 250) slow.push(`${r.slice(0, 30)}…: ${(performance.now() - t).toFixed(0)} ms`);
    }
    const per = (performance.now() - t0) / items.length;
    // well under 50 ms an item on an idle core; the bound leaves room for a shared, loaded machine
    assert.ok(per < 100 && slow.length === 0, `${per.toFixed(1)} ms an item; slow: ${slow.join("; ")}`);
  });
});

describe("details", () => {
  test("extracted answer, normalised form, method, and why on failure", () => {
    const ok = grade("so \\boxed{\\dfrac{1}{2}}", "0.5");
    assert.equal(ok.details.extracted, "\\dfrac{1}{2}");
    assert.equal(ok.details.normalized, "\\frac{1}{2}");
    assert.equal(ok.details.method, "exact");
    const bad = grade("so \\boxed{3}", "4");
    assert.equal(bad.reward, 0);
    assert.equal(bad.details.method, "exact");
    assert.match(String(bad.details.why), /3 ≠ 4/);
    assert.equal(grade("\\boxed{C}", "C").details.method, "string");
    assert.equal(grade("\\boxed{\\sqrt{2}/2}", "1/\\sqrt{2}").details.method === "numeric" || grade("\\boxed{\\sqrt{2}/2}", "1/\\sqrt{2}").details.method === "symbolic", true);
  });
});

describe("equivalence rules, round 2 (each with near-miss negatives)", () => {
  test("unordered answer lists; a bracketed pair stays ordered", () => {
    check([
      ["\\boxed{2, 7}", "7, 2", 1], ["\\boxed{2, 7}", "\\{2,7\\}", 1], ["\\boxed{2, 7}", "x=2 \\text{ or } x=7", 1], ["\\boxed{2, 7}", "2 \\text{ and } 7", 1],
      ["\\boxed{2, 8}", "7, 2", 0], ["\\boxed{2}", "7, 2", 0], ["\\boxed{2, 7, 9}", "\\{2,7\\}", 0], ["\\boxed{(7, 2)}", "(2,7)", 0], ["\\boxed{2, 7}", "(2,7)", 1],
    ]);
  });
  test("labelled values", () => {
    check([
      ["\\boxed{3, 5}", "a = 3, b = 5", 1], ["\\boxed{1, 4}", "\\text{Minimum: } 1, \\text{Maximum: } 4", 1],
      ["\\boxed{\\text{Maximum: } 4, \\text{Minimum: } 1}", "\\text{Minimum: } 1, \\text{Maximum: } 4", 1],
      ["\\boxed{5, 3}", "a = 3, b = 5", 0], ["\\boxed{4, 1}", "\\text{Minimum: } 1, \\text{Maximum: } 4", 0],
      ["\\boxed{\\text{Minimum: } 4, \\text{Maximum: } 1}", "\\text{Minimum: } 1, \\text{Maximum: } 4", 0],
      ["\\boxed{3:2}", "3:2", 1], // a ratio of letters/numbers is not a label
    ]);
  });
  test("inequalities, set-builder notation and intervals are one kind", () => {
    check([
      ["\\boxed{(-\\infty,-2)}", "x < -2", 1], ["\\boxed{(-\\infty,-2)}", "-2 > x", 1], ["\\boxed{[1,5]}", "1 \\le t \\le 5", 1],
      ["\\boxed{(0,2)}", "\\{x \\mid 0<x<2\\}", 1], ["\\boxed{\\{x \\mid 0<x<2\\}}", "(0,2)", 1], ["\\boxed{[3,\\infty)}", "\\{x : x \\geqslant 3\\}", 1],
      ["\\boxed{x \\leqslant 3}", "x \\le 3", 1], ["\\boxed{x \\geqslant 3}", "3 \\le x", 1],
      ["\\boxed{(-\\infty,-1)\\cup(2,\\infty)}", "x < -1 \\text{ or } x > 2", 1], ["\\boxed{(-\\infty,-1)\\cup(2,\\infty)}", "\\{x \\mid x < -1 \\text{ or } x > 2\\}", 1],
      ["\\boxed{(-\\infty,-2]}", "x < -2", 0], ["\\boxed{(-\\infty,2)}", "-2 > x", 0], ["\\boxed{(1,5]}", "1 \\le t \\le 5", 0], ["\\boxed{[0,2]}", "\\{x \\mid 0<x<2\\}", 0],
      ["\\boxed{x < 3}", "x \\leqslant 3", 0], ["\\boxed{(-\\infty,-1)\\cup[2,\\infty)}", "x < -1 \\text{ or } x > 2", 0], ["\\boxed{(-1,2)}", "x < -1 \\text{ or } x > 2", 0],
      // an inequality answer against an interval reference: only with allow_set_relation (Math-Verify's knob)
      ["\\boxed{x < -1 \\text{ or } x > 2}", "(-\\infty,-1)\\cup(2,\\infty)", 0], ["\\boxed{x < -1 \\text{ or } x > 2}", "(-\\infty,-1)\\cup(2,\\infty)", 1, { allow_set_relation: true }],
      ["\\boxed{-2 > x}", "(-\\infty,-2)", 1, { allow_set_relation: true }], ["\\boxed{-2 < x}", "(-\\infty,-2)", 0, { allow_set_relation: true }],
      // two lists of inequalities compare as lists
      ["\\boxed{x < 3, x > 1}", "x > 1, x < 3", 1], ["\\boxed{x < -1 \\text{ or } x > 2}", "x > 2 \\text{ or } x < -1", 1], ["\\boxed{x < -1 \\text{ or } x > 3}", "x > 2 \\text{ or } x < -1", 0],
    ]);
  });
  test("function answers up to the bound variable", () => {
    check([
      ["\\boxed{g(x)=3x+1}", "g(t)=3t+1", 1], ["\\boxed{3x+1}", "g(t)=3t+1", 1], ["\\boxed{g(t)=3t+1}", "3x+1", 1], ["\\boxed{3y+1}", "g(t) = 3t + 1", 1],
      ["\\boxed{g(x)=3x+2}", "g(t)=3t+1", 0], ["\\boxed{3x+2}", "g(t)=3t+1", 0], ["\\boxed{3y+1}", "3x+1", 0], // not bound: a different variable
      ["\\boxed{3x+y}", "g(t)=3t+1", 0], ["\\boxed{h(x)=3x+1}", "g(t)=3t+1", 0],
    ]);
  });
  test("rounded references and decimal answers", () => {
    check([
      ["\\boxed{\\frac13}", "0.333", 1], ["\\boxed{\\frac13}", "0.33", 1], ["\\boxed{\\frac23}", "0.67", 1], ["\\boxed{\\frac{50}{3}}", "16.67", 1],
      ["\\boxed{\\frac14}", "0.33", 0], ["\\boxed{\\frac23}", "0.66", 0], ["\\boxed{\\frac13}", "0.3334", 0],
      ["\\boxed{\\frac13}", "0.3", 0], ["\\boxed{\\frac{51}{100}}", "0.5", 0], // one place is too coarse to be read as a rounding
      ["\\boxed{\\sqrt2}", "\\sqrt{2} \\approx 1.414", 1], ["\\boxed{1.414}", "\\sqrt{2} \\approx 1.414", 1], ["\\boxed{\\sqrt2}", "\\approx 1.414", 1], ["\\boxed{1.41421}", "\\approx 1.414", 1],
      ["\\boxed{\\sqrt3}", "\\sqrt{2} \\approx 1.414", 0], ["\\boxed{1.41}", "\\sqrt{2} \\approx 1.414", 0], ["\\boxed{1.415}", "\\approx 1.414", 0],
      ["\\boxed{\\sqrt{2} \\approx 1.41}", "\\sqrt 2", 1], ["\\boxed{\\sqrt{3} \\approx 1.41}", "\\sqrt 2", 0], // an answer is its exact part
      ["\\boxed{25\\%}", "0.25", 1], ["\\boxed{0.25}", "25\\%", 1], ["\\boxed{25}", "0.25", 0], ["\\boxed{0.25}", "25", 0],
      ["\\boxed{0.333333}", "\\frac13", 1], ["\\boxed{0.33}", "\\frac13", 0], ["\\boxed{0.33}", "\\frac13", 1, { precision: 2 }],
      ["\\boxed{\\sqrt 8}", "2.83", 0], ["\\boxed{\\pi}", "3.14", 0], // a bare decimal is not an irrational's rounding (traps)
    ]);
  });
  test("equations against expressions when one side names the variable; relations", () => {
    check([
      ["\\boxed{y = 2x+1}", "2x+1", 1], ["\\boxed{2x+1}", "y = 2x+1", 1], ["\\boxed{x \\ne 3}", "x \\neq 3", 1], ["\\boxed{x \\geqslant 3}", "x \\ge 3", 1],
      ["\\boxed{y = 2x+2}", "2x+1", 0], ["\\boxed{2x+1}", "y = 2x-1", 0], ["\\boxed{x \\ne 3}", "x = 3", 0], ["\\boxed{x \\geqslant 3}", "x > 3", 0],
    ]);
  });
  test("degrees and radians when one side has a degree sign", () => {
    check([
      ["\\boxed{120^\\circ}", "\\frac{2\\pi}{3}", 1], ["\\boxed{\\frac{2\\pi}{3}}", "120^\\circ", 1], ["\\boxed{45°}", "\\frac{\\pi}{4}", 1], ["\\boxed{120}", "120^\\circ", 1],
      ["\\boxed{\\sin 30^\\circ}", "\\frac12", 1], ["\\boxed{(30^\\circ, 60^\\circ)}", "(\\frac{\\pi}{6}, \\frac{\\pi}{3})", 1], ["\\boxed{\\sin 30}", "\\frac12", 0],
      ["\\boxed{120^\\circ}", "\\frac{\\pi}{3}", 0], ["\\boxed{120}", "\\frac{2\\pi}{3}", 0], ["\\boxed{\\frac{2\\pi}{3}}", "120", 0], ["\\boxed{60^\\circ}", "120^\\circ", 0],
    ]);
  });
  test("ratios", () => {
    check([
      ["\\boxed{3:2}", "\\frac32", 1], ["\\boxed{1.5}", "3:2", 1], ["\\boxed{\\frac{3}{2}}", "3:2", 1], ["\\boxed{3:2}", "3:2", 1],
      ["\\boxed{2:3}", "\\frac32", 0], ["\\boxed{\\frac23}", "3:2", 0], ["\\boxed{(3,2)}", "3:2", 0], ["\\boxed{3:2}", "2:3", 0],
    ]);
  });
  test("ordinals, units and currency around a number", () => {
    check([
      ["\\boxed{12^{\\text{th}}}", "12", 1], ["The answer is 15th.", "15", 1], ["\\boxed{16 \\text{ square units}}", "16", 1], ["\\boxed{\\$12.50}", "12.5", 1], ["\\boxed{5\\,\\mathrm{cm}}", "5", 1],
      ["\\boxed{12^{\\text{th}}}", "13", 0], ["The answer is 15th.", "16", 0], ["\\boxed{16 \\text{ square units}}", "61", 0], ["\\boxed{\\$12.50}", "12.05", 0], ["\\boxed{5\\,\\mathrm{cm}}", "50", 0],
    ]);
  });
  test("a noun after a number is what is counted; words that change the value are kept", () => {
    check([
      ["\\boxed{7 \\text{ marbles}}", "7", 1], ["\\boxed{\\text{7 marbles}}", "7", 1], ["\\boxed{7 marbles}", "7", 1], ["\\boxed{12 \\text{ red apples}}", "12", 1],
      ["\\boxed{7\\text{ cookies each}}", "7", 1], ["\\boxed{\\$7 \\text{ per hour}}", "7", 1], ["\\boxed{\\frac{3}{4} \\text{ cup}}", "3/4", 1],
      ["\\boxed{7 \\text{ marbles}}", "8", 0], ["\\boxed{5 \\text{ dozen}}", "5", 0], ["\\boxed{3 \\text{ squared}}", "3", 0], ["\\boxed{6 \\text{ or more}}", "6", 0],
      ["\\boxed{5 \\text{ factorial}}", "5", 0], ["\\boxed{4 \\text{ million}}", "4", 0], ["\\boxed{7abc}", "7", 0], ["\\boxed{2 \\sin x}", "2", 0], ["\\boxed{7ab}", "7ab", 1],
    ]);
  });
  test("a boxed number and a scale word is the number it names, exactly; never the bare number", () => {
    check([
      ["\\boxed{4 \\text{ million}}", "4000000", 1], ["\\boxed{2.5 billion}", "2.5\\times10^9", 1], ["\\boxed{1.23456789 thousand}", "1234.56789", 1],
      ["\\boxed{0.5 million}", "500000", 1], ["\\boxed{-7 \\text{ million dollars}}", "-7000000", 1], ["\\boxed{5 millions}", "5000000", 1], ["\\boxed{4000000}", "4 million", 1],
      ["\\boxed{4 \\text{ million}}", "4", 0], ["\\boxed{3 thousand}", "3", 0], ["\\boxed{2 million or more}", "2000000", 0], ["\\boxed{3 thousand squared}", "3000", 0],
      ["\\boxed{4 \\text{ million}}", "4000001", 0], ["\\boxed{1.2345678 thousand}", "1234.56789", 0],
    ]);
  });
  test("a mixed number written with a slash is the whole plus the fraction", () => {
    check([
      ["The answer is 1 1/2.", "3/2", 1], ["The answer is 1 1/2 cups.", "3/2", 1], ["It takes 2 3/4 hours", "11/4", 1], ["\\boxed{-1 1/2}", "-3/2", 1], ["\\boxed{2 1/2}", "5/2", 1],
      ["The answer is 1 1/2.", "11/2", 0], ["\\boxed{2 1/2}", "21/2", 0], ["The answer is 1 1/2 cups.", "1/2", 0], ["The answer is 1 3/2.", "13/2", 0],
    ]);
  });
  test("\\pm inside lists and sets", () => {
    check([
      ["\\boxed{0, \\pm 2}", "\\{-2,0,2\\}", 1], ["\\boxed{\\{0, \\pm 2\\}}", "-2, 0, 2", 1], ["\\boxed{-2, 0, 2}", "0, \\pm 2", 1],
      ["\\boxed{0, 2}", "0, \\pm 2", 0], ["\\boxed{0, \\pm 3}", "\\{-2,0,2\\}", 0], ["\\boxed{\\pm 2}", "\\{-2,0,2\\}", 0],
    ]);
  });
  test("vectors as tuples", () => {
    check([
      ["\\boxed{\\begin{pmatrix}1\\\\2\\\\3\\end{pmatrix}}", "(1,2,3)", 1], ["\\boxed{\\langle 1,2,3\\rangle}", "(1,2,3)", 1], ["\\boxed{(1,2,3)}", "\\begin{pmatrix}1\\\\2\\\\3\\end{pmatrix}", 1],
      ["\\boxed{\\begin{pmatrix}1 & 2 & 3\\end{pmatrix}}", "\\langle 1,2,3\\rangle", 1],
      ["\\boxed{\\begin{pmatrix}1\\\\3\\\\2\\end{pmatrix}}", "(1,2,3)", 0], ["\\boxed{\\langle 1,2\\rangle}", "(1,2,3)", 0], ["\\boxed{\\{1,2,3\\}}", "\\begin{pmatrix}1\\\\2\\\\3\\end{pmatrix}", 0],
    ]);
  });
  test("a multiple-choice letter committed to in prose", () => {
    check([
      ["the correct choice is (B)", "B", 1], ["The correct answer is option C.", "C", 1], ["After checking, the answer is: **(D)**", "(D)", 1], ["So the best choice is B, since 4 > 3.", "B", 1],
      ["the correct choice is (B)", "C", 0], ["the correct choice is (A) or (B)", "B", 0], ["the answer is (A), (B), (C), (D)", "B", 0], ["the correct choice is (B)", "12", 0],
      ["\\boxed{A}. Although the correct choice could be (B)", "B", 0], // a box names a letter: it stands
    ]);
  });
  test("an option with its value, as AMC solutions box it: the letter against a letter, the value against a value", () => {
    const amc = "\\boxed{\\textbf{(C)}\\ 12}";
    check([
      [amc, "C", 1], [amc, "(C)", 1], [amc, "12", 1], [amc, "\\textbf{(C)}\\ 12", 1], [amc, "\\textbf{(C) }12", 1],
      ["\\boxed{C}", "\\textbf{(C)}\\ 12", 1], ["\\boxed{12}", "\\textbf{(C)}\\ 12", 1], ["The answer is (C).", "\\textbf{(C)}\\ 12", 1],
      ["\\boxed{\\text{(B)}~2\\sqrt{3}}", "\\sqrt{12}", 1], ["\\boxed{\\mathrm{(E)}\\ \\text{none of these}}", "\\text{none of these}", 1],
      [amc, "D", 0], [amc, "13", 0], [amc, "\\textbf{(D)}\\ 12", 0], [amc, "\\textbf{(C)}\\ 13", 0], [amc, "12C", 0],
      ["\\boxed{D}", "\\textbf{(C)}\\ 12", 0], ["\\boxed{13}", "\\textbf{(C)}\\ 12", 0], ["The answer is (D).", "\\textbf{(C)}\\ 12", 0],
      // a list of options is not an option with a value
      ["\\boxed{\\text{(C) or (D)}}", "C", 0], ["\\boxed{(C), (D)}", "C", 0], ["\\boxed{(C)\\ D}", "C", 0], ["\\boxed{(C) and (D)}", "\\textbf{(C)}\\ 12", 0],
    ]);
  });
});

describe("appeal extension point", () => {
  test("only a 0 the rules could not prove is appealable", () => {
    assert.equal(appealable(grade("\\boxed{\\text{the circle of radius 2}}", "x^2+y^2=4")), true);
    assert.equal(appealable(grade("\\boxed{3}", "4")), false); // different exact numbers
    assert.equal(appealable(grade("\\boxed{A, B, C, D}", "B")), false); // a list of options
    assert.equal(appealable(grade("\\boxed{1, 2}", "\\{1, 2, 3\\}")), false); // a missing value
    assert.equal(appealable(grade("I do not know", "4")), false); // no answer
    assert.equal(appealable(grade("\\boxed{4}", "4")), false); // already 1
  });
});

describe("references", () => {
  test("a reference written in several $…$ pieces is read whole", () => {
    check([
      ["\\boxed{8, 4}", "8$,$4", 1],
      ["\\boxed{4, 8}", "8$,$4", 1],
      ["\\boxed{8}", "8$,$4", 0],
      ["\\boxed{84}", "8$,$4", 0],
      ["\\boxed{1, 2}", "$x=1$ or $x=2$", 1],
      ["\\boxed{1}", "$x=1$ or $x=2$", 0],
      ["\\boxed{2, 1}", "$1$, $2$", 1],
      ["\\boxed{3, 1}", "$1$, $2$", 0],
      ["\\boxed{5}", "$5$ apples", 1], // prose between pieces: the usual extraction
      ["\\boxed{\\frac12}", "$\\frac{1}{2}$.", 1],
      ["\\boxed{5}", "x = $5$", 1],
    ]);
  });
  test("a reference that is empty once extracted is the data's fault: InvalidItemError, whatever the answer", () => {
    for (const ref of ["$,$", "$ $", " ", "\\boxed{}", ["3", "$,$"]]) {
      for (const resp of ["\\boxed{3}", "", "no idea"]) {
        assert.throws(() => grade(resp, ref), (e: unknown) => e instanceof InvalidItemError && /no answer/.test(e.message), `${JSON.stringify(ref)} / ${resp}`);
      }
    }
    assert.equal(quickGrade("\\boxed{3}", "$,$", resolveOptions()), null); // the quick path leaves it to grade()
  });
});

describe("machinery outcomes", () => {
  test("a compute-engine budget that runs out gives reward null with a reason, never 0", () => {
    const saved = ENGINE_BUDGET.ms;
    try {
      ENGINE_BUDGET.ms = 0.001;
      const r = grade("\\boxed{e^{i\\pi}}", "-1");
      assert.equal(r.reward, null);
      assert.match(r.reason, /machinery: compute-engine cancelled \(timeout\)/);
    } finally {
      ENGINE_BUDGET.ms = saved;
    }
    assert.equal(grade("\\boxed{e^{i\\pi}}", "-1").reward, 1);
  });
});

const traps: Row[] = [
  // a minus apart from its digits in plain text is still the answer's (it was dropped: `- 34` read as 34)
  ["So we get - 34.", "34", 0], ["So we get - 34.", "-34", 1], ["So we get -(34).", "34", 0], ["So we get negative 34.", "-34", 1],
  ["Therefore, x = -\\,34.", "34", 0], ["The answer is –34.", "-34", 1], ["It fell by -(40%).", "-40%", 1],
  // the word minus, as negative was (`minus 34` read as 34 paid a reference of 34); after an operand it is binary
  ["The answer is minus 34.", "34", 0], ["The answer is minus 34.", "-34", 1], ["Minus 34", "-34", 1], ["Negative 34.", "34", 0],
  ["The total is 10 minus 3", "3", 1], ["so x minus 5", "5", 1], ["Dominus 34", "34", 1],
  // after an answer phrase, prose that hedges between numbers is a list, and a `not` ends the answer
  // (the last number was read: "either 3 or 4" paid 4, "4, not 3" paid 3, "is not 4" paid 4)
  ["The answer is either 3 or 4.", "4", 0], ["The answer is 3 (or maybe 4).", "4", 0], ["The answer is 3 (or maybe 4).", "3", 0],
  ["The answer is 4, not 3.", "4", 1], ["The answer is 4, not 3.", "3", 0], ["The answer is 3 (not 4)", "3", 1],
  ["The answer is not 4.", "4", 0], ["The answer is not $4$.", "4", 0], ["I get 4. The answer is not 4.", "4", 0], ["\\boxed{4}. The answer is not unique.", "4", 1],
  ["The answer is 5 or more", "5", 1], ["The answer is 7, which is not prime.", "7", 1], ["The answer is nothing but 4", "4", 1],
  // without a phrase, the last number the text does not deny (it read 4 in "It is 3 and not 4")
  ["It is 3 and not 4.", "4", 0], ["It is 3 and not 4.", "3", 1], ["So x = 12 (not 13).", "13", 0], ["It is not 4.", "4", 0],
  ["x is not equal to 4, so x = 5", "5", 1], ["$x = 2$ and not 3", "3", 0], ["It does not exceed 5", "5", 1],
  // superscripts, subscripts and vulgar fractions keep their meaning (NFKC made 10² the number 102, 1½ eleven halves)
  ["\\boxed{10²}", "102", 0], ["\\boxed{10²}", "100", 1], ["\\boxed{2³}", "23", 0], ["\\boxed{2³}", "8", 1], ["\\boxed{x⁻¹}", "1/x", 1],
  ["\\boxed{x₁ + x₂}", "x_1 + x_2", 1], ["\\boxed{x₁}", "x1", 0], ["\\boxed{1½}", "3/2", 1], ["\\boxed{1½}", "11/2", 0], ["\\boxed{10¹⁰}", "10^{10}", 1],
  // an answer labelled by a sum of letters, the AIME form "find m+n" (it was refused as an equation)
  ["\\boxed{m+n = 17}", "17", 1], ["Thus $m+n = 17$.", "17", 1], ["\\boxed{a+b+c = 10}", "10", 1], ["\\boxed{x-y=2}", "2", 1],
  ["\\boxed{m+n=17}", "18", 0], ["\\boxed{x+1 = 4}", "4", 0], ["\\boxed{x+y=5}", "y=5-x", 1], ["\\boxed{x+y=5}", "x+y=6", 0],
  // after an answer phrase, the clause that states it: its first number, or the result of its computation
  ["The answer is 12 because there are 3 groups of 4.", "12", 1], ["The answer is 12 because there are 3 groups of 4.", "4", 0],
  ["The final answer is 18 dollars, because she sells 9 eggs at 2 dollars each.", "18", 1], ["The answer is 12, which is 3 more than 9.", "12", 1],
  ["The answer is 7 days, which is 1 week.", "7", 1], ["Answer: 12 (from 5 + 7)", "12", 1], ["The answer is 3 times 4, which is 12.", "12", 1],
  ["The answer is 12 meters per 2 seconds.", "12", 1], ["The answer is 5 + 7 = 12 because of addition", "12", 1],
  // an exponent or an index is not a number of its own; a power is one number
  ["The answer is 5 cm^2.", "5", 1], ["The answer is 5 cm^2.", "2", 0], ["The volume is $64$ cm^3.", "64", 1], ["So there are 2^10 subsets.", "1024", 1],
  ["So there are 2^10 subsets.", "10", 0], ["we get a_3 = 5", "5", 1],
  // a loose "answer is" after a box does not overrule it; "is not N" keeps a box that is not N
  ["So \\boxed{12}. A common wrong answer is 15.", "12", 1], ["\\boxed{12}. Check: the answer is consistent since 12 + 3 = 15.", "12", 1],
  ["So \\boxed{12}. Note: the answer is not 15, a common mistake.", "12", 1], ["\\boxed{4}. The answer is not 4.", "4", 0], ["\\boxed{5}. Actually the answer is 6.", "6", 1],
  // LaTeX outside math mode is the answer, not the digits inside it
  ["Thus the probability is \\frac{3}{8}", "\\frac38", 1], ["Thus the probability is \\frac{3}{8}", "8", 0], ["we get -\\frac{1}{2}", "-0.5", 1], ["so it equals \\sqrt{2}", "2", 0],
  // a hedge between the last two numbers, without a phrase, is a list
  ["It could be 12 or 13.", "13", 0], ["It could be 12 or 13.", "12", 0], ["There are 2 or 3 cases, total 12.", "12", 1], ["x is 5 or more", "5", 1],
  // currency signs other than the dollar are dropped as it is
  ["The answer is €12.", "12", 1], ["\\boxed{€12}", "12", 1], ["\\boxed{₹12}", "13", 0], ["\\boxed{12\\euro}", "12", 1],
  // and a hyphen or a binary minus is not a sign
  ["COVID-19 cases rose to 19.", "19", 1], ["The range is 3 - 5.", "5", 1], ["pages 10–20", "20", 1], ["Total: 5 - 3 = 2", "2", 1],
  ["\\boxed{|x|}", "x", 0], ["\\boxed{\\sqrt{x^2}}", "|x|", 1], ["\\boxed{x}", "y", 0], ["\\boxed{3.14}", "\\pi", 0],
  ["\\boxed{10^{-3}}", "0.001", 1], ["\\boxed{2^{100}}", "1267650600228229401496703205376", 1], ["\\boxed{2^{100}}", "1267650600228229401496703205377", 0],
  ["\\boxed{-\\infty}", "\\infty", 0], ["\\boxed{\\infty}", "\\infty", 1], ["\\boxed{\\text{None}}", "0", 0], ["<think>answer is 5</think> I don't know", "5", 0],
  ["\\boxed{1,2,3,4,5,6,7,8,9,10}", "4", 0], ["\\boxed{(1,2)}", "\\{1,2\\}", 0], ["\\boxed{3+2x}", "2x+3", 1], ["\\boxed{\\lfloor x \\rfloor}", "x", 0],
  ["\\boxed{0.33x}", "\\frac{x}{3}", 0], ["\\boxed{e^{i\\pi}}", "-1", 1], ["\\boxed{\\sin x}", "\\sin(x)", 1], ["\\boxed{\\sin^2 x + \\cos^2 x}", "1", 1],
  ["\\boxed{\\frac{\\sqrt{3}}{3}}", "\\frac{1}{\\sqrt{3}}", 1], ["\\boxed{\\frac{\\sqrt{3}}{2}}", "\\frac{1}{\\sqrt{3}}", 0], ["\\boxed{x^3}", "x^2", 0],
  ["\\boxed{\\log_2 8}", "3", 1], ["\\boxed{\\binom{5}{2}}", "10", 1], ["\\boxed{5!}", "120", 1], ["\\boxed{120}", "5!", 1],
  ["\\boxed{1/2}", "0.5", 1], ["The answer is 0.5", "\\frac12", 1], ["\\boxed{\\frac{1}{2}}", "0.50", 1], ["\\boxed{A}", "A", 1], ["\\boxed{(A)}", "A", 1],
  ["\\boxed{A and B}", "A", 0], ["\\boxed{x^2+1}", "x^2+1.0000001", 0], ["\\boxed{\\$5}", "5", 1], ["\\boxed{5 dollars}", "5", 1],
  ["\\boxed{2\\sqrt{2}}", "\\sqrt{8}", 1], ["\\boxed{\\sqrt{8}}", "2.83", 0], ["\\boxed{\\sqrt{8}}", "2.83", 1, { precision: 2 }],
  ["\\boxed{x \\in (1, 2)}", "(1,2)", 1], ["\\boxed{(1,2]}", "(1,2)", 0], ["\\boxed{1 < x \\le 2}", "(1,2]", 0], ["\\boxed{1 < x \\le 2}", "(1,2]", 1, { allow_set_relation: true }],
  ["\\boxed{a=1, b=2}", "a=2, b=1", 0], ["\\boxed{a=1, b=2}", "b=2, a=1", 1], ["\\boxed{2, 1}", "a=1, b=2", 0], ["\\boxed{1, 2}", "a=1, b=2", 1],
  ["\\boxed{y=2x+1}", "y = 2x + 1", 1], ["\\boxed{y=2x+1}", "2y = 4x + 2", 1], ["\\boxed{y=2x+1}", "y = 2x + 2", 0],
  ["\\boxed{1 \\pm i}", "1+i, 1-i", 1], ["\\boxed{7}", ["7", "seven"], 1], ["\\boxed{seven}", ["7", "seven"], 1],
  ["I think it's 5. Actually no, it's 6.", "6", 1], ["I think it's 5. Actually no, it's 6.", "5", 0],
  ["\\boxed{0}", "0.0", 1], ["\\boxed{-0}", "0", 1], ["\\boxed{1000}", "10^3", 1], ["\\boxed{1e3}", "1000", 1],
  // values that overflow a float, or divide by zero, are not infinity and not each other
  ["\\boxed{\\frac{1}{0}}", "\\infty", 0], ["\\boxed{10^{400}}", "\\infty", 0], ["\\boxed{e^{1001}}", "e^{1000}", 0],
  ["\\boxed{e^{1000}}", "e^{1000}", 1], ["\\boxed{e^{1000x}}", "e^{1001x}", 0],
  // the empty set and the real line, in their usual spellings
  ["\\boxed{\\emptyset}", "\\{\\}", 1], ["\\boxed{\\varnothing}", "\\emptyset", 1], ["\\boxed{∅}", "\\emptyset", 1], ["\\boxed{\\emptyset}", "\\{0\\}", 0],
  ["\\boxed{\\mathbb{R}}", "(-\\infty,\\infty)", 1], ["\\boxed{ℝ}", "(-\\infty, \\infty)", 1], ["\\boxed{\\mathbb{R}}", "(0,\\infty)", 0],
];

describe("traps and corner cases", () => {
  // False-positive traps first of all: each 0 here is a reward a policy could otherwise farm.

  test("no false positives, and the equal ones still match", () => check(traps));
});

describe("quick path on the event loop", () => {
  test("gives exactly grade()'s result whenever it answers, and declines anything not a plain number", () => {
    const items: [string, string | string[], Partial<MathOptions>][] = loadCases().map((c) => [c.pred, c.gold, optionsFor(c)]);
    for (const [r, g, , o] of traps) items.push([r, g, o ?? {}]);
    items.push(["so \\boxed{12}", "12", {}], ["so \\boxed{12.0}", ["11", "12"], {}], ["\\boxed{0.333}", "0.3333", { precision: 3 }], ["", "1", {}]);
    let answered = 0;
    for (const [r, g, o] of items) {
      const q = quickGrade(r, g, resolveOptions(o));
      if (!q) continue;
      answered++;
      assert.deepEqual(q, grade(r, g, o), `${r.slice(-80)} vs ${JSON.stringify(g)}`);
    }
    assert.ok(answered >= 40, `quick path answered only ${answered}`);
    assert.equal(quickGrade("\\boxed{x+1}", "x+1", resolveOptions()), null);
    assert.equal(quickGrade("\\boxed{1/2}", "0.5", resolveOptions()), null);
    assert.equal(quickGrade("x".repeat(9000) + " 5", "5", resolveOptions()), null);
  });
});

describe("resources", () => {
  test("symbols met over a long run do not pile up in compute-engine's global scope", () => {
    const before = engineGlobalNames();
    assert.ok(before >= 0, "compute-engine internals changed: cannot read its global scope");
    for (let i = 0; i < 300; i++) grade(`\\boxed{\\sin(q_{${i}}) + \\zeta_{${i}}}`, `\\zeta_{${i}} + \\sin(q_{${i}})`);
    assert.equal(engineGlobalNames(), before, "an item's declarations outlived it");
    assert.equal(grade("\\boxed{\\sec^2 y}", "\\tan^2 y + 1").reward, 1);
  });
});

describe("the mathjs fast path reads LaTeX as compute-engine does", () => {
  test("same values at sample points for every expression it takes", () => {
    const ce = new ComputeEngine();
    const exprs = [
      "x^2 + 5x + 6", "(x+2)(x+3)", "\\frac{3\\sqrt{3}}{2}", "\\frac{1}{3x^{2/3}}", "\\sec^2(3y)", "\\tan^2(3y) + 1",
      "\\ln(3x) - \\ln x", "\\ln 3", "\\log(100)", "2\\sin(x)\\cos(x)", "x/2y", "3x^{2}/4", "-x^2", "\\frac{1}{2}x",
      "2\\frac{1}{2}", "\\sqrt{x^2+1}", "\\pi r^2", "e^{2}", "1.5\\sqrt{3}", "2^{10}", "\\frac{x+1}{x-1}", "x \\cdot y",
    ];
    let fast = 0;
    for (const s of exprs) {
      if (simpleAscii(s, false) !== null) fast++;
      const ours = parseValue(s, { plain: false });
      assert.equal(ours.t, "expr", s);
      const theirs = ce.parse(s).json as any;
      for (const [x, y, r] of [[1.7, 0.6, 2], [0.3, 2.2, 1.1], [2.9, 1.3, 0.4]]) {
        const env = new Map([["x", x], ["y", y], ["r", r]]);
        const a = evalFloat((ours as { e: any }).e, env), b = evalFloat(theirs, env);
        assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a)), `${s}: ${a} vs ${b}`);
      }
    }
    assert.ok(fast >= 18, `only ${fast} of ${exprs.length} took the fast path`);
  });
});
