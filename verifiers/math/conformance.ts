/** Maps a Math-Verify test case (testdata/math-verify-cases.jsonl, vendored) to a grade() call. */
import { readFileSync } from "node:fs";
import { grade, type MathOptions } from "./grade.js";
import type { Source } from "./extract.js";

export interface Case {
  gold: string; pred: string; expected: number; file: string; test: string; call: string;
  precision?: number; strict?: boolean; allow_set_relation_comp?: boolean;
}

/** The vendored copy (Apache-2.0, see testdata/README.md): a plain clone needs nothing outside it. */
export const CASES_PATH = new URL("./testdata/math-verify-cases.jsonl", import.meta.url);

export function loadCases(path: URL | string = CASES_PATH): Case[] {
  return readFileSync(path, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as Case);
}

/** A pair of the hard set. `prompt`: the item's problem, where the pair's rule reads it (a range, a percentage, labels). `source`: where the problem comes from. */
export interface HardPair { category: string; response: string; reference: string | string[]; expected: 0 | 1; options?: Partial<MathOptions>; prompt?: string; source: string }

/** The hard set (testdata/hard-set.jsonl, written by hand for Assay): hard-set.test.ts, slip.test.ts and the pool's warm-up read it. */
export const HARD_SET = new URL("./testdata/hard-set.jsonl", import.meta.url);

export function loadHardSet(path: URL | string = HARD_SET): HardPair[] {
  return readFileSync(path, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as HardPair);
}

/** The verifier options that mirror the case's Math-Verify call. */
export function optionsFor(c: Case): Partial<MathOptions> {
  const types = /match_types=\[([^\]]*)\]/.exec(c.call)?.[1] ?? '"latex", "expr"';
  const extract: Source[] = [];
  if (types.includes("latex")) extract.push("boxed", "phrase", "latex");
  if (types.includes("expr")) extract.push("plain");
  // compare_strings defaults to float_rounding=6
  // Math-Verify reads a lone `1,22` as a decimal; Assay does so only when asked
  return { extract, precision: c.precision ?? 6, allow_set_relation: c.allow_set_relation_comp ?? false, decimal_comma: true };
}

export function runCase(c: Case) {
  const o = optionsFor(c);
  // the gold goes through the same extraction as the prediction, as in Math-Verify's parse()
  const r = grade(c.pred, goldAnswer(c.gold, o), o);
  return { got: (r.reward ?? 0) > 0 ? 1 : 0, want: c.expected > 0 ? 1 : 0, result: r };
}

import { extractAnswer } from "./extract.js";
function goldAnswer(gold: string, o: Partial<MathOptions>): string {
  const f = extractAnswer(gold, { priority: o.extract });
  if (!f) return gold;
  return f.latex ? `$${f.answer}$` : f.answer;
}
