/**
 * Every verifier that reads model text on the event loop, swept with families of hostile
 * completions rather than single strings: runs of each printable ASCII character, the line
 * terminators and the tokens the verifiers look for, laid out five ways, 64 KiB each. A
 * quadratic pass shows as seconds on one of them (verifiers/math/hostile.test.ts found five in
 * the math verifier this way, and tests/linear-host.test.ts holds the single shapes found before).
 * Timed in CPU time, so a busy machine's neighbours do not count; a verifier's first item (its
 * code compiling) is not timed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { verifyDirect } from "./helpers.js";
import type { AnyVerifier } from "../src/core/verifier.js";
import { exact } from "../verifiers/text/exact.js";
import { choice } from "../verifiers/text/choice.js";
import { regex } from "../verifiers/text/regex.js";
import { format } from "../verifiers/text/format.js";
import { json } from "../verifiers/json/index.js";
import { toolCall } from "../verifiers/tool_call/index.js";
import { iouVerifier } from "../verifiers/iou/index.js";
import { patch } from "../verifiers/patch/index.js";
import { bleu, chrf, rouge } from "../verifiers/overlap/index.js";
import { ifeval } from "../verifiers/ifeval/index.js";

/** 64 KiB; IFEval's every-instruction reference reads each text ~40 times (32 KiB: ~25 ms an item, ~15 s in all). */
const N = 64 * 1024;
const units: string[] = [];
for (let c = 32; c < 127; c++) units.push(String.fromCharCode(c));
units.push("\n", "\r", "\t", "\u2028", "\u00a0", "é", "日", "😀", "\\boxed{", "answer is ", "```", "```python\n", "<tool_call>", "{\"a\":", "<think>", "</think>", "<answer>", "<<", "* ", "1. ", "P.S.", "\n\n", " \n", "**", "<<<<<<< SEARCH\n", "=======\n", "(A) ");

const shapes: [string, (u: string, n: number) => string][] = [
  ["a run", (u, n) => u.repeat(Math.ceil(n / u.length)).slice(0, n)],
  ["a run, then a letter", (u, n) => u.repeat(Math.ceil(n / u.length)).slice(0, n - 1) + "x"],
  ["a letter, a run, a letter", (u, n) => "x" + u.repeat(Math.ceil(n / u.length)).slice(0, n - 2) + "y"],
  ["unit and line break, repeated", (u, n) => (u + "\n").repeat(Math.ceil(n / (u.length + 1))).slice(0, n)],
  ["unit and space, repeated", (u, n) => (u + " ").repeat(Math.ceil(n / (u.length + 1))).slice(0, n)],
];

/** Every IFEval instruction in one reference: each item checks them all. */
const IFEVAL: [string, Record<string, unknown>][] = [
  ["keywords:existence", { keywords: ["banana"] }], ["keywords:frequency", { keyword: "a", frequency: 3, relation: "at least" }],
  ["keywords:forbidden_words", { forbidden_words: ["x"] }], ["keywords:letter_frequency", { letter: "a", let_frequency: 3, let_relation: "at least" }],
  ["language:response_language", { language: "en" }], ["length_constraints:number_sentences", { num_sentences: 3, relation: "at least" }],
  ["length_constraints:number_paragraphs", { num_paragraphs: 3 }], ["length_constraints:number_words", { num_words: 10, relation: "at least" }],
  ["length_constraints:nth_paragraph_first_word", { num_paragraphs: 2, nth_paragraph: 1, first_word: "the" }],
  ["detectable_content:number_placeholders", { num_placeholders: 2 }], ["detectable_content:postscript", { postscript_marker: "P.S." }],
  ["detectable_format:number_bullet_lists", { num_bullets: 3 }], ["detectable_format:constrained_response", {}],
  ["detectable_format:number_highlighted_sections", { num_highlights: 2 }], ["detectable_format:multiple_sections", { section_spliter: "Section", num_sections: 2 }],
  ["detectable_format:json_format", {}], ["detectable_format:title", {}], ["combination:two_responses", {}], ["combination:repeat_prompt", { prompt_to_repeat: "abc" }],
  ["startend:end_checker", { end_phrase: "Is there anything else" }], ["change_case:capital_word_frequency", { capital_frequency: 3, capital_relation: "at least" }],
  ["change_case:english_capital", {}], ["change_case:english_lowercase", {}], ["punctuation:no_comma", {}], ["startend:quotation", {}],
  ["detectable_format:square_brackets", {}], ["detectable_format:sentence_hyphens", {}], ["keywords:palindrome", {}], ["keywords:word_once", { keyword: "a" }],
  ["keywords:no_adjacent_consecutive", {}], ["punctuation:punctuation_dot", {}], ["punctuation:punctuation_exclamation", {}], ["detectable_format:bigram_wrapping", {}],
  ["keywords:start_end", {}], ["keywords:exclude_word_harder", { keyword: "a" }], ["keywords:keyword_specific_position", { keyword: "a", n: 1, m: 1 }],
  ["keywords:word_count_different_numbers", { keyword: "a", frequency: 2, relation: "at least" }],
];

const targets: [string, AnyVerifier, unknown, number?][] = [
  ["exact", exact, "5"], ["choice", choice, "B"], ["regex", regex, "^a+$"], ["format", format, undefined],
  ["json", json, { expected: { a: 1 } }], ["tool_call", toolCall, '<tool_call>\n{"name": "f", "parameters": {"a": 1}}\n</tool_call>'],
  ["iou", iouVerifier, [0, 0, 10, 10]], ["patch", patch, { code_context: { "a.py": "x = 1\n" }, oracle_new_content: { "a.py": "x = 2\n" } }],
  ["bleu", bleu, "the cat sat"], ["chrf", chrf, "the cat sat"], ["rouge", rouge, "the cat sat"],
  ["ifeval, every instruction", ifeval, { instruction_id_list: IFEVAL.map(([id]) => id), kwargs: IFEVAL.map(([, kw]) => kw) }, N / 2],
];

const cpu = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; };

for (const [name, v, reference, n = N] of targets) {
  test(`${name}: ${n / 1024} KiB of every hostile shape is scored in milliseconds, with a reward`, async () => {
    await verifyDirect(v, { response: "warm up the code paths: the answer is 5", reference }); // compiles, loads data
    const slow: string[] = [];
    // the first slow shape ends the sweep: a quadratic pass costs seconds on every shape like it
    sweep: for (const [shape, make] of shapes) {
      for (const u of units) {
        const response = make(u, n);
        const t0 = cpu();
        const out = await verifyDirect(v, { response, reference });
        const ms = cpu() - t0;
        assert.equal(typeof out.reward, "number", `${shape} of ${JSON.stringify(u)}: ${out.reason}`);
        // 1-20 ms each on an idle core; a quadratic pass takes seconds at this size. A slow one
        // is timed again before it counts (a busy CI machine can stall any single run).
        if (ms > 200) {
          const t1 = cpu();
          await verifyDirect(v, { response, reference });
          const again = cpu() - t1;
          if (again > 200) {
            slow.push(`${shape} of ${JSON.stringify(u)}: ${ms.toFixed(0)} ms, then ${again.toFixed(0)} ms`);
            break sweep;
          }
        }
      }
    }
    assert.deepEqual(slow, []);
  });
}
