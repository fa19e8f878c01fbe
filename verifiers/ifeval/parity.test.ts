/**
 * IFEval parity: responses written for every instruction family, with the reference checker's
 * strict verdict (parity-cases.json, made once by parity_cases.py with NLTK's trained Punkt model
 * and langdetect at seed 0: commit and command there). The benchmark profile must agree on every
 * row. The one exception is sentence counting with the default parameters (no
 * ASSAY_IFEVAL_PUNKT_DIR): the rows where they and NLTK's trained model part are listed below, each
 * with its class, and the test fails on any other (and on any of these that starts to agree: then
 * the list is shortened). With ASSAY_IFEVAL_PUNKT_DIR pointing at the trained model, none may differ.
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ifeval } from "./index.js";
import { useSentenceModel } from "./punkt.js";
import { loadConfig } from "../../src/core/config.js";
import { testServices, verifyDirect } from "../../tests/helpers.js";

interface Case {
  id: string;
  kwargs: Record<string, unknown>;
  response: string;
  followed: boolean;
  /** langdetect gives another verdict with some seed in 1..29 (IFEval itself sets no seed). */
  nondeterministic?: boolean;
}
const data = JSON.parse(readFileSync(new URL("./parity-cases.json", import.meta.url), "utf8")) as {
  model_sha256: Record<string, string>;
  cases: Case[];
};
/** parity_cases.py's HUGE, stored as a marker. */
const HUGE = [...Array(3000).fill("river"), ...Array(3000).fill("stone")].join(" ");
const expand = (r: string) => (r === "$HUGE" ? HUGE : r === "$HUGE_UPPER" ? HUGE.toUpperCase() : r);
const key = (c: Case) => `${c.id} ${JSON.stringify(c.kwargs)} ${JSON.stringify(c.response)}`;

/**
 * Rows where the default sentence parameters (ENGLISH in punkt.ts) and NLTK's trained model give
 * another verdict: [instruction kwargs, response, class].
 */
const AL3 = '{"num_sentences":3,"relation":"at least"}';
const AL4 = '{"num_sentences":4,"relation":"at least"}';
const LT4 = '{"num_sentences":4,"relation":"less than"}';
const SENTENCE_GAP: [string, string, string][] = [
  // "j.k" is an abbreviation the trained model learned from its newspaper text; not in Assay's list
  [AL3, "J.K. Rowling wrote it. It sold.", "dotted initials"],
  [AL4, "J.K. Rowling wrote it. It sold. Many read it.", "dotted initials"],
  [LT4, "J.K. Rowling wrote it. It sold. Many read it.", "dotted initials"],
  // after an abbreviation, the trained model's orthographic context has "Then"/"She" also capitalised
  // mid-sentence (headlines), so it does not call them sentence starters; the public-domain one does
  [AL3, "It was 5 p.m. Then we ate. Later we slept.", "word after an abbreviation"],
  [AL3, "She moved to the U.S. She likes it. She stays.", "word after an abbreviation"],
  // ellipses followed by a word the trained model has seen in lower case
  [AL3, "Hmm.. ok. Fine. Sure.", "ellipsis"],
  [AL3, "Um... yes... no... Maybe. Fine.", "ellipsis"],
  // single capital letters as outline labels: the trained model knows some letters as abbreviations
  [AL4, "A. Apples. B. Bananas. C. Cherries.", "outline letters"],
  [LT4, "A. Apples. B. Bananas. C. Cherries.", "outline letters"],
];

async function disagreements(punktDir = ""): Promise<Case[]> {
  const services = testServices({ config: loadConfig({ ASSAY_LOG_LEVEL: "silent", ASSAY_SANDBOX: "none", ASSAY_DATA_DIR: ":memory:", ASSAY_IFEVAL_PUNKT_DIR: punktDir }) });
  const wrong: Case[] = [];
  for (const c of data.cases) {
    const out = await verifyDirect(ifeval, {
      response: expand(c.response),
      reference: { instruction_id_list: [c.id], kwargs: [c.kwargs] },
      options: { profile: "benchmark" },
    }, { services });
    if ((out.reward === 1) !== c.followed) wrong.push(c);
  }
  return wrong;
}

describe("IFEval's checkers, verdict for verdict (benchmark profile, strict)", () => {
  test(`${data.cases.length} responses across all 25 instruction ids, default sentence parameters`, async () => {
    const wrong = await disagreements();
    const listed = new Set(SENTENCE_GAP.map(([kw, r]) => `length_constraints:number_sentences ${kw} ${JSON.stringify(r)}`));
    const unlisted = wrong.filter((c) => !listed.has(key(c))).map((c) => `${key(c)}: reference ${c.followed}`);
    const fixed = [...listed].filter((k) => !wrong.some((c) => key(c) === k));
    if (wrong.length) console.log(`sentence rows where the default parameters and NLTK's trained model differ, ${wrong.length}:\n  ${wrong.map(key).join("\n  ")}`);
    assert.deepEqual(unlisted, []);
    assert.deepEqual(fixed, [], "these rows agree now: take them off SENTENCE_GAP");
    const nondet = data.cases.filter((c) => c.nondeterministic);
    console.log(`rows whose verdict langdetect changes with its seed (matched here at seed 0), ${nondet.length}:\n  ${nondet.map(key).join("\n  ")}`);
    assert.equal(new Set(data.cases.map((c) => c.id)).size, 25);
    assert.ok(data.cases.length >= 500);
  });

  // The trained model is not in the repository (README); with a copy, every row must agree.
  const realDir = process.env.ASSAY_IFEVAL_PUNKT_DIR;
  test("with NLTK's trained model (ASSAY_IFEVAL_PUNKT_DIR): every row", { skip: realDir ? false : "ASSAY_IFEVAL_PUNKT_DIR is not set" }, async () => {
    for (const [name, sha] of Object.entries(data.model_sha256)) {
      const lines = readFileSync(join(realDir!, name), "utf8").split("\n").filter((l, i, a) => l !== "" || i < a.length - 1).sort();
      assert.equal(createHash("sha256").update(lines.join("\n")).digest("hex"), sha, `${name} is not the model the expected values were made with`);
    }
    try {
      assert.deepEqual((await disagreements(realDir)).map(key), []);
    } finally {
      useSentenceModel("");
    }
  });
});
