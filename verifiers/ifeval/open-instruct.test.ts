/**
 * open-instruct parity: rows in RLVR-IFeval's (`func_name`) and IFEvalG's (`instruction_id`, a
 * Python literal) formats, with the reward open-instruct's own verifiers gave them
 * (open-instruct-cases.json, made once by open_instruct_cases.py: commit and command there).
 * The benchmark profile must give the same reward on every row; the rl profile differs only where
 * its README says (an empty func_name answer follows nothing).
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { ifeval } from "./index.js";
import { InvalidItemError } from "../../src/core/types.js";
import { verifyDirect } from "../../tests/helpers.js";

interface Case {
  format: "func_name" | "ifevalg";
  reference: string;
  response: string;
  reward: number | string;
}
const data = JSON.parse(readFileSync(new URL("./open-instruct-cases.json", import.meta.url), "utf8")) as { cases: Case[] };

/** Rows whose verdict depends on language identification, which another piece of work replaces (langdetect's model). */
const LANGUAGE_KNOWN: string[] = [];

async function score(c: Case, profile: string): Promise<number | "invalid"> {
  try {
    const out = await verifyDirect(ifeval, { response: c.response, reference: c.reference, options: { profile } });
    return out.reward as number;
  } catch (e) {
    if (e instanceof InvalidItemError) return "invalid";
    throw e;
  }
}

describe("open-instruct's verifiers, reward for reward (benchmark profile)", () => {
  test(`${data.cases.length} rows: every func_name and every IFEvalG instruction`, async () => {
    const ids = new Set<string>();
    const wrong: string[] = [];
    for (const c of data.cases) {
      const ref = c.format === "func_name" ? JSON.parse(c.reference).func_name : c.reference;
      ids.add(c.format === "func_name" ? ref : c.reference.match(/'instruction_id': \['([^']+)'/)![1]);
      const want = typeof c.reward === "string" ? "invalid" : c.reward;
      const got = await score(c, "benchmark");
      if (got !== want && !LANGUAGE_KNOWN.includes(c.response)) wrong.push(`${c.reference} ${JSON.stringify(c.response.slice(0, 60))}: open-instruct ${want}, here ${got}`);
    }
    assert.deepEqual(wrong, []);
    assert.ok(ids.size >= 25 + 29, `rows cover ${ids.size} functions and instructions`);
  });

  test("rl profile: the same except that an empty func_name answer follows nothing", async () => {
    const wrong: string[] = [];
    for (const c of data.cases) {
      if (typeof c.reward === "string" || LANGUAGE_KNOWN.includes(c.response)) continue;
      const got = await score(c, "rl");
      const emptyAnswer = c.format === "func_name" && !c.response.replace(/<think>[^]*<\/think>|<\/?answer>/g, "").trim();
      const want = emptyAnswer ? 0 : c.reward;
      if (got !== want) wrong.push(`${c.reference} ${JSON.stringify(c.response.slice(0, 60))}: want ${want}, rl ${got}`);
    }
    assert.deepEqual(wrong, []);
  });
});
