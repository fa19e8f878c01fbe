/** NeMo-Gym's resources-server routes: /seed_session, /close_session, /verify, /aggregate_metrics. */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import { testApp } from "./helpers.js";
import { readFileSync } from "node:fs";
import { outputText, promptText, aggregate, NEMO_GYM_CALLER } from "../src/server/routes/nemogym.js";

/** A Responses-API object as NeMo-Gym's vLLM model server returns it: a reasoning item, then the message. */
function response(...texts: string[]) {
  return {
    id: "resp_1", object: "response", created_at: 0, model: "m", parallel_tool_calls: false, tool_choice: "auto", tools: [],
    output: [
      { id: "rs_1", type: "reasoning", summary: [{ type: "summary_text", text: "thinking about it" }] },
      { id: "msg_1", type: "message", role: "assistant", status: "completed", content: texts.map((t) => ({ type: "output_text", text: t, annotations: [] })) },
      { id: "fc_1", type: "function_call", call_id: "c", name: "tool", arguments: "{}" },
    ],
  };
}
const params = { input: [{ role: "system", content: "Be brief." }, { role: "user", content: "Capital of France?" }] };

describe("NeMo-Gym resources server", () => {
  test("/verify scores the output_text parts and echoes the request with a float reward", async () => {
    const { app } = await testApp();
    const req = { responses_create_params: params, response: response("The answer: ", "Paris"), verifier: "exact", reference: "paris", options: { extract: "last_line" }, _ng_task_index: 3, extra_column: [1, 2] };
    let res = await request(app).post("/verify").send({ ...req, options: null, reference: "The answer: Paris" }).expect(200);
    assert.equal(res.body.reward, 1);
    const sent = { ...req, response: response("Lyon") };
    res = await request(app).post("/verify").send(sent).expect(200);
    assert.equal(res.body.reward, 0);
    assert.equal(res.body.mask_sample, undefined);
    for (const k of Object.keys(sent)) assert.deepEqual(res.body[k], (sent as any)[k], `echoes ${k}`);
    assert.equal(res.body.assay.status, "ok");
  });

  test("an item Assay cannot score is reward 0.0 with mask_sample, never a silent 0", async () => {
    const { app } = await testApp();
    const res = await request(app).post("/verify").send({ responses_create_params: params, response: response("x"), verifier: "exact", reference: { bad: 1 } }).expect(200);
    assert.deepEqual([res.body.reward, res.body.mask_sample, res.body.failure_kind], [0, true, "assay:invalid_item"]);
    const none = await request(app).post("/verify").send({ responses_create_params: params, response: response("x"), verifier: "test-broken", reference: null, options: { mode: "null" } }).expect(200);
    assert.deepEqual([none.body.mask_sample, none.body.failure_kind], [true, "assay:unscored"]);
    // NeMo-RL reads the mask under instance_config (nemo_rl/experience/rollouts.py
    // _extract_mask_sample_flags); a row's own instance_config is kept beside it.
    assert.deepEqual(res.body.instance_config, { mask_sample: true });
    const row = await request(app).post("/verify").send({ responses_create_params: params, response: response("x"), verifier: "exact", reference: { bad: 1 }, instance_config: { seed: 7 } }).expect(200);
    assert.deepEqual(row.body.instance_config, { seed: 7, mask_sample: true });
    const scored = await request(app).post("/verify").send({ responses_create_params: params, response: response("x"), verifier: "exact", reference: "x", instance_config: { seed: 7 } }).expect(200);
    assert.deepEqual([scored.body.reward, scored.body.instance_config], [1, { seed: 7 }]);
    await request(app).post("/verify").send({ response: response("x") }).expect(400);
  });

  test("/seed_session and /close_session echo the session id (new and legacy bodies)", async () => {
    const { app } = await testApp();
    assert.deepEqual((await request(app).post("/seed_session").send({}).expect(200)).body, {});
    const seeded = await request(app).post("/seed_session").send({ resources_session_id: "s1", episode_id: "e", task_id: "t", task_data: { a: 1 } }).expect(200);
    assert.deepEqual(seeded.body, { resources_session_id: "s1" });
    assert.deepEqual((await request(app).post("/close_session").send({ resources_session_id: "s1", episode_id: "e" }).expect(200)).body, { resources_session_id: "s1" });
  });

  test("/aggregate_metrics: per task, overall and key metrics; masked samples left out", async () => {
    const { app } = await testApp();
    const res = await request(app).post("/aggregate_metrics").send({ verify_responses: [
      { _ng_task_index: 0, reward: 1.0 }, { _ng_task_index: 0, reward: 0.0 }, { _ng_task_index: 1, reward: 1.0 }, { _ng_task_index: 1, reward: 0.0, mask_sample: true },
    ] }).expect(200);
    assert.equal(res.body.agent_metrics["mean/reward"], 2 / 3);
    assert.equal(res.body.agent_metrics["assay/masked"], 1);
    assert.deepEqual(res.body.group_level_metrics.map((g: any) => [g._ng_task_index, g["mean/reward"], g.count]), [[0, 0.5, 2], [1, 1, 1]]);
    assert.deepEqual(res.body.key_metrics, { "mean/reward": 2 / 3 });
  });

  test("text and prompt extraction are linear and ignore what is not an answer", () => {
    assert.equal(outputText(response("a", "b")), "ab");
    assert.equal(outputText({ output: "nope" }), "");
    assert.equal(promptText({ input: "q" }), "q");
    assert.equal(promptText({ input: [{ role: "user", content: [{ type: "input_text", text: "q1" }] }] }), "q1");
    const big = { output: Array.from({ length: 4096 }, () => ({ type: "message", content: [{ type: "output_text", text: "x".repeat(256) }] })) };
    // CPU time, not wall time: the bound must hold on a loaded machine (it failed at load 30).
    const t0 = process.cpuUsage();
    assert.equal(outputText(big).length, 4096 * 256);
    assert.equal(aggregate(Array.from({ length: 200_000 }, (_, i) => ({ _ng_task_index: i % 7, reward: i % 2 }))).agent_metrics.count, 200_000);
    const used = process.cpuUsage(t0);
    assert.ok((used.user + used.system) / 1000 < 500, `${(used.user + used.system) / 1000} ms of CPU`);
  });

  test("/verify is held behind a backlog for as long as the proxy NeMo-Gym starts waits for Assay (its FORWARD_TIMEOUT_S)", () => {
    const proxy = readFileSync(new URL("../clients/python/assay_client/nemo_gym.py", import.meta.url), "utf8");
    const m = /^FORWARD_TIMEOUT_S = ([\d.]+)$/m.exec(proxy);
    assert.ok(m, "FORWARD_TIMEOUT_S not found in assay_client/nemo_gym.py");
    assert.equal(NEMO_GYM_CALLER.waitsMs, Number(m[1]) * 1000);
  });
});
