/**
 * A custom verifier that makes V8 abort its isolate's process: a Set or a Map grown until its
 * hash table cannot be reallocated within the heap limit (isolated-vm's catastrophic error). With
 * the isolates in the server's process this ended the server; now it ends their process, the
 * item is the verifier's error, the items beside it get their own results, and the server goes on.
 * The CPU limit is set high enough that memory, not CPU, runs out first.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import { testApp } from "../../tests/helpers.js";

const { app, runtime } = await testApp({ ASSAY_CUSTOM_TIMEOUT_MS: "20000", ASSAY_CUSTOM_MEMORY_MB: "32" });
after(() => runtime.close());

async function upload(name: string, source: string) {
  const res = await request(app).post("/verifiers/custom").send({ name, language: "javascript", source });
  assert.ok(res.status === 201 || res.status === 200, `${res.status} ${JSON.stringify(res.body)}`);
}

test("a verifier whose Set or Map outgrows its heap fails alone, and the server keeps serving", async () => {
  await upload("setbomb", `export function score() { const s = new Set(); for (let i = 0; ; i++) s.add(i); }`);
  await upload("mapbomb", `export function score() { const m = new Map(); for (let i = 0; ; i++) m.set(i, i); }`);
  await upload("steady", `export const score = ({ response }) => response === "Paris" ? 1 : 0;`);
  const items = [
    { verifier: "custom:setbomb", response: "x" },
    { verifier: "custom:steady", response: "Paris" },
    { verifier: "custom:mapbomb", response: "x" },
    { verifier: "custom:steady", response: "Lyon" },
  ];
  const res = await request(app).post("/reward/batch").send({ items }).expect(200);
  const [set, ok, map, wrong] = res.body.results;
  for (const r of [set, map]) {
    assert.equal(r.status, "error", JSON.stringify(r));
    assert.equal(r.reward, null);
    // Which of the two V8 reaches first depends on when its heap check runs against the table's
    // reallocation: usually the abort (the process ends), on a loaded machine sometimes the
    // isolate's own heap limit. Either is the verifier failing alone.
    assert.match(r.reason, /ended its runtime's process|ran out of memory: the isolate's heap limit/, r.reason);
  }
  assert.deepEqual([ok.reward, wrong.reward], [1, 0], JSON.stringify(res.body.results));
  assert.equal((await request(app).get("/healthz")).status, 200);
  const again = await request(app).post("/reward").send({ verifier: "custom:steady", response: "Paris" }).expect(200);
  assert.equal(again.body.reward, 1, "still serving");
});
