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

test("the quick path's pre-check stops every reference of the hard mix before normalising it, and no reference that normalises to a plain number", async () => {
  const { mayBePlainNumber, normalizeAnswer, referenceAnswer } = await import("./answer.js");
  const { conformanceTasks, hardTasks, ordinaryTasks } = await import("../../bench/math-sets.js");
  const hard = hardTasks(240).flatMap((t) => t.reference);
  assert.deepEqual(hard.filter(mayBePlainNumber), []);
  const plain = /^-?(?:\d+(?:\.\d+)?|\.\d+)$/;
  const refs = [...conformanceTasks(), ...hardTasks(240), ...ordinaryTasks(240)].flatMap((t) => t.reference)
    .concat(["12", "$12$", "\\boxed{12}", "12^\\circ", "12^{\\circ}", "30 \\text{ cm}", "-0.5", "\\$12", "12\\%", "1,000"]);
  const missed = refs.filter((r) => { const a = referenceAnswer(r); return plain.test(normalizeAnswer(a.answer, a.latex)) && !mayBePlainNumber(r); });
  assert.deepEqual(missed, []);
  assert.ok(refs.filter(mayBePlainNumber).length > 100);
});
