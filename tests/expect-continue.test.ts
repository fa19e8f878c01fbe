/**
 * Bodies far over ASSAY_MAX_BODY are refused before they are sent or read: `Expect:
 * 100-continue` gets the 413 instead of a 100 (the client then never sends the body), and a
 * declared length without it is answered at once (body-parser read the whole body first).
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:net";
import { loadConfig } from "../src/core/config.js";
import { startServer } from "../src/server/start.js";
import { quiet } from "./helpers.js";

const running = await startServer(loadConfig({ ASSAY_SANDBOX: "none", ASSAY_DATA_DIR: ":memory:", ASSAY_PORT: "0", ASSAY_MAX_BODY: "1048576" }), quiet);
after(() => running.close());
const port = Number(new URL(running.url).port);

/** Sends the head (and `body`, if any), returns everything the server wrote until it closed or `ms` passed. */
function exchange(head: string, body = "", ms = 3000): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, "127.0.0.1", () => s.write(head + body));
    const out: Buffer[] = [];
    s.on("data", (d) => out.push(d));
    s.on("error", reject);
    s.on("close", () => resolve(Buffer.concat(out).toString("utf8")));
    setTimeout(() => s.destroy(), ms);
  });
}

const head = (length: number, expect: boolean, type = "application/json") =>
  `POST /reward HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\n${expect ? "Expect: 100-continue\r\n" : ""}Connection: close\r\n\r\n`;

test("Expect: 100-continue far over the limit: a 413 and no 100", async () => {
  const t0 = performance.now();
  const got = await exchange(head(100 * 1048576, true));
  assert.ok(performance.now() - t0 < 2000);
  assert.doesNotMatch(got, /100 Continue/);
  assert.match(got, /^HTTP\/1\.1 413/);
  assert.match(got, /over the limit of 1048576 bytes/);
});

test("Expect: 100-continue within the limit: the 100, then the reward", async () => {
  const body = JSON.stringify({ verifier: "exact", response: "a", reference: "a" });
  const got = await exchange(head(Buffer.byteLength(body), true), body);
  assert.match(got, /^HTTP\/1\.1 100 Continue/);
  assert.match(got, /HTTP\/1\.1 200[\s\S]*"reward":1/);
});

test("a declared length far over the limit, no Expect: 413 at once, the body unread", async () => {
  const t0 = performance.now();
  const got = await exchange(head(10_000_000_000, false), '{"verifier":"exact","response":"');
  assert.ok(performance.now() - t0 < 2000, `${performance.now() - t0} ms`);
  assert.match(got, /^HTTP\/1\.1 413/);
});
