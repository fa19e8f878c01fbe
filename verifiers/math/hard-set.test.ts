/**
 * The hard set (testdata/hard-set.jsonl, written by hand for Assay): labelled pairs across the
 * equivalence rules, half positives and half near-miss negatives, graded by the rules alone
 * (grade(), no model). Reports recall and false-positive rate per category and overall, beside
 * the same figures on the ordinary set (Math-Verify's own cases, labelled by its authors), and
 * fails below recall 0.95 or on any false positive on the hard set, on the whole set and on the
 * pairs added in round 3 (issue 28) alone.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { grade } from "./grade.js";
import { loadCases, loadHardSet, runCase } from "./conformance.js";

interface Tally { pos: number; tp: number; neg: number; fp: number }
const rate = (n: number, d: number) => (d ? (100 * n / d).toFixed(1) + "%" : "-");
const line = (name: string, t: Tally) => `${name.padEnd(12)} recall ${rate(t.tp, t.pos).padStart(6)} (${t.tp}/${t.pos})   false positives ${rate(t.fp, t.neg).padStart(5)} (${t.fp}/${t.neg})`;

test("hard set: recall >= 0.95 and no false positive (rules only), beside the ordinary set", () => {
  const pairs = loadHardSet();
  assert.ok(pairs.length >= 500, `the hard set has ${pairs.length} pairs`);
  const round3 = pairs.filter((p) => /round 3/.test(p.source));
  assert.ok(round3.length >= 150, `round 3 added ${round3.length} pairs`);
  assert.ok(Math.abs(2 * round3.filter((p) => p.expected === 1).length - round3.length) <= round3.length * 0.1, "round 3's pairs should be about half positives");
  const pos = pairs.filter((p) => p.expected === 1).length;
  assert.ok(Math.abs(2 * pos - pairs.length) <= pairs.length * 0.1, "the hard set should be about half positives");

  const by = new Map<string, Tally>();
  const all: Tally = { pos: 0, tp: 0, neg: 0, fp: 0 };
  const r3: Tally = { pos: 0, tp: 0, neg: 0, fp: 0 };
  const misses: string[] = [], falsePositives: string[] = [];
  for (const p of pairs) {
    const r = grade(p.response, p.reference, p.options, p.prompt);
    const got = (r.reward ?? 0) > 0 ? 1 : 0;
    const t = by.get(p.category) ?? { pos: 0, tp: 0, neg: 0, fp: 0 };
    by.set(p.category, t);
    for (const x of /round 3/.test(p.source) ? [t, all, r3] : [t, all]) {
      if (p.expected) { x.pos++; x.tp += got; } else { x.neg++; x.fp += got; }
    }
    const what = `[${p.category}] ${JSON.stringify(p.response).slice(0, 80)} vs ${JSON.stringify(p.reference)}: ${r.reason}`;
    if (p.expected && !got) misses.push(what);
    if (!p.expected && got) falsePositives.push(what);
  }

  const ordinary: Tally = { pos: 0, tp: 0, neg: 0, fp: 0 };
  for (const c of loadCases()) {
    const { got, want } = runCase(c);
    if (want) { ordinary.pos++; ordinary.tp += got; } else { ordinary.neg++; ordinary.fp += got; }
  }

  console.log(["math hard set (rules only):", ...[...by].map(([k, t]) => "  " + line(k, t)), "  " + line("all", all), "  " + line("round 3", r3),
    "math ordinary set (Math-Verify's cases):", "  " + line("all", ordinary),
    ...(misses.length ? ["hard-set misses:", ...misses.map((m) => "  " + m)] : []),
    ...(falsePositives.length ? ["hard-set FALSE POSITIVES:", ...falsePositives.map((m) => "  " + m)] : [])].join("\n"));

  for (const [name, t] of [["hard set", all], ["round 3's pairs", r3]] as const) {
    assert.ok(t.tp / t.pos >= 0.95, `${name}: recall ${rate(t.tp, t.pos)} < 95%:\n${misses.join("\n")}`);
    assert.equal(t.fp, 0, `${name}: false positives ${rate(t.fp, t.neg)}:\n${falsePositives.join("\n")}`);
  }
});
