/**
 * /docs and /openapi.yaml (issue 26): "Try it out" calls the server that served the page, not
 * a fixed 127.0.0.1:8787; with API keys set, the reference opens in a browser (it is public, as
 * the UI's files are) and its calls carry the key typed into Swagger UI's Authorize dialog.
 * The browser part runs in headless Chromium and skips without it (fails under CI=true).
 */
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import request from "supertest";
import { parse } from "yaml";
import { chromium, type Browser } from "playwright-core";
import { loadConfig } from "../src/core/config.js";
import { startServer, type Running } from "../src/server/start.js";
import { quiet, testApp } from "./helpers.js";

const CHROMIUM = process.env.ASSAY_CHROMIUM ?? "/usr/bin/chromium";
const KEY = "docs-secret-key";
const skip = !existsSync(CHROMIUM) && process.env.CI !== "true" ? `/docs browser test skipped: no browser at ${CHROMIUM}` : false;
if (skip) console.log(skip);

describe("the API reference with keys set", () => {
  test("/docs, its assets and /openapi.yaml are public; the API is not; the served spec's server is relative", async () => {
    const { app } = await testApp({ ASSAY_API_KEYS: KEY });
    const page = await request(app).get("/docs/");
    assert.equal(page.status, 200);
    assert.match(page.text, /swagger-ui-bundle\.js/);
    assert.equal((await request(app).get("/docs/init.js")).status, 200);
    assert.equal((await request(app).get("/docs/swagger-ui-bundle.js")).status, 200);
    const spec = await request(app).get("/openapi.yaml");
    assert.equal(spec.status, 200);
    const doc = parse(spec.text);
    assert.deepEqual(doc.servers.map((s: { url: string }) => s.url), ["/"]);
    assert.ok(doc.components.securitySchemes.bearer, "the Authorize button has a scheme to fill");
    assert.ok(doc.components.schemas["exact.options"], "each verifier's schemas are published");
    assert.equal((await request(app).get("/verifiers")).status, 401);
    assert.equal((await request(app).get("/verifiers").set("authorization", `Bearer ${KEY}`)).status, 200);
  });

  test("a 400 for an unknown top-level field names the field (and nested ones their path)", async () => {
    const { app } = await testApp();
    let res = await request(app).post("/reward").send({ verifier: "exact", response: "a", reference: "a", refrence: "a" });
    assert.equal(res.status, 400);
    assert.equal(res.body.field, "refrence");
    assert.match(res.body.error, /unknown field "refrence"; remove it or fix its spelling/);
    res = await request(app).post("/reward/batch").send({ items: [], deadline: 5 });
    assert.deepEqual([res.status, res.body.field], [400, "deadline"]);
    res = await request(app).post("/rubrics").send({ id: "x", title: "t", criteria: [{ id: "c", description: "d", weight: 1, wieght: 2 }] });
    assert.deepEqual([res.status, res.body.field], [400, "criteria.0.wieght"]);
    res = await request(app).post("/reward/batch").send({ items: [{ verifier: "exact", response: "a", reference: "a", extra: 1 }] });
    assert.equal(res.body.results[0].status, "invalid");
    assert.equal(res.body.results[0].details.field, "extra");
  });
});

describe("/docs in Chromium", { skip }, () => {
  let server: Running;
  let browser: Browser;

  before(async () => {
    server = await startServer(
      loadConfig({ ASSAY_HOST: "127.0.0.1", ASSAY_PORT: "0", ASSAY_DATA_DIR: ":memory:", ASSAY_SANDBOX: "none", ASSAY_LOG_LEVEL: "silent", ASSAY_WORKERS: "1", ASSAY_API_KEYS: KEY }),
      quiet,
    );
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test("Authorize takes the key; Try it out calls this server (not 127.0.0.1:8787) with it", async () => {
    assert.doesNotMatch(server.url, /:8787$/);
    const page = await browser.newPage();
    page.setDefaultTimeout(60_000);
    await page.goto(`${server.url}/docs/`);
    await page.locator("button.authorize").first().click();
    await page.locator(".modal-ux input").first().fill(KEY);
    await page.locator(".modal-ux button.authorize").first().click();
    await page.locator(".modal-ux button.btn-done, .modal-ux button.close-modal").first().click();
    const op = page.locator(".opblock", { has: page.locator('.opblock-summary-path[data-path="/verifiers"]') }).filter({ has: page.locator(".opblock-summary-method", { hasText: "GET" }) }).first();
    await op.locator(".opblock-summary").first().click();
    await op.locator("button.try-out__btn").click();
    const sent = page.waitForRequest((r) => r.url().endsWith("/verifiers") && r.method() === "GET");
    await op.locator("button.execute").click();
    const req = await sent;
    assert.equal(new URL(req.url()).origin, server.url, "called the server that served the page");
    assert.equal((await req.allHeaders()).authorization, `Bearer ${KEY}`);
    const res = await req.response();
    assert.equal(res?.status(), 200);
    await page.close();
  });
});
