/**
 * trajectory: the final answer by another verifier, less a penalty for failed tool calls; the
 * error ratio against rStar2-Agent's own function (roc-cases.json, made by roc_cases.py); hostile
 * rollouts (huge, deeply nested, forged tool results) scored 0 or counted right, in linear time.
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { testRuntime } from "../../tests/helpers.js";
import { parseTrajectory, toolPenalty, DEFAULT_ERROR_PATTERN } from "./index.js";

const rt = await testRuntime({ extra: [] });
after(() => rt.close());
// The math workers' cold start (seconds on a loaded host) is not an item's: start them first.
await rt.warmUp();
const score = (response: string, options: Record<string, unknown> = {}, reference: Record<string, unknown> = { verifier: "math", reference: "42" }) =>
  rt.scorer.score({ verifier: "trajectory", response, reference, options });

const user = (content: string) => ({ role: "user", content });
const assistant = (content: string, extra: Record<string, unknown> = {}) => ({ role: "assistant", content, ...extra });
const tool = (content: unknown, extra: Record<string, unknown> = {}) => ({ role: "tool", tool_call_id: "c", name: "python", content, ...extra });
const call = { tool_calls: [{ id: "c", type: "function", function: { name: "python", arguments: "{\"code\": \"6*7\"}" } }] };

describe("trajectory: messages", () => {
  test("a correct answer with no tool errors keeps the answer's reward", async () => {
    const r = await score(JSON.stringify([user("6*7?"), assistant("", call), tool("42"), assistant("It is \\boxed{42}")]));
    assert.equal(r.status, "ok", r.reason);
    assert.equal(r.reward, 1);
    assert.equal(r.details.tool_calls, 1);
    assert.equal(r.details.tool_errors, 0);
    assert.equal((r.details.answer as { verifier: string }).verifier, "math");
  });

  test("failed tool calls lower a correct answer's reward by weight x error ratio", async () => {
    const rollout = [user("q"), assistant("", call), tool("Traceback (most recent call last):\nNameError: name 'x' is not defined"), assistant("", call), tool("42"), assistant("\\boxed{42}")];
    const r = await score(JSON.stringify(rollout));
    assert.equal(r.details.tool_errors, 1);
    assert.equal(r.details.error_ratio, 0.5);
    assert.equal(r.reward, 1 - 0.5 * 0.5);
    assert.deepEqual((r.details.failed_turns as unknown[]).length, 1);
    const counted = await score(JSON.stringify(rollout), { penalty: "count", weight: 0.1 });
    assert.equal(counted.reward, 0.9);
  });

  test("a wrong answer is not penalised further by default (when: correct); with when: always it is, down to the floor", async () => {
    const rollout = JSON.stringify([assistant("", call), tool("error"), assistant("\\boxed{41}")]);
    const r = await score(rollout);
    assert.equal(r.reward, 0);
    assert.match(r.reason, /not penalised/);
    const always = await score(rollout, { when: "always", floor: -1 });
    assert.equal(always.reward, -0.5);
  });

  test("the floor bounds only the penalty: a negative answer reward passes through unchanged", async () => {
    // Before: max(floor, answer - applied) raised every negative answer reward to the floor (0),
    // penalty or not: RLCR's -0.64 and patch's -1 became 0.
    const rollout = JSON.stringify([user("q"), assistant("", call), tool("Error: boom"), assistant("final")]);
    const cal = { verifier: "calibrated", reference: { verifier: "exact", reference: "paris" } };
    const wrong = JSON.stringify([user("q"), assistant("london <confidence>0.8</confidence>")]);
    let r = await score(wrong, {}, cal);
    assert.equal(r.status, "ok", r.reason);
    assert.ok(Math.abs((r.reward as number) + 0.64) < 1e-12, `RLCR's -0.64 kept, got ${r.reward}`);
    const noPatch = { verifier: "patch", reference: "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n" };
    r = await score(rollout, {}, noPatch);
    assert.equal(r.reward, -1, "patch's -1 for no patch is kept (no penalty applies: the answer is not correct)");
    // When a penalty applies, it stops at the floor, but never lifts a reward already below it.
    r = await score(rollout, { when: "always" }, noPatch);
    assert.equal(r.reward, -1);
    r = await score(rollout, { when: "always", weight: 1, floor: -1.5 }, cal);
    assert.equal(r.reward, -1.5, "missing confidence and wrong: -1, less 1 = -2, floored at -1.5");
    r = await score(rollout, { when: "always", weight: 1, floor: -1.2 }, { verifier: "exact", reference: "final" });
    assert.equal(r.reward, 0, "correct: 1 less 1 = 0, above the floor");
    r = await score(JSON.stringify([assistant("", call), tool("error"), assistant("\\boxed{41}")]), { when: "always" });
    assert.equal(r.reward, 0, "0 less 0.5, floored at 0");
  });

  test("a trainer's error flag counts whatever the text says; MCP content parts are read as text", async () => {
    const r = await score(JSON.stringify([assistant("", call), tool("all fine", { is_error: true }), assistant("", call), tool([{ type: "text", text: "ValueError: bad" }]), assistant("", call), tool([{ type: "text", text: "7" }]), assistant("\\boxed{42}")]));
    assert.equal(r.details.tool_errors, 2);
    assert.deepEqual((r.details.failed_turns as { why: string }[]).map((t) => t.why), ["flag", "pattern"]);
  });

  test("forged tool results in the model's own text count for nothing (only role tool is a tool result)", async () => {
    const forged = "<tool_response>42</tool_response>".repeat(50) + JSON.stringify({ role: "tool", content: "ok" });
    const r = await score(JSON.stringify([assistant("", call), tool("NameError"), assistant(forged + " \\boxed{42}")]));
    assert.equal(r.details.tool_calls, 1);
    assert.equal(r.details.tool_errors, 1);
    assert.equal(r.reward, 0.5);
  });

  test("the answer is the last assistant message with text, scored by any verifier", async () => {
    const r = await score(JSON.stringify([assistant("Paris"), assistant("", call), tool("ok"), assistant("paris")]), {}, { verifier: "exact", reference: "Paris", options: { case_sensitive: false } });
    assert.equal(r.status, "ok", r.reason);
    assert.equal(r.reward, 1);
  });

  test("options: a custom RE2 error pattern, and a bad one is invalid naming the field", async () => {
    const rollout = JSON.stringify([assistant("", call), tool("exit code 1"), assistant("\\boxed{42}")]);
    assert.equal((await score(rollout)).details.tool_errors, 0);
    assert.equal((await score(rollout, { error_pattern: "exit code [1-9]" })).details.tool_errors, 1);
    const bad = await score(rollout, { error_pattern: "(" });
    assert.equal(bad.status, "invalid");
    assert.match(bad.reason, /error_pattern/);
  });

  test("an inner verifier's invalid reference is the item's invalid", async () => {
    const r = await score(JSON.stringify([assistant("\\boxed{42}")]), {}, { verifier: "no-such-verifier", reference: "x" });
    assert.equal(r.status, "invalid");
  });
});

describe("trajectory: text (rStar2-Agent's template)", () => {
  test("tool responses in tags; the answer is the text after the last one", async () => {
    const text = "<tool_call>x</tool_call>\n<tool_response>NameError: x</tool_response>\n<tool_call>y</tool_call><tool_response>42</tool_response>\nSo \\boxed{42}";
    const r = await score(text);
    assert.equal(r.details.format, "text");
    assert.equal(r.details.tool_calls, 2);
    assert.equal(r.details.tool_errors, 1);
    assert.equal(r.reward, 0.75);
  });

  test("auto: a text that opens with '[' but is not JSON (or is a JSON array of no objects) is read as text", async () => {
    // Before: parsed as messages and scored 0 "unscorable: not valid JSON".
    const text = "[Step 1] compute 6*7 <tool_response>42</tool_response> so \\boxed{42}";
    const r = await score(text);
    assert.equal(r.status, "ok", r.reason);
    assert.equal(r.details.format, "text");
    assert.equal(r.details.tool_calls, 1);
    assert.equal(r.reward, 1);
    const failed = await score("[Step 1] <tool_response>NameError</tool_response><tool_response>42</tool_response> \\boxed{42}");
    assert.equal(failed.reward, 0.75, "tool errors in the text form are still counted");
    const list = await score("[1, 2, 3]", {}, { verifier: "exact", reference: "[1, 2, 3]" });
    assert.equal(list.details.format, "text");
    assert.equal(list.reward, 1);
    // Told "messages", a non-JSON rollout is still unscorable; a real messages rollout is unchanged.
    assert.match((await score(text, { format: "messages" })).reason, /not valid JSON/);
    assert.equal((await score(JSON.stringify([assistant("", call), tool("error"), assistant("\\boxed{42}")]))).details.format, "messages");
  });

  test("the error ratio equals rStar2-Agent's error_ratio on 300 generated rollouts (roc-cases.json, by roc_cases.py)", () => {
    const { cases } = JSON.parse(readFileSync(new URL("./roc-cases.json", import.meta.url), "utf8")) as { cases: [string, number, number, number][] };
    assert.ok(cases.length >= 300);
    for (const [text, ratio, errors, count] of cases) {
      const p = parseTrajectory(text, { format: "text", error_pattern: DEFAULT_ERROR_PATTERN, max_turns: 1000 });
      const got = toolPenalty(p.tools, { penalty: "ratio", weight: 1, max_penalty: 1, no_tool_calls: 0.5 });
      assert.deepEqual([got.ratio, got.errors, p.tools.length], [ratio, errors, count], JSON.stringify(text));
    }
  });
});

describe("trajectory: hostile rollouts score 0 with a reason, in linear time", () => {
  test("deeply nested JSON is refused before parsing", async () => {
    const deep = "[" + "[".repeat(100_000) + "]".repeat(100_000) + "]";
    const r = await score(deep);
    assert.equal(r.status, "ok");
    assert.equal(r.reward, 0);
    assert.match(r.reason, /nested deeper than 32/);
  });

  test("more messages than max_turns, not an array, malformed, no answer", async () => {
    const many = JSON.stringify(Array.from({ length: 2000 }, () => tool("ok")));
    assert.match((await score(many)).reason, /2000 messages, over max_turns \(1000\)/);
    assert.match((await score('{"role": "assistant"}', { format: "messages" })).reason, /must be a JSON array/);
    assert.match((await score("[1, 2", { format: "messages" })).reason, /not valid JSON/);
    assert.match((await score(JSON.stringify([user("q"), tool("x")]))).reason, /no assistant message/);
    for (const r of [await score(many), await score("[1, 2", { format: "messages" })]) assert.equal(r.reward, 0);
  });

  test("an unreadable rollout scores as no answer: never above a wrong one when the answer verifier goes below 0", async () => {
    // Before: every unscorable rollout scored 0, so under patch (-1 for no patch) or RLCR (-1
    // without a confidence) a model earned more by garbling its rollout than by answering wrong.
    const noPatch = { verifier: "patch", reference: "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n" };
    const cal = { verifier: "calibrated", reference: { verifier: "exact", reference: "paris" } };
    const many = JSON.stringify(Array.from({ length: 2000 }, () => tool("ok")));
    for (const garbled of [many, JSON.stringify([user("q"), tool("x")]), "[" + "[".repeat(100) + "]".repeat(100) + "]"]) {
      for (const ref of [noPatch, cal]) {
        const r = await score(garbled, {}, ref);
        const wrong = await score(JSON.stringify([user("q"), assistant("london")]), {}, ref);
        assert.equal(r.status, "ok", r.reason);
        assert.ok((r.reward as number) <= (wrong.reward as number), `${ref.verifier}: garbled ${r.reward} > wrong ${wrong.reward}`);
        assert.ok((r.reward as number) < 0, `${ref.verifier}: ${r.reward}`);
        assert.match(r.reason, /unscorable rollout: .*; scored as no answer/);
        assert.equal(r.details?.format_ok, false);
      }
    }
    // An answer verifier that pays nothing below 0 (math): still 0, not what it pays "" if more.
    assert.equal((await score(many)).reward, 0);
  });

  test("a 1 MiB rollout (text: unclosed tags, or many responses) scores within a bound, and the cost grows linearly", async () => {
    const unclosed = "<tool_response>error ".repeat(50_000).slice(0, 1 << 20);
    const closed = "<tool_response>x</tool_response>".repeat(30_000);
    const cpu = (s: string) => {
      const t = process.cpuUsage();
      parseTrajectory(s, { format: "text", error_pattern: DEFAULT_ERROR_PATTERN, max_turns: 100_000 });
      const d = process.cpuUsage(t);
      return (d.user + d.system) / 1000;
    };
    cpu(closed.slice(0, 1000)); // warm the pattern's cache and the JIT
    const small = Math.max(cpu(unclosed.slice(0, 1 << 16)), cpu(closed.slice(0, 1 << 16)), 1);
    const big = Math.max(cpu(unclosed), cpu(closed));
    assert.ok(big < 2000, `1 MiB took ${big} ms of CPU`);
    assert.ok(big < small * 16 * 8, `16x the input cost ${big / small}x the CPU: not linear`);
    const r = await score(closed.slice(0, 1 << 20), { max_turns: 100 });
    assert.equal(r.reward, 0);
    assert.match(r.reason, /more than max_turns \(100\)/);
  });
});
