/** Labelled cases for the text verifiers, positives and negatives. */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { exact } from "./exact.js";
import { choice, extractChoice } from "./choice.js";
import { regex } from "./regex.js";
import { format, checkFormat } from "./format.js";
import { lastBoxed } from "../../src/core/completion.js";
import { InvalidItemError } from "../../src/core/types.js";
import type { AnyVerifier } from "../../src/core/verifier.js";
import { verifyDirect, fastestCpu } from "../../tests/helpers.js";
import { normalize, normalizeSliced, isSpaceCode } from "./normalize.js";
import { Value } from "@sinclair/typebox/value";

async function reward(v: AnyVerifier, response: string, reference: unknown, options: Record<string, unknown> = {}) {
  return (await verifyDirect(v, { response, reference, options })).reward;
}
/** format's options with its declared defaults filled in, as the registry fills them. */
const formatOptions = (o: Record<string, unknown> = {}) => Value.Default(format.options, { ...o }) as any;

describe("exact", () => {
  test("normalises case, whitespace and Unicode width by default", async () => {
    assert.equal(await reward(exact, "  New   York\n", "new york"), 1);
    assert.equal(await reward(exact, "ＡＢＣ", "abc"), 1); // NFKC full-width
    assert.equal(await reward(exact, "New York.", "new york"), 0);
    assert.equal(await reward(exact, "New York.", "new york", { strip_punctuation: true }), 1);
  });
  test("options: case and whitespace", async () => {
    assert.equal(await reward(exact, "Paris", "paris", { case_sensitive: true }), 0);
    assert.equal(await reward(exact, "a  b", "a b", { normalize_whitespace: false }), 0);
  });
  test("list of references, think stripping, extraction modes", async () => {
    assert.equal(await reward(exact, "NYC", ["New York", "NYC"]), 1);
    assert.equal(await reward(exact, "<think>maybe paris</think>Lyon", "paris"), 0);
    assert.equal(await reward(exact, "<think>hmm</think> Paris", "paris"), 1);
    assert.equal(await reward(exact, "reasoning...\nfinal: no\nParis", "paris", { extract: "last_line" }), 1);
    assert.equal(await reward(exact, "so \\boxed{\\frac{1}{2}} done", "\\frac{1}{2}", { extract: "boxed" }), 1);
    assert.equal(await reward(exact, "<answer>x</answer> then <answer>Paris</answer>", "paris", { extract: "answer_tag" }), 1);
    assert.equal(await reward(exact, "no tags here", "paris", { extract: "answer_tag" }), 0);
  });
  test("a completion that contains the reference among other text is not exact", async () => {
    assert.equal(await reward(exact, "Paris or Lyon", "paris"), 0);
  });
});

describe("choice", () => {
  const cases: [string, string | null][] = [
    ["The answer is (B).", "B"],
    ["Therefore the final answer is C", "C"],
    ["Answer: D", "D"],
    ["answer: (d)", "D"],
    ["I pick **A** here.", "A"],
    ["\\boxed{B}", "B"],
    ["\\boxed{(C)}", "C"],
    ["\\boxed{\\text{D}}", "D"],
    ["\\boxed{B. 42}", "B"],
    ["Reasoning...\n\nE", "E"],
    ["<think>the answer is A</think>The answer is B", "B"],
    ["The correct option is (A). Wait, no: the answer is C.", "C"],
    ["The answer is a prime number.", null],
    ["I don't know.", null],
  ];
  for (const [text, want] of cases) {
    test(`extracts ${want} from ${JSON.stringify(text)}`, () => {
      const got = extractChoice(text);
      assert.deepEqual(got?.letters ?? null, want === null ? null : [want]);
    });
  }
  test("rewards the right letter only", async () => {
    assert.equal(await reward(choice, "The answer is (B).", "B"), 1);
    assert.equal(await reward(choice, "The answer is (B).", "(b)"), 1);
    assert.equal(await reward(choice, "The answer is (B).", "C"), 0);
    assert.equal(await reward(choice, "The answer is (B).", ["B", "D"]), 1);
  });
  test("listing several options earns nothing (anti-hacking)", async () => {
    assert.equal(await reward(choice, "\\boxed{A, B, C, D}", "B"), 0);
    assert.equal(await reward(choice, "The answer is A or B", "B"), 0);
    assert.equal(await reward(choice, "The answer is (A), (B), (C) and (D)", "B"), 0);
    const out = await verifyDirect(choice, { response: "\\boxed{A,B}", reference: "A" });
    assert.match(out.reason, /several options/);
  });
  test("letters past num_choices are not options", async () => {
    assert.equal(await reward(choice, "The answer is E", "E", { num_choices: 4 }), 0);
    assert.equal(await reward(choice, "The answer is D", "D", { num_choices: 4 }), 1);
  });
  test("no answer found is reward 0 with that reason", async () => {
    const out = await verifyDirect(choice, { response: "hmm", reference: "A" });
    assert.equal(out.reward, 0);
    assert.equal(out.reason, "no answer found");
  });
});

