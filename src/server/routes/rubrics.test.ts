/** /rubrics over HTTP: create, version, pin, delete, import/export, and the errors that say what to change. */
import { test } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testApp } from "../../../tests/helpers.js";
import { loadConfig } from "../../core/config.js";
import { check } from "../../core/contract.js";

const R = {
  title: "Capital answers",
  description: "For geography questions.",
  criteria: [
    { id: "correct", description: "Names Paris.", weight: 5 },
    { id: "hedge", description: "Claims to be unsure.", weight: -2 },
    { id: "polite", description: "Contains no insults.", weight: 0, kind: "veto" },
  ],
};

test("create, read, edit (new version), unchanged PUT, versions, pin, delete", async () => {
  const { app } = await testApp();
  let res = await request(app).post("/rubrics").send({ id: "cap", ...R });
  assert.equal(res.status, 201);
  assert.equal(res.body.version, 1);
  assert.equal(res.body.criteria[0].kind, "score", "kind defaults to score");
  assert.equal(check("Rubric", res.body), null, "the response matches the contract");
  assert.equal((await request(app).post("/rubrics").send({ id: "cap", ...R })).status, 409);

  res = await request(app).put("/rubrics/cap").send(R);
  assert.equal(res.status, 200, "same content: no new version");
  assert.equal(res.body.version, 1);
  res = await request(app).put("/rubrics/cap").send({ ...R, criteria: [...R.criteria, { id: "short", description: "Two sentences at most.", weight: 1 }] });
  assert.equal(res.status, 201);
  assert.equal(res.body.version, 2);

  assert.equal((await request(app).get("/rubrics/cap")).body.version, 2);
  assert.equal((await request(app).get("/rubrics/cap/versions/1")).body.criteria.length, 3);
  assert.deepEqual((await request(app).get("/rubrics/cap/versions")).body.versions.map((v: any) => v.version), [1, 2]);
  assert.deepEqual((await request(app).get("/rubrics")).body.rubrics.map((r: any) => [r.id, r.version]), [["cap", 2]]);
  assert.equal((await request(app).get("/rubrics/cap/versions/3")).status, 404);

  assert.equal((await request(app).delete("/rubrics/cap")).status, 204);
  assert.equal((await request(app).get("/rubrics/cap")).status, 404);
  assert.equal((await request(app).get("/rubrics/cap/versions/1")).status, 404);
  assert.equal((await request(app).delete("/rubrics/cap")).status, 404);
  res = await request(app).post("/rubrics").send({ id: "cap", ...R });
  assert.equal(res.body.version, 3, "a re-created rubric continues its numbers: a number never names two contents");
});

test("If-Match: a save made from an older version is 412 and writes nothing; two editors at once, one wins", async () => {
  const { app } = await testApp();
  const v1 = await request(app).post("/rubrics").send({ id: "im", ...R }).expect(201);
  const got = await request(app).get("/rubrics/im").expect(200);
  assert.equal(got.headers.etag, '"1"');
  const edit = (title: string) => ({ ...R, title });
  const a = await request(app).put("/rubrics/im").set("If-Match", got.headers.etag).send(edit("A")).expect(201);
  assert.equal(a.body.version, 2);
  assert.equal(a.headers.etag, '"2"');
  // The second editor also read version 1: refused, and told which version is latest.
  const b = await request(app).put("/rubrics/im").set("If-Match", '"1"').send(edit("B")).expect(412);
  assert.match(b.body.error, /is at version 2, not the one this save was made from/);
  assert.equal(b.headers.etag, '"2"');
  assert.equal((await request(app).get("/rubrics/im")).body.title, "A", "the refused save wrote nothing");
  // A list of tags, a weak tag, and * all work as RFC 9110 has them.
  await request(app).put("/rubrics/im").set("If-Match", '"7", W/"2"').send(edit("C")).expect(201);
  await request(app).put("/rubrics/im").set("If-Match", "*").send(edit("D")).expect(201);
  await request(app).put("/rubrics/im").set("If-Match", "junk").send(edit("E")).expect(412);
  await request(app).put("/rubrics/nothing-here").set("If-Match", "*").send(edit("F")).expect(412);
  await request(app).delete("/rubrics/im").expect(204);
  await request(app).put("/rubrics/im").set("If-Match", '"4"').send(edit("G")).expect(412);
  assert.equal(v1.body.version, 1);
  // Two saves from the same version at once: the store checks in the write's transaction.
  await request(app).put("/rubrics/race").send(R).expect(201);
  const both = await Promise.all(["X", "Y", "Z"].map((t) => request(app).put("/rubrics/race").set("If-Match", '"1"').send(edit(t))));
  assert.deepEqual(both.map((r) => r.status).sort(), [201, 412, 412]);
  assert.equal((await request(app).get("/rubrics/race")).body.version, 2);
});

