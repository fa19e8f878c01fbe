/**
 * The math pool's dispatch (issue 38): what the main thread pays per item, and that the workers
 * run the same code the in-process baseline runs.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { MathPool } from "./pool.js";

test("under tsx a worker loads its module as an ES module, the form the main thread runs, not through require()", async () => {
  // worker.ts through tsx's CommonJS transform graded ordinary answers ~1.4x slower (thread CPU)
  // than the same code in-process: the pool's benchmarks measured the transform, not dispatch
  const pool = new MathPool(1, { filename: fileURLToPath(new URL("./testdata/form-probe-worker.ts", import.meta.url)) });
  try {
    await pool.ready(60_000);
    const r = await pool.run({ response: "x", reference: "1", options: {} });
    assert.equal("reason" in r && r.reason, "esm");
  } finally {
    await pool.close();
  }
});
