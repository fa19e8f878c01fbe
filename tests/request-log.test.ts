/**
 * The request log (src/server/request-log.ts): one JSON line per request, not per item, with the
 * request id the client sees in X-Request-Id, and no child logger made for a request that does
 * not log through `req.log` (pino-http made two per request: issue 38's profile).
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import pino from "pino";
import request from "supertest";
import { loadConfig } from "../src/core/config.js";
import { createRuntime } from "../src/core/runtime.js";
import { createApp } from "../src/server/app.js";

const lines: Record<string, any>[] = [];
const sink = new Writable({
  write(chunk, _enc, cb) {
    for (const l of String(chunk).split("\n")) if (l) lines.push(JSON.parse(l));
    cb();
  },
});
const log = pino({ level: "info" }, sink);
let children = 0;
const child = log.child.bind(log);
log.child = ((...args: Parameters<typeof child>) => (children++, child(...args))) as typeof log.child;

const runtime = await createRuntime(loadConfig({ ASSAY_SANDBOX: "none", ASSAY_DATA_DIR: ":memory:", ASSAY_API_KEYS: "sekrit-key" }), { log, only: ["exact"] });
const { app } = createApp(runtime);
after(() => runtime.close());
const auth = { Authorization: "Bearer sekrit-key" };
const settle = () => new Promise((r) => setTimeout(r, 20)); // the line is written when the response closes

test("a batch of 256 items is one log line, with the id the client got, and no child logger", async () => {
  const items = Array.from({ length: 256 }, (_, i) => ({ verifier: "exact", response: String(i % 3), reference: "1" }));
  lines.length = 0;
  children = 0;
  const res = await request(app).post("/reward/batch").set(auth).send({ items }).expect(200);
  await settle();
  const mine = lines.filter((l) => l.req?.url === "/reward/batch");
  assert.equal(mine.length, 1, JSON.stringify(lines));
  const [line] = mine;
  assert.equal(line!.msg, "request completed");
  assert.equal(line!.level, 30);
  assert.deepEqual(line!.req, { id: res.headers["x-request-id"], method: "POST", url: "/reward/batch" });
  assert.deepEqual(line!.res, { statusCode: 200 });
  assert.equal(typeof line!.responseTime, "number");
  assert.equal(children, 0, "child loggers made for a request that never used req.log");
});

test("a client's request id is kept; a 4xx logs at warn; /healthz is not logged; a key in the path is not logged", async () => {
  lines.length = 0;
  const res = await request(app).post("/reward").set(auth).set("X-Request-Id", "trainer-step-7.item-3").send({ verifier: "nope", response: "x" }).expect(400);
  assert.equal(res.headers["x-request-id"], "trainer-step-7.item-3");
  await request(app).get("/healthz").expect(200);
  await request(app).post("/k/sekrit-key/get_reward").send({ query: ["x"], labels: ["x"] });
  await settle();
  const bad = lines.find((l) => l.req?.url === "/reward");
  assert.equal(bad?.level, 40);
  assert.equal(bad?.req.id, "trainer-step-7.item-3");
  assert.ok(!lines.some((l) => l.req?.url === "/healthz"));
  assert.ok(lines.some((l) => l.req?.url === "/get_reward"), JSON.stringify(lines.map((l) => l.req)));
  assert.ok(!JSON.stringify(lines).includes("sekrit-key"));
});

test("req.log, where a route uses it, carries the request's id", async () => {
  // The error handler and /run_code log through req.log: read it as they do, from a request of
  // this app (its prototype carries the getter).
  const fake = Object.create(app.request) as { id: string; method: string; url: string; originalUrl: string; log: pino.Logger };
  Object.assign(fake, { id: "abc", method: "GET", url: "/x", originalUrl: "/x" });
  lines.length = 0;
  fake.log.info("hello");
  assert.deepEqual(lines[0]?.req, { id: "abc", method: "GET", url: "/x" });
  assert.equal(fake.log, fake.log, "made once per request");
});
