/** resolveOptions fills defaults as TypeBox's Value.Default does, without walking the schema an item. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Value } from "@sinclair/typebox/value";
import { MathOptionsSchema, resolveOptions } from "./options.js";
import { mulberry32 } from "./compare.js";

/** Values a key may be given: absent, undefined, null, valid ones and ones of the wrong type. */
const CHOICES: Record<string, unknown[]> = {
  precision: [3, 0, "2"],
  extract: [["plain"], ["boxed", "latex"], [], "boxed"],
  strip_think: [false, true, 0],
  allow_set_relation: [true, false, "yes"],
  seed: [7, 0, -1, 1.5],
  decimal_comma: [true, false],
  appeal: [true, false],
  unknown_key: ["x", 1],
};

test("resolveOptions agrees with Value.Default on 5,000 random option objects", () => {
  const rnd = mulberry32(12345);
  for (let n = 0; n < 5000; n++) {
    const o: Record<string, unknown> = {};
    for (const [k, vals] of Object.entries(CHOICES)) {
      const r = rnd();
      if (r < 0.35) continue; // absent
      if (r < 0.45) o[k] = undefined;
      else if (r < 0.5) o[k] = null;
      else o[k] = structuredClone(vals[Math.floor(rnd() * vals.length)]);
    }
    const before = structuredClone(o);
    assert.deepEqual(resolveOptions(o), Value.Default(MathOptionsSchema, { ...o }), JSON.stringify(o));
    assert.deepEqual(o, before, "the options given are not changed");
  }
});

test("defaults are the schema's, and a filled copy shares no array with the schema", () => {
  const a = resolveOptions();
  assert.deepEqual(a, Value.Default(MathOptionsSchema, {}));
  a.extract.push("plain");
  assert.deepEqual(resolveOptions().extract, ["boxed", "phrase", "latex", "plain"]);
  assert.deepEqual(MathOptionsSchema.properties.extract.default, ["boxed", "phrase", "latex", "plain"]);
});

test("options filled already (every item through the registry) are taken as they are, in well under a microsecond", () => {
  const filled = resolveOptions({ seed: 4 });
  assert.equal(resolveOptions(filled), filled);
  const time = (o: object) => {
    for (let i = 0; i < 5000; i++) resolveOptions(o);
    const t0 = performance.now();
    for (let i = 0; i < 20000; i++) resolveOptions(o);
    return ((performance.now() - t0) * 1000) / 20000;
  };
  // Value.Default read ~22 µs a call here; the bound leaves room for a loaded machine
  for (const o of [filled, {}, { seed: 3 }]) {
    const us = time(o);
    assert.ok(us < 3, `${JSON.stringify(o)}: ${us.toFixed(2)} µs a call`);
  }
});
