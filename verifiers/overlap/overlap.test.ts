/** The overlap verifiers as the server runs them: options, references, hostile input, HTTP. */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import { bleu, chrf, rouge } from "./index.js";
import { tokenize13a, tokens13aWork } from "./bleu.js";
import { runSync } from "./ngrams.js";
import { testApp, verifyDirect, fastestCpu as fastest } from "../../tests/helpers.js";
import { longestGap } from "../../tests/loop-watch.js";
import type { AnyVerifier } from "../../src/core/verifier.js";
import { InvalidItemError } from "../../src/core/types.js";

const REF = "The cat sat on the mat.";
async function reward(v: AnyVerifier, response: string, reference: unknown, options: Record<string, unknown> = {}) {
  return (await verifyDirect(v, { response, reference, options })).reward as number;
}

describe("rewards in [0, 1] with the tools' numbers", () => {
  test("bleu: sacreBLEU's 48.892302243490086 becomes 0.48892302243490086", async () => {
    // Equal to 1e-12: V8's exp/log may differ from glibc's in the last bit.
    assert.ok(Math.abs(await reward(bleu, "The cat is on the mat.", REF) - 48.892302243490086 / 100) < 1e-12);
    assert.equal(await reward(bleu, REF, REF), 1); // sacreBLEU prints 100.00000000000004
    assert.equal(await reward(bleu, "completely unrelated words here", REF), 0);
  });
  test("chrf and chrF++ (word_order 2)", async () => {
    assert.equal(await reward(chrf, "The cat is on the mat.", REF), 64.58166836671698 / 100);
    assert.equal(await reward(chrf, "The cat is on the mat.", REF, { word_order: 2 }), 67.49301221379969 / 100);
  });
  test("rouge: rougeL by default, other types and the mean by option", async () => {
    assert.equal(await reward(rouge, "The cat is on the mat.", REF), 0.8333333333333334);
    assert.equal(await reward(rouge, "The cat is on the mat.", REF, { rouge_type: "rouge2" }), 0.6);
    assert.ok(Math.abs(await reward(rouge, "The cat is on the mat.", REF, { rouge_type: "mean" }) - (0.8333333333333334 * 2 + 0.6) / 3) < 1e-12);
  });
  test("several references: the best one counts", async () => {
    const one = await reward(bleu, "A fast brown fox leaps over a lazy dog.", "The quick brown fox jumped over the lazy dog.");
    const two = await reward(bleu, "A fast brown fox leaps over a lazy dog.", ["The quick brown fox jumped over the lazy dog.", "A fast brown fox leaps over a lazy dog."]);
    assert.ok(one < 0.5 && two === 1, `${one} ${two}`);
  });
  test("the thinking is not scored unless strip_think is off", async () => {
    assert.equal(await reward(bleu, "<think>The cat sat on the mat.</think>nothing", REF), 0);
    assert.equal(await reward(rouge, "<think>x</think>The cat sat on the mat.", REF), 1);
    assert.ok((await reward(rouge, "<think>x</think>The cat sat on the mat.", REF, { strip_think: false })) < 1);
  });
  test("near misses score below an exact answer", async () => {
    for (const v of [bleu, chrf, rouge]) {
      const exact = await reward(v, REF, REF);
      const near = await reward(v, "The cat sat on a mat.", REF);
      assert.ok(near < exact && near > 0, `${v.name}: ${near} vs ${exact}`);
    }
  });
  test("a malformed reference or option is the item's fault", async () => {
    await assert.rejects(verifyDirect(bleu, { response: "x", reference: { text: "y" } }), InvalidItemError);
    await assert.rejects(verifyDirect(bleu, { response: "x", reference: [] }), InvalidItemError);
    await assert.rejects(verifyDirect(chrf, { response: "x", reference: "y", options: { beta: "two" } }), InvalidItemError);
  });
});

