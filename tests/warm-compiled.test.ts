/**
 * Compiled languages on warm bwrap slots (issue 31: "compile once per item, every test of the
 * item in the same slot, the compile cache across items"), as the Docker backend does them: the
 * first test of a C++ program compiles it once (under the compiler's limits) inside a slot's
 * long-lived sandbox, and every later test of it, and a later item with the same source, runs
 * that binary on the same slot (its runner is pid 1 there, not the program), under the program's
 * own limits. A compile error and a compiler out of time keep their statuses.
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { openBwrapForTests } from "./sandboxes.js";
import type { BwrapSandbox } from "../sandbox/bwrap/index.js";
import type { RunOutcome } from "../sandbox/types.js";

// Prints what the slot's pid 1 is (the warm runner: python3; a sandbox per run: the program
// itself) and when it started (one slot's runner, one start time), then the sum of stdin's n.
const PROBE = String.raw`#include <cstdio>
#include <cstring>
#include <cstdlib>
int main() {
  char cmd[256] = {0}; FILE* f = fopen("/proc/1/cmdline", "r");
  if (f) { fread(cmd, 1, sizeof cmd - 1, f); fclose(f); }
  char st[1024] = {0}; f = fopen("/proc/1/stat", "r");
  if (f) { fread(st, 1, sizeof st - 1, f); fclose(f); }
  // field 22 of /proc/1/stat: its start time
  char* p = strrchr(st, ')'); int field = 2; unsigned long long start = 0;
  for (; p && *p; p++) if (*p == ' ' && ++field == 22) { start = strtoull(p + 1, 0, 10); break; }
  long n = 0; if (scanf("%ld", &n) != 1) return 3;
  printf("%s %llu %ld\n", cmd, start, n * (n + 1) / 2);
  return 0;
}
`;

const LIMITS = { wallMs: 10_000, cpuMs: 5000, memoryMb: 256 };

function parse(r: RunOutcome): { pid1: string; start: string; sum: number } {
  assert.equal(r.status, "finished", `${r.status}: ${r.message ?? ""} ${r.stderr.slice(-300)} ${r.compile?.stderr.slice(-300) ?? ""}`);
  const [pid1, start, sum] = r.stdout.trim().split(" ");
  return { pid1, start, sum: Number(sum) };
}

const opened = await openBwrapForTests(2);
const sb = opened.sandbox as BwrapSandbox | null;
const skip = opened.skip || (sb && sb.warm !== true ? `no warm slots here: ${sb.warm}` : false) || (sb && !sb.languages.includes("cpp") ? "the cpp image's root filesystem is not built" : false);

describe("compiled programs on warm bwrap slots", { skip }, () => {
  after(() => sb?.close());

  test("one compile per program; each test, and a later item with the same source, on the slot that has the binary", async () => {
    const run = (n: number, code = PROBE) => sb!.run({ language: "cpp", code, stdin: `${n}\n`, limits: LIMITS, compileWallMs: 60_000 });
    const first = await run(10);
    const a = parse(first);
    assert.match(a.pid1, /python3/, "the program ran in a warm slot (its runner is pid 1), not a sandbox of its own");
    assert.equal(a.sum, 55);
    assert.equal(first.compile?.status, "finished");
    assert.ok((first.compile?.wallMs ?? 0) > 0, "the first test compiled");
    // Another program in between (on the other free slot or this one): the binary stays cached.
    const other = await run(3, PROBE.replace("n * (n + 1) / 2", "n * n"));
    assert.equal(parse(other).sum, 9);
    for (const n of [20, 30, 40]) {
      const r = await run(n);
      const b = parse(r);
      assert.equal(b.sum, (n * (n + 1)) / 2);
      assert.equal(b.start, a.start, "every test of the program ran on the slot that compiled it");
      assert.equal(r.compile?.wallMs, 0, "not compiled again");
    }
  });

  test("a program compiled on one slot is not compiled again on another: the host's cache seeds the new slot's", async () => {
    const code = PROBE.replace("int main() {", `// seeded ${Date.now()}\nint main() {`);
    const run = (n: number) => sb!.run({ language: "cpp", code, stdin: `${n}\n`, limits: LIMITS, compileWallMs: 60_000 });
    const first = await run(5);
    assert.equal(parse(first).sum, 15);
    assert.ok((first.compile?.wallMs ?? 0) > 0, "the first test compiled");
    // Two tests at once: one on the slot that compiled it, the other on the second slot.
    const both = await Promise.all([run(6), run(7)]);
    const starts = both.map((r) => parse(r).start);
    assert.notEqual(starts[0], starts[1], "the two tests ran on two slots");
    for (const r of both) assert.equal(r.compile?.wallMs, 0, `a slot compiled the program again (${r.compile?.wallMs} ms)`);
    assert.deepEqual(both.map((r) => parse(r).sum), [21, 28]);
  });

  test("a test runs under the program's memory limit, not the compiler's", async () => {
    const hog = "#include <cstdio>\n#include <vector>\nint main(){ std::vector<char> v(400u << 20, 1); printf(\"%d\\n\", (int)v[12345]); }\n";
    const r = await sb!.run({ language: "cpp", code: hog, limits: { ...LIMITS, memoryMb: 128 }, compileWallMs: 60_000 });
    assert.equal(r.compile?.status, "finished");
    assert.equal(r.status, "memory_limit", `${r.status} ${r.stderr.slice(-200)}`);
  });

  test("a compile error is compile_error with the compiler's words; a compiler out of time is time_limit", async () => {
    const bad = await sb!.run({ language: "cpp", code: "int main() { return undefined_name; }\n", limits: LIMITS });
    assert.equal(bad.status, "compile_error");
    assert.match(bad.compile?.stderr ?? "", /undefined_name/);
    // Every header of the standard library: seconds of g++'s CPU, against a 200 ms limit.
    const slow = await sb!.run({ language: "cpp", code: "#include <bits/stdc++.h>\nint main() { std::map<int, std::vector<std::string>> m; return (int)m.size(); }\n", limits: LIMITS, compileWallMs: 200 });
    assert.equal(slow.status, "compile_error");
    assert.equal(slow.compile?.status, "time_limit", JSON.stringify(slow.compile).slice(0, 300));
    // The slot still serves after both.
    const ok = await sb!.run({ language: "cpp", code: PROBE, stdin: "4\n", limits: LIMITS, compileWallMs: 60_000 });
    assert.equal(parse(ok).sum, 10);
  });
});
