/**
 * What a request can smuggle past validation: numbers JSON.parse reads as Infinity (`1e400`) and
 * names inherited from Object.prototype. Each is the caller's error (400, or `invalid` in a
 * batch), never a verifier's `error`/null or a silently lost id.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import { testApp } from "./helpers.js";

const { app, runtime } = await testApp({});
after(() => runtime.close());

/** POSTs `json` as written (JSON.stringify cannot write 1e400). */
const post = (path: string, json: string) => request(app).post(path).set("content-type", "application/json").send(json);

test("1e400 in options, a reference or an id is refused at validation, naming the field", async () => {
  // Before: options.reward 1e400 reached the verifier and came back error/null ("non-finite
  // reward"); an id of 1e400 was scored and answered with "id": null; an iou box was scored.
  const cases: [string, RegExp][] = [
    ['{"verifier":"format","response":"<think>a</think><answer>b</answer>","options":{"reward":1e400}}', /options\/reward: must be number/],
    ['{"verifier":"exact","response":"x","reference":"x","id":1e400}', /\/id: must be/],
    ['{"verifier":"iou","response":"[0,0,10,10]","reference":[0,0,1e400,10]}', /reference\/2: must be number/],
  ];
  for (const [body, why] of cases) {
    const r = await post("/reward", body).expect(400);
    assert.match(r.body.error, why, body);
  }
  const batch = await post("/reward/batch", '{"items":[{"verifier":"format","response":"x","options":{"penalty":-1e400}},{"verifier":"exact","response":"a","reference":"a"}]}').expect(200);
  assert.deepEqual(batch.body.results.map((x: { status: string }) => x.status), ["invalid", "ok"]);
});

test("an ifeval func_name inherited from Object.prototype is unknown, not an internal error", async () => {
  // Before: `__proto__`, `constructor`, `toString`, `valueOf` passed the lookup and failed inside the verifier: error/null.
  for (const name of ["__proto__", "constructor", "toString", "valueOf", "hasOwnProperty"]) {
    const r = await post("/reward", JSON.stringify({ verifier: "ifeval", response: "abc", reference: { func_name: name } })).expect(400);
    assert.match(r.body.error, /unknown func_name/, name);
  }
});