describe("regex", () => {
  test("search and full modes", async () => {
    assert.equal(await reward(regex, "the result is 42 apples", "\\b42\\b"), 1);
    assert.equal(await reward(regex, "the result is 42 apples", "^\\d+$", { mode: "full" }), 0);
    assert.equal(await reward(regex, " 42 \n", "\\d+", { mode: "full" }), 1);
    assert.equal(await reward(regex, "YES", "yes", { case_insensitive: true }), 1);
    assert.equal(await reward(regex, "YES", "yes"), 0);
    assert.equal(await reward(regex, "<think>42</think>no", "42"), 0);
    assert.equal(await reward(regex, "maybe", ["yes", "mayb."]), 1);
  });
  test("catastrophic-backtracking patterns run in linear time", async () => {
    const t0 = performance.now();
    assert.equal(await reward(regex, "a".repeat(50_000) + "!", "^(a+)+$", { mode: "full" }), 0);
    assert.ok(performance.now() - t0 < 2000, `took ${performance.now() - t0}ms`);
  });
  test("a reference pattern that does not compile makes the item invalid", async () => {
    await assert.rejects(verifyDirect(regex, { response: "x", reference: "(a" }), InvalidItemError);
  });
});

describe("format", () => {
  const good = "<think>\nreasoning\n</think>\n<answer>\n42\n</answer>";
  test("well-formed R1 output earns the reward", async () => {
    assert.equal(checkFormat(good, formatOptions()), null);
    assert.equal(await reward(format, good, null), 1);
    assert.equal(await reward(format, "  " + good + "\n", null), 1);
  });
  const bad: [string, RegExp][] = [
    ["<answer>42</answer>", /does not start with <think>/],
    ["<think>a</think><think>b</think><answer>1</answer>", /appears 2 times/],
    ["<think>  </think><answer>1</answer>", /think block is empty/],
    ["<think>a</think>", /exactly one <answer>/],
    ["<think>a</think><answer> </answer>", /answer block is empty/],
    ["<think>a</think>chatter<answer>1</answer>", /text outside/],
    ["<think>a<answer>1</answer></think><answer>1</answer>", /inside the think block/],
  ];
  for (const [text, why] of bad) {
    test(`rejects ${JSON.stringify(text)}`, () => assert.match(checkFormat(text, formatOptions()) ?? "", why));
  }
  test("options: tags, non-strict, no answer tag, template-opened think, penalty", async () => {
    assert.equal(await reward(format, "<reasoning>x</reasoning><final>y</final>", null, { think_tag: "reasoning", answer_tag: "final" }), 1);
    assert.equal(await reward(format, "<think>a</think>chatter<answer>1</answer>", null, { strict: false }), 1);
    assert.equal(await reward(format, "<think>a</think> The answer is 4.", null, { answer_tag: null }), 1);
    assert.equal(await reward(format, "<think>a</think>   ", null, { answer_tag: null }), 0);
    assert.equal(await reward(format, "reasoning</think><answer>1</answer>", null, { think_opened_by_template: true }), 1);
    assert.equal(await reward(format, "nothing", null, { penalty: -1 }), -1);
  });
});

