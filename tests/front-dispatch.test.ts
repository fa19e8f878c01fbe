/**
 * The scoring routes' front dispatch (src/server/front.ts, issue 38): `POST /reward` and
 * `POST /reward/batch` are answered without express's router walking the app's layers, and
 * every answer, success or refusal, is what the router gives for the same request: status,
 * headers and bytes. The router's answer is had by the same request with a query string
 * (`/reward?via=router`), which the front dispatch leaves to express.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { createServer, request as httpRequest, type Server } from "node:http";
import { testApp } from "./helpers.js";

const KEY = "front-key";
const { app, runtime } = await testApp({ ASSAY_API_KEYS: KEY, ASSAY_ALLOWED_ORIGINS: "https://trainer.example", ASSAY_MAX_BATCH: "4" });
const server: Server = createServer(app);
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
const port = (server.address() as AddressInfo).port;
after(async () => {
  server.close();
  await runtime.close();
});

// Express's router: counted, to see which requests enter it.
const router = (app as unknown as { router: { handle: (...a: unknown[]) => unknown } }).router;
let entered = 0;
const routerHandle = router.handle.bind(router);
router.handle = (...a: unknown[]) => (entered++, routerHandle(...a));

interface Raw {
  status: number;
  headers: [string, string][];
  body: string;
}

/** One request on a fresh connection; the answer's raw header lines (less Date) and body. */
function send(path: string, headers: Record<string, string>, body: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path, method: "POST", headers: { ...headers, "content-length": String(Buffer.byteLength(body)) }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const headers: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) if (res.rawHeaders[i]!.toLowerCase() !== "date") headers.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
        resolve({ status: res.statusCode!, headers, body: Buffer.concat(chunks).toString("utf8") });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** elapsed_ms differs run to run; everything else must not. */
const steady = (r: Raw): Raw => {
  const body = r.body.replace(/"elapsed_ms":[0-9.e+-]+/g, '"elapsed_ms":0');
  return { ...r, body, headers: r.headers.map(([k, v]) => (k.toLowerCase() === "content-length" ? [k, String(Buffer.byteLength(body))] : [k, v])) };
};

const auth = { authorization: `Bearer ${KEY}`, "content-type": "application/json", "x-request-id": "same-id" };
const item = { id: 7, verifier: "exact", response: "Paris", reference: "paris" };
const CASES: [string, "/reward" | "/reward/batch", Record<string, string>, string][] = [
  ["scored", "/reward", auth, JSON.stringify(item)],
  ["a batch", "/reward/batch", auth, JSON.stringify({ items: [item, { ...item, response: "Lyon" }, { verifier: "nope", response: "x" }] })],
  ["no key", "/reward", { ...auth, authorization: "" }, JSON.stringify(item)],
  ["a wrong key", "/reward/batch", { ...auth, authorization: "Bearer nope" }, JSON.stringify({ items: [item] })],
  ["another origin", "/reward", { ...auth, origin: "https://evil.example" }, JSON.stringify(item)],
  ["a listed origin (CORS headers)", "/reward", { ...auth, origin: "https://trainer.example" }, JSON.stringify(item)],
  ["text/plain", "/reward", { ...auth, "content-type": "text/plain" }, JSON.stringify(item)],
  ["a charset (express.json's path)", "/reward", { ...auth, "content-type": "application/json; charset=utf-8" }, JSON.stringify(item)],
  ["not JSON", "/reward", auth, "{nope"],
  ["an array", "/reward", auth, "[1]"],
  ["a missing field", "/reward", auth, JSON.stringify({ verifier: "exact" })],
  ["an unknown verifier", "/reward", auth, JSON.stringify({ verifier: "nope", response: "x" })],
  ["over ASSAY_MAX_BATCH", "/reward/batch", auth, JSON.stringify({ items: Array.from({ length: 5 }, () => item) })],
  ["a batch without items", "/reward/batch", auth, JSON.stringify({})],
  ["a client's id refused (a UUID instead)", "/reward", { ...auth, "x-request-id": "bad id!" }, JSON.stringify(item)],
];

