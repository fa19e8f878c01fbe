/**
 * The server's log destination (src/server/start.ts, issue 38): request lines are written in
 * batches, not one write(2) each, and none is lost when the server is stopped with SIGTERM.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { spawn } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import pino from "pino";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { flushed, serverLogger } from "../src/server/start.js";
import { listeningUrl } from "./helpers.js";

const root = new URL("..", import.meta.url).pathname;

test("request lines spread over time take far fewer writes than lines, and all arrive in order", async () => {
  const dir = mkdtempSync(join(tmpdir(), "assay-log-"));
  const fd = openSync(join(dir, "log"), "w");
  // sonic-boom writes through the fs module's own `write`: counted here (a fake destination's count).
  let writes = 0;
  const real = fs.write;
  (fs as { write: unknown }).write = (...a: unknown[]) => (writes++, (real as (...x: unknown[]) => unknown)(...a));
  const log = serverLogger("info", fd);
  try {
    const N = 300;
    for (let i = 0; i < N; i++) {
      log.info({ req: { id: `r${i}`, method: "POST", url: "/reward" }, res: { statusCode: 200 }, responseTime: 1 }, "request completed");
      // Requests a millisecond apart: each line's write used to be done before the next line came.
      await new Promise((r) => setTimeout(r, 1));
    }
    await flushed(log);
    const lines = readFileSync(join(dir, "log"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(lines.length, N);
    assert.deepEqual(lines.map((l) => l.req.id), Array.from({ length: N }, (_, i) => `r${i}`));
    assert.ok(writes <= N / 10, `${writes} writes for ${N} lines`);
  } finally {
    (fs as { write: unknown }).write = real;
    // The destination owns the fd: end() stops its periodic flush and closes it. Closing the fd
    // under a live destination made its next periodic flush (an empty write every 100 ms) fail
    // with EBADF, an 'error' nobody listens to: the whole file failed, once, in CI.
    const dest = (log as unknown as Record<symbol, { once(e: "close", f: () => void): void; end(): void }>)[pino.symbols.streamSym]!;
    await new Promise<void>((r) => (dest.once("close", r), dest.end()));
    rmSync(dir, { recursive: true, force: true });
  }
});

test("SIGTERM right after the last response: every request's line is in the output, and the listening line came at once", async () => {
  const child = spawn(process.execPath, ["--import", "tsx", join(root, "src/cli/main.ts"), "serve", "--port", "0"], {
    env: { ...process.env, ASSAY_SANDBOX: "none", ASSAY_DATA_DIR: ":memory:", ASSAY_LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  try {
    const url = await listeningUrl(child, () => out);
    const N = 20;
    for (let i = 0; i < N; i++) {
      const res = await fetch(url + "/reward", { method: "POST", headers: { "content-type": "application/json", "x-request-id": `last-${i}` }, body: JSON.stringify({ verifier: "exact", response: "a", reference: "a" }) });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    }
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const [code] = await exited;
    assert.equal(code, 0, out.slice(-2000));
    const ids = out.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l)).filter((l) => l.msg === "request completed").map((l) => l.req.id);
    assert.deepEqual(ids, Array.from({ length: N }, (_, i) => `last-${i}`));
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
});
