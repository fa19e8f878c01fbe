/** The tool_call verifier as the server runs it: references, options, hostile input, HTTP. */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import { toolCall } from "./index.js";
import { testApp, verifyDirect, fastestCpu as fastest } from "../../tests/helpers.js";
import { InvalidItemError } from "../../src/core/types.js";

const GT = '<think>...</think>\n<tool_call>\n{"name": "get_weather", "parameters": {"city": "Paris", "unit": "c"}}\n</tool_call>';
const GOOD = '<think>Weather needed.</think>\n<tool_call>\n{"name": "get_weather", "parameters": {"city": "Paris", "unit": "c"}}\n</tool_call>';
const run = (response: string, reference: unknown, options: Record<string, unknown> = {}) => verifyDirect(toolCall, { response, reference, options });

describe("tool_call", () => {
  test("ToolRL's scale by default: 1 + 3 for a perfect call in ToolRL's layout", async () => {
    assert.equal((await run(GOOD, GT)).reward, 4);
  });
  test("a wrong value is a near miss; a wrong tool scores the minimum name/param credit", async () => {
    const near = (await run(GOOD.replace('"c"', '"f"'), GT)).reward!;
    const wrongTool = (await run(GOOD.replace("get_weather", "get_news"), GT)).reward!;
    assert.ok(near < 4 && near > wrongTool, `${near} ${wrongTool}`);
    assert.equal(wrongTool, 1 - 3); // format ok, correctness min (no name, no params match)
  });
  test("structured references, Hermes tags and OpenAI JSON score the same calls alike", async () => {
    const ref = [{ name: "get_weather", arguments: { city: "Paris", unit: "c" } }];
    const hermes = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}}\n</tool_call>';
    const openai = JSON.stringify({ tool_calls: [{ type: "function", function: { name: "get_weather", arguments: '{"unit":"c","city":"Paris"}' } }] });
    for (const response of [hermes, openai]) {
      const out = await run(response, ref, { format_rule: "parsed" });
      assert.equal(out.reward, 4, `${response}: ${out.reason}`);
    }
    // ToolRL's own layout rule marks the bare Hermes block as unformatted (no <think>).
    assert.equal((await run(hermes, ref, { format_rule: "toolrl" })).reward, 3);
  });
  test("normalize maps ToolRL's [-3, 4] onto [0, 1]", async () => {
    assert.equal((await run(GOOD, GT, { normalize: true })).reward, 1);
    assert.equal((await run("no calls at all", GT, { normalize: true })).reward, 0);
  });
  test("weights are options", async () => {
    const out = await run(GOOD.replace('"c"', '"f"'), GT, { value_weight: 0 });
    assert.equal(out.reward, 4); // values weigh nothing: names and parameter names all match
    assert.ok((await run(GOOD.replace('"c"', '"f"'), GT)).reward! < 4);
  });
  test("a ground truth without calls gives neutral correctness", async () => {
    const out = await run("<think>ok</think>\n<response>Hi</response>", "<think>x</think>\n<response>Hello</response>");
    assert.equal(out.reward, 1);
  });
  test("format_rule auto: the reference picks the rule, never the completion", async () => {
    const gt = '<think>...</think>\n<tool_call>\n{"name":"get_weather","parameters":{"city":"Paris","days":3}}\n</tool_call>';
    const bare = '{"name":"get_weather","parameters":{"city":"Paris","days":3}}';
    const perfect = '<think>x</think>\n<tool_call>\n{"name":"get_weather","parameters":{"city":"Paris","days":3}}\n</tool_call>';
    // ToolRL's rlla.py: format 0, correctness 3 for the bare call; the perfect layout earns 4.
    assert.equal((await run(bare, gt)).reward, 3);
    assert.equal((await run(bare, gt, { format_rule: "toolrl" })).reward, 3);
    assert.equal((await run(perfect, gt)).reward, 4);
    // A reference that only answers: neither a refusal nor a bare <response> has ToolRL's layout.
    const answers = "<think>x</think>\n<response>Hello</response>";
    assert.equal((await run("I refuse.", answers)).reward, 0);
    assert.equal((await run("<response>Hello</response>", answers)).reward, 0);
    assert.equal((await run("<think>y</think>\n<response>Hello</response>", answers)).reward, 1);
    // A list of calls implies no layout: the calls could be read, with tags or without.
    const list = [{ name: "get_weather", arguments: { city: "Paris", days: 3 } }];
    const hermes = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>';
    for (const response of [bare, hermes, perfect]) {
      const out = await run(response, list);
      assert.equal(out.reward, 4, `${response}: ${out.reason}`);
      assert.equal(out.details?.format_rule, "parsed");
    }
  });
  test("a list reference reads the calls after the reasoning: a call drafted in <think>, or in a cut-off think, is no call", async () => {
    // Before: each of these read the drafted call and scored the maximum, 4.
    const list = [{ name: "get_weather", arguments: { city: "Paris" } }];
    const call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
    for (const response of [`<think>Plan: ${call} then check... (cut off`, `<think>Maybe ${call}? No.</think>\nI cannot help with that.`, '<think>draft {"name":"get_weather","arguments":{"city":"Paris"}}']) {
      const out = await run(response, list);
      assert.equal(out.reward, -3, `${response}: ${out.reason}`);
      assert.match(out.reason, /unreadable/);
    }
    assert.equal((await run(`<think>I will call it.</think>\n${call}`, list)).reward, 4, "the call after the reasoning counts");
    // with no call in the ground truth, a cut-off think has said nothing: no format credit
    assert.equal((await run("<think>I would answer Paris", [])).reward, 0);
    assert.equal((await run("<think>ok</think>\nIt is sunny in Paris.", [])).reward, 1);
  });
  test("integers beyond 2^53 compare exactly against a ToolRL string, as Python's json reads them", async () => {
    const gt = '<think>x</think>\n<tool_call>\n{"name": "f", "parameters": {"id": 12345678901234567890}}\n</tool_call>';
    const call = (id: string) => `<think>y</think>\n<tool_call>\n{"name": "f", "parameters": {"id": ${id}}}\n</tool_call>`;
    assert.equal((await run(call("12345678901234567890"), gt)).reward, 4);
    assert.equal((await run(call("12345678901234567891"), gt)).reward, 2); // the value is wrong
    assert.equal((await run(call("1.2345678901234567e19"), gt)).reward, 2); // Python: int != float here
    const openai = (id: string) => JSON.stringify({ tool_calls: [{ function: { name: "f", arguments: `{"id": ${id}}` } }] });
    assert.equal((await run(openai("12345678901234567890"), gt, { format_rule: "parsed" })).reward, 4);
    assert.equal((await run(openai("12345678901234567891"), gt, { format_rule: "parsed" })).reward, 2);
    const out = await run(call("12345678901234567890"), gt);
    assert.doesNotThrow(() => JSON.stringify(out.details)); // no BigInt left in the details
  });
  test("OpenAI-style JSON: every call written is read, bare or fenced, and prose's JSON is passed over", async () => {
    const paris = '{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}';
    const london = '{"name": "get_weather", "arguments": {"city": "London", "days": 3}}';
    const time = '{"name": "get_time", "arguments": {"tz": "CET"}}';
    const one = [{ name: "get_weather", arguments: { city: "Paris", days: 3 } }];
    const two = [...one, { name: "get_time", arguments: { tz: "CET" } }];
    const o = { format_rule: "parsed" };
    const exact = (await run(paris, one, o)).reward!;
    assert.equal(exact, 4);
    // A wrong second call is not free: it was read as no call at all.
    const extraBare = await run(`${paris}\n${london}`, one, o);
    const extraFenced = await run("```json\n" + paris + "\n```\nand\n```json\n" + london + "\n```", one, o);
    assert.ok(extraBare.reward! < exact, extraBare.reason);
    assert.equal(extraFenced.reward, extraBare.reward, "the same two calls, fenced or bare");
    // Two right calls written as two values are both credited (it scored 1: only the first was read).
    assert.equal((await run(`${paris}\n${time}`, two, o)).reward, 4);
    assert.equal((await run("```json\n" + paris + "\n```\n```json\n" + time + "\n```", two, o)).reward, 4);
    // JSON in the prose around a fenced call is not a call.
    assert.equal((await run('This passes {"city": "Paris"} on:\n```json\n' + paris + "\n```", one, o)).reward, 4);
    assert.equal((await run(`Calling it with {"city": "Paris"}: ${paris}`, one, o)).reward, 4);
  });
  test("format: calls expected and an empty list earns nothing; none expected and a call attempted earns nothing", async () => {
    const one = [{ name: "get_weather", arguments: { city: "Paris" } }];
    const o = { format_rule: "parsed" };
    const none = (await run("I cannot call tools.", one, o)).reward;
    assert.equal(none, -3);
    assert.equal((await run("[]", one, o)).reward, none);
    assert.equal((await run('{"tool_calls": []}', one, o)).reward, none);
    const call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
    assert.equal((await run("It is sunny in Paris today.", [], o)).reward, 1, "no call made, none expected");
    for (const r of [call, `${call}\n<tool_call>oops</tool_call>`, "<tool_call>broken</tool_call>", '<tool_call>\n{"name": "get_weather", "arguments": [1]}\n</tool_call>']) {
      const out = await run(r, [], o);
      assert.equal(out.reward, 0, `${r}: ${out.reason}`);
    }
  });
  test("a reference whose calls do not parse is the item's fault", async () => {
    await assert.rejects(run(GOOD, "<tool_call>\n{not json\n</tool_call>"), InvalidItemError);
    await assert.rejects(run(GOOD, [{ nom: "x" }]), InvalidItemError);
  });
});

