/** The patch verifier as the server runs it: both reference forms, hostile input, HTTP. */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import { patch } from "./index.js";
import { testApp, verifyDirect, fastestCpu as fastest } from "../../tests/helpers.js";
import { InvalidItemError } from "../../src/core/types.js";

const ORACLE = [
  "diff --git a/src/m.py b/src/m.py",
  "--- a/src/m.py",
  "+++ b/src/m.py",
  "@@ -1,3 +1,3 @@",
  " def f(x):",
  "-    return x + 1",
  "+    return x + 2",
  "     # end",
  "",
].join("\n");
const SR_REF = {
  code_context: { "example.py": "def sort_list(lst):\n    return sorted(lst)" },
  oracle_new_content: { "example.py": "def sort_list(lst: list[int]) -> list[int]:\n    return sorted(lst)" },
};
const block = (s: string, r: string) => "```python\n### example.py\n<<<<<<< SEARCH\n" + s + "\n=======\n" + r + "\n>>>>>>> REPLACE\n```";
const run = (response: string, reference: unknown, options: Record<string, unknown> = {}) => verifyDirect(patch, { response, reference, options });

describe("patch", () => {
  test("SWE-RL's README example: the oracle edit scores 1, a near miss 0.95 (Python's number)", async () => {
    assert.equal((await run("<think>types</think><solution>" + block("def sort_list(lst):", "def sort_list(lst: list[int]) -> list[int]:") + "</solution>", SR_REF)).reward, 1);
    assert.equal((await run("<think>t</think><solution>" + block("def sort_list(lst):", "def sort_list(lst: list) -> list:") + "</solution>", SR_REF)).reward, 0.95);
  });
  test("malformed edits are -1: no think, a search block not in the file, no blocks", async () => {
    assert.equal((await run("<solution>" + block("def sort_list(lst):", "x") + "</solution>", SR_REF)).reward, -1);
    assert.equal((await run("<think>t</think><solution>" + block("def nope():", "x") + "</solution>", SR_REF)).reward, -1);
    assert.equal((await run("<think>t</think><solution>nothing</solution>", SR_REF)).reward, -1);
  });
  test("unified-diff form: exact 1, near miss in (0, 1), no patch -1", async () => {
    assert.equal((await run("```diff\n" + ORACLE + "```", ORACLE)).reward, 1);
    const near = (await run(ORACLE.replace("x + 2", "x + 3"), ORACLE)).reward!;
    assert.ok(near > 0.9 && near < 1, String(near));
    assert.equal((await run("I would change line 2.", ORACLE)).reward, -1);
  });
  test("a reference that is not a patch is the item's fault", async () => {
    await assert.rejects(run(ORACLE, "not a diff at all"), InvalidItemError);
    await assert.rejects(run(ORACLE, { code_context: {} }), InvalidItemError);
  });
});

describe("hostile completions, each < 50 ms, scored and never an error", () => {
  const hunk = (body: string) => "--- a/src/m.py\n+++ b/src/m.py\n@@ -1,1 +1,1 @@\n-" + body + "\n+x\n";
  let seed = 3;
  const rnd = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return " ab\n"[seed % 4]; };
  const cases: [string, string, unknown][] = [
    ["1 MB completion", "x".repeat(1_048_576), ORACLE],
    ["200 KB line of spaces in a hunk", hunk(" ".repeat(200_000)), ORACLE],
    ["200 KB of random low-entropy text in a hunk", hunk(Array.from({ length: 200_000 }, rnd).join("").replaceAll("\n", " ")), ORACLE],
    ["50k hunk headers", "--- a/x\n+++ b/x\n" + "@@ -1 +1 @@\n".repeat(20_000), ORACLE],
    ["50k fences", "<think>t</think><solution>" + "```\n### example.py\n<<<<<<< SEARCH\n".repeat(6000) + "</solution>", SR_REF],
    ["search/replace with a 200 KB replacement", "<think>t</think><solution>" + block("def sort_list(lst):", "a b ".repeat(50_000)) + "</solution>", SR_REF],
  ];
  for (const [name, response, ref] of cases) {
    test(name, async () => {
      const { out, ms } = await fastest(() => run(response, ref));
      assert.equal(typeof out.reward, "number", out.reason);
      assert.ok(out.reward! >= -1 && out.reward! < 0.5, `${out.reward} ${out.reason}`);
      assert.ok(ms < 50, `${ms.toFixed(1)} ms of CPU`);
    });
  }
});

describe("limits", () => {
  let seed = 9;
  const rnd = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return " ab"[seed % 3]; };
  const body = Array.from({ length: 50_000 }, rnd).join("");
  const response = "--- a/src/m.py\n+++ b/src/m.py\n@@ -1,1 +1,1 @@\n-" + body + "\n+x\n";
  test("a change over max_change_chars counts 0 without being compared", async () => {
    const out = await run(response, ORACLE, { max_change_chars: 10_000 });
    assert.equal(out.reward, 0);
    assert.equal((out.details!.similarities as { over_budget?: boolean }[])[0].over_budget, true);
  });
  test("the step budget bounds the work of a long low-entropy comparison", async () => {
    const { out, ms } = await fastest(() => run(response, ORACLE, { max_compare_steps: 200_000 }));
    assert.equal(out.reward, 0);
    assert.match(out.reason, /limits/);
    assert.ok(ms < 50, `${ms.toFixed(1)} ms of CPU`);
  });
});

