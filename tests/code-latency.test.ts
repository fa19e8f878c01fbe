/**
 * Milliseconds for trivial items (issue 37): a HumanEval-shaped item (a function and one
 * `check(candidate)` call) costs about what running the same program bare costs, and the warm
 * Python that makes it so (the docker runner's fork server, the assert harness's forked
 * candidate) keeps every isolation guarantee of a fresh interpreter.
 *
 * The latency bound is on CPU time, which a loaded machine does not inflate the way it inflates
 * wall time, and against a bare run of the same program measured in the same test, the same way:
 * `exec python3 prog.py` (the solution, the test and `check(entry)` in one file) through the
 * same sandbox, whose CPU time comes from the same cgroup accounting. Before the fork server an
 * item cost ~5x its bare run (two interpreter starts, the harness's imports).
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import type { RunOutcome, Sandbox } from "../sandbox/types.js";
import { code } from "../verifiers/code/index.js";
import { openDockerForTests, openBwrapForTests, type Opened } from "./sandboxes.js";
import { fakeSandbox, testServices, verifyDirect } from "./helpers.js";

const LIMITS = { wallMs: 10_000, cpuMs: 5000, memoryMb: 256 };
const SOLUTION = "def add(a, b):\n    return a + b\n";
const CHECK = "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** A program that reads its own memory and prints every 24-hex-digit secret after MARK. */
const SCAN = `import re, ctypes
def leaks():
    # Its own anonymous memory (heap, stack, arenas), read in place: a non-dumpable process may
    # not open /proc/self/mem, and file mappings can fault past their file's end.
    pat = re.compile(b"ASSAY" + b"LEAK" + b"([0-9a-f]{24})")
    found = set()
    for line in open("/proc/self/maps").read().splitlines():
        f = line.split()
        if not f[1].startswith("r") or (len(f) > 5 and f[5] not in ("[heap]", "[stack]")):
            continue
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        for at in range(lo, hi, 1 << 20):
            chunk = ctypes.string_at(at, min(hi, at + (1 << 20) + 64) - at if at + (1 << 20) < hi else hi - at)
            found.update(m.group(1).decode() for m in pat.finditer(chunk))
    return sorted(found)
`;

const secret = (i: number) => (Math.random().toString(16).slice(2, 14) + i.toString(16).padStart(12, "0")).slice(0, 24);

