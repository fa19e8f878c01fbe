/**
 * bench/humaneval-x.ts on small files in HumanEval-X's own format (written here:
 * tests/fixtures/harness/humaneval_<lang>-mini.jsonl): CodeGeeX's harness run bare in the
 * sandbox images (bench/harness/humaneval_x_reference.py) passes the correct and the printing
 * C++ tasks and fails the wrong one; Assay scores them the same. In JavaScript CodeGeeX's rule
 * fails any output at all (a correct solution that logs), where Assay's whole-program test
 * leaves stdout free: the one disagreement, listed by task.
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { agreement, bare, itemOf, readRows, report } from "../bench/humaneval-x.js";
import { openDockerForTests } from "./sandboxes.js";
import { CompositeSandbox } from "../sandbox/index.js";
import { openJs } from "../sandbox/js/index.js";
import { root } from "../bench/lib.js";

const CPP = join(root, "tests", "fixtures", "harness", "humaneval_cpp-mini.jsonl");
const JS = join(root, "tests", "fixtures", "harness", "humaneval_js-mini.jsonl");
// Two correct Rust tasks using HumanEval-X's crates (md5::compute; regex::Regex and rand's Rng)
// and a wrong one (an upper-case digest).
const RUST = join(root, "tests", "fixtures", "harness", "humaneval_rust-mini.jsonl");
const ALL = { every: 1, limit: Infinity };

test("each HumanEval-X task becomes the item CodeGeeX's process_humaneval_test would build", () => {
  const [cpp] = readRows(CPP, ALL);
  const it = itemOf(cpp);
  assert.equal(it.language, "cpp");
  // CodeGeeX's helpers, less the one the prompt includes itself, go first.
  assert.ok(it.response.startsWith("#include<stdlib.h>\n#include<algorithm>\n#include<math.h>\n#include<vector>"), it.response.slice(0, 120));
  assert.ok(it.response.endsWith("int add(int a, int b){\n    return a + b;\n}\n"));
  assert.deepEqual(it.reference, { test: cpp.test });
  // The sample: every K-th task, then the first N.
  assert.deepEqual(readRows(JS, { every: 2, limit: Infinity }).map((r) => r.task_id), ["JavaScript/900", "JavaScript/902"]);
});

const opened = await openDockerForTests(2);
describe("CodeGeeX's harness bare against Assay (docker)", { skip: opened.skip }, () => {
  after(() => opened.sandbox?.close());

  test("CodeGeeX's rules, bare: C++ by exit status (output free); JavaScript fails on any output", { timeout: 300_000 }, () => {
    const cpp = bare(CPP, ALL).results;
    assert.deepEqual([...cpp.entries()].map(([id, r]) => [id, r.passed]), [["CPP/900", true], ["CPP/901", true], ["CPP/902", false]]);
    assert.match(cpp.get("CPP/902")!.result, /Assertion .*failed/);
    const js = bare(JS, ALL).results;
    assert.deepEqual([...js.entries()].map(([id, r]) => [id, r.passed]), [["JavaScript/900", true], ["JavaScript/901", false], ["JavaScript/902", false]]);
    assert.match(js.get("JavaScript/902")!.result, /^failed: debug 2 3/);
  });

  test("C++: Assay agrees on every task; JavaScript: only the logging one differs, and is listed", { timeout: 300_000 }, async () => {
    const js = (await openJs()).sandbox;
    const sandbox = js ? new CompositeSandbox([opened.sandbox!, js]) : opened.sandbox!;
    const c = await agreement(CPP, sandbox, ALL);
    assert.equal(c.agree, 3, report(c, "docker", ALL));
    assert.deepEqual([c.ran, c.harnessPassed, c.assayOnes], [3, 2, 2]);
    assert.deepEqual(c.listed.map((d) => d.task_id), ["CPP/902"]);
    const j = await agreement(JS, sandbox, ALL);
    assert.equal(j.agree, 2, report(j, "docker", ALL));
    assert.deepEqual(j.listed.map((d) => [d.task_id, d.reward]), [["JavaScript/901", 0], ["JavaScript/902", 1]]);
    assert.match(report(j, "docker", ALL), /agreement 2\/3[\s\S]*JavaScript\/902: harness failed: debug 2 3\s*; Assay reward 1/);
  });

  test("Rust: CodeGeeX's cargo check + cargo test, bare and offline against the image's crates, and Assay agree on every task", { timeout: 600_000 }, async () => {
    const r = await agreement(RUST, opened.sandbox!, ALL);
    assert.equal(r.ran, 3, report(r, "docker", ALL));
    assert.deepEqual([r.harnessPassed, r.assayOnes, r.agree], [2, 2, 3], report(r, "docker", ALL));
    assert.deepEqual(r.listed.map((d) => [d.task_id, d.reward]), [["Rust/902", 0]]);
  });
});
