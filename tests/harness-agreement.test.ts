/**
 * bench/harness-agreement.ts on small files in HumanEval's and MBPP's own formats (written here:
 * tests/fixtures/harness/*-mini.jsonl): the benchmark's own harness (openai/human-eval's
 * check_correctness, run bare) and Assay give the same verdict on every task, correct ones
 * (a printing one, a Counter, an own class, a module the solution imported, setup code) and
 * wrong ones (a wrong answer, an endless loop); and a disagreement is reported by task.
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { agreement, itemOf, readRows, runHarness, report } from "../bench/harness-agreement.js";
import { openBwrapForTests, openDockerForTests } from "./sandboxes.js";
import type { RunOutcome, Sandbox } from "../sandbox/types.js";
import { root } from "../bench/lib.js";

const HE = join(root, "tests", "fixtures", "harness", "humaneval-mini.jsonl");
const MBPP = join(root, "tests", "fixtures", "harness", "mbpp-mini.jsonl");
// MBPP itself (bench/data/mbpp.jsonl, CC BY 4.0: see bench/data/README.md).
const MBPP_FULL = join(root, "bench", "data", "mbpp.jsonl");
// The tasks issue 37 found scored 0 with a correct solution: a Counter, a defaultdict or a type
// returned (40, 88, 533, 653, 902), the solution's own class built by the test (367, 601, 927),
// a module the solution imported used by the test (596).
const NAMED = [40, 88, 533, 653, 902, 367, 601, 927, 596];

test("bench/data/mbpp.jsonl is MBPP's 974 tasks in its own format", () => {
  const rows = readRows(MBPP_FULL);
  assert.equal(rows.length, 974);
  assert.deepEqual(rows.map((r) => r.task_id), Array.from({ length: 974 }, (_, i) => i + 1));
  for (const r of rows) {
    assert.deepEqual(Object.keys(r), ["text", "code", "task_id", "test_setup_code", "test_list", "challenge_test_list"], `task ${r.task_id}`);
    assert.ok(Array.isArray(r.test_list) && r.test_list.length >= 3, `task ${r.task_id}`);
  }
});

describe("the benchmarks' own harness, run bare", () => {
  test("openai/human-eval's check_correctness passes the correct tasks and fails the wrong and the endless one", async () => {
    const he = await runHarness("humaneval", HE);
    assert.deepEqual([...he.entries()].map(([id, r]) => [id, r === "passed" ? "passed" : r.startsWith("failed") ? "failed" : r]), [
      ["Mini/0", "passed"], ["Mini/1", "passed"], ["Mini/2", "passed"], ["Mini/3", "failed"], ["Mini/4", "timed out"],
    ]);
    const mbpp = await runHarness("mbpp", MBPP);
    assert.deepEqual([...mbpp.values()].map((r) => r === "passed"), [true, true, true, true, false, true]);
  });

  test("each task becomes an item in the benchmark's shape", () => {
    const [he] = readRows(HE, 1);
    assert.deepEqual(itemOf("humaneval", he).reference, { test: he.test, entry_point: "add" });
    assert.ok(itemOf("humaneval", he).response.startsWith("def add(a: int, b: int) -> int:"));
    const mb = readRows(MBPP).at(-1)!;
    assert.deepEqual(itemOf("mbpp", mb).reference, { test_list: ["assert total(DATA) == 6"], test_setup_code: "DATA = [1, 2, 3]" });
    assert.equal(itemOf("mbpp", mb).options.benchmark, "mbpp");
  });

  test("a task Assay scores differently from the harness is listed with both verdicts", async () => {
    // A sandbox whose every run crashes: the harness's passes become disagreements.
    const broken: Sandbox = {
      name: "broken", languages: ["python"],
      run: async (): Promise<RunOutcome> => ({ status: "runtime_error", exitCode: null, signal: "SIGSEGV", stdout: "", stderr: "Segmentation fault", truncated: false, wallMs: 1, cpuMs: 1 }),
      close: async () => {},
    };
    const a = await agreement("mbpp", MBPP, broken);
    assert.equal(a.harnessPassed, 5);
    assert.equal(a.agree, 1); // the wrong solution: both fail it
    assert.deepEqual(a.disagreements.map((d) => d.task_id), ["9001", "9002", "9003", "9004", "9006"]);
    assert.match(report(a, "broken"), /agreement 1\/6[\s\S]*9001: harness passed; Assay reward 0/);
  });
});

for (const [backend, open] of [["docker", () => openDockerForTests(2)], ["bwrap", () => openBwrapForTests(2)]] as const) {
  const opened = await open();
  describe(`the harness against Assay on ${backend}`, { skip: opened.skip }, () => {
    after(() => opened.sandbox?.close());
    test("MBPP's own tasks that issue 37 found scored 0: the harness passes each, and so does Assay", { timeout: 300_000 }, async () => {
      const dir = mkdtempSync(join(tmpdir(), "mbpp-named-"));
      try {
        const file = join(dir, "mbpp.jsonl");
        writeFileSync(file, readRows(MBPP_FULL).filter((r) => NAMED.includes(Number(r.task_id))).map((r) => JSON.stringify(r) + "\n").join(""));
        const a = await agreement("mbpp", file, opened.sandbox!);
        assert.equal(a.n, NAMED.length);
        assert.equal(a.harnessPassed, NAMED.length, report(a, backend));
        assert.equal(a.assayOnes, NAMED.length, report(a, backend));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
    for (const [kind, file, n, passed] of [["humaneval", HE, 5, 3], ["mbpp", MBPP, 6, 5]] as const) {
      test(`${kind}: every task scored as the benchmark's own harness scores it`, { timeout: 300_000 }, async () => {
        const a = await agreement(kind, file, opened.sandbox!);
        assert.equal(a.n, n);
        assert.equal(a.harnessPassed, passed);
        assert.equal(a.agree, n, report(a, backend));
        assert.equal(a.assayOnes, passed);
      });
    }
  });
}
