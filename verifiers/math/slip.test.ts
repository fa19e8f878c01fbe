/**
 * False positives a one-digit slip, or a flipped sign, would be paid for. Every pair the
 * verifier grades 1 (the hard set's positives, and Math-Verify's positive cases as conformance.test.ts runs them) is graded
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
import { grade, type Graded } from "./grade.js";
import { loadCases, loadHardSet, optionsFor, runCase } from "./conformance.js";
import { resolveOptions } from "./options.js";

/** Places a decimal answer is compared to when `precision` is unset: the contract under test (Math-Verify's float_rounding), stated here, not imported, so that a looser rational.ts DEFAULT_PLACES fails. */
const PLACES = 6;

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

/** A right answer: how to grade the item with another response, and where its extracted answer sits in the response. */
interface Right { response: string; reference: string | string[]; precision: number | undefined; extracted: string; at: number; grade(response: string): Graded }

/**
 * Every pair of the hard set and every Math-Verify case that should grade 1 and does, whose
 * extracted answer is not LEFT_OUT and is found as written in the response; graded once for both
 * tests.
 */
const rights: Right[] = (() => {
  const items: Omit<Right, "extracted" | "at">[] = [];
  for (const p of loadHardSet()) {
    const options = p.options ?? {};
    if (p.expected === 1) items.push({ response: p.response, reference: p.reference, precision: resolveOptions(options).precision, grade: (r) => grade(r, p.reference, options, p.prompt) });
  }
  for (const c of loadCases()) {
    if (c.expected > 0) items.push({ response: c.pred, reference: c.gold, precision: resolveOptions(optionsFor(c)).precision, grade: (r) => runCase({ ...c, pred: r }).result });
  }
  const out: Right[] = [];
  for (const item of items) {
    const g = item.grade(item.response);
    if (g.reward !== 1) continue; // a miss is hard-set.test.ts's and conformance.test.ts's to report
    const extracted = g.details.extracted;
    if (!extracted || LEFT_OUT.test(extracted)) continue;
    const at = item.response.lastIndexOf(extracted);
    if (at < 0) continue; // extracted from a rewritten form (`\\frac` fixed): no place to slip
    out.push({ ...item, extracted, at });
  }
  return out;
})();

/** `r`'s response with its extracted answer's characters from `i` to `j` replaced by `by`. */
const rewrite = (r: Right, i: number, j: number, by: string) => r.response.slice(0, r.at + i) + by + r.response.slice(r.at + j);

test("one digit changed in a right answer grades 0", () => {
  let slips = 0;
  const paid: string[] = [];
  for (const r of rights) {
    for (const i of slipDigits(r.extracted, r.precision ?? PLACES)) {
      const slipped = rewrite(r, i, i + 1, String((Number(r.extracted[i]) + 3) % 10));
      slips++;
      if (r.grade(slipped).reward === 1) paid.push(`${JSON.stringify(slipped.slice(-80))} graded 1 against ${JSON.stringify(r.reference)}`);
    }
  }
  const pairs = rights.length;
  console.log(`${pairs} right answers, ${slips} one-digit slips, ${paid.length} paid`);
  assert.deepEqual(paid, []);
  assert.ok(pairs >= 350 && slips >= 950, `only ${pairs} answers and ${slips} slips checked`);
});

/** An answer that is one value: no list, interval, set, matrix, ± or inequality (negating those is not one change). */
const MANY = /[,;|<>]|\\(?:begin|cup|cap|pm|mp|le|ge|leq|geq|infty)(?![a-zA-Z])/;

test("a right answer with its sign flipped grades 0", () => {
  let flips = 0;
  const paid: string[] = [];
  for (const r of rights) {
    if (MANY.test(r.extracted)) continue;
    // an option letter has no sign, and zero is its own negation
    if (/^\(?[A-Ja-j]\)?$/.test(r.extracted.trim()) || grade(r.response, "0").reward === 1) continue;
    const v = r.extracted.trim(), i = r.extracted.indexOf(v);
    const response = rewrite(r, i, i + v.length, v.startsWith("-") ? v.slice(1) : `-(${v})`);
    flips++;
    if (r.grade(response).reward === 1) paid.push(`${JSON.stringify(response.slice(-80))} graded 1 against ${JSON.stringify(r.reference)}`);
  }
  console.log(`${flips} right answers with the sign flipped, ${paid.length} paid`);
  assert.deepEqual(paid, []);
  assert.ok(flips >= 180, `only ${flips} flips checked`);
});

