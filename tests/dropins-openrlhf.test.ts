/**
 * /get_reward as OpenRLHF reads it: every number it turns into a tensor is a JSON float, so
 * Python's json gives floats and `torch.tensor([reward])` is float32, never int64 (whose group
 * std raises). The Python side (clients/python/tests/test_trainers_openrlhf.py) replays
 * OpenRLHF's own tensor construction on this reply.
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import { testApp, fastestCpu } from "./helpers.js";
import { jsonFloat, openrlhfJson } from "../src/server/routes/openrlhf.js";

describe("OpenRLHF reply numbers are JSON floats", () => {
  test("jsonFloat writes integers with a fraction and leaves other numbers as JSON writes them", () => {
    assert.equal(jsonFloat(1), "1.0");
    assert.equal(jsonFloat(0), "0.0");
    assert.equal(jsonFloat(-0), "0.0");
    assert.equal(jsonFloat(-1), "-1.0");
    assert.equal(jsonFloat(0.5), "0.5");
    assert.equal(jsonFloat(1e21), "1e+21"); // an exponent already reads as a float in Python
    assert.equal(jsonFloat(123456789012), "123456789012.0");
    for (const n of [0, 1, -1, 0.25, 1e-7, 1e21, 3.141592653589793]) assert.equal(JSON.parse(jsonFloat(n)), n);
  });

  test("the raw body has 1.0/0.0 in rewards, scores and every extra_logs list; it parses to the same object", async () => {
    const { app } = await testApp();
    const res = await request(app).post("/get_reward?verifier=exact").buffer(true).parse((r, cb) => {
      let s = "";
      r.setEncoding("utf8");
      r.on("data", (c: string) => (s += c));
      r.on("end", () => cb(null, s));
    }).send({ query: ["Q a", "Q b"], prompts: ["Q ", "Q "], labels: ["a", "a"] }).expect(200);
    const raw = res.body as string;
    assert.match(res.headers["content-type"], /application\/json/);
    assert.ok(raw.startsWith('{"rewards":[1.0,0.0],"scores":[1.0,0.0],"extra_logs":{"assay_unscored":[0.0,0.0],"assay_invalid":[0.0,0.0]}'), raw.slice(0, 160));
    const body = JSON.parse(raw);
    assert.deepEqual(body.rewards, [1, 0]);
    assert.equal(body.results.length, 2);
    assert.equal(body.results[0].reward, 1);
  });

  test("serialising a full 4096-item reply is linear (well under 50 ms)", async () => {
    const n = 4096;
    const rewards = Array.from({ length: n }, (_, i) => i % 2);
    const reply = { rewards, scores: rewards, extra_logs: { a: rewards, b: rewards } };
    // CPU time, the best of a few runs: a wall-clock reading measures the test files beside it too.
    const { out: s, ms } = await fastestCpu(() => openrlhfJson(reply), { under: 50 });
    assert.ok(ms < 50, `${ms} ms of CPU`);
    assert.deepEqual(JSON.parse(s), reply);
    assert.equal(s.split("1.0").length - 1, 4 * (n / 2));
  });
});
