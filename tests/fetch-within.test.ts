/**
 * An HTTP exchange whose peer closes the connection unread (a load balancer or docker-proxy whose
 * backend is not listening yet) must end in an error that names the URL, never in a silent exit:
 * Node 20's fetch does not settle then, and nothing holds the process open (src/client/within.ts).
 * tests/server-image.test.ts failed on exactly this ("Promise resolution is still pending but the
 * event loop has already resolved"), probing a container's published port while it started.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:net";
import { createServer as createHttpServer } from "node:http";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fetchWithin, ExchangeTimeout } from "../src/client/within.js";

const root = join(import.meta.dirname, "..");

/** A TCP server that accepts every connection and closes it before reading a byte. */
async function closesUnread(): Promise<{ url: string; server: Server }> {
  const server = createServer((s) => s.end());
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}/readyz`, server };
}

/** Runs a module of code in a fresh Node (through tsx); its exit code, output and run time. */
function node(code: string): Promise<{ code: number | null; out: string; ms: number }> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (out += d));
    p.on("close", (c) => resolve({ code: c, out, ms: Date.now() - t0 }));
  });
}

test("a peer that closes unread: the exchange fails with the URL and the wait named, and a lone client exits non-zero", async (t) => {
  const { url, server } = await closesUnread();
  try {
    // Which way a try ends is a race: undici either sees the close ("other side closed") or, when
    // the close wins against its write, waits for ever. Either way the exchange must end, and the
    // wait must be the deadline's, named.
    const t0 = Date.now();
    await assert.rejects(fetchWithin(url, {}, 300, (r) => r.text()), (e: unknown) => (e instanceof ExchangeTimeout && e.message === `no answer from ${url} within 300 ms`) || /other side closed|socket/i.test(String((e as Error).cause ?? e)));
    assert.ok(Date.now() - t0 < 10_000);

    // A process whose only work is the exchange: the client's error, and exit code 1, not 0.
    // Six tries, so that some try meets the silent case (a bare fetch there ends the process).
    const client = await node(`
      import { AssayClient } from "./src/client/index.ts";
      const c = new AssayClient({ url: ${JSON.stringify(url.replace(/\/readyz$/, ""))}, timeoutMs: 300, maxRetries: 5, backoffMs: 1 });
      try { await c.score({ verifier: "exact", response: "1", reference: "1" }); console.log("ANSWERED"); process.exit(0); }
      catch (e) { console.log(String(e.message)); process.exit(1); }
    `);
    assert.equal(client.code, 1, client.out);
    assert.match(client.out, /cannot reach Assay at http:\/\/127\.0\.0\.1:\d+ after 6 tries: (no answer from .* within 300 ms|other side closed)/);

    // What a bare fetch does in the same place (the reason for all this), for the record.
    const bare = await node(`await fetch(${JSON.stringify(url)}, { signal: AbortSignal.timeout(60_000) }).then(() => console.log("answered"), (e) => console.log("rejected", e.message));`);
    t.diagnostic(`bare fetch with AbortSignal.timeout(60 s): exit ${bare.code} after ${bare.ms} ms, printed ${JSON.stringify(bare.out.trim().slice(0, 80))}`);
  } finally {
    server.close();
  }
});

test("fetchWithin: the answer and its body within the deadline; the caller's signal still aborts; the timer is cleared", async () => {
  const http = createHttpServer((req, res) => {
    if (req.url === "/slow-body") {
      res.writeHead(200);
      res.write("partial");
      return; // never ends
    }
    res.end("hello");
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
  try {
    assert.equal(await fetchWithin(`${base}/`, {}, 5_000, (r) => r.text()), "hello");
    // The body is read within the same deadline.
    await assert.rejects(fetchWithin(`${base}/slow-body`, {}, 300, (r) => r.text()), ExchangeTimeout);
    // An abort from the caller is the caller's reason, not a timeout.
    const ac = new AbortController();
    const p = fetchWithin(`${base}/slow-body`, { signal: ac.signal }, 60_000, (r) => r.text());
    setTimeout(() => ac.abort(new Error("caller gave up")), 100);
    await assert.rejects(p, /caller gave up/);
    // A finished exchange leaves no timer holding the process: the child exits as soon as it is
    // done (timed from the answer, not from a start-up that a loaded machine makes slow).
    const done = await node(`
      import { fetchWithin } from "./src/client/within.ts";
      console.log(await fetchWithin(${JSON.stringify(`${base}/`)}, {}, 600_000, (r) => r.text()));
      const t = Date.now();
      process.on("exit", () => console.log("idle before exit: " + (Date.now() - t) + " ms"));
    `);
    assert.equal(done.code, 0, done.out);
    assert.match(done.out, /hello/);
    const idle = Number(/idle before exit: (\d+) ms/.exec(done.out)?.[1]);
    assert.ok(idle < 60_000, `the child waited ${idle} ms after its answer: the 600 s deadline's timer was left behind`);
  } finally {
    http.closeAllConnections();
    http.close();
  }
});