/**
 * Structural slips: each names another answer, so each must grade 0. Brackets are swapped on
 * two-element answers only (`[6,31,-1)` has no reading but the tuple's); a list's element is
 * dropped or one added; a two-element tuple's elements swapped; `\sqrt`, `\pi`, `\pm` or a
 * coefficient's variable taken off; a fraction turned over; an inequality turned round; an
 * option letter moved on.
 */
const STRUCTURAL: [string, (s: string) => string[]][] = [
  ["a bracket swapped", (s) => {
    const m = /^(\s*)([[(])([^,()[\]]+,[^,()[\]]+)([\])])(\s*)$/.exec(s);
    if (!m) return [];
    const [, a, open, body, close, z] = m;
    return [a + (open === "[" ? "(" : "[") + body + close + z, a + open + body + (close === "]" ? ")" : "]") + z];
  }],
  ["an element dropped", (s) => {
    if (s.includes("\\begin")) return [];
    const parts = s.split(",");
    return parts.length < 2 ? [] : parts.map((_, i) => parts.filter((_, j) => j !== i).join(",")).filter((x) => !/^\s*[[(]?\s*[\])]?\s*$/.test(x));
  }],
  ["an element added", (s) => {
    if (!s.includes(",")) return [];
    const t = s.trimEnd();
    return [/[\])}]$/.test(t) ? `${t.slice(0, -1)}, 97${t.slice(-1)}` : `${s}, 97`];
  }],
  ["a pair's elements swapped", (s) => {
    const m = /^\s*([[(])([^,]+),([^,]+)([\])])\s*$/.exec(s);
    return m && m[2].trim() !== m[3].trim() ? [`${m[1]}${m[3]},${m[2]}${m[4]}`] : [];
  }],
  ["an inequality turned round", (s) => {
    const turns: [RegExp, string][] = [[/\\leq?(?![a-z])/, "\\ge"], [/\\geq?(?![a-z])/, "\\le"], [/</, ">"], [/>/, "<"]];
    return turns.filter(([re]) => re.test(s)).map(([re, by]) => s.replace(re, by));
  }],
  ["\\sqrt taken off", (s) => (s.includes("\\sqrt") ? [s.replace(/\\sqrt(\[[^\]]*\])?/, "")] : [])],
  ["\\pi taken off", (s) => (s.includes("\\pi") ? [s.replace("\\pi", ""), s.replace("\\pi", "e")] : [])],
  ["\\pm taken off", (s) => (s.includes("\\pm") ? [s.replace("\\pm", ""), s.replace("\\pm", "-")] : [])],
  ["a fraction turned over", (s) => {
    const m = /\\[dt]?frac\{([^{}]+)\}\{([^{}]+)\}/.exec(s);
    return m && m[1] !== m[2] ? [s.replace(m[0], `\\frac{${m[2]}}{${m[1]}}`)] : [];
  }],
  ["a coefficient's variable taken off", (s) => [...s.matchAll(/(?<=\d)[a-z](?![a-z])/g)].map((m) => s.slice(0, m.index) + s.slice(m.index + 1))],
  ["another option letter", (s) => (/^\s*\(?[A-E]\)?\s*$/.test(s) ? [s.replace(/[A-E]/, (c) => String.fromCharCode(((c.charCodeAt(0) - 64) % 5) + 65))] : [])],
];

test("a right answer changed in its structure grades 0", () => {
  const tried: Record<string, number> = {};
  const paid: string[] = [];
  for (const r of rights) {
    for (const [name, slips] of STRUCTURAL) {
      for (const s of slips(r.extracted)) {
        if (s === r.extracted) continue;
        tried[name] = (tried[name] ?? 0) + 1;
        const response = rewrite(r, 0, r.extracted.length, s);
        if (r.grade(response).reward === 1) paid.push(`${name}: ${JSON.stringify(s.slice(-80))} graded 1 against ${JSON.stringify(r.reference)}`);
      }
    }
  }
  const total = Object.values(tried).reduce((a, b) => a + b, 0);
  console.log(`${total} structural slips (${Object.entries(tried).map(([k, v]) => `${k} ${v}`).join(", ")}), ${paid.length} paid`);
  assert.deepEqual(paid, []);
  assert.ok(total >= 650 && Object.keys(tried).length === STRUCTURAL.length, `only ${total} slips, of ${Object.keys(tried).length} kinds`);
});

test("slipDigits stops at the precision, after a decimal point only", () => {
  assert.deepEqual(slipDigits("12.3456789", 6).map((i) => "12.3456789"[i]).join(""), "12345678");
  assert.deepEqual(slipDigits("10^{-9}", 6).length, 3);
  assert.deepEqual(slipDigits("(1.5, 2)", 1).length, 3);
});
