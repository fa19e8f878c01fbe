/**
 * IFEval parity: responses written for every instruction family, with the reference checker's
 * strict verdict (parity-cases.json, made once by parity_cases.py: commit and command there).
 * The benchmark profile must agree on every row except those marked `known` (sentence counting and
 * language identification, replaced by other work), which are listed, not failed.
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { ifeval } from "./index.js";
import { verifyDirect } from "../../tests/helpers.js";

interface Case {
  id: string;
  kwargs: Record<string, unknown>;
  response: string;
  followed: boolean;
  known?: boolean;
}
const data = JSON.parse(readFileSync(new URL("./parity-cases.json", import.meta.url), "utf8")) as { cases: Case[] };
/** parity_cases.py's HUGE, stored as a marker. */
const HUGE = [...Array(3000).fill("river"), ...Array(3000).fill("stone")].join(" ");
const expand = (r: string) => (r === "$HUGE" ? HUGE : r === "$HUGE_UPPER" ? HUGE.toUpperCase() : r);

describe("IFEval's checkers, verdict for verdict (benchmark profile, strict)", () => {
  test(`${data.cases.length} responses across all 25 instruction ids`, async () => {
    const wrong: string[] = [];
    const known: string[] = [];
    for (const c of data.cases) {
      const out = await verifyDirect(ifeval, {
        response: expand(c.response),
        reference: { instruction_id_list: [c.id], kwargs: [c.kwargs] },
        options: { profile: "benchmark" },
      });
      if ((out.reward === 1) !== c.followed) (c.known ? known : wrong).push(`${c.id} ${JSON.stringify(c.kwargs)} ${JSON.stringify(c.response.slice(0, 50))}: reference ${c.followed}`);
    }
    if (known.length) console.log(`known (sentence counting / language identification), ${known.length}:\n  ${known.join("\n  ")}`);
    assert.deepEqual(wrong, []);
    assert.equal(new Set(data.cases.map((c) => c.id)).size, 25);
    assert.ok(data.cases.length >= 500);
  });
});
