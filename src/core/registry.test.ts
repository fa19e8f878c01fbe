import { test } from "node:test";
import assert from "node:assert/strict";
import { Type } from "@sinclair/typebox";
import { Registry } from "./registry.js";
import { defineVerifier, type VerifierInitContext } from "./verifier.js";
import { quiet, testServices, fastestCpu } from "../../tests/helpers.js";

const ctx: VerifierInitContext = { log: quiet, services: testServices() };

function verifier(name: string, init: () => Promise<void>) {
  return defineVerifier({ name, description: name, reference: Type.Unknown(), options: Type.Object({}), init, verify: async () => ({ reward: 1, reason: "" }) });
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

const withDefaults = defineVerifier({
  name: "defaults",
  description: "echoes its options",
  reference: Type.Unknown(),
  options: Type.Object(
    {
      limit: Type.Integer({ minimum: 1, default: 4000 }),
      mode: Type.Union([Type.Literal("a"), Type.Literal("b")], { default: "a" }),
      label: Type.Optional(Type.String()),
    },
    { additionalProperties: false },
  ),
  async verify(item) {
    return { reward: 1, reason: "ok", details: { options: item.options } };
  },
});

test("option defaults are filled in once, from the declaration, without touching the caller's object", () => {
  const r = new Registry().register(withDefaults);
  const given = { mode: "b" };
  const res = r.resolve({ verifier: "defaults", response: "", options: given });
  assert.ok(!("invalid" in res));
  assert.deepEqual(res.item.options, { mode: "b", limit: 4000 });
  assert.deepEqual(given, { mode: "b" });
  const none = r.resolve({ verifier: "defaults", response: "" });
  assert.ok(!("invalid" in none));
  assert.deepEqual(none.item.options, { limit: 4000, mode: "a" });
});

test("the published schema lists no defaulted property as required, and bad options name the field", () => {
  const r = new Registry().register(withDefaults);
  const [info] = r.list();
  assert.equal((info.options_schema as any).required, undefined);
  assert.equal((info.options_schema as any).properties.limit.default, 4000);
  assert.equal(Object.getOwnPropertySymbols(info.options_schema).length, 0);
  const bad = r.resolve({ verifier: "defaults", response: "", options: { limit: 0 } });
  assert.ok("invalid" in bad);
  assert.match(bad.invalid, /options\/limit/);
  const unknown = r.resolve({ verifier: "defaults", response: "", options: { nope: 1 } });
  assert.ok("invalid" in unknown && /unknown field "nope"/.test(unknown.invalid));
});

test("options with hundreds of thousands of keys are refused before they are copied (the copy held the event loop ~1.7 s)", async () => {
  const r = new Registry().register(withDefaults);
  const many: Record<string, number> = {};
  for (let i = 0; i < 200_000; i++) many[`k${i}`] = i;
  const { out: res, ms: took } = await fastestCpu(() => r.resolve({ verifier: "defaults", response: "", options: many }), { under: 400, runs: 1 });
  assert.ok("invalid" in res && /options has 200000 keys/.test(res.invalid), JSON.stringify(res).slice(0, 200));
  assert.ok(took < 400, `${took} ms of CPU`);
});

// ---- dataset columns as HF datasets and numpy hand them over -----------------------------------

const textual = defineVerifier({
  name: "textual",
  description: "a string (or list of strings) reference, like math and exact",
  reference: Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String(), { minItems: 1 })]),
  options: Type.Object({ strict: Type.Boolean({ default: false }), label: Type.Optional(Type.String()) }, { additionalProperties: false }),
  verify: async (item) => ({ reward: 1, reason: "", details: { reference: item.reference, options: item.options } }),
});

const numeric = defineVerifier({
  name: "numeric",
  description: "declares a number: it must get the number, not a string",
  reference: Type.Union([Type.Number(), Type.String()]),
  options: Type.Object({}),
  verify: async () => ({ reward: 1, reason: "" }),
});

test("an integer reference is read as its decimal string where the verifier declares a string", () => {
  const r = new Registry().register(textual).register(numeric);
  for (const [given, want] of [[72, "72"], [72.5, "72.5"], [-3, "-3"], [[72, "seventy-two"], ["72", "seventy-two"]]] as const) {
    const res = r.resolve({ verifier: "textual", response: "", reference: given });
    assert.ok(!("invalid" in res), JSON.stringify(given));
    assert.deepEqual(res.item.reference, want);
  }
  // A verifier that accepts numbers gets the number untouched.
  const n = r.resolve({ verifier: "numeric", response: "", reference: 72 });
  assert.ok(!("invalid" in n) && n.item.reference === 72);
  // Near misses stay invalid, with the first validation's reason.
  for (const bad of [true, null, { a: 1 }, [], [[1]]]) {
    const res = r.resolve({ verifier: "textual", response: "", reference: bad });
    assert.ok("invalid" in res && res.field === "reference", JSON.stringify(bad));
  }
});