describe("hostile responses, each < 50 ms and scored, never an error", () => {
  const cases: [string, string][] = [
    ["1 MB response", "<tool_call>" + "x".repeat(1_048_576)],
    ["deep nesting", "<tool_call>\n" + "[".repeat(100_000) + "]".repeat(100_000) + "\n</tool_call>"],
    ["deep nesting in OpenAI JSON", '{"tool_calls": ' + "[".repeat(200_000)],
    ["50k tag openings", "<tool_call>".repeat(20_000)],
    ["50k braces", "{".repeat(200_000)],
    ["string-encoded deep arguments", JSON.stringify({ tool_calls: [{ function: { name: "get_weather", arguments: "[".repeat(100_000) } }] })],
    ["many calls", "<tool_call>\n" + '{"name": "get_weather", "parameters": {"city": "Paris"}}\n'.repeat(3000) + "</tool_call>"],
    ["a 250k-digit integer", '<tool_call>\n{"name": "get_weather", "parameters": {"city": ' + "7".repeat(250_000) + "}}\n</tool_call>"],
    ["20k bare JSON calls", '{"name": "get_weather", "arguments": {"city": "Paris"}} '.repeat(20_000)],
    ["7 brackets that never close, then bare calls", "[ ".repeat(7) + '{"name": "get_weather", "arguments": {"city": "Paris"}} '.repeat(15_000)],
    ["16 ```json fences of calls, then prose", ('```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```\n').repeat(16) + "x ".repeat(400_000)],
    ["600 integers of 400 digits", '<tool_call>\n{"name": "get_weather", "parameters": {"city": [' + Array(600).fill("7".repeat(400)).join(",") + "]}}\n</tool_call>"],
  ];
  for (const [name, response] of cases) {
    test(name, async () => {
      const { out, ms } = await fastest(() => run(response, GT));
      assert.equal(typeof out.reward, "number", out.reason);
      assert.ok(out.reward! <= 1, String(out.reward));
      assert.ok(ms < 50, `${ms.toFixed(1)} ms of CPU`);
    });
  }
});

describe("over HTTP", () => {
  test("/reward/batch", async () => {
    const { app } = await testApp();
    const res = await request(app).post("/reward/batch").send({
      items: [
        { verifier: "tool_call", response: GOOD, reference: GT },
        { verifier: "tool_call", response: "nothing", reference: GT, options: { normalize: true } },
        { verifier: "tool_call", response: GOOD, reference: GT, options: { matching: "hungarian" } },
      ],
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.results.map((r: { reward: number }) => r.reward), [4, 0, null]);
    assert.equal(res.body.results[2].status, "invalid");
  });
});

