/**
 * The SQLite process's store of gold results (issue 35: a gold's rows stay in the process that ran
 * it): least recently used first out, never past its bytes or its entries, one result at most
 * KEEP_BYTES.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { KeptGolds, KEEP_BYTES, type KeptGold } from "./kept.js";

const gold = (bytes: number): KeptGold => ({ rows: [[1]], bytes, stayed: true, digests: new Map() });

test("bounded in bytes: the least recently used go first, and the total never passes the bound", () => {
  const k = new KeptGolds(10_000, 1_000);
  for (let i = 0; i < 50; i++) {
    assert.equal(k.set(`g${i}`, gold(1_000)), true);
    assert.ok(k.bytes <= 10_000, `${k.bytes} bytes after ${i + 1} results`);
    if (i === 3) assert.ok(k.get("g0")); // used: kept past the ones after it
  }
  // 1,000 bytes of rows + the key + 64 each: 9 fit in 10,000
  assert.equal(k.size, 9);
  assert.equal(k.get("g1"), undefined);
  assert.equal(k.get("g40"), undefined);
  assert.ok(k.get("g49") && k.get("g41"));
});

test("bounded in entries; a result over KEEP_BYTES, or over the whole bound, is not kept", () => {
  const k = new KeptGolds(1 << 30, 4);
  for (let i = 0; i < 10; i++) k.set(`g${i}`, gold(10));
  assert.equal(k.size, 4);
  assert.deepEqual(["g6", "g7", "g8", "g9"].map((x) => !!k.get(x)), [true, true, true, true]);
  assert.equal(k.set("big", gold(KEEP_BYTES + 1)), false);
  assert.equal(k.get("big"), undefined);
  const small = new KeptGolds(500, 4);
  assert.equal(small.set("g", gold(600)), false);
  assert.equal(small.size, 0);
  assert.equal(small.bytes, 0);
});

test("replacing a key counts its bytes once", () => {
  const k = new KeptGolds(10_000, 10);
  k.set("g", gold(1_000));
  const once = k.bytes;
  k.set("g", gold(1_000));
  assert.equal(k.bytes, once);
  assert.equal(k.size, 1);
});
