/**
 * A completion cut off while it reasoned (a `<think>` that never closes: the trainer's token
 * limit) answered nothing. A draft inside its reasoning must not be paid as the answer: every
 * verifier that reads the answer part reads "" there (src/core/completion.ts afterThink). The
 * same answer after a closed `</think>` is paid in full, so each case shows the rule and not a
 * broken verifier.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { verifyDirect } from "./helpers.js";
import type { AnyVerifier } from "../src/core/verifier.js";
import { afterThink } from "../src/core/completion.js";
import { exact } from "../verifiers/text/exact.js";
import { regex } from "../verifiers/text/regex.js";
import { json } from "../verifiers/json/index.js";
import { iouVerifier } from "../verifiers/iou/index.js";
import { patch } from "../verifiers/patch/index.js";
import { bleu, chrf, rouge } from "../verifiers/overlap/index.js";
import { ifeval } from "../verifiers/ifeval/index.js";
import { math } from "../verifiers/math/index.js";
import { extractProgram } from "../verifiers/code/extract.js";
import { extractModule } from "../verifiers/verilog/source.js";

test("afterThink: after the last </think>; all of a text with no think block; nothing of one never closed", () => {
  assert.equal(afterThink("<think>a</think>b<think>c</think>d"), "d");
  assert.equal(afterThink("plain answer"), "plain answer");
  assert.equal(afterThink("the template opened it</think>answer"), "answer");
  assert.equal(afterThink("<think>cut off while reasoning: 42"), "");
  assert.equal(afterThink("<reasoning>cut off", "reasoning"), "");
  assert.equal(afterThink("<think>cut off", "reasoning"), "<think>cut off");
  assert.equal(afterThink("<think>a</think>draft<think>opened again, then cut off"), "");
  // a <think> quoted or in a code block names the tag: the answer stays
  assert.equal(afterThink("```python\nprint('<think>')\n```"), "```python\nprint('<think>')\n```");
  assert.equal(afterThink("<think>r</think>Use `<think>` tags."), "Use `<think>` tags.");
  assert.equal(afterThink("<think>r</think>\n```xml\n<think>\n```\nso 4"), "\n```xml\n<think>\n```\nso 4");
  assert.equal(afterThink("```\nx\n```\n<think>reopened after a closed fence"), "");
  const t0 = performance.now();
  afterThink("```\n" + "'<think>".repeat(200_000));
  afterThink("\n```".repeat(200_000) + "<think>");
  assert.ok(performance.now() - t0 < 500);
});

const diff = ["--- a/m.py", "+++ b/m.py", "@@ -1,2 +1,2 @@", " def f(x):", "-    return x + 1", "+    return x + 2", ""].join("\n");
const targets: [string, AnyVerifier, unknown, string, Record<string, unknown>?][] = [
  ["exact, the boxed answer", exact, "5", "\\boxed{5}", { extract: "boxed" }],
  ["regex, searched", regex, "\\ba{3}\\b", "aaa", { mode: "search" }],
  ["json", json, { expected: { a: 1 } }, '{"a": 1}'],
  ["iou", iouVerifier, [0, 0, 10, 10], "[0, 0, 10, 10]"],
  ["patch (unified diff)", patch, diff, diff],
  ["bleu", bleu, "the cat sat on the mat", "the cat sat on the mat"],
  ["chrf", chrf, "the cat sat on the mat", "the cat sat on the mat"],
  ["rouge", rouge, "the cat sat on the mat", "the cat sat on the mat"],
  ["math", math, "42", "The answer is \\boxed{42}."],
  // "no commas" is followed by an empty text too: the unfinished reasoning must not be read
  ["ifeval", ifeval, { instruction_id_list: ["punctuation:no_comma"], kwargs: [{}] }, "hello world"],
];

for (const [name, v, reference, answer, options] of targets) {
  test(`${name}: a right answer drafted inside a <think> that never closes earns nothing`, async () => {
    const closed = await verifyDirect(v, { response: `<think>Let me work it out.</think>${answer}`, reference, options });
    assert.ok((closed.reward ?? 0) > 0.99, `after a closed think: ${closed.reward} (${closed.reason})`);
    const cut = await verifyDirect(v, { response: `<think>Let me try:\n${answer}\nHmm wait maybe I should`, reference, options });
    // 0, or the verifier's own penalty for no answer (patch: SWE-RL's -1); never null, never paid
    assert.ok(cut.reward !== null && cut.reward <= 0, `truncated: ${cut.reward} (${cut.reason})`);
  });
}

test("code and verilog: nothing is extracted from a think block that never closes", () => {
  assert.equal(extractProgram("<think>Try:\n```python\nprint(1)\n```\nhmm", "python").code.trim(), "");
  assert.equal(extractProgram("<think>x</think>\n```python\nprint(1)\n```", "python").code.trim(), "print(1)");
  assert.equal(extractModule("<think>Try:\n```verilog\nmodule m; endmodule\n```\nhmm").code, "");
  assert.equal(extractModule("<think>x</think>\n```verilog\nmodule m; endmodule\n```").code.trim(), "module m; endmodule");
});
