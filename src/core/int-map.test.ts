import { test } from "node:test";
import assert from "node:assert/strict";
import { IntMap } from "./int-map.js";

/** The same keys and values as a Map, in both slot widths. */
for (const [name, maxKey] of [["Int32Array slots", 2 ** 31 - 2], ["Float64Array slots (keys past 2^31)", 2 ** 53 - 1]] as const) {
  test(`IntMap agrees with a Map: ${name}`, () => {
    const n = 5000;
    const m = new IntMap(n, maxKey);
    const ref = new Map<number, number>();
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * maxKey;
    for (let i = 0; ref.size < n; i++) {
      const key = Math.floor(rnd());
      const had = m.getOrSet(key, i);
      assert.equal(had, ref.has(key) ? ref.get(key) : -1);
      if (!ref.has(key)) ref.set(key, i);
    }
    for (const [k, v] of ref) assert.equal(m.get(k), v);
    for (let i = 0; i < 1000; i++) {
      const key = Math.floor(rnd());
      if (!ref.has(key)) assert.equal(m.get(key), -1);
    }
    const [k0] = ref.keys();
    m.set(k0, 123);
    assert.equal(m.get(k0), 123);
  });
}

test("IntMap with Int32Array slots: a key past 2^31 is absent, not aliased", () => {
  const m = new IntMap(4, 100);
  m.set(1, 5);
  assert.equal(m.get(2 ** 32 + 1), -1);
  assert.equal(m.get(1), 5);
});
