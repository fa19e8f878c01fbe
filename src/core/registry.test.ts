import { test } from "node:test";
import assert from "node:assert/strict";
import pino from "pino";
import { Registry } from "./registry.js";
import type { Verifier, VerifierInitContext } from "./types.js";

const ctx: VerifierInitContext = {
  log: pino({ level: "silent" }),
  services: { sandbox: () => Promise.reject(new Error("no sandbox in this test")), workers: 1 },
};

function verifier(name: string, init: () => Promise<void>): Verifier {
  return { name, description: name, referenceSchema: {}, optionsSchema: {}, init, verify: async () => ({ reward: 1, reason: "" }) };
}

test("warmUp runs every init once; items then await nothing", async () => {
  let calls = 0;
  const r = new Registry().register(verifier("slow", async () => void calls++));
  await r.warmUp(ctx);
  await r.warmUp(ctx);
  assert.equal(calls, 1);
  assert.equal(r.ensureInit(verifier("slow", async () => {}), ctx), undefined);
});

test("a failed init at warm-up is not fatal and is retried by the first item", async () => {
  let calls = 0;
  const v = verifier("flaky", async () => {
    if (++calls === 1) throw new Error("pool did not start");
  });
  const r = new Registry().register(v);
  await r.warmUp(ctx); // logs, does not throw
  assert.equal(calls, 1);
  await r.ensureInit(v, ctx);
  assert.equal(calls, 2);
  assert.equal(r.ensureInit(v, ctx), undefined);
});
