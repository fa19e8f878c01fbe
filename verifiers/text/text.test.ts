/** Labelled cases for the text verifiers, positives and negatives. */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { exact, extractAnswer } from "./exact.js";
import { choice, extractChoice } from "./choice.js";
import { regex, REGEX_MAX_CHARS } from "./regex.js";
import { format, checkFormat } from "./format.js";
import { lastBoxed } from "../../src/core/completion.js";
import { InvalidItemError } from "../../src/core/types.js";
import type { AnyVerifier } from "../../src/core/verifier.js";
import { verifyDirect, fastestCpu } from "../../tests/helpers.js";
import { longestGap } from "../../tests/loop-watch.js";
import { normalize, normalizeSliced, isSpaceCode, nfkcSliced, MAX_MARK_RUN } from "./normalize.js";
import { spellRaised } from "../../src/core/raised.js";
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
  test("strip_punctuation drops a final period, enclosing quotes and brackets, never a sign or symbol", async () => {
    const o = { strip_punctuation: true };
    // what it drops
    for (const [got, ref] of [["Paris.", "paris"], ["\"Paris\"", "paris"], ["(Paris)", "paris"], ["**Paris**!", "paris"], ["(\"Paris\".)", "paris"], ["yes?!", "yes"], ["“Paris.”", "paris"], ["5.", "5"]]) {
      assert.equal(await reward(exact, got, ref, o), 1, `${got} vs ${ref}`);
    }
    // what changes the answer: signs, %, $, ++, a leading point, unpaired or mismatched brackets
    for (const [got, ref] of [["-5", "5"], ["5", "-5"], ["\u22125", "5"], ["+5", "5"], ["5%", "5"], ["$5", "5"], ["C++", "C"], ["A+", "A"], [".5", "5"], ["(a) and (b)", "a) and (b"], ["(a]", "a"], ["5)", "5"]]) {
      assert.equal(await reward(exact, got, ref, o), 0, `${got} vs ${ref}`);
    }
    assert.equal(normalize("  ( x )  ", { whitespace: false, stripPunctuation: true }), "x");
  });
  test("superscripts, subscripts and vulgar fractions keep their meaning: NFKC made 10² the text 102", async () => {
    for (const [got, ref] of [["10²", "102"], ["x₁", "x1"], ["2³", "23"], ["1½", "11/2"]]) assert.equal(await reward(exact, got, ref), 0, `${got} vs ${ref}`);
    for (const [got, ref] of [["10²", "10^2"], ["x₁", "x_1"], ["1½", "1 1/2"], ["½", "1/2"], ["1⁄2", "1/2"], ["x⁻¹", "x^-1"], ["ＡＢＣ", "abc"], ["10²", "10²"]]) {
      assert.equal(await reward(exact, got, ref), 1, `${got} vs ${ref}`);
    }
    const long = "a ".repeat(20_000) + "10²"; // the sliced path for long texts
    assert.equal(await normalizeSliced(long), normalize(long));
    assert.ok((await normalizeSliced(long)).endsWith("10^2"));
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
    // the last commitment that names a letter; a later mention or a letterless phrase does not hide it
    ["The answer is B. Option A is wrong because it ignores friction.", "B"],
    ["The answer is B. The other options are incorrect.", "B"],
    ["The answer is B. The other choices contradict the data.", "B"],
    ["The answer is B. This answer is a direct consequence of Newton's law.", "B"],
    ["Option B is wrong because it ignores friction.", null],
    ["I would go with option B.", "B"],
    ["The best fit is C, not option B.", null],
    ["The correct answer is option B.", "B"],
    ["**Answer**: B", "B"],
    // the letter wrapped in math or markdown
    ["The answer is $B$", "B"],
    ["The answer is $\\text{B}$.", "B"],
    ["The answer is \\textbf{(B)}", "B"],
    ["The answer is **B**.", "B"],
    // the pronoun I is not option I; option I still is
    ["Answer: I think it is B", "B"],
    ["The answer is B and I am confident.", "B"],
    ["Answer: I'd say B", "B"],
    ["The answer is (I).", "I"],
    ["The answer is I.", "I"],
    ["The answer is **I**", "I"],
    // <answer>…</answer>, read as \boxed{} is: the later of the two
    ["<think>hmm</think>\n<answer>B</answer>", "B"],
    ["<think>hmm</think>\n<answer>(B)</answer>", "B"],
    ["<think>hmm</think>\n<answer> B </answer>", "B"],
    ["\\boxed{A} on second thought <answer>C</answer>", "C"],
    ["<answer>The answer is D</answer>", "D"],
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
    // hedges: each of these paid its first letter
    for (const hedge of ["The answer is A or maybe B.", "The answer is A or possibly B", "The answer is A and/or B.", "Answer: A, or B", "The answer is A (or B)",
      "The answer is A vs B", "The answer is (A)(B)(C)(D)", "<answer>A B C D</answer>", "\\boxed{A \\text{ or } B}", "\\boxed{A \\vee B}", "\\boxed{A|B}", "\\boxed{(A) (B)}"]) {
      assert.equal(await reward(choice, hedge, "A"), 0, hedge);
    }
    // and what is not a hedge still commits
    for (const [text, want] of [["The answer is B; A is wrong.", "B"], ["The answer is B (since A fails)", "B"], ["The answer is (B), as shown", "B"], ["\\boxed{C because x}", "C"], ["\\boxed{A is right}", "A"]]) {
      assert.equal(await reward(choice, text, want), 1, text);
    }
  });
  test("a mention of another option after the committed answer is not the answer (false positive and negatives)", async () => {
    assert.equal(await reward(choice, "The answer is C. Option B is wrong because it ignores friction.", "B"), 0);
    assert.equal(await reward(choice, "The answer is B. Option A is wrong because it ignores friction.", "B"), 1);
    assert.equal(await reward(choice, "The answer is B. The other options are incorrect.", "B"), 1);
    assert.equal(await reward(choice, "The answer is B and I am confident.", "B"), 1);
    assert.equal(await reward(choice, "Answer: I think it is B", "B"), 1);
    assert.equal(await reward(choice, "Answer: I think it is B", "I", { num_choices: 10 }), 0);
    assert.equal(await reward(choice, "The answer is (I).", "I", { num_choices: 10 }), 1);
    assert.equal(await reward(choice, "The answer is $B$", "B"), 1);
  });
  test("<answer>B</answer> is read", async () => {
    assert.equal(await reward(choice, "<think>hmm</think>\n<answer>B</answer>", "B"), 1);
    assert.equal(await reward(choice, "<think>hmm</think>\n<answer>(B)</answer>", "B"), 1);
    const out = await verifyDirect(choice, { response: "<think>the answer is B</think><answer>C</answer>", reference: "B" });
    assert.equal(out.reward, 0);
    assert.equal((out.details as any).via, "answer tag");
    assert.equal(await reward(choice, "<answer>A, B</answer>", "B"), 0);
  });
  test("1 MiB of hostile text around the new shapes is read in linear time", async () => {
    const MB = 1 << 20;
    const shapes = ["answer is I think ", "option B ", "answer is (", "answer is A, ", "I ", "\\text{", "$", "not option B "];
    for (const u of shapes) {
      const run = u.repeat(Math.ceil(MB / u.length));
      for (const text of [run, run + "x", "<answer>" + run + "</answer>", "\\boxed{" + run + "}"]) {
        const { ms } = await fastestCpu(() => extractChoice(text), { under: 80 });
        assert.ok(ms < 80, `${JSON.stringify(u)}: ${ms} ms of CPU`);
      }
    }
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
    ["<think>x </answer></think><answer>4</answer>", /<\/answer> appears inside the think block/],
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
      // whitespace at both ends, sentence punctuation at the end, then a pair of quotes,
      // emphasis marks or matching brackets around everything; again until nothing changes
      const pairs: Record<string, string> = { '"': '"', "'": "'", "`": "`", "*": "*", _: "_", "“": "”", "‘": "’", "«": "»", "„": "“", "‚": "‘", "‹": "›", "「": "」", "『": "』" };
      const brackets: Record<string, string> = { "(": ")", "[": "]", "{": "}" };
      const matchOfFirst = (u: string) => {
        const stack: number[] = [];
        for (let i = 0; i < u.length; i++) {
          if (u[i]! in brackets) stack.push(i);
          else if (stack.length && brackets[u[stack[stack.length - 1]!]!] === u[i]) if (stack.pop() === 0) return i;
        }
        return -1;
      };
      for (;;) {
        let b = t.length;
        while (b > 0 && /[\s.,;:!?。]/u.test(t[b - 1]!)) b--;
        let a = 0;
        while (a < b && /\s/u.test(t[a]!)) a++;
        t = t.slice(a, b);
        if (t.length >= 2 && (pairs[t[0]!] === t[t.length - 1] || (brackets[t[0]!] === t[t.length - 1] && matchOfFirst(t) === t.length - 1))) t = t.slice(1, -1);
        else break;
      }
    }
    return o.caseSensitive ? t : t.toLowerCase();
  };
  const options = [{}, { stripPunctuation: true }, { whitespace: false, stripPunctuation: true }, { caseSensitive: true }];

  test("isSpaceCode is \\s over the whole BMP", () => {
    for (let c = 0; c < 0x10000; c++) assert.equal(isSpaceCode(c), /\s/.test(String.fromCharCode(c)), c.toString(16));
  });

  test("normalize and normalizeSliced agree with the reference on random and long texts", async () => {
    const alphabet = [" ", "\t", "\n", "\u00a0", "\u3000", "a", "B", ".", "!", "😀", "é", "\u0301", "ﬁ", "  ", "\ud800", "İ", "(", ")", "[", "]", '"', "*", "-", "%", "“", "”"];
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
    // 512 Ki nested pairs, each dropped: the brackets are matched once, not once a pair
    for (const nested of ["(".repeat(1 << 19) + ")".repeat(1 << 19), "\"".repeat(1 << 20), "(".repeat(1 << 19) + "x" + "]".repeat(1 << 19)]) {
      const pairs = await fastestCpu(() => normalize(nested, { stripPunctuation: true }), { under: 80 });
      assert.ok(pairs.ms < 80, `strip_punctuation on 1 MiB of nested pairs: ${pairs.ms} ms of CPU`);
    }
  });
});

