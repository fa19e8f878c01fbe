/**
 * No cross-site writes (issue 25). With no API keys (the default), a page on another origin
 * used to plant a rubric and a custom verifier through a real browser with text/plain POSTs:
 * every body was parsed as JSON whatever its type. Now a body must carry a type openapi.yaml
 * declares for its operation (415 otherwise), and a write that carries an Origin other than the
 * server's own (or one in ASSAY_ALLOWED_ORIGINS) is refused (403). The browser part runs in
 * headless Chromium against a live server on loopback, with the attacking page served from a
 * second loopback server; it skips without chromium (fails under CI=true).
 */
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import request from "supertest";
import { chromium, type Browser } from "playwright-core";
import { loadConfig } from "../src/core/config.js";
import { startServer, type Running } from "../src/server/start.js";
import { operations } from "../src/server/origin.js";
import { quiet, testApp } from "./helpers.js";

const CHROMIUM = process.env.ASSAY_CHROMIUM ?? "/usr/bin/chromium";
const skip = !existsSync(CHROMIUM) && process.env.CI !== "true" ? `cross-site browser tests skipped: no browser at ${CHROMIUM}` : false;
if (skip) console.log(skip);

const RUBRIC = { id: "planted", title: "Planted", criteria: [{ id: "c", description: "Anything.", weight: 1 }] };
const CUSTOM = { name: "planted", source: "export function score() { return { reward: 1, reason: 'planted' }; }" };

describe("body types and Origin, without a browser", () => {
  test("a text/plain, form or untyped body is 415 naming the type to send; JSON still works", async () => {
    const { app } = await testApp();
    const item = JSON.stringify({ verifier: "exact", response: "a", reference: "a" });
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/x-ndjson"]) {
      const res = await request(app).post("/reward").set("content-type", type).send(item);
      assert.equal(res.status, 415, type);
      assert.equal(res.body.field, "content-type");
      assert.match(res.body.error, /POST \/reward takes a body sent with Content-Type: application\/json/);
    }
    // No Content-Type at all (fetch with a Blob body, curl --data-binary without -H) is refused too.
    const raw = await fetchApp(app, "/rubrics", { method: "POST", body: new Blob([JSON.stringify(RUBRIC)]) });
    assert.equal(raw.status, 415);
    assert.match((await raw.json()).error, /no Content-Type/);
    assert.equal((await request(app).get("/rubrics")).body.rubrics.length, 0, "nothing was created");
    const ok = await request(app).post("/reward").set("content-type", "application/json; charset=utf-8").send(item);
    assert.equal(ok.status, 200);
    assert.equal(ok.body.reward, 1);
  });

  test("each operation takes exactly the body types openapi.yaml declares for it", async () => {
    const { app, runtime } = await testApp();
    const jobs = operations().find((o) => o.method === "POST" && o.template === "/jobs")!;
    assert.deepEqual([...jobs.types].sort(), ["application/json", "application/x-ndjson", "multipart/form-data"]);
    const line = JSON.stringify({ verifier: "exact", response: "a", reference: "a" }) + "\n";
    assert.equal((await request(app).post("/jobs").set("content-type", "application/x-ndjson").send(line)).status, 201);
    assert.equal((await request(app).post("/jobs").set("content-type", "text/plain").send(line)).status, 415);
    // A route without a body (cancel, DELETE) takes none, or an ignored JSON one; never a form.
    assert.equal((await request(app).post("/jobs/nope/cancel")).status, 404);
    assert.equal((await request(app).post("/jobs/nope/cancel").set("content-type", "application/json").send("{}")).status, 404);
    assert.equal((await request(app).post("/jobs/nope/cancel").set("content-type", "text/plain").send("x")).status, 415);
    assert.equal((await request(app).delete("/rubrics/cap").set("content-type", "application/x-www-form-urlencoded").send("a=b")).status, 415);
    await runtime.close();
  });

  test("a write from another origin is 403 saying which setting allows it; own origin and no Origin pass", async () => {
    const { app, metrics } = await testApp();
    const evil = await request(app).post("/rubrics").set("origin", "http://evil.example").send(RUBRIC);
    assert.equal(evil.status, 403);
    assert.equal(evil.body.field, "origin");
    assert.match(evil.body.error, /ASSAY_ALLOWED_ORIGINS/);
    // A sandboxed iframe or a file:// page sends "null": refused as well.
    assert.equal((await request(app).post("/rubrics").set("origin", "null").send(RUBRIC)).status, 403);
    // Same host:port as the request's Host: the UI and /docs, wherever they are served.
    const same = await request(app).post("/rubrics").set("host", "assay.internal:8787").set("origin", "https://assay.internal:8787").send(RUBRIC);
    assert.equal(same.status, 201);
    assert.equal((await request(app).delete("/rubrics/planted").set("origin", "http://evil.example")).status, 403);
    assert.equal((await request(app).get("/rubrics").set("origin", "http://evil.example")).status, 200, "reads are not writes");
    assert.match(await metrics.registry.getSingleMetricAsString("assay_rejected_requests_total"), /reason="forbidden_origin"} 3/);
  });

  test("ASSAY_ALLOWED_ORIGINS: listed origins write and get CORS (preflight too); bad entries are start-up errors", async () => {
    const { app } = await testApp({ ASSAY_ALLOWED_ORIGINS: "https://ui.example.com, http://localhost:5173" });
    const pre = await request(app).options("/rubrics").set("origin", "http://localhost:5173").set("access-control-request-method", "POST").set("access-control-request-headers", "content-type");
    assert.equal(pre.status, 204);
    assert.equal(pre.headers["access-control-allow-origin"], "http://localhost:5173");
    assert.match(pre.headers["access-control-allow-headers"], /Content-Type/);
    const res = await request(app).post("/rubrics").set("origin", "https://ui.example.com").send(RUBRIC);
    assert.equal(res.status, 201);
    assert.equal(res.headers["access-control-allow-origin"], "https://ui.example.com");
    assert.equal((await request(app).post("/rubrics").set("origin", "https://ui.example.com.evil.net").send(RUBRIC)).status, 403);
    assert.throws(() => loadConfig({ ASSAY_ALLOWED_ORIGINS: "ui.example.com" }), /ASSAY_ALLOWED_ORIGINS.*not an origin.*https:\/\/ui\.example\.com/s);
    assert.throws(() => loadConfig({ ASSAY_ALLOWED_ORIGINS: "https://ui.example.com/app" }), /ASSAY_ALLOWED_ORIGINS.*no path/s);
    assert.deepEqual(loadConfig({ ASSAY_ALLOWED_ORIGINS: "*" }).allowedOrigins, ["*"]);
  });
});