test("null options mean the default (HF datasets' struct columns fill unset keys with None)", () => {
  const r = new Registry().register(textual);
  const given = { strict: null, label: null };
  const res = r.resolve({ verifier: "textual", response: "", reference: "x", options: given as any });
  assert.ok(!("invalid" in res), "invalid" in res ? res.invalid : "");
  assert.deepEqual(res.item.options, { strict: false });
  assert.deepEqual(given, { strict: null, label: null }, "the caller's object is untouched");
  const set = r.resolve({ verifier: "textual", response: "", reference: "x", options: { strict: true, label: null } as any });
  assert.ok(!("invalid" in set));
  assert.deepEqual(set.item.options, { strict: true });
  // An option that declares null keeps it (format's answer_tag: null means "any text").
  const fmt = new Registry().register(defineVerifier({
    name: "nullable", description: "", reference: Type.Unknown(),
    options: Type.Object({ tag: Type.Union([Type.String(), Type.Null()], { default: "answer" }), n: Type.Integer({ default: 1 }) }),
    verify: async () => ({ reward: 1, reason: "" }),
  }));
  const kept = fmt.resolve({ verifier: "nullable", response: "", options: { tag: null, n: null } as any });
  assert.ok(!("invalid" in kept));
  assert.deepEqual(kept.item.options, { tag: null, n: 1 });
  // A wrong type is still wrong; null is not a licence for anything.
  const bad = r.resolve({ verifier: "textual", response: "", reference: "x", options: { strict: "yes" } });
  assert.ok("invalid" in bad && /options\/strict/.test(bad.invalid));
});

test("real verifiers accept integer references and null options over HTTP", async () => {
  const { default: request } = await import("supertest");
  const { testApp } = await import("../../tests/helpers.js");
  const { app } = await testApp();
  const res = await request(app).post("/reward/batch").send({
    items: [
      { verifier: "exact", response: "72", reference: 72 },
      { verifier: "exact", response: "71", reference: 72 },
      { verifier: "exact", response: "72", reference: 72, options: { case_sensitive: null } },
      { verifier: "exact", response: "73", reference: [72, 73] },
    ],
  }).expect(200);
  assert.deepEqual(res.body.results.map((x: any) => [x.status, x.reward]), [["ok", 1], ["ok", 0], ["ok", 1], ["ok", 1]]);
});

test("an item without options gets its own copy of the defaults; an object default still goes through the validator", () => {
  const prim = defineVerifier({
    name: "prim",
    description: "",
    reference: Type.String(),
    options: Type.Object({ k: Type.Number({ default: 2 }), on: Type.Boolean({ default: true }) }),
    verify: async () => ({ reward: 1, reason: "" }),
  });
  const obj = defineVerifier({
    name: "obj",
    description: "",
    reference: Type.String(),
    options: Type.Object({ list: Type.Array(Type.String(), { default: ["a"] }) }),
    verify: async () => ({ reward: 1, reason: "" }),
  });
  const needs = defineVerifier({
    name: "needs",
    description: "",
    reference: Type.String(),
    options: Type.Object({ must: Type.Number() }),
    verify: async () => ({ reward: 1, reason: "" }),
  });
  const reg = new Registry().register(prim).register(obj).register(needs);
  const a = reg.resolve({ verifier: "prim", response: "", reference: "x" });
  const b = reg.resolve({ verifier: "prim", response: "", reference: "x" });
  assert.ok("item" in a && "item" in b);
  assert.deepEqual(a.item.options, { k: 2, on: true });
  (a.item.options as Record<string, unknown>).k = 99; // a verifier that writes to its options
  assert.deepEqual(b.item.options, { k: 2, on: true });
  assert.deepEqual((reg.resolve({ verifier: "prim", response: "", reference: "x" }) as { item: { options: unknown } }).item.options, { k: 2, on: true });
  const c = reg.resolve({ verifier: "obj", response: "", reference: "x" });
  const d = reg.resolve({ verifier: "obj", response: "", reference: "x" });
  assert.ok("item" in c && "item" in d);
  assert.notEqual(c.item.options.list, d.item.options.list);
  // No options where one is required: still invalid, naming it.
  const e = reg.resolve({ verifier: "needs", response: "", reference: "x" });
  assert.ok("invalid" in e);
  assert.match(e.invalid, /must/);
});