describe("the event loop keeps turning on hostile text (prober's findings)", () => {
  test("exact: 1 Mi of U+FDFA (18 characters each under NFKC) against a short reference", async () => {
    await verifyDirect(exact, { response: "\ufdfa".repeat(20_000), reference: "B" }); // NFKC's data loaded once
    const { out, gap } = await longestGap(() => verifyDirect(exact, { response: "\ufdfa".repeat(999_900), reference: "B" }));
    assert.equal(out.reward, 0);
    // Before: 0.7-1.6 s, /healthz blocked 330-840 ms; now the answer stops being normalised once it is longer than "b".
    assert.ok(gap < 100, `the event loop waited ${gap.toFixed(0)} ms`);
    assert.equal(await reward(exact, "\ufdfa".repeat(20_000) + "x", "\ufdfa".repeat(20_000) + "X"), 1);
  });
  test("exact: a run of combining marks is not normalised (NFKC's reordering is quadratic in it)", async () => {
    const t0 = performance.now();
    const out = await verifyDirect(exact, { response: "e" + "\u0301\u0316".repeat(40_000), reference: "e" });
    assert.equal(out.reward, 0);
    assert.match(out.reason, /combining/);
    assert.ok(performance.now() - t0 < 500, `${(performance.now() - t0).toFixed(0)} ms`); // before: ~2 s (80 Ki marks), 350 s for 1 Mi
    assert.equal(await reward(exact, "e" + "\u0301".repeat(MAX_MARK_RUN), "e" + "\u0301".repeat(MAX_MARK_RUN)), 1);
  });
  test("exact: normalising in slices equals normalising whole texts", async () => {
    const alphabet = ["a", "B", " ", "\n", "\u0301", "\u0316", "é", "\ufdfa", "ﬁ", "²", "³", "½", "1", "\u1100", "\u1161", "\u11a8", "가", "\u314f", "😀", "\ud800", "\udc00", "İ", "Σ", "ς", "ＡＢ", "\u0b47", "\u0b3e", "\u3099", "か", "\uff76", "\uff9e", ".", "(", ")"];
    let seed = 11;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    for (let k = 0; k < 12; k++) {
      let s = "";
      while (s.length < 40_000) s += alphabet[rand(alphabet.length)];
      assert.equal(await nfkcSliced(s), spellRaised(s, "text").normalize("NFKC"), `text ${k}`);
      for (const o of [{}, { stripPunctuation: true }, { caseSensitive: true }]) assert.equal(await normalizeSliced(s, o), normalize(s, o));
    }
  });
  test("lower-casing never shortens a code point (normalizeSlicedWithin relies on it)", () => {
    for (let c = 0; c < 0x110000; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      const ch = String.fromCodePoint(c);
      assert.ok(ch.toLowerCase().length >= ch.length, c.toString(16));
    }
  });
  test("exact last_line: the same line as splitting, trimming and filtering, without the split", async () => {
    const old = (t: string) => {
      const lines = t.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
      return lines.length ? lines[lines.length - 1] : null;
    };
    const alphabet = ["\n", "\r\n", "\r", " ", "\t", "\u00a0", "a", "B c", "\u2028", ""];
    let seed = 3;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    for (let k = 0; k < 5000; k++) {
      let s = "";
      for (let j = rand(12); j > 0; j--) s += alphabet[rand(alphabet.length)];
      assert.equal(extractAnswer(s, { extract: "last_line", strip_think: false }), old(s), JSON.stringify(s));
    }
    const { out, gap } = await longestGap(() => verifyDirect(exact, { response: "B\n" + "\n".repeat(1_000_000), reference: "B", options: { extract: "last_line" } }));
    assert.equal(out.reward, 1);
    assert.ok(gap < 100, `the event loop waited ${gap.toFixed(0)} ms`); // before: 320-420 ms
  });
  test("regex: 1 MB against 8 case-insensitive patterns is over max_response_chars, and the loop turns between patterns", async () => {
    const patterns = Array(8).fill("[0-9]+(\\.[0-9]+)?\\s*(cm|mm|k0)");
    const { out, gap } = await longestGap(() => verifyDirect(regex, { response: "1 ".repeat(499_950), reference: patterns, options: { case_insensitive: true } }));
    assert.equal(out.reward, 0);
    assert.match(out.reason, /max_response_chars/);
    assert.ok(gap < 100, `the event loop waited ${gap.toFixed(0)} ms`); // before: 1.54 s
    await verifyDirect(regex, { response: "1 ".repeat(32_000), reference: patterns, options: { case_insensitive: true, max_response_chars: REGEX_MAX_CHARS } });
    const atCap = await longestGap(() => verifyDirect(regex, { response: "1 ".repeat(REGEX_MAX_CHARS / 2), reference: Array(64).fill(patterns[0]), options: { case_insensitive: true, max_response_chars: REGEX_MAX_CHARS } }));
    assert.equal(atCap.out.reward, 0);
    assert.match(atCap.out.reason, /none of 64/);
    assert.ok(atCap.gap < 150, `the event loop waited ${atCap.gap.toFixed(0)} ms`);
  });
  test("choice: 'or' between LaTeX spaces is the hedge `A \\text{ or } B` is", async () => {
    for (const r of ["Answer: B\\,or\\,C", "Answer: B\\;or\\;C", "Answer: B\\ or\\ C", "The answer is $B \\quad or \\quad C$", "Answer: B~or~C"]) {
      assert.equal(await reward(choice, r, "B"), 0, r);
    }
    for (const r of ["Answer: B\\,", "Answer: $B$\\, because it is", "Answer: B. Or, put differently, the second."]) assert.equal(await reward(choice, r, "B"), 1, r);
  });
});
