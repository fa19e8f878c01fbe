/** ifeval: the two profiles, Python-literal references, and the Python semantics they rest on. */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { ifeval, BENCHMARK_MAX_CHARS, MAX_RESPONSE_CHARS } from "./index.js";
import { parsePyLiteral, PyLiteralError } from "./pyliteral.js";
import { pyJsonValid, pyReFold, pyIsUpper } from "./text.js";
import { IFEVALG_INSTRUCTIONS, splitIntoSentences } from "./ifevalg.js";
import { InvalidItemError } from "../../src/core/types.js";
import { verifyDirect } from "../../tests/helpers.js";

const run = (response: string, reference: unknown, options: Record<string, unknown> = {}) => verifyDirect(ifeval, { response, reference, options });
const NO_COMMA = { instruction_id_list: ["punctuation:no_comma"], kwargs: [{}] };

describe("profiles", () => {
  test("benchmark scores IFEval rows as written; rl cuts at </think>", async () => {
    const r = "<think>a, b</think>no commas";
    assert.equal((await run(r, NO_COMMA)).reward, 1);
    assert.equal((await run(r, NO_COMMA, { profile: "benchmark" })).reward, 0);
    assert.equal((await run(r, NO_COMMA, { profile: "benchmark", strip_think: true })).reward, 1);
    assert.equal((await run(r, NO_COMMA, { profile: "rl", strip_think: false })).reward, 0);
  });
  test("open-instruct rows are cut at </think> in both (remove_thinking_section does it)", async () => {
    const fn = { func_name: "validate_no_commas" };
    for (const profile of ["rl", "benchmark"]) assert.equal((await run("<|assistant|>a, b</think><answer>ok</answer>", fn, { profile })).reward, 1);
  });
  test("an empty func_name answer: 0 in rl, the function's own verdict in benchmark", async () => {
    const fn = { func_name: "validate_no_commas" };
    assert.equal((await run("<think>x</think>  ", fn)).reward, 0);
    assert.equal((await run("<think>x</think>  ", fn, { profile: "benchmark" })).reward, 1);
  });
  test("IFEvalVerifier rows ([{instruction_id}]): an empty answer scores 0 in both", async () => {
    const gt = "[{'instruction_id': ['punctuation:no_comma'], 'kwargs': [None]}]";
    for (const profile of ["rl", "benchmark"]) {
      const out = await run("<think>x</think><answer></answer>", gt, { profile });
      assert.equal(out.reward, 0);
      assert.equal((out.details as { empty?: boolean }).empty, true);
      assert.equal((await run("fine", gt, { profile })).reward, 1);
    }
  });
  test("length caps: 65,536 in rl, 262,144 in benchmark", async () => {
    const long = "x".repeat(MAX_RESPONSE_CHARS + 1);
    assert.equal((await run(long, NO_COMMA)).reward, 0);
    assert.equal((await run(long, NO_COMMA, { profile: "benchmark" })).reward, 1);
    const t0 = process.cpuUsage();
    const out = await run("y".repeat(BENCHMARK_MAX_CHARS + 1), NO_COMMA, { profile: "benchmark" });
    assert.equal((out.details as { too_long?: boolean }).too_long, true);
    const cpu = process.cpuUsage(t0);
    assert.ok(cpu.user + cpu.system < 2_000_000, `over the cap costs ${cpu.user} µs`);
  });
  test("an unknown profile is rejected by the options schema", async () => {
    await assert.rejects(run("x", NO_COMMA, { profile: "eval" }));
  });
});

describe("Python literals (ast.literal_eval's ground truth), never evaluated", () => {
  test("values", () => {
    assert.deepEqual(parsePyLiteral("[{'instruction_id': ['a:b'], 'kwargs': [None, {'N': 3, 'x': True, 'y': -2.5e1}]}]"), [
      { instruction_id: ["a:b"], kwargs: [null, { N: 3, x: true, y: -25 }] },
    ]);
    assert.deepEqual(parsePyLiteral(`('a' "b" r'\\n', """x\ny""", u'\\u00e9\\x41\\101\\'', 0x1F, 1_000, (1,), ())`), ["ab\\n", "x\ny", "éAA'", 31, 1000, [1], []]);
    assert.equal(parsePyLiteral("(5)"), 5);
    assert.deepEqual(parsePyLiteral("{'a': [1, 2,], }"), { a: [1, 2] });
    assert.deepEqual(parsePyLiteral("{'__proto__': 1}"), JSON.parse('{"__proto__": 1}'));
  });
  test("what is not a literal is refused, naming it", () => {
    for (const [src, re] of [
      ["__import__('os')", /name __import__ is not a literal/],
      ["{1, 2}", /sets are not supported/],
      ["b'x'", /bytes/],
      ["f'{x}'", /f-strings/],
      ["[1, 2", /expected , or \]/],
      ["'abc", /unterminated/],
      ["1j", /complex/],
      ["[".repeat(100) + "]".repeat(100), /deeper than 64/],
      ["[1] [2]", /text after the literal/],
    ] as const) assert.throws(() => parsePyLiteral(src), (e: unknown) => e instanceof PyLiteralError && re.test(e.message), src);
  });
  test("a reference that is neither JSON nor a literal is invalid, saying what to give", async () => {
    await assert.rejects(run("x", "[{'instruction_id': ['punctuation:no_comma'], 'kwargs': [nil]}]"), (e: unknown) => e instanceof InvalidItemError && /name nil/.test(e.message));
  });
});