test("POST /reward and /reward/batch never enter express's router; other requests do", async () => {
  entered = 0;
  assert.equal((await send("/reward", auth, JSON.stringify(item))).status, 200);
  assert.equal((await send("/reward/batch", auth, JSON.stringify({ items: [item] }))).status, 200);
  assert.equal((await send("/reward", { ...auth, authorization: "" }, "{}")).status, 401);
  assert.equal(entered, 0, "the router was entered for a scoring request");
  assert.equal((await send("/reward/", auth, JSON.stringify(item))).status, 200);
  assert.equal((await send("/reward?x=1", auth, JSON.stringify(item))).status, 200);
  assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
  assert.equal(entered, 3);
});

for (const [name, path, headers, body] of CASES) {
  test(`the same answer as express's router: ${name}`, async () => {
    entered = 0;
    const front = await send(path, headers, body);
    const viaRouter = await send(`${path}?via=router`, headers, body);
    assert.equal(entered, 1, "the second request went through the router");
    if (headers["x-request-id"] === "bad id!") {
      // A fresh UUID each time: same shape, then compared as equal.
      for (const r of [front, viaRouter]) {
        const h = r.headers.find(([k]) => k === "X-Request-Id")!;
        assert.match(h[1], /^[0-9a-f-]{36}$/);
        h[1] = "uuid";
      }
    }
    assert.deepEqual(steady(front), steady(viaRouter));
  });
}

test("the metrics name the route as the router did, and count the refusals", async () => {
  await send("/reward", auth, JSON.stringify(item));
  await send("/reward", auth, "{nope");
  await send("/reward/batch", auth, JSON.stringify({ items: [item] }));
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${KEY}` } });
  const text = await res.text();
  assert.match(text, /assay_http_requests_total\{method="POST",route="\/reward",status="200"\} [1-9]/);
  assert.match(text, /assay_http_requests_total\{method="POST",route="\/reward",status="400"\} [1-9]/);
  assert.match(text, /assay_http_requests_total\{method="POST",route="\/reward\/batch",status="200"\} [1-9]/);
  assert.match(text, /assay_rejected_requests_total\{reason="malformed"\} [1-9]/);
});

test("the front dispatch refuses to start when its middleware list is not the router's", async () => {
  const { default: express, Router } = await import("express");
  const { scoringDispatch, checkBefore } = await import("../src/server/front.js");
  const a: import("express").RequestHandler = function a(_q, _s, next) { next(); };
  const limit: import("express").RequestHandler = function limit(_q, _s, next) { next(); };
  const handler: import("express").RequestHandler = (_q, res) => void res.end("ok");
  const onError: import("express").ErrorRequestHandler = (_e, _q, res, _n) => void res.status(500).end();
  const make = () => {
    const app = express();
    app.use(a);
    app.get("/healthz", (_q, res) => void res.end());
    const ui = Router();
    ui.get("/ui", (_q, res) => void res.end());
    app.use(ui); // a router without POST /reward: passed over, as the router passes it over
    app.use(limit); // e.g. a rate limit added later
    const routes = Router();
    routes.post("/reward", handler);
    app.use(routes);
    app.use(onError);
    return app;
  };
  assert.throws(() => scoringDispatch(make(), { "/reward": [handler] }, [a], onError), /would run \[a\] where express's router runs \[a, limit\]/);
  assert.throws(() => checkBefore(make(), "/reward", [limit, a]), /runs \[a, limit\]/);
  assert.throws(() => checkBefore(make(), "/reward/batch", [a, limit]), /no router of the app holds POST \/reward\/batch/);
  assert.doesNotThrow(() => checkBefore(make(), "/reward", [a, limit]));
});