test("lastBoxed handles nesting and escapes", () => {
  assert.equal(lastBoxed("\\boxed{1} and \\boxed{\\frac{a}{b}}"), "\\frac{a}{b}");
  assert.equal(lastBoxed("\\fbox{x}"), "x");
  assert.equal(lastBoxed("\\boxed{unclosed"), null);
  assert.equal(lastBoxed("\\boxed{\\{1,2\\}}"), "\\{1,2\\}");
});

describe("normalize on long texts (issue 25: 1 MiB completions stalled the server)", () => {
  // What normalize meant before it was made linear and sliced: the reference semantics.
  const reference = (s: string, o: { stripPunctuation?: boolean; caseSensitive?: boolean; whitespace?: boolean } = {}) => {
    let t = s.normalize("NFKC");
    if (o.whitespace !== false) t = t.replace(/\s+/gu, " ").trim();
    if (o.stripPunctuation) {
      const cps = Array.from(t);
      let a = 0, b = cps.length;
      while (a < b && /^[\p{P}\p{S}\s]$/u.test(cps[a]!)) a++;
      while (b > a && /^[\p{P}\p{S}\s]$/u.test(cps[b - 1]!)) b--;
      t = cps.slice(a, b).join("");
    }
    return o.caseSensitive ? t : t.toLowerCase();
  };
  const options = [{}, { stripPunctuation: true }, { whitespace: false, stripPunctuation: true }, { caseSensitive: true }];

  test("isSpaceCode is \\s over the whole BMP", () => {
    for (let c = 0; c < 0x10000; c++) assert.equal(isSpaceCode(c), /\s/.test(String.fromCharCode(c)), c.toString(16));
  });

  test("normalize and normalizeSliced agree with the reference on random and long texts", async () => {
    const alphabet = [" ", "\t", "\n", "\u00a0", "\u3000", "a", "B", ".", "!", "😀", "é", "\u0301", "ﬁ", "  ", "\ud800", "İ"];
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    for (let k = 0; k < 3000; k++) {
      let s = "";
      for (let j = rand(14); j > 0; j--) s += alphabet[rand(alphabet.length)];
      for (const o of options) assert.equal(normalize(s, o), reference(s, o), JSON.stringify(s));
    }
    const long = [
      "a\n".repeat(40_000),
      "  Ünïcödé  ＦＵＬＬ　ｗｉｄｔｈ 😀\u00a0\t!".repeat(3000),
      "!".repeat(50_000) + "x" + " ?".repeat(20_000),
      Array.from({ length: 70_000 }, (_, i) => alphabet[(i * 7919) % alphabet.length]).join(""),
    ];
    for (const s of long) for (const o of options) {
      const want = reference(s, o);
      assert.equal(normalize(s, o), want);
      assert.equal(await normalizeSliced(s, o), want);
    }
  });

  test("a 1 MiB completion of whitespace runs is linear and sliced: little CPU, many turns of the loop", async () => {
    const runs = "a\n".repeat(512 * 1024);
    let turns = 0;
    const timer = setInterval(() => turns++, 0);
    const { out, ms } = await fastestCpu(() => normalizeSliced(runs), { under: 80 });
    clearInterval(timer);
    assert.equal(out.length, 1024 * 1024 - 1);
    // Before: ~120-180 ms of CPU in one block on the 2-core test machine; now ~15 ms in 64 slices.
    assert.ok(ms < 80, `${ms} ms of CPU`);
    assert.ok(turns >= 16, `the event loop turned ${turns} times`);
    const stripped = await fastestCpu(() => normalize("x" + "!".repeat(1 << 20), { stripPunctuation: true }), { under: 80 });
    assert.ok(stripped.ms < 80, `strip_punctuation on 1 MiB of punctuation: ${stripped.ms} ms of CPU`);
  });
});