describe("Python semantics", () => {
  test("re.IGNORECASE folding: İ, ı, ſ, final sigma", () => {
    assert.equal(pyReFold("İSTANBUL"), "istanbul");
    assert.equal(pyReFold("ıſ"), "is");
    assert.equal(pyReFold("ΟΔΟΣ"), pyReFold("οδος"));
  });
  test("json.loads accepts NaN and ±Infinity, not -NaN, not inside strings", () => {
    assert.equal(pyJsonValid('{"a": NaN, "b": [Infinity, -Infinity]}'), true);
    assert.equal(pyJsonValid("[-NaN]"), false);
    assert.equal(pyJsonValid('"NaN"'), true);
    assert.equal(pyJsonValid('{"a\\"NaN": 1}'), true);
    assert.equal(pyJsonValid("NaNx"), false);
  });
  test("isupper: Nº is not upper-case (º is Lowercase)", () => {
    assert.equal(pyIsUpper("Nº"), false);
    assert.equal(pyIsUpper("NO 5"), true);
    assert.equal(pyIsUpper("ǅ"), false);
  });
  test("IFEvalG split_into_sentences", () => {
    assert.deepEqual(splitIntoSentences("Mr. Smith went to Washington. He met J.K. Rowling at 3.5 p.m. today... Wow!"), [
      "Mr. Smith went to Washington.",
      "He met J.K. Rowling at 3.5 p.m. today...",
      "Wow!",
    ]);
  });
});

describe("IFEvalG's instructions on hostile responses at the benchmark cap", () => {
  const KW: Record<string, Record<string, unknown>> = {
    "copy:repeat_phrase": { phrase: "a b c", small_n: 2 }, "copy:copy": { prompt_to_repeat: "p" },
    "new:copy_span_idx": { prompt_to_repeat: "hello world", n_start: 1, n_end: 5 }, "keywords:word_once": { keyword: "a" },
    "keywords:word_count_different_numbers": { keyword: "a", frequency: 2, relation: "at least" }, "keywords:exclude_word_harder": { keyword: "a" },
    "first_word:first_word_sent": { first_word: "a" }, "first_word:first_word_answer": { first_word: "a" }, "last_word:last_word_sent": { last_word: "a" },
    "last_word:last_word_answer": { last_word: "a" }, "copy:copying_simple": { prompt_to_repeat: "p" }, "copy:copying_multiple": { prompt_to_repeat: "p", N: 2 },
    "count:lowercase_counting": { N: 2 }, "letters:letter_counting": { N: 2, relation: "at least" }, "count:counting_composition": { n_sent: 2, n_words: 2 },
    "count:count_increment_word": { keyword1: "a", keyword2: "b" }, "keywords:keyword_specific_position": { keyword: "a", n: 1, m: 1 },
    "letters:letter_counting2": { letter: "a", let_frequency: 2, let_relation: "at least" },
  };
  const n = BENCHMARK_MAX_CHARS;
  const inputs = ["a ".repeat(n / 2), "a.".repeat(n / 2), "A.B.".repeat(n / 4), "***".repeat(n / 3 - 1), "Mr. ".repeat(n / 4), "-".repeat(n), "a a b c\n".repeat(n / 8)];
  test("all 29 ids, 7 inputs each: scored (no crash), each under 3 s of CPU on a loaded machine", async () => {
    assert.equal(Object.keys(IFEVALG_INSTRUCTIONS).length + 1, 29);
    let worst = 0;
    for (const id of [...Object.keys(IFEVALG_INSTRUCTIONS), "letters:letter_counting2"]) {
      for (const t of inputs) {
        const t0 = process.cpuUsage();
        const out = await run(t, { instruction_id_list: [id], kwargs: [KW[id] ?? {}] }, { profile: "benchmark" });
        const cpu = process.cpuUsage(t0);
        assert.ok(out.reward === 0 || out.reward === 1, id);
        worst = Math.max(worst, (cpu.user + cpu.system) / 1000);
      }
    }
    assert.ok(worst < 3000, `worst ${worst.toFixed(0)} ms`);
    console.log(`IFEvalG worst item at ${n} characters: ${worst.toFixed(0)} ms CPU`);
  });
});
