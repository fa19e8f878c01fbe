/**
 * A replica whose store (PostgreSQL) does not answer when it starts: its jobs start by
 * themselves once the store answers, without waiting for a /jobs request. Before, the start was
 * tried once, and a replica started before its database never resumed or took over a job until
 * a request reached it. Skipped with the reason when no PostgreSQL answers; under CI=true that
 * fails instead (tests/store-backends.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, connect, type AddressInfo, type Server } from "node:net";
import { testApp } from "./helpers.js";
import { freshSchema, storePgMissing } from "./store-backends.js";

const pgMissing = await storePgMissing();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const listen = (s: Server, port = 0) => new Promise<number>((r) => s.listen(port, "127.0.0.1", () => r((s.address() as AddressInfo).port)));

test("a store that answers only after the server started: the jobs start once it does", { skip: pgMissing ?? undefined, timeout: 60_000 }, async () => {
  const schema = await freshSchema();
  const real = new URL(schema.url);
  // a loopback port nothing listens on yet; later, a forwarder to the real PostgreSQL
  const probe = createServer();
  const port = await listen(probe);
  await new Promise((r) => probe.close(r));
  const late = new URL(schema.url);
  late.hostname = "127.0.0.1";
  late.port = String(port);
  const fwd = createServer((c) => {
    const up = connect(Number(real.port || 5432), real.hostname);
    c.pipe(up).pipe(c);
    c.on("error", () => up.destroy());
    up.on("error", () => c.destroy());
  });
  const a = await testApp({ ASSAY_STORE_URL: late.toString() });
  try {
    await sleep(800);
    assert.equal(a.runtime.services.jobs.current(), undefined, "the store does not answer yet");
    await listen(fwd, port);
    for (const t0 = Date.now(); !a.runtime.services.jobs.current(); await sleep(100)) {
      assert.ok(Date.now() - t0 < 20_000, "the jobs never started once the store answered");
    }
  } finally {
    await a.runtime.close();
    fwd.close();
    await schema.drop();
  }
});
