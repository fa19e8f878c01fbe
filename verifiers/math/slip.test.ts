/**
 * False positives a one-digit slip, or a flipped sign, would be paid for. Every pair the verifier grades 1 (the hard
 * set's positives, and Math-Verify's positive cases as conformance.test.ts runs them) is graded
 * again with one digit of its extracted answer changed (d -> d + 3 mod 10), one digit at a time;
 * each such answer names another value and must grade 0. A rule that drops digits, reads a
 * number by its prefix, or compares with a looser tolerance than `precision` fails here. The
 * same answers with their sign flipped (`-(answer)`, or the minus taken off) must grade 0 too:
 * a plain-text `-(34)` or `- 34` was read as 34.
 *
 * Left out, because there the change does not alter the value the verifier reads, by design:
 * - answers with `=` or `\approx` (a chain's last side is the answer: `x = 5+5+1 = 11`);
 * - answers with `_` (subscripts are labels: `x_1 = 3, x_2 = 2`) or `\text` (prose qualifiers);
 * - answers with a trigonometric function (periodic: `\tan\frac{4}{3}\pi` is `\tan\frac{1}{3}\pi`);
 * - digits past the item's `precision` places after a decimal point (6 when unset: a decimal
 *   answer against an exact reference is compared to that many).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { grade, type Graded, type MathOptions } from "./grade.js";
import { loadCases, optionsFor, runCase } from "./conformance.js";
import { resolveOptions } from "./options.js";

/** Places a decimal answer is compared to when `precision` is unset: the contract under test (Math-Verify's float_rounding), stated here, not imported, so that a looser rational.ts DEFAULT_PLACES fails. */
const PLACES = 6;

interface Positive { response: string; options: Partial<MathOptions>; reference: string | string[]; grade(response: string): Graded }

const LEFT_OUT = /=|\\approx|_|\\text|\\(?:sin|cos|tan|sec|csc|cot|arcsin|arccos|arctan)(?![a-zA-Z])/;

/** Indices of the digits of `s` that a slip may change: not past `precision` places after a decimal point. */
function slipDigits(s: string, precision: number): number[] {
  const out: number[] = [];
  let after = -1; // places after a decimal point so far, -1 outside a decimal fraction
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c >= "0" && c <= "9") {
      if (after >= 0) after++;
      if (after <= precision) out.push(i);
    } else after = c === "." && i > 0 && s[i - 1] >= "0" && s[i - 1] <= "9" ? 0 : -1;
  }
  return out;
}

function positives(): Positive[] {
  const out: Positive[] = [];
  // the hard set (hard-set.test.ts's), read here: importing a test file would run its tests too
  const hard = readFileSync(new URL("./testdata/hard-set.jsonl", import.meta.url), "utf8").split("\n").filter((l) => l.trim());
  for (const p of hard.map((l) => JSON.parse(l) as { response: string; reference: string | string[]; expected: number; options?: Partial<MathOptions>; prompt?: string })) {
    if (p.expected !== 1) continue;
    out.push({ response: p.response, reference: p.reference, options: p.options ?? {}, grade: (r) => grade(r, p.reference, p.options ?? {}, p.prompt) });
  }
  for (const c of loadCases()) {
    if (c.expected <= 0) continue;
    out.push({ response: c.pred, reference: c.gold, options: optionsFor(c), grade: (r) => runCase({ ...c, pred: r }).result });
  }
  return out;
}

test("one digit changed in a right answer grades 0", () => {
  let pairs = 0, slips = 0;
  const paid: string[] = [];
  for (const p of positives()) {
    const g = p.grade(p.response);
    if (g.reward !== 1) continue; // a miss is hard-set.test.ts's and conformance.test.ts's to report
    const extracted = g.details.extracted;
    if (!extracted || LEFT_OUT.test(extracted)) continue;
    const at = p.response.lastIndexOf(extracted);
    if (at < 0) continue; // extracted from a rewritten form (`\\frac` fixed): no place to slip
    pairs++;
    for (const i of slipDigits(extracted, resolveOptions(p.options).precision ?? PLACES)) {
      const k = at + i;
      const slipped = p.response.slice(0, k) + String((Number(p.response[k]) + 3) % 10) + p.response.slice(k + 1);
      slips++;
      if (p.grade(slipped).reward === 1) paid.push(`${JSON.stringify(slipped.slice(-80))} graded 1 against ${JSON.stringify(p.reference)}`);
    }
  }
  console.log(`${pairs} right answers, ${slips} one-digit slips, ${paid.length} paid`);
  assert.deepEqual(paid, []);
  assert.ok(pairs >= 350 && slips >= 950, `only ${pairs} answers and ${slips} slips checked`);
});

/** An answer that is one value: no list, interval, set, matrix, ± or inequality (negating those is not one change). */
const MANY = /[,;|<>]|\\(?:begin|cup|cap|pm|mp|le|ge|leq|geq|infty)(?![a-zA-Z])/;

test("a right answer with its sign flipped grades 0", () => {
  let flips = 0;
  const paid: string[] = [];
  for (const p of positives()) {
    const g = p.grade(p.response);
    if (g.reward !== 1) continue;
    const extracted = g.details.extracted;
    if (!extracted || LEFT_OUT.test(extracted) || MANY.test(extracted)) continue;
    // an option letter has no sign, and zero is its own negation
    if (/^\(?[A-Ja-j]\)?$/.test(extracted.trim()) || grade(p.response, "0").reward === 1) continue;
    const at = p.response.lastIndexOf(extracted);
    if (at < 0) continue;
    const v = extracted.trim();
    const flipped = v.startsWith("-") ? v.slice(1) : `-(${v})`;
    const response = p.response.slice(0, at) + extracted.replace(v, flipped) + p.response.slice(at + extracted.length);
    flips++;
    if (p.grade(response).reward === 1) paid.push(`${JSON.stringify(response.slice(-80))} graded 1 against ${JSON.stringify(p.reference)}`);
  }
  console.log(`${flips} right answers with the sign flipped, ${paid.length} paid`);
  assert.deepEqual(paid, []);
  assert.ok(flips >= 180, `only ${flips} flips checked`);
});

test("slipDigits stops at the precision, after a decimal point only", () => {
  assert.deepEqual(slipDigits("12.3456789", 6).map((i) => "12.3456789"[i]).join(""), "12345678");
  assert.deepEqual(slipDigits("10^{-9}", 6).length, 3);
  assert.deepEqual(slipDigits("(1.5, 2)", 1).length, 3);
});