function suite(name: string, open: () => Promise<Opened>, warm: boolean) {
  return async () => {
    const opened = await open();
    describe(`${name}: trivial items cost about a bare run, and stay isolated`, { skip: opened.skip }, () => {
      const sb = opened.sandbox as Sandbox;
      after(() => sb?.close());
      const services = () => testServices({ sandbox: fakeSandbox(sb) });

      if (warm) test("a Python run forked from the warm interpreter behaves as `python3 main.py`", async () => {
        const cases: [string, (r: RunOutcome) => void][] = [
          ["import sys, os, resource\nprint(sys.argv, __name__, __file__, sys.path[0], os.getuid(), os.getcwd(), os.environ['HOME'], resource.getrlimit(resource.RLIMIT_AS)[0] >> 20)\nprint(sys.stdin.read().strip())\nsys.stdout.write('no newline')",
            (r) => assert.equal(r.stdout, "['main.py'] __main__ /sandbox/run/main.py /sandbox/run 65534 /sandbox/run /sandbox/run 256\nfrom stdin\nno newline")],
          ["def f():\n    raise ValueError('boom')\nf()", (r) => {
            assert.equal(r.exitCode, 1);
            // The program's own frames only, as a fresh interpreter prints them.
            assert.match(r.stderr, /^Traceback \(most recent call last\):\n  File "\/sandbox\/run\/main\.py", line 3, in <module>\n/);
            assert.match(r.stderr, /ValueError: boom\n$/);
          }],
          ["import sys\nprint('x')\nsys.exit(3)", (r) => { assert.equal(r.exitCode, 3); assert.equal(r.stdout, "x\n"); }],
          ["import sys\nsys.exit('bye')", (r) => { assert.equal(r.exitCode, 1); assert.equal(r.stderr, "bye\n"); }],
          ["import threading, time, atexit\natexit.register(lambda: print('at exit'))\ndef w():\n    time.sleep(0.1)\n    print('thread')\nthreading.Thread(target=w).start()\nprint('main')",
            (r) => assert.equal(r.stdout, "main\nthread\nat exit\n")],
          ["import os\nprint(os.getpgrp() == os.getpid(), os.getppid())", (r) => assert.equal(r.stdout, "True 1\n")],
        ];
        for (const [src, check] of cases) {
          const r = await sb.run({ language: "python", code: src, stdin: "from stdin\n", limits: LIMITS });
          assert.equal(r.status, "finished", `${r.status} ${r.message ?? ""} ${r.stderr}`);
          check(r);
        }
      });

      test("no run sees another run's data in its memory, files or processes, nor the candidate its own tests", async () => {
        // Assert items run one after another (a pool of one container or slot): each item's
        // test holds a secret its candidate would return if it could find it in its memory.
        // Were the candidate forked after the harness read the tests, or any run forked from
        // a process that had read an earlier job, it would find one and score 1.
        const secrets = Array.from({ length: 4 }, (_, i) => secret(i));
        for (const s of secrets) {
          const o = await verifyDirect(code, {
            response: "```python\n" + SCAN + "def guess():\n    got = leaks()\n    return ('ASSAY' + 'LEAK' + got[0]) if got else 'none'\n```",
            reference: { test: `def check(candidate):\n    assert candidate() == "ASSAYLEAK${s}"\n`, entry_point: "guess" },
          }, { services: services() });
          assert.equal(o.reward, 0, `the candidate found a secret in its memory: ${JSON.stringify(o.details)}`);
          assert.match(String((o.details as any).tests[0].error), /AssertionError/);
        }
        // A plain run after them: nothing of theirs in its memory, its files or its processes.
        const r = await sb.run({
          language: "python",
          code: SCAN + "import os, glob\nprint(leaks())\nprint(sorted(glob.glob('/sandbox/**', recursive=True) + glob.glob('/dev/shm/*') + glob.glob('/tmp/*')))\nprint([p for p in os.listdir('/proc') if p.isdigit() and os.stat('/proc/' + p).st_uid == os.getuid() and int(p) != os.getpid()])",
          stdin: "ASSAYLEAK" + secrets[0],
          limits: LIMITS,
        });
        assert.equal(r.status, "finished", r.stderr);
        const [mem, files, procs] = r.stdout.trim().split("\n");
        // Its own stdin is its own: the earlier items' secrets are not there.
        assert.deepEqual(JSON.parse(mem.replace(/'/g, '"')).filter((x: string) => x !== secrets[0]), []);
        assert.ok(!/solution\.py|bench|leak/i.test(files.replace("/sandbox/run/main.py", "")), `files of earlier runs: ${files}`);
        assert.equal(procs, "[]", "processes of earlier runs");
      });

      test("a HumanEval-shaped item costs no more CPU than running the same program bare", { timeout: 180_000 }, async () => {
        const bare: number[] = [];
        const item: number[] = [];
        for (let i = 0; i < 9; i++) {
          const b = await sb.run({ language: "bash", code: "exec python3 prog.py", files: { "prog.py": `${SOLUTION}\n${CHECK}\ncheck(add)\n` }, limits: LIMITS });
          assert.equal(b.status, "finished", b.stderr);
          assert.equal(b.exitCode, 0, b.stderr);
          const o = await verifyDirect(code, { response: "```python\n" + SOLUTION + "```", reference: { test: CHECK, entry_point: "add" } }, { services: services() });
          assert.equal(o.reward, 1, o.reason);
          const t = (o.details as any).tests[0];
          // bwrap without cgroups reports no CPU time: nothing to compare there.
          if (b.cpuMs == null || t.cpu_ms == null) return;
          bare.push(b.cpuMs);
          item.push(t.cpu_ms);
        }
        const [mb, mi] = [median(bare), median(item)];
        assert.ok(mi <= mb * (warm ? 1.5 : 2.5), `a HumanEval item took ${mi.toFixed(1)} ms of CPU (median of 9) where the bare program took ${mb.toFixed(1)} ms; items: ${item.map((x) => x.toFixed(1))}, bare: ${bare.map((x) => x.toFixed(1))}`);
      });
    });
  };
}

await suite("docker", () => openDockerForTests(1), true)();
// bwrap's warm slots (sandbox/bwrap/warm.ts) need root; elsewhere each run is a fresh sandbox.
await suite("bwrap", () => openBwrapForTests(1), process.getuid?.() === 0)();