/** fetch against an express app on an ephemeral loopback port (supertest always sets a type). */
async function fetchApp(app: import("express").Express, path: string, init: RequestInit): Promise<Response> {
  const s = await new Promise<Server>((r) => { const x = app.listen(0, "127.0.0.1", () => r(x)); });
  try {
    return await fetch(`http://127.0.0.1:${(s.address() as { port: number }).port}${path}`, init);
  } finally {
    s.closeAllConnections();
    s.close();
  }
}

/** A page server on its own loopback port: another origin than the Assay server's. */
async function pageServer(html: string): Promise<{ url: string; close(): Promise<void> }> {
  const s = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(html);
  });
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://localhost:${(s.address() as { port: number }).port}`,
    close: () => new Promise<void>((r) => { s.closeAllConnections(); s.close(() => r()); }),
  };
}

describe("cross-site writes in Chromium", { skip }, () => {
  let server: Running;
  let browser: Browser;
  let evil: Awaited<ReturnType<typeof pageServer>>;
  let friend: Awaited<ReturnType<typeof pageServer>>;

  before(async () => {
    evil = await pageServer("<!doctype html><title>cat pictures</title><iframe name=sink></iframe>");
    friend = await pageServer("<!doctype html><title>our dashboard</title>");
    server = await startServer(
      loadConfig({
        ASSAY_HOST: "127.0.0.1", ASSAY_PORT: "0", ASSAY_DATA_DIR: ":memory:", ASSAY_SANDBOX: "none", ASSAY_LOG_LEVEL: "silent",
        ASSAY_WORKERS: "1", ASSAY_ALLOWED_ORIGINS: friend.url,
      }),
      quiet,
    );
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await evil?.close();
    await friend?.close();
  });

  test("text/plain fetches and form posts from another origin change nothing; the server's own pages and a listed origin still write", async () => {
    const page = await browser.newPage();
    await page.addInitScript("window.__name = (f) => f"); // tsx names the helpers inside evaluate()
    page.setDefaultTimeout(30_000);
    await page.goto(evil.url + "/");
    const target = server.url;
    // Every "simple" request a page may send without a preflight: fetch in no-cors mode with a
    // text/plain or untyped body, and forms (text/plain, urlencoded, multipart) into an iframe.
    await page.evaluate(async ({ target, rubric, custom }) => {
      const sink = document.querySelector("iframe")!;
      const post = (path: string, body: BodyInit, type?: string) =>
        fetch(target + path, { method: "POST", mode: "no-cors", body, headers: type ? { "content-type": type } : {} }).catch(() => undefined);
      await post("/rubrics", JSON.stringify(rubric), "text/plain");
      await post("/verifiers/custom", JSON.stringify(custom), "text/plain");
      await post("/rubrics", new Blob([JSON.stringify(rubric)]));
      await post("/jobs", JSON.stringify({ verifier: "exact", response: "a", reference: "a" }) + "\n", "text/plain");
      const submit = (path: string, enctype: string, fields: Record<string, string>) =>
        new Promise<void>((resolve) => {
          const form = document.createElement("form");
          form.action = target + path;
          form.method = "POST";
          form.enctype = enctype;
          form.target = "sink";
          for (const [name, value] of Object.entries(fields)) {
            const input = document.createElement("input");
            input.name = name;
            input.value = value;
            form.append(input);
          }
          document.body.append(form);
          sink.addEventListener("load", () => resolve(), { once: true });
          form.submit();
        });
      // The classic text/plain form trick: name + "=" + value makes a JSON document.
      const json = JSON.stringify({ ...rubric, pad: "" });
      await submit("/rubrics", "text/plain", { [json.slice(0, -2)]: '"}' });
      await submit("/jobs", "multipart/form-data", { verifier: "exact" });
      await submit("/rubrics/planted", "application/x-www-form-urlencoded", { x: "1" });
    }, { target, rubric: RUBRIC, custom: CUSTOM });

    assert.deepEqual((await request(target).get("/rubrics")).body.rubrics, [], "no rubric planted");
    assert.deepEqual((await request(target).get("/verifiers/custom")).body.verifiers, [], "no custom verifier planted");
    assert.deepEqual((await request(target).get("/jobs")).body.jobs, [], "no job submitted");
    // The attacks reached the server and were turned away there (not lost on the way).
    const metrics = (await request(target).get("/metrics")).text;
    const refused = Number(/assay_rejected_requests_total\{reason="forbidden_origin"\} (\d+)/.exec(metrics)?.[1] ?? 0);
    assert.ok(refused >= 6, `only ${refused} cross-origin writes reached the server:\n${metrics.split("\n").filter((l) => l.includes("rejected")).join("\n")}`);

    // The server's own origin: the UI loads, and a page there writes with JSON (as the UI does).
    await page.goto(target + "/ui/");
    await page.getByText("No rubric open").or(page.getByText("Rubrics")).first().waitFor();
    const own = await page.evaluate(async (rubric) => {
      const r = await fetch("/rubrics", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(rubric) });
      return r.status;
    }, { ...RUBRIC, id: "from-ui" });
    assert.equal(own, 201);

    // A listed origin: a CORS JSON call (preflighted) goes through, and its answer is readable.
    await page.goto(friend.url + "/");
    const listed = await page.evaluate(async ({ target, rubric }) => {
      const r = await fetch(target + "/rubrics", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(rubric) });
      return { status: r.status, id: (await r.json()).id };
    }, { target, rubric: { ...RUBRIC, id: "from-friend" } });
    assert.deepEqual(listed, { status: 201, id: "from-friend" });
    const ids = (await request(target).get("/rubrics")).body.rubrics.map((r: { id: string }) => r.id).sort();
    assert.deepEqual(ids, ["from-friend", "from-ui"]);
    await page.close();
  });
});
