/**
 * A client that leaves while its items are scored (src/server/http.ts clientLeft, through the
 * front dispatch): the items stop at once and their in-flight reservation is released, for
 * /reward and /reward/batch alike, and the request is logged once.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { createServer, request as httpRequest } from "node:http";
import { testApp, sleepVerifier } from "./helpers.js";

const { app, runtime, limiter } = await testApp({}, [sleepVerifier]);
const server = createServer(app);
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
const port = (server.address() as AddressInfo).port;
after(async () => {
  server.close();
  await runtime.close();
});

async function leaveAfter(path: string, body: unknown, ms: number, n: number): Promise<void> {
  const text = JSON.stringify(body);
  const req = httpRequest({ host: "127.0.0.1", port, path, method: "POST", headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) }, agent: false });
  req.on("error", () => {});
  req.end(text);
  await new Promise((r) => setTimeout(r, ms));
  assert.equal(limiter.inflight, n, "the items were admitted and are being scored");
  req.destroy();
}

for (const [path, body, n] of [
  ["/reward", { verifier: "test-sleep", response: "", options: { ms: 20_000 } }, 1],
  ["/reward/batch", { items: Array.from({ length: 3 }, () => ({ verifier: "test-sleep", response: "", options: { ms: 20_000 } })) }, 3],
] as const) {
  test(`${path}: a client gone mid-scoring releases its ${n} item(s) at once, not after the verifier's 20 s`, async () => {
    await leaveAfter(path, body, 300, n);
    const t = Date.now();
    while (limiter.inflight > 0 && Date.now() - t < 5_000) await new Promise((r) => setTimeout(r, 20));
    assert.equal(limiter.inflight, 0, `${limiter.inflight} items still in flight ${Date.now() - t} ms after the client left`);
  });
}
