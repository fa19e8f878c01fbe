/**
 * The function-call harness (harness/fncall.py) run by the host's python3, outside any sandbox
 * (trusted test programs only): what it sends back for a result, and how the server's
 * valuesMatch reads that against a reference's expected value. Skipped without a python3.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exactJson, isSetResult, valuesMatch } from "./compare.js";
import { code, outputLimitOf, OUTPUT_MAX_BYTES } from "./index.js";
import { parseReference } from "./suite.js";
import type { RunOutcome, RunRequest, Sandbox } from "../../sandbox/types.js";
import { InvalidItemError } from "../../src/core/types.js";
import { fakeSandbox, testServices, verifyDirect } from "../../tests/helpers.js";

const HARNESS = new URL("./harness/fncall.py", import.meta.url).pathname;
const python = spawnSync("python3", ["--version"]).status === 0;

/** The harness's result for `fn(*args)` defined in `solution`, as the server parses it. */
function call(solution: string, fn: string, args: unknown[]): { ok: boolean; result?: unknown; error?: string } {
  const dir = mkdtempSync(join(tmpdir(), "fncall-"));
  try {
    writeFileSync(join(dir, "solution.py"), solution);
    const nonce = "0123456789abcdef01234567";
    const r = spawnSync("python3", [HARNESS], { cwd: dir, input: JSON.stringify({ fn, args, nonce }), encoding: "utf8", timeout: 20_000 });
    const marker = `\n\x1eASSAY:${nonce} `;
    const at = r.stdout.lastIndexOf(marker);
    assert.ok(at >= 0, `no record: ${r.stdout} ${r.stderr}`);
    const end = r.stdout.indexOf("\n", at + marker.length);
    return exactJson(r.stdout.slice(at + marker.length, end < 0 ? undefined : end)) as any;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("a set result is tagged as a set and matches no list (Python: {1,2,3} != [1,2,3])", { skip: !python && "no python3" }, () => {
  // Before: the harness sent a set as a sorted list, and `return {1,2,3}` passed for [1, 2, 3].
  const r = call("def f(n):\n    return {3, 1, 2}\n", "f", [1]);
  assert.equal(r.ok, true);
  assert.equal(isSetResult(r.result), true);
  assert.deepEqual(r.result, { $set: [1, 2, 3] }, "sorted, for the diff");
  assert.equal(valuesMatch(r.result, [1, 2, 3]), false);
  assert.equal(valuesMatch(r.result, [[1, 2, 3]]), false);
  // frozensets, a set subclass, sets inside a list, a set of mixed types
  const nested = call("class S(set):\n    pass\ndef f(n):\n    return [frozenset({2, 1}), S({'b', 'a'}), {1, 'a', (1, 2)}]\n", "f", [1]);
  assert.equal(nested.ok, true, nested.error);
  const got = nested.result as unknown[];
  assert.ok(got.every(isSetResult), JSON.stringify(got));
  assert.deepEqual(got[0], { $set: [1, 2] });
  assert.deepEqual(got[1], { $set: ["a", "b"] });
  assert.equal(valuesMatch(nested.result, [[1, 2], ["a", "b"], [1, "a", [1, 2]]]), false);
  // a list stays a list
  const list = call("def f(n):\n    return [1, 2, 3]\n", "f", [1]);
  assert.equal(valuesMatch(list.result, [1, 2, 3]), true);
});

test("bools and near-integers as the harness sends them: Python's == for ints, a float noise tolerance only", { skip: !python && "no python3" }, () => {
  assert.equal(valuesMatch(call("def f(n):\n    return True\n", "f", [1]).result, 1), true);
  assert.equal(valuesMatch(call("def f(n):\n    return 1\n", "f", [1]).result, true), true);
  assert.equal(valuesMatch(call("def f(n):\n    return n * 1.0000004\n", "f", [777777777]).result, 777777777), false);
  assert.equal(valuesMatch(call("def f(n):\n    return 0.1 * 3 * 10 / 3\n", "f", [1]).result, 1), true, "0.9999999999999999 for 1");
  assert.equal(valuesMatch(call("def f(n):\n    return float(n)\n", "f", [12]).result, 12), true, "12.0 == 12");
});

/**
 * A stand-in sandbox for trusted test programs: runs `python3 main.py` on the host (no limits
 * but a timeout) and keeps each request, so a test can see the limits the verifier asked for.
 */
function hostPython(): { sandbox: Sandbox; requests: RunRequest[] } {
  const requests: RunRequest[] = [];
  const sandbox: Sandbox = {
    name: "host-python (test)",
    languages: ["python"],
    async run(req: RunRequest): Promise<RunOutcome> {
      requests.push(req);
      const dir = mkdtempSync(join(tmpdir(), "fncall-run-"));
      try {
        for (const [name, text] of Object.entries(req.files ?? {})) writeFileSync(join(dir, name), text);
        writeFileSync(join(dir, "main.py"), req.code);
        const t0 = performance.now();
        const r = spawnSync("python3", ["main.py"], { cwd: dir, input: req.stdin ?? "", encoding: "utf8", timeout: 20_000, maxBuffer: 1 << 26 });
        return { status: "finished", exitCode: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, truncated: false, wallMs: performance.now() - t0, cpuMs: null };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    async close() {},
  };
  return { sandbox, requests };
}

const verifyOn = (sandbox: Sandbox, response: string, reference: unknown, options: Record<string, unknown> = {}) =>
  verifyDirect(code, { response: "```python\n" + response + "\n```", reference, options }, { services: testServices({ sandbox: fakeSandbox(sandbox) }) });

test("APPS's one-element-list outputs are unwrapped for APPS's shape only, never for LiveCodeBench's", { skip: !python && "no python3" }, async () => {
  // Before: `[x]` accepted `x` for every reference: LiveCodeBench's functional test expecting
  // [3] passed `return 3`, where its checker (result == expected) says False.
  const { sandbox } = hostPython();
  const three = "class Solution:\n    def f(self, n):\n        return 3";
  const lcb = { tests: [{ input: "[1,3,5]", output: "[3]", testtype: "functional" }], fn_name: "f" };
  assert.equal((await verifyOn(sandbox, three, lcb)).reward, 0);
  assert.equal((await verifyOn(sandbox, three.replace("return 3", "return [3]"), lcb)).reward, 1);
  // APPS/TACO's input_output (raw string, parsed object, the JSON string itself, verl's copy)
  const io = { inputs: [[[1, 3, 5]]], outputs: [[3]], fn_name: "f" };
  for (const ref of [{ input_output: JSON.stringify(io) }, { input_output: io }, JSON.stringify(io), io]) {
    const r = await verifyOn(sandbox, three, ref);
    assert.equal(r.reward, 1, `${JSON.stringify(ref)}: ${r.reason}`);
    assert.equal((await verifyOn(sandbox, three.replace("return 3", "return [3]"), ref)).reward, 1);
    assert.equal((await verifyOn(sandbox, three.replace("return 3", "return 4"), ref)).reward, 0);
  }
  const wrapped = (ref: unknown) => (parseReference(ref) as { wrapped?: boolean }).wrapped;
  assert.equal(wrapped({ tests: [{ input: "1", output: "[3]", testtype: "functional" }], fn_name: "f" }), false);
  assert.equal(wrapped({ input_output: '{"inputs": [[1]], "outputs": [[3]], "fn_name": "f"}' }), true);
});

test("function calls end to end: a set fails for a list, a bool passes for 0/1, a relative float error fails for an integer", { skip: !python && "no python3" }, async () => {
  const { sandbox } = hostPython();
  const fn = (body: string) => `def f(n):\n    return ${body}`;
  const ref = (outputs: unknown[]) => ({ inputs: outputs.map(() => [1]), outputs, fn_name: "f" });
  const set = await verifyOn(sandbox, fn("{1, 2, 3}"), ref([[1, 2, 3]]));
  assert.equal(set.reward, 0);
  assert.match(set.reason, /a set: Python's == never equals a set to a list/);
  assert.equal((await verifyOn(sandbox, fn("1"), ref([true]))).reward, 1);
  assert.equal((await verifyOn(sandbox, fn("True"), ref([1]))).reward, 1);
  assert.equal((await verifyOn(sandbox, fn("2"), ref([true]))).reward, 0);
  assert.equal((await verifyOn(sandbox, fn("777777777 * 1.0000004"), ref([777777777]))).reward, 0);
  assert.equal((await verifyOn(sandbox, fn("123456850.5"), ref([123456789]))).reward, 0);
  assert.equal((await verifyOn(sandbox, fn("0.1 * 3 * 10 / 3"), ref([1]))).reward, 1);
});

test("the output cap covers a test's expected output, and a reference past the sandbox's maximum is invalid", { skip: !python && "no python3" }, async () => {
  // Before: every run had the sandbox's 1 MiB cap: a right program printing 1.4 MB scored 0,
  // "output limit".
  assert.equal(outputLimitOf(10), 1 << 20);
  assert.equal(outputLimitOf(1_400_000), 2_800_000 + (64 << 10));
  assert.equal(outputLimitOf(12 << 20), OUTPUT_MAX_BYTES);
  const { sandbox, requests } = hostPython();
  const big = Array.from({ length: 175_000 }, (_, i) => String(1_000_000 + i)).join("\n") + "\n"; // 1.4 MB
  const r = await verifyOn(sandbox, "print('x')", { inputs: ["", ""], outputs: [big, "x\n"] });
  assert.equal(r.reward, 0.5);
  const caps = requests.map((q) => q.limits?.outputBytes ?? 0).sort((a, b) => a - b);
  assert.deepEqual(caps, [1 << 20, outputLimitOf(big.length)], "each test its own cap");
  // a call test's result JSON: its cap from the expected value's size
  requests.length = 0;
  const list = Array.from({ length: 200_000 }, (_, i) => i);
  await verifyOn(sandbox, "def f(n):\n    return list(range(n))", { inputs: [[200_000]], outputs: [[list]], fn_name: "f" });
  assert.ok((requests[0].limits?.outputBytes ?? 0) > 2 * JSON.stringify(list).length, String(requests[0].limits?.outputBytes));
  // an expected output no run may print: the reference is unusable, not 0 for every program
  requests.length = 0;
  const huge = "1\n".repeat((OUTPUT_MAX_BYTES >> 1) + 10);
  await assert.rejects(verifyOn(sandbox, "print(1)", { inputs: ["", ""], outputs: ["1", huge] }), (e: unknown) => e instanceof InvalidItemError && /test 1's expected output is 16\.0 MiB/.test((e as Error).message));
  assert.equal(requests.length, 0, "nothing ran");
});