describe("hostile responses", () => {
  const cases: [string, string][] = [
    ["1 MB of one word", "the ".repeat(250_000)],
    ["1 MB of punctuation", ".,-&;".repeat(200_000)],
    ["32 KB of distinct tokens", Array.from({ length: 6000 }, (_, i) => `w${i}`).join(" ").slice(0, 32_768)],
    ["32 KB of one character", "a".repeat(32_768)],
    ["32 KB of astral characters", "😀".repeat(16_000)],
  ];
  const ref = Array.from({ length: 400 }, (_, i) => `w${i} the cat`).join(" ");
  for (const v of [bleu, chrf, rouge]) {
    for (const [name, text] of cases) {
      test(`${v.name}: ${name} is scored in < 50 ms`, async () => {
        const { out, ms } = await fastest(() => verifyDirect(v, { response: text, reference: [ref, REF] }));
        assert.equal(typeof out.reward, "number");
        assert.ok(out.reward! >= 0 && out.reward! <= 1);
        assert.ok(ms < 50, `${ms.toFixed(1)} ms of CPU`);
      });
    }
  }
  test("a response over max_response_chars is 0 with a reason", async () => {
    const out = await verifyDirect(bleu, { response: REF + " x".repeat(20_000), reference: REF });
    assert.equal(out.reward, 0);
    assert.match(out.reason, /max_response_chars/);
  });
});

describe("over HTTP", () => {
  test("/reward/batch scores all three, and GET /verifiers lists them", async () => {
    const { app } = await testApp();
    const res = await request(app).post("/reward/batch").send({
      items: [
        { verifier: "bleu", response: "The cat is on the mat.", reference: REF },
        { verifier: "chrf", response: "The cat is on the mat.", reference: [REF], options: { word_order: 2 } },
        { verifier: "rouge", response: "The cat is on the mat.", reference: REF, options: { use_stemmer: true } },
        { verifier: "bleu", response: "x", reference: { text: "y" } },
      ],
    });
    assert.equal(res.status, 200);
    const r = res.body.results;
    assert.ok(Math.abs(r[0].reward - 0.48892302243490086) < 1e-12);
    assert.ok(Math.abs(r[1].reward - 0.6749301221379969) < 1e-12);
    assert.equal(r[2].status, "ok");
    assert.equal(r[3].status, "invalid");
    const list = await request(app).get("/verifiers");
    const names = JSON.stringify(list.body);
    for (const n of ["bleu", "chrf", "rouge"]) assert.ok(names.includes(`"${n}"`), n);
  });
});


describe("the event loop keeps turning while a long item is scored", () => {
  test("bleu, chrF++ and rouge on 1 MB (max_response_chars 1,000,000): the same scores, in slices", async () => {
    const response = "a ".repeat(500_000);
    for (const [v, o] of [[bleu, {}], [rouge, {}], [chrf, { word_order: 2 }]] as const) {
      const options = { max_response_chars: 1_000_000, ...o };
      await verifyDirect(v, { response: response.slice(0, 20_000), reference: "a b c", options });
      const { out, gap } = await longestGap(() => verifyDirect(v, { response, reference: "a b c", options }));
      assert.ok(out.reward! > 0 && out.reward! < 0.01);
      // Before: bleu 0.5-1.8 s, rouge 0.4-0.9 s, chrF++ 0.8-1 s in one block.
      assert.ok(gap < 300, `${v.name}: the event loop waited ${gap.toFixed(0)} ms`);
    }
  });
  test("tokens13aWork gives tokenize13a's tokens on random text", () => {
    const alphabet = ["a", "1", "2", ".", ",", "-", " ", "\t", "\n", "-\n", "&amp;", "&lt;", "<skipped>", "x.y", "3.5", "(", "'", "\u3000", "\x1c", "é"];
    let seed = 5;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    for (let k = 0; k < 40; k++) {
      let s = "";
      while (s.length < 40_000) s += alphabet[rand(alphabet.length)];
      assert.deepEqual(runSync(tokens13aWork(s)), tokenize13a(s).split(" ").filter(Boolean));
    }
  });
});
