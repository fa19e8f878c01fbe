/**
 * API keys for trainers that cannot send an Authorization header (OpenRLHF's remote_url, verl's
 * sandbox_fusion url, NeMo-Gym): the key in the path, `/k/<key>/get_reward`, compared in
 * constant time and never written to the log.
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import pino from "pino";
import request from "supertest";
import { loadConfig } from "../src/core/config.js";
import { createRuntime } from "../src/core/runtime.js";
import { createApp } from "../src/server/app.js";
import { decodeAll } from "../src/server/auth.js";

const KEY = "s3cret-key_42";

async function appWithLog() {
  const lines: string[] = [];
  const sink = new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb(); } });
  const log = pino({ level: "info" }, sink);
  const config = loadConfig({ ASSAY_LOG_LEVEL: "info", ASSAY_SANDBOX: "none", ASSAY_API_KEYS: `other,${KEY}` });
  const runtime = await createRuntime(config, { log });
  return { app: createApp(runtime).app, lines };
}

const body = { query: ["Q a"], prompts: ["Q "], labels: ["a"] };

describe("API key in the path for the drop-in routes", () => {
  test("/k/<key>/get_reward is served; a wrong key or none is 401; the key never reaches the log", async () => {
    const { app, lines } = await appWithLog();
    const ok = await request(app).post(`/k/${KEY}/get_reward?verifier=exact`).send(body).expect(200);
    assert.deepEqual(ok.body.rewards, [1]);
    // a trailing slash, as the router takes it (was 401 "missing API key" with the key sent)
    assert.deepEqual((await request(app).post(`/k/${KEY}/get_reward/?verifier=exact`).send(body).expect(200)).body.rewards, [1]);
    await request(app).post(`/k/wrong/get_reward?verifier=exact`).send(body).expect(401);
    await request(app).post(`/k/${KEY}x/get_reward?verifier=exact`).send(body).expect(401);
    await request(app).post(`/get_reward?verifier=exact`).send(body).expect(401);
    // The header still works, and a key in the path of a non-drop-in route is not a route.
    await request(app).post(`/get_reward?verifier=exact`).set("Authorization", `Bearer ${KEY}`).send(body).expect(200);
    await request(app).post(`/k/${KEY}/reward`).set("Authorization", `Bearer ${KEY}`).send({ verifier: "exact", response: "a", reference: "a" }).expect(404);
    // /run_code takes it too (no sandbox here: SandboxError, but past auth).
    const rc = await request(app).post(`/k/${KEY}/run_code`).send({ code: "print(1)" }).expect(200);
    assert.equal(rc.body.status, "SandboxError");
    await new Promise((r) => setTimeout(r, 50)); // pino writes asynchronously
    const log = lines.join("");
    assert.ok(log.includes('"url":"/get_reward?verifier=exact"'), "the request is logged, without the key");
    assert.ok(!log.includes(KEY), "the key appears in the log");
    assert.ok(log.includes('"url":"/k/(key)/reward"'), "the 404 is logged with its key masked");
  });

  test("a URL-encoded key is decoded; without ASSAY_API_KEYS the prefix is accepted and ignored", async () => {
    const { app } = await appWithLog();
    await request(app).post(`/k/${encodeURIComponent(KEY)}/get_reward?verifier=exact`).send(body).expect(200);
    const config = loadConfig({ ASSAY_LOG_LEVEL: "silent", ASSAY_SANDBOX: "none" });
    const open = createApp(await createRuntime(config, { log: pino({ level: "silent" }) })).app;
    await request(open).post(`/k/anything/get_reward?verifier=exact`).send(body).expect(200);
  });
});

/** Sends `path` byte for byte (no client normalisation) to the app on a loopback port. */
async function rawPost(app: import("express").Express, paths: string[]): Promise<number[]> {
  const { request: httpRequest } = await import("node:http");
  const server = await new Promise<import("node:http").Server>((r) => { const s = app.listen(0, "127.0.0.1", () => r(s)); });
  const port = (server.address() as { port: number }).port;
  const statuses: number[] = [];
  for (const path of paths) {
    statuses.push(await new Promise<number>((resolve, reject) => {
      const req = httpRequest({ host: "127.0.0.1", port, path, method: "POST", headers: { "content-type": "application/json" } }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode!));
      });
      req.on("error", reject);
      req.end(JSON.stringify(body));
    }));
  }
  server.closeAllConnections();
  server.close();
  return statuses;
}

const every = (s: string) => [...Buffer.from(s)].map((b) => "%" + b.toString(16).padStart(2, "0")).join("");

describe("a key in the URL never reaches the log, whatever its encoding", () => {
  const spellings = [
    `/k/${KEY}%2fget_reward?verifier=exact`,
    `/k/${KEY}%2Fget_reward`,
    `/k/${every(KEY)}%2fget_reward`,
    `/k/${KEY}%252fget_reward`,
    `/k/${every(KEY)}`,
    `/k/${KEY}`,
    `/K/${KEY}/get_reward`,
    `/%6b/${KEY}/get_reward`,
    `/%6B/${every(KEY)}/get_reward`,
    `//k/${KEY}/get_reward`,
    `/k//${KEY}/get_reward`,
    `/k/${encodeURIComponent(KEY + "/x")}/reward`,
    `/get_reward?verifier=exact&key=${every(KEY)}`,
    `/reward/${KEY}`,
  ];

  test("with ASSAY_API_KEYS set: each spelling is answered and logged, the key masked", async () => {
    const { app, lines } = await appWithLog();
    const statuses = await rawPost(app, spellings);
    assert.ok(statuses.every((s) => s === 401 || s === 404), statuses.join(","));
    await new Promise((r) => setTimeout(r, 50));
    const log = lines.join("");
    assert.equal(lines.length, spellings.length, "one line per request");
    for (const line of lines) {
      assert.ok(!decodeAll(line).includes(KEY), `key logged: ${line}`);
      assert.ok(!line.toLowerCase().includes(every(KEY).slice(0, 12).toLowerCase()), `encoded key logged: ${line}`);
    }
    assert.ok(log.includes('"url":"/k/(key)"'), "the shape of the URL is kept where it is safe");
  });

  test("with no keys configured, a /k/<key> URL's key is masked as well (it may be another server's key)", async () => {
    const lines: string[] = [];
    const sink = new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb(); } });
    const runtime = await createRuntime(loadConfig({ ASSAY_LOG_LEVEL: "info", ASSAY_SANDBOX: "none" }), { log: pino({ level: "info" }, sink) });
    const statuses = await rawPost(createApp(runtime).app, spellings.slice(0, 11));
    assert.ok(statuses.every((s) => s === 404), statuses.join(","));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(lines.length, 11);
    for (const line of lines) assert.ok(!decodeAll(line).includes(KEY), `key logged: ${line}`);
  });

  test("decodeAll undoes nested percent-encoding and leaves malformed escapes", () => {
    assert.equal(decodeAll("/a%252Fb%2"), "/a/b%2");
    assert.equal(decodeAll(every("é/ü")), "é/ü");
  });
});