test("POST without an id gets a generated one", async () => {
  const { app } = await testApp();
  const res = await request(app).post("/rubrics").send(R);
  assert.equal(res.status, 201);
  assert.match(res.body.id, /^[0-9a-f-]{36}$/);
});

test("malformed rubrics: 400 naming the field", async () => {
  const { app } = await testApp();
  const bad = async (body: unknown, field: RegExp, path = "/rubrics", method: "post" | "put" = "post") => {
    const res = await request(app)[method](path).send(body as object);
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.match(res.body.error, field);
  };
  await bad({ ...R, criteria: [] }, /criteria/);
  await bad({ ...R, criteria: [{ id: "a", description: "x" }] }, /weight/);
  await bad({ ...R, criteria: [{ id: "a", description: "x", weight: 1, kind: "maybe" }] }, /kind/);
  await bad({ ...R, criteria: [{ id: "a", description: "x", weight: 1 }, { id: "a", description: "y", weight: 2 }] }, /used twice/);
  await bad({ ...R, criteria: [{ id: "a", description: "x", weight: -1 }] }, /positive weight/);
  await bad({ ...R, extra: 1 }, /unknown field "extra"/);
  await bad({ id: "has space", ...R }, /id/);
  await bad({ id: "other", ...R }, /differs from the path/, "/rubrics/cap", "put");
  await bad(R, /rubric id/, "/rubrics/bad%20id", "put");
  const res = await request(app).get("/rubrics/cap/versions/zero");
  assert.equal(res.status, 400);
});

test("export then import into another store reproduces every version", async () => {
  const a = await testApp();
  await request(a.app).post("/rubrics").send({ id: "x", ...R });
  await request(a.app).put("/rubrics/x").send({ ...R, title: "Capital answers v2" });
  const exported = (await request(a.app).get("/rubrics/x/export")).body;
  assert.equal(exported.format, "assay.rubrics/1");
  assert.equal(exported.rubrics[0].versions.length, 2);

  const b = await testApp();
  let res = await request(b.app).post("/rubrics/import").send(exported);
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.imported, [{ id: "x", version: 2, added: 2 }]);
  const v1 = (await request(b.app).get("/rubrics/x/versions/1")).body;
  assert.equal(v1.title, "Capital answers");
  res = await request(b.app).post("/rubrics/import").send(exported);
  assert.deepEqual(res.body.imported, [{ id: "x", version: 2, added: 0 }], "importing again adds nothing");
  res = await request(b.app).post("/rubrics/import").send({ format: "other", rubrics: [] });
  assert.equal(res.status, 400);
});

test("rubrics persist in ASSAY_DATA_DIR across restarts", async () => {
  const dir = mkdtempSync(join(tmpdir(), "assay-data-"));
  try {
    const a = await testApp({ ASSAY_DATA_DIR: dir });
    await request(a.app).post("/rubrics").send({ id: "kept", ...R });
    await a.runtime.close();
    const b = await testApp({ ASSAY_DATA_DIR: dir });
    assert.equal((await request(b.app).get("/rubrics/kept")).body.version, 1);
    await b.runtime.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("bad judge or data settings are start-up errors that say what to change", () => {
  assert.throws(() => loadConfig({ ASSAY_JUDGE_BASE_URL: "not a url" }), /ASSAY_JUDGE_BASE_URL.*not a URL/);
  assert.throws(() => loadConfig({ ASSAY_JUDGE_BASE_URL: "ftp://x/v1" }), /http\(s\)/);
  assert.throws(() => loadConfig({ ASSAY_JUDGE_STRUCTURED: "xml" }), /ASSAY_JUDGE_STRUCTURED/);
  assert.throws(() => loadConfig({ ASSAY_JUDGE_TEMPERATURE: "3" }), /ASSAY_JUDGE_TEMPERATURE/);
  assert.throws(() => loadConfig({ ASSAY_JUDGE_PRICE_INPUT: "-1" }), /ASSAY_JUDGE_PRICE_INPUT/);
  assert.throws(() => loadConfig({ ASSAY_JUDGE_CONCURRENCY: "0" }), /ASSAY_JUDGE_CONCURRENCY/);
  assert.throws(() => loadConfig({ ASSAY_DATA_DIR: "/etc/hostname" }), /is a file/);
  const c = loadConfig({ ASSAY_JUDGE_PRICE_INPUT: "0.15", XDG_DATA_HOME: "/tmp/xdg" });
  assert.equal(c.judge.priceInput, 0.15);
  assert.equal(c.dataDir, "/tmp/xdg/assay");
});
