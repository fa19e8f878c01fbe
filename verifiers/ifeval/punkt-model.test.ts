/**
 * The Punkt port against NLTK's sent_tokenize on hand-written texts (punkt-nltk-cases.json, written
 * once by punkt_nltk_cases.py with NLTK 3.10.3): with NLTK's trained English model (the one
 * IFEval counts with), with the public-domain model this repository ships (punkt-pd/english), and
 * how far Assay's default parameters are from the trained model.
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { countPunktSentences, ENGLISH, loadPunktTab, parsePunktTab, punktSpans, sentenceModel, useSentenceModel, type PunktParams } from "./punkt.js";
import { countSentences } from "./text.js";
import { ifeval } from "./index.js";
import { loadConfig } from "../../src/core/config.js";
import { testServices, verifyDirect } from "../../tests/helpers.js";

type Case = { text: string; nltk: string[]; pd: string[] };
const fixture = JSON.parse(readFileSync(new URL("./punkt-nltk-cases.json", import.meta.url), "utf8")) as {
  nltk: string;
  model_sha256: Record<string, string>;
  cases: Case[];
};
const PD_DIR = fileURLToPath(new URL("./punkt-pd/english", import.meta.url));
const sentences = (text: string, p: PunktParams) => punktSpans(text, p).map(([a, b]) => text.slice(a, b));
const mismatches = (p: PunktParams, key: "nltk" | "pd") =>
  fixture.cases.filter((c) => JSON.stringify(sentences(c.text, p)) !== JSON.stringify(c[key])).map((c) => [c.text, c[key], sentences(c.text, p)]);

describe(`Punkt port vs NLTK ${fixture.nltk} sent_tokenize on ${fixture.cases.length} hand-written texts`, () => {
  test("the texts cover what the issue names", () => {
    const texts = fixture.cases.map((c) => c.text);
    for (const t of ["We met e.g. he left.", "We met i.e. He left.", "We met etc. The end came.", "J.K. Rowling wrote it.", "We love the sun. It is warm.", "I sat. Then I stood up."]) {
      assert.ok(texts.includes(t), t);
    }
    assert.ok(fixture.cases.length >= 400);
    // The trained model's answers the approximate parameters got wrong (issue 29).
    const want = Object.fromEntries(fixture.cases.map((c) => [c.text, c.nltk]));
    assert.deepEqual(want["We met e.g. He left."], ["We met e.g.", "He left."]);
    assert.deepEqual(want["J.K. Rowling wrote it."], ["J.K. Rowling wrote it."]);
    assert.deepEqual(want["I. Intro A. One B. Two II. Body A. Three B. Four"].length, 7);
  });

  test("with the public-domain model shipped in punkt-pd/english: NLTK's sentences exactly, every text", () => {
    const pd = loadPunktTab(PD_DIR);
    assert.ok(pd.orthoContext.size > 10_000 && pd.sentStarters.size > 10 && pd.collocations.size >= 1);
    assert.deepEqual(mismatches(pd, "pd").slice(0, 5), []);
  });

  // The trained model is not in the repository (README: its licence is unclarified); with a copy
  // (nltk.download("punkt_tab")) named by ASSAY_IFEVAL_PUNKT_DIR, this compares every text exactly.
  const realDir = process.env.ASSAY_IFEVAL_PUNKT_DIR;
  test("with NLTK's trained English model (ASSAY_IFEVAL_PUNKT_DIR): NLTK's sentences exactly, every text", { skip: realDir ? false : "ASSAY_IFEVAL_PUNKT_DIR is not set" }, () => {
    for (const [name, sha] of Object.entries(fixture.model_sha256)) {
      const lines = readFileSync(join(realDir!, name), "utf8").split("\n").filter((l, i, a) => l !== "" || i < a.length - 1).sort();
      // Python's sorted() orders by code point, as JS sort does for these (no surrogate pairs).
      assert.equal(createHash("sha256").update(lines.join("\n")).digest("hex"), sha, `${name} is not the model the expected values were made with`);
    }
    assert.deepEqual(mismatches(loadPunktTab(realDir!), "nltk").slice(0, 5), []);
  });

  test("Assay's default parameters: the gap to the trained model, measured", () => {
    const counts = fixture.cases.filter((c) => countPunktSentences(c.text, ENGLISH) === c.nltk.length).length;
    const lists = fixture.cases.length - mismatches(ENGLISH, "nltk").length;
    // 457 of 470 when measured (README; 376 before the defaults took the public-domain model's
    // orthographic context and NLTK's answers on abbreviations); fewer means they moved away from NLTK.
    assert.ok(lists >= 457 && counts >= 457, `defaults agree with the trained model on ${lists} sentence lists, ${counts} counts`);
  });
});

describe("punkt_tab parameters", () => {
  test("parsed as NLTK's PunktDecoder reads them", () => {
    const p = parsePunktTab({ abbrevTypes: "dr\n. . \n", collocations: "b\tsmith\n", sentStarters: "however\n", orthoContext: "the\t98\nsun\t4\n" });
    assert.deepEqual([...p.abbrevTypes], ["dr", ". . "]);
    assert.deepEqual([...p.collocations], ["b\tsmith"]);
    assert.equal(p.orthoContext.get("the"), 98);
    // The collocation ("##number##", "who") keeps "1999." inside the sentence; without it, a break
    // (NLTK 3.10.3 gives the same with these parameters).
    const q = { ...p, collocations: new Set(["##number##\twho"]) };
    assert.equal(countPunktSentences("In 1999. Who knew.", q), 1);
    assert.equal(countPunktSentences("In 1999. Who knew.", { ...q, collocations: new Set() }), 2);
    // A frequent sentence starter after an abbreviation starts a sentence.
    assert.equal(countPunktSentences("See dr. However it works.", p), 2);
    assert.equal(countPunktSentences("See dr. However it works.", { ...p, sentStarters: new Set() }), 1);
  });
  test("a malformed file is an error that names the line", () => {
    assert.throws(() => parsePunktTab({ abbrevTypes: "", collocations: "", sentStarters: "", orthoContext: "the 98\n" }), /ortho_context\.tab: "the 98"/);
    assert.throws(() => parsePunktTab({ abbrevTypes: "", collocations: "b smith\n", sentStarters: "", orthoContext: "" }), /collocations\.tab/);
  });
  test("ASSAY_IFEVAL_PUNKT_DIR must hold the four files, and says where to get them", () => {
    assert.equal(loadConfig({ ASSAY_IFEVAL_PUNKT_DIR: PD_DIR }).ifeval.punktDir, PD_DIR);
    assert.equal(loadConfig({}).ifeval.punktDir, "");
    assert.throws(() => loadConfig({ ASSAY_IFEVAL_PUNKT_DIR: "/nonexistent/punkt" }), /ASSAY_IFEVAL_PUNKT_DIR[\s\S]*abbrev_types\.txt[\s\S]*punkt_tab/);
  });
});

describe("the setting reaches the verifier", () => {
  // 1 sentence with the public-domain model as trained (it learned "fox" as an abbreviation from
  // the speeches), 2 with the defaults, which keep its orthographic context but not its abbreviations.
  const text = "I saw a fox. Smith ran.";
  const ref = { instruction_id_list: ["length_constraints:number_sentences"], kwargs: [{ num_sentences: 2, relation: "less than" }] };
  const withDir = (dir: string) => ({ services: testServices({ config: loadConfig({ ASSAY_LOG_LEVEL: "silent", ASSAY_SANDBOX: "none", ASSAY_DATA_DIR: ":memory:", ASSAY_IFEVAL_PUNKT_DIR: dir }) }) });
  test("number_sentences counts with the configured model, and back", async () => {
    try {
      assert.equal((await verifyDirect(ifeval, { response: text, reference: ref }, withDir(PD_DIR))).reward, 1);
      assert.equal(sentenceModel(), `punkt_tab at ${PD_DIR}`);
      assert.equal(countSentences(text), 1);
      assert.equal((await verifyDirect(ifeval, { response: text, reference: ref }, withDir(""))).reward, 0);
      assert.equal(countSentences(text), 2);
    } finally {
      useSentenceModel("");
    }
  });
});
