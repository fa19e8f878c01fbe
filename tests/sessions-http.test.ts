/**
 * The session routes over HTTP on the real Docker engine: /sessions CRUD and exec, errors that
 * say what to change, admission (429 + Retry-After past ASSAY_SESSION_MAX), SandboxFusion's
 * /run_jupyter, and NeMo-Gym's seed_session cookie reaching one interpreter across tool calls.
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import { lazy } from "../src/core/services.js";
import { check } from "../src/core/contract.js";
import { testApp } from "./helpers.js";
import { openTestSessions } from "./sessions-helpers.js";
import type { Sessions } from "../src/sessions/service.js";

const opened = await openTestSessions({ warm: 1, max: 3 });
const svc = opened.sessions as Sessions;

describe("session routes (docker)", { skip: opened.skip }, () => {
  after(() => svc.shutdown());
  const app = async () => (await testApp({}, undefined, { sessions: lazy(async () => ({ sessions: svc, close: async () => {} })) })).app;

  test("POST /sessions, exec twice with state kept, GET, list, DELETE; answers match openapi.yaml", { timeout: 180_000 }, async () => {
    const a = await app();
    const created = await request(a).post("/sessions").send({ language: "python", limits: { idleMs: 60_000 }, labels: { rollout: "r1" } }).expect(201);
    assert.equal(check("SessionInfo", created.body), null);
    const id = created.body.id as string;
    assert.match(id, /^s-[0-9a-f]{8}-[0-9a-f]{16}$/);
    await request(a).post(`/sessions/${id}/exec`).send({ code: "x = 20" }).expect(200);
    const r = await request(a).post(`/sessions/${id}/exec`).send({ code: "x * 2 + 2" }).expect(200);
    assert.equal(check("SessionExecResult", r.body), null, JSON.stringify(r.body));
    assert.equal(r.body.value, "42");
    assert.equal(r.body.status, "ok");
    const listed = await request(a).get("/sessions").expect(200);
    assert.ok(listed.body.sessions.some((s: { id: string; labels: Record<string, string> }) => s.id === id && s.labels.rollout === "r1"));
    assert.equal(typeof listed.body.stats.warm, "number");
    assert.equal((await request(a).get(`/sessions/${id}`).expect(200)).body.execCount, 2);
    const closed = await request(a).delete(`/sessions/${id}`).expect(200);
    assert.equal(closed.body.endedReason, "closed");
    const after = await request(a).post(`/sessions/${id}/exec`).send({ code: "x" }).expect(200);
    assert.equal(after.body.status, "ended");
  });

  test("with ASSAY_API_KEYS a session is its key's: another key cannot list, read, run in or close it", { timeout: 120_000 }, async () => {
    // Before: the routes passed no owner, so any key could exec in or close another key's session.
    const { app: a } = await testApp({ ASSAY_API_KEYS: "k1,k2" }, undefined, { sessions: lazy(async () => ({ sessions: svc, close: async () => {} })) });
    const as = (k: string) => ({ Authorization: `Bearer ${k}` });
    const id = (await request(a).post("/sessions").set(as("k1")).send({ language: "python" }).expect(201)).body.id as string;
    await request(a).post(`/sessions/${id}/exec`).set(as("k1")).send({ code: "secret = 7" }).expect(200);
    await request(a).get(`/sessions/${id}`).set(as("k2")).expect(404);
    await request(a).post(`/sessions/${id}/exec`).set(as("k2")).send({ code: "secret" }).expect(404);
    await request(a).delete(`/sessions/${id}`).set(as("k2")).expect(404);
    const theirs = (await request(a).get("/sessions").set(as("k2")).expect(200)).body.sessions as { id: string }[];
    assert.ok(!theirs.some((s) => s.id === id), "k2's list leaves k1's session out");
    const mine = (await request(a).get("/sessions").set(as("k1")).expect(200)).body.sessions as { id: string }[];
    assert.ok(mine.some((s) => s.id === id));
    assert.equal((await request(a).post(`/sessions/${id}/exec`).set(as("k1")).send({ code: "secret" }).expect(200)).body.value, "7");
    await request(a).delete(`/sessions/${id}`).set(as("k1")).expect(200);
    // NeMo-Gym's sessions are their key's too. Before: they were made with no owner, so every key
    // listed them (the rollout's cookie in their labels) and could run code in them.
    await request(a).post("/seed_session").set(as("k1")).send({ resources_session_id: "r-k1" }).expect(200);
    const made = await request(a).post("/stateful_python_code_exec").set(as("k1")).send({ resources_session_id: "r-k1", code: "secret = 8" }).expect(200);
    const sid = made.body.session_id as string;
    await request(a).post(`/sessions/${sid}/exec`).set(as("k2")).send({ code: "secret" }).expect(404);
    assert.ok(!((await request(a).get("/sessions").set(as("k2")).expect(200)).body.sessions as { id: string }[]).some((s) => s.id === sid));
    const listed = ((await request(a).get("/sessions").set(as("k1")).expect(200)).body.sessions as { id: string; labels: Record<string, string> }[]).find((s) => s.id === sid);
    assert.ok(listed && !JSON.stringify(listed.labels).includes("r-k1"), "the label is not the rollout's token");
    // the same resources_session_id under another key is another rollout, not seeded for it
    await request(a).post("/stateful_python_code_exec").set(as("k2")).send({ resources_session_id: "r-k1", code: "secret" }).expect(400);
    await request(a).post("/close_session").set(as("k1")).send({ resources_session_id: "r-k1" }).expect(200);
    // a session made with no key (in process, or before keys were set) is no key's to use
    const keyless = (await svc.create({ language: "python" })).id;
    await request(a).post(`/sessions/${keyless}/exec`).set(as("k2")).send({ code: "1" }).expect(404);
    await svc.close(keyless);
  });

  test("unknown ids 404, lost ids say so, bad requests 400 naming what to change", { timeout: 120_000 }, async () => {
    const a = await app();
    const nf = await request(a).get("/sessions/nope").expect(404);
    assert.match(nf.body.error, /GET \/sessions/);
    await request(a).post("/sessions/nope/exec").send({ code: "1" }).expect(404);
    const lost = await request(a).get(`/sessions/s-${svc.bootId === "ffffffff" ? "eeeeeeee" : "ffffffff"}-0000000000000000`).expect(200);
    assert.equal(lost.body.endedReason, "lost_on_restart");
    const bad = await request(a).post("/sessions").send({ language: "cobol" }).expect(400);
    assert.match(bad.body.error, /language/);
    const big = await request(a).post("/sessions").send({ language: "python", limits: { memoryMb: 1 << 30 } }).expect(400);
    assert.match(big.body.error, /cap/);
    await request(a).post("/sessions/x/exec").send({ nocode: 1 }).expect(400);
    // files the sandbox cannot write are the caller's error (they were a 500)
    for (const files of [{ "../x": "" }, { "a\u0000b": "" }, { "a": "1", "a/b": "2" }, { "x": "\ud800" }]) {
      const r = await request(a).post("/sessions").send({ language: "python", files }).expect(400);
      assert.match(r.body.error, /^files: /);
    }
  });

  test("past ASSAY_SESSION_MAX open sessions: 429 with Retry-After, at once", { timeout: 180_000 }, async () => {
    const a = await app();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await request(a).post("/sessions").send({ language: "bash" }).expect(201)).body.id);
    const t0 = Date.now();
    const refused = await request(a).post("/sessions").send({ language: "bash" }).expect(429);
    assert.ok(Date.now() - t0 < 2000, "refused up front, not after a wait");
    assert.ok(Number(refused.headers["retry-after"]) >= 1);
    assert.match(refused.body.error, /DELETE \/sessions/);
    for (const id of ids) await request(a).delete(`/sessions/${id}`).expect(200);
    await request(a).post("/sessions").send({ language: "bash" }).expect(201).then((r) => request(a).delete(`/sessions/${r.body.id}`));
  });

  test("/run_jupyter: cells run in order in one kernel, SandboxFusion's response shape", { timeout: 180_000 }, async () => {
    const a = await app();
    const r = await request(a)
      .post("/run_jupyter")
      .send({ cells: ["a = 123", "a", "print(a)", "import sys; sys.stderr.write('stderr message')", "raise RuntimeError('error message')", "a + 1"], files: { "in.txt": Buffer.from("hi").toString("base64") } })
      .expect(200);
    assert.equal(r.body.status, "Success", JSON.stringify(r.body));
    const cells = r.body.cells;
    assert.equal(cells.length, 6);
    assert.deepEqual(cells[1].display, [{ "text/plain": "123" }]);
    assert.equal(cells[2].stdout, "123\n");
    assert.equal(cells[3].stderr, "stderr message");
    assert.equal(cells[4].error[0].ename, "RuntimeError");
    assert.equal(cells[4].error[0].evalue, "error message");
    assert.deepEqual(cells[5].display, [{ "text/plain": "124" }], "a raising cell does not stop the next");
    const slow = await request(a).post("/run_jupyter").send({ cells: ["import time", "time.sleep(20)", "1"], cell_timeout: 1 }).expect(200);
    assert.equal(slow.body.status, "Failed");
    assert.equal(slow.body.driver.status, "TimeLimitExceeded");
  });

  test("NeMo-Gym: /seed_session's cookie takes every later tool call to the same interpreter; /close_session ends it", { timeout: 180_000 }, async () => {
    const a = await app();
    // As NVIDIA-NeMo/Gym's SimpleAgent.run does: seed, keep the response's cookies, send them with each call.
    const seeded = await request(a).post("/seed_session").send({}).expect(200);
    const cookie = (seeded.headers["set-cookie"] as unknown as string[]).map((c) => c.split(";")[0]).join("; ");
    assert.match(cookie, /^assay_session=/);
    const first = await request(a).post("/stateful_python_code_exec").set("Cookie", cookie).send({ code: "total = 40" }).expect(200);
    assert.equal(first.body.status, "ok");
    const second = await request(a).post("/stateful_python_code_exec").set("Cookie", cookie).send({ code: "total + 2" }).expect(200);
    assert.equal(second.body.value, "42");
    assert.equal(second.body.session_id, first.body.session_id);
    // Another rollout has its own interpreter.
    const other = await request(a).post("/seed_session").send({ resources_session_id: "rollout-2" }).expect(200);
    assert.deepEqual(other.body, { resources_session_id: "rollout-2" });
    const o = await request(a).post("/stateful_python_code_exec").send({ resources_session_id: "rollout-2", code: "'total' in globals()" }).expect(200);
    assert.equal(o.body.value, "False");
    await request(a).post("/close_session").set("Cookie", cookie).send({ resources_session_id: "x" }).expect(200);
    assert.equal(svc.get(first.body.session_id).endedReason, "closed");
    await request(a).post("/close_session").send({ resources_session_id: "rollout-2" }).expect(200);
    const unseeded = await request(a).post("/stateful_python_code_exec").send({ code: "1" }).expect(400);
    assert.match(unseeded.body.error, /seed_session/);
  });

  test("keys apply as on every route: /sessions needs the bearer key; the drop-ins take it in the path", { timeout: 180_000 }, async () => {
    const a = (await testApp({ ASSAY_API_KEYS: "k-sessions" }, undefined, { sessions: lazy(async () => ({ sessions: svc, close: async () => {} })) })).app;
    await request(a).post("/sessions").send({ language: "bash" }).expect(401);
    await request(a).get("/sessions").expect(401);
    const made = await request(a).post("/sessions").set("Authorization", "Bearer k-sessions").send({ language: "bash" }).expect(201);
    await request(a).post(`/sessions/${made.body.id}/exec`).send({ code: "echo hi" }).expect(401);
    await request(a).delete(`/sessions/${made.body.id}`).set("Authorization", "Bearer k-sessions").expect(200);
    await request(a).post("/run_jupyter").send({ cells: ["1"] }).expect(401);
    const r = await request(a).post("/k/k-sessions/run_jupyter").send({ cells: ["6 * 7"] }).expect(200);
    assert.deepEqual(r.body.cells[0].display, [{ "text/plain": "42" }]);
  });
});