describe("search/replace that multiplies a file (an empty SEARCH is \"\\n\", replaced everywhere)", () => {
  // 3,000 lines; an empty SEARCH with a 20 KB REPLACE made a ~60 MB file (seconds of CPU, the
  // event loop blocked), 200 KB an "Invalid string length" error (null). The length is now known
  // before the file is built, and a file past 2·|old| + max_change_chars counts similarity 0.
  const file = Array.from({ length: 3000 }, (_, i) => `    value_${i} = compute(${i})`).join("\n") + "\n";
  const ref = { code_context: { "m.py": file }, oracle_new_content: { "m.py": file.replace("compute(7)", "compute(8)") } };
  const edit = (s: string, r: string, path = "m.py") => "```python\n### " + path + "\n<<<<<<< SEARCH\n" + s + "\n=======\n" + r + "\n>>>>>>> REPLACE\n```";
  const sol = (...blocks: string[]) => "<think>t</think><solution>" + blocks.join("\n") + "</solution>";
  for (const n of [20_000, 200_000]) {
    test(`an empty SEARCH with a ${n / 1000} KB REPLACE: similarity 0, in bounded CPU, never null`, async () => {
      const { out, ms } = await fastest(() => run(sol(edit("", "#".repeat(n))), ref), { giveUp: 2000 });
      assert.equal(out.reward, 0, out.reason);
      const sims = out.details!.similarities as { over_budget?: boolean; pred_chars: number }[];
      assert.equal(sims[0].over_budget, true);
      assert.ok(sims[0].pred_chars > 65_536);
      assert.ok(ms < 50, `${ms.toFixed(1)} ms of CPU`);
    });
  }
  test("an edit of the file after it grew past the cap cannot be checked: -1 (SWE-RL: -1 or near 0)", async () => {
    const out = await run(sol(edit("", "#".repeat(20_000)), edit("    value_7 = compute(7)", "    value_7 = compute(8)")), ref);
    assert.equal(out.reward, -1, out.reason);
    assert.match(out.reason, /cannot be checked/);
    // Identical SEARCH and REPLACE is still caught after the cap.
    assert.equal((await run(sol(edit("", "#".repeat(20_000)), edit("x", "x")), ref)).reward, -1);
  });
  test("under the cap, a replace-all that grows the file is applied as before", async () => {
    const out = await run(sol(edit("    value_7 = compute(7)", "    value_7 = compute(8)")), ref);
    assert.equal(out.reward, 1, out.reason);
    // "\n    value_29" starts 111 lines (29, 290-299, 2900-2999): every one is replaced.
    const grown = await run(sol(edit("    value_29", "    value_29_renamed")), ref);
    assert.equal(typeof grown.reward, "number");
    assert.ok(grown.reward! > 0 && grown.reward! < 0.5, grown.reason);
    const sim = (grown.details!.similarities as { over_budget?: boolean; pred_chars: number }[])[0];
    assert.equal(sim.over_budget, undefined);
    assert.ok(sim.pred_chars > 111 * 2 * 20, "all 111 lines changed");
  });
  test("many edits of a large file: the work of applying them is bounded (-1 past it)", async () => {
    // Each edit reads and copies its file: 300 edits of ~1 MB took ~1.3 s of CPU.
    const big = Array.from({ length: 30_500 }, (_, i) => `    value_${i} = compute(${i})`).join("\n") + "\n";
    const bigRef = { code_context: { "m.py": big }, oracle_new_content: { "m.py": big.replace("compute(7)", "compute(8)") } };
    const edits = Array.from({ length: 300 }, (_, k) => edit(`    value_${30_000 - k} = compute(${30_000 - k})`, `    value_${30_000 - k} = compute(0)`));
    const { out, ms } = await fastest(() => run(sol(...edits), bigRef), { giveUp: 2000 });
    assert.equal(out.reward, -1, out.reason);
    assert.match(out.reason, /characters of work/);
    assert.ok(ms < 300, `${ms.toFixed(1)} ms of CPU`);
    // A few edits of the same file are applied and compared as usual.
    assert.equal((await run(sol(edit("    value_7 = compute(7)", "    value_7 = compute(8)")), bigRef)).reward, 1);
  });
});

describe("over HTTP", () => {
  test("/reward/batch with both forms", async () => {
    const { app } = await testApp();
    const res = await request(app).post("/reward/batch").send({
      items: [
        { verifier: "patch", response: ORACLE, reference: ORACLE },
        { verifier: "patch", response: "<think>t</think><solution>" + block("def sort_list(lst):", "def sort_list(lst: list) -> list:") + "</solution>", reference: SR_REF },
        { verifier: "patch", response: "no patch", reference: ORACLE },
      ],
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.results.map((r: { reward: number }) => r.reward), [1, 0.95, -1]);
  });
});

