/** Presets over HTTP: saved, versioned, scored as preset:<name>[@v], resolved in the registry. */
import { test } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import { testApp } from "../../tests/helpers.js";
import { check } from "../../src/core/contract.js";

const P = { name: "r1-math", description: "exact with a length band", parts: [{ verifier: "exact", weight: 0.9 }, { verifier: "length", options: { mode: "band", unit: "chars", max: 10 }, weight: 0.1 }] };

test("presets round-trip and version; items call preset:<name> and pin @<version>", async () => {
  const { app, runtime } = await testApp();
  try {
    let res = await request(app).post("/presets").send(P);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.version, 1);
    assert.deepEqual(res.body.options, {});
    assert.equal(check("Preset", res.body), null);
    res = await request(app).post("/presets").send(P);
    assert.equal(res.status, 200, "same content: no new version");
    assert.equal(res.body.version, 1);
    res = await request(app).post("/presets").send({ ...P, options: { aggregate: "min" } });
    assert.equal(res.status, 201);
    assert.equal(res.body.version, 2);
    assert.deepEqual((await request(app).get("/presets/r1-math/versions")).body.versions.map((v: any) => v.version), [1, 2]);
    assert.equal((await request(app).get("/presets/r1-math/versions/1")).body.options.aggregate, undefined);
    assert.deepEqual((await request(app).get("/presets")).body.presets.map((p: any) => [p.name, p.version]), [["r1-math", 2]]);
    assert.equal((await request(app).get("/presets/r1-math")).body.version, 2);

    const reward = async (verifier: string, response = "Paris", reference: unknown = "paris") => {
      const res = await request(app).post("/reward").send({ verifier, response, reference });
      // A single invalid item is a 400 on /reward; the scorer's result says the same.
      return res.status === 400 ? { status: "invalid", reason: res.body.error } : res.body;
    };
    let r = await reward("preset:r1-math@1");
    assert.equal(r.status, "ok", r.reason);
    assert.ok(Math.abs(r.reward - 1) < 1e-12, "sum: 0.9 + 0.1");
    assert.equal(r.details.version, 1);
    r = await reward("preset:r1-math");
    assert.equal(r.reward, 1, "v2 min of 1 and 1");
    r = await reward("preset:r1-math", "Paris is the capital", "paris");
    assert.equal(r.reward, 0, "v2 min: exact fails and the band fails");
    r = await reward("preset:r1-math@1", "Lyon");
    assert.equal(r.reward, 0.1);

    assert.equal((await reward("preset:nope")).status, "invalid");
    assert.match((await reward("preset:nope")).reason, /no preset "nope"/);
    assert.equal((await reward("preset:r1-math@9")).status, "invalid");
    assert.equal((await reward("preset:Bad Name")).status, "invalid");

    assert.equal((await request(app).delete("/presets/r1-math")).status, 204);
    assert.equal((await request(app).get("/presets/r1-math")).status, 404);
    res = await request(app).post("/presets").send(P);
    assert.equal(res.body.version, 3, "re-created: numbers continue");
  } finally {
    await runtime.close();
  }
});

test("a preset that could never score is refused at save (400 naming the field); one stored anyway is invalid when scored", async () => {
  const { app, runtime } = await testApp();
  try {
    // Before: each of these was saved (201), and every item that used it came back invalid.
    const refused = async (body: object, field: RegExp, reason: RegExp) => {
      const res = await request(app).post("/presets").send(body).expect(400);
      assert.match(res.body.field, field, JSON.stringify(res.body));
      assert.match(res.body.error, reason);
    };
    await refused({ name: "p1", parts: [{ verifier: "exact" }], options: { agregate: "gate" } }, /^options/, /options/);
    await refused({ name: "p2", parts: [{ verifier: "nope" }] }, /^parts\/0\/verifier$/, /unknown verifier "nope"/);
    await refused({ name: "p3", parts: [{ verifier: "exact", options: { extarct: "x" } }] }, /^parts\/0\/options$/, /exact/);
    await refused({ name: "p4", parts: [{ verifier: "exact", gate: true }, { verifier: "exact" }] }, /^parts$/, /gate: true, but aggregate is "sum"/);
    await refused({ name: "p5", parts: [{ verifier: "exact", gate: true }], options: { aggregate: "gate" } }, /^parts$/, /not a gate/);
    await refused({ name: "p6", parts: [{ verifier: "preset:p6" }] }, /^parts\/0\/verifier$/, /cannot include itself/);
    await refused({ name: "p7", parts: [{ verifier: "exact", wieght: 2 }] }, /^parts/, /parts/);
    await request(app).post("/presets").send({ name: "x", parts: [] }).expect(400);
    await request(app).post("/presets").send({ name: "Upper", parts: [{ verifier: "exact" }] }).expect(400);
    await request(app).post("/presets").send({ name: "fine", parts: [{ verifier: "exact", options: { normalize: null } }, { verifier: "preset:r1-math" }] }).expect(201);

    // stored without the check (an older server, a store import): still invalid when scored, naming the preset and part
    const presets = (await runtime.services.store()).presets;
    await presets.save("bad", { parts: [{ verifier: "exact", wieght: 2 }] } as never);
    let r = await runtime.scorer.score({ verifier: "preset:bad", response: "x", reference: "x" });
    assert.equal(r.status, "invalid");
    assert.match(r.reason, /preset bad version 1: parts/);
    await presets.save("loop", { parts: [{ verifier: "preset:loop" }] } as never);
    r = await runtime.scorer.score({ verifier: "preset:loop", response: "x", reference: "x" });
    assert.equal(r.status, "invalid");
    assert.match(r.reason, /deeper than 3/);
  } finally {
    await runtime.close();
  }
});
