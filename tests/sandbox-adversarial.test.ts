/**
 * Hostile programs against the real backends (docker and bwrap; CI installs both): each is
 * contained, ends with the right status, scores 0 through the code verifier, and leaves the
 * sandbox healthy (a normal program still runs, the server still serves).
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import type { RunOutcome, RunStatus, Sandbox } from "../sandbox/types.js";
import { code } from "../verifiers/code/index.js";
import { openDockerForTests, openBwrapForTests, type Opened } from "./sandboxes.js";
import { testApp, fakeSandbox, testServices, verifyDirect } from "./helpers.js";

const LIMITS = { wallMs: 3000, cpuMs: 1500, memoryMb: 256, outputBytes: 1 << 20 };

interface Case {
  name: string;
  src: string;
  /** Acceptable statuses (a program that fails a blocked call may also just exit non-zero). */
  status: RunStatus[];
  check?: (r: RunOutcome) => void;
  /** Longest it may take, ms. */
  within: number;
  /** Limits for this case, when LIMITS' would end it for another reason first. */
  limits?: Partial<typeof LIMITS>;
}

const CASES: Case[] = [
  { name: "fork bomb", src: "import os\nwhile True:\n    try: os.fork()\n    except OSError: pass", status: ["time_limit"], within: 6000 },
  { name: "memory bomb", src: "xs = []\nwhile True: xs.append(bytearray(16 << 20))", status: ["memory_limit"], within: 4000 },
  {
    // Each process stays under its own address-space limit; together they exceed the run's memory.
    name: "memory bomb across processes",
    src: "import os, time\nfor _ in range(7):\n    if os.fork() == 0:\n        break\nx = bytearray(200 << 20)\nfor i in range(0, len(x), 4096): x[i] = 1\ntime.sleep(2)\nprint('survived')",
    status: ["memory_limit"],
    // A long wall limit: on a busy machine, with one core per container, touching 1.4 GB of
    // pages can outlast 3 s, and the time limit would hide whether memory was contained. A
    // program that survived would still finish (and fail the test) in about 3 s.
    limits: { wallMs: 15_000, cpuMs: 10_000 },
    within: 16_000,
  },
  { name: "infinite loop", src: "while True: pass", status: ["time_limit"], within: 5000 },
  { name: "sleep", src: "import time\ntime.sleep(60)", status: ["time_limit"], within: 5000 },
  {
    name: "1 GB of output",
    src: "import sys\nchunk = 'x' * (1 << 16)\nfor _ in range(1 << 14): sys.stdout.write(chunk)",
    status: ["output_limit"],
    check: (r) => {
      assert.equal(r.truncated, true);
      assert.ok(r.stdout.length <= LIMITS.outputBytes);
    },
    within: 3000,
  },
  {
    name: "network access",
    src: "import socket\nfor host in [('1.1.1.1', 53), ('127.0.0.1', 2375), ('10.255.255.53', 53)]:\n    try:\n        s = socket.create_connection(host, timeout=1)\n        print('CONNECTED', host)\n    except OSError as e:\n        print('blocked', e.errno)\ntry:\n    socket.getaddrinfo('deb.debian.org', 80)\n    print('RESOLVED')\nexcept OSError:\n    print('no dns')",
    status: ["finished"],
    check: (r) => {
      assert.doesNotMatch(r.stdout, /CONNECTED|RESOLVED/);
      assert.match(r.stdout, /blocked/);
    },
    within: 5000,
  },
  {
    name: "reading host files",
    src: "import os\nfor p in ['/work/HELPER-BRIEF.md', '/root/.bash_history', '/var/run/docker.sock', '/run/docker.sock', '/etc/hostname_of_host']:\n    print(p, os.path.exists(p))\nprint('uid', os.getuid())\ntry:\n    print(open('/etc/shadow').read()[:10])\nexcept OSError as e:\n    print('shadow', e.errno)",
    status: ["finished"],
    check: (r) => {
      assert.doesNotMatch(r.stdout, / True/);
      assert.match(r.stdout, /uid 65534/);
      assert.match(r.stdout, /shadow 13/); // EACCES
    },
    within: 3000,
  },
  {
    name: "writing outside scratch",
    src: "import os\nfor p in ['/etc/passwd', '/usr/bin/python3', '/x', '/tmp/x', '/sandbox/x', '/var/x']:\n    try:\n        open(p, 'a').write('pwned')\n        print('WROTE', p)\n    except OSError as e:\n        print('refused', p, e.errno)\nopen('mine.txt', 'w').write('ok')\nprint('scratch ok')",
    status: ["finished"],
    check: (r) => {
      assert.doesNotMatch(r.stdout, /WROTE/);
      assert.match(r.stdout, /scratch ok/);
    },
    within: 3000,
  },
  {
    name: "killing its parent",
    src: "import os, signal\nfor pid in (os.getppid(), 1):\n    try:\n        os.kill(pid, signal.SIGKILL)\n        print('sent', pid)\n    except OSError as e:\n        print('refused', pid, e.errno)",
    status: ["finished"],
    within: 3000,
  },
  {
    name: "leftover processes",
    src: "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        open('/dev/null').close()\n        time.sleep(600)\n    os._exit(0)\nprint('parent leaves')",
    status: ["finished"],
    within: 3000,
  },
  {
    // Must be scored 0 like any failure, never taken for a machinery error (reward null).
    name: "pretending the sandbox failed",
    src: "import sys\nsys.stderr.write(\"bwrap: Can't fork for pid 1: Resource temporarily unavailable\\n\")\nsys.exit(1)",
    status: ["finished"],
    within: 3000,
  },
  {
    // A lone UTF-16 surrogate cannot be written as UTF-8: the runner once failed on it (null).
    name: "a lone surrogate in the program text",
    src: "# \ud800 stray\nprint('fine')",
    status: ["finished"],
    check: (r) => assert.equal(r.stdout, "fine\n"),
    within: 3000,
  },
];

function adversarialSuite(name: string, open: () => Promise<Opened>) {
  return async () => {
    const opened = await open();
    describe(`${name}: hostile programs are contained`, { skip: opened.skip }, () => {
      const sb = opened.sandbox as Sandbox;
      after(() => sb?.close());
      const healthy = async () => {
        const r = await sb.run({ language: "python", code: "import os\nprint(sum(range(10)))\nprint(len([p for p in os.listdir('/proc') if p.isdigit()]))", limits: LIMITS });
        assert.equal(r.status, "finished", `sandbox unhealthy after: ${r.status} ${r.message ?? ""} ${r.stderr}`);
        const [sum, procs] = r.stdout.trim().split("\n");
        assert.equal(sum, "45");
        // No process of an earlier run is left: only the python itself (and, in docker, the runner
        // and its warm Python, the fork server).
        assert.ok(Number(procs) <= 3, `processes visible to a fresh run: ${procs}`);
      };
      for (const c of CASES) {
        test(c.name, async () => {
          const t0 = Date.now();
          const r = await sb.run({ language: "python", code: c.src, limits: { ...LIMITS, ...c.limits } });
          const took = Date.now() - t0;
          assert.ok(c.status.includes(r.status), `${c.name}: status ${r.status} (${r.message ?? ""}) stderr: ${r.stderr.slice(-300)}`);
          c.check?.(r);
          // The time the host kept the program waiting for a CPU is not the sandbox's slowness:
          // limits are judged on the program's own time (sandbox/README.md#time-limits).
          assert.ok(took < c.within + (r.waitMs ?? 0), `${c.name} took ${took} ms (${r.waitMs ?? 0} ms waiting for a CPU)`);
          await healthy();
        });
      }
      test("every hostile program scores 0 through the code verifier, and the server keeps serving", async () => {
        const { app } = await testApp({}, [], { sandbox: fakeSandbox(sb) });
        const items = CASES.map((c, i) => ({
          id: i,
          verifier: "code",
          response: "```python\n" + c.src + "\n```",
          reference: { inputs: ["1\n"], outputs: ["expected-output\n"] },
          options: { time_limit_ms: 1500, memory_mb: 256 },
        }));
        const res = await request(app).post("/reward/batch").send({ items, deadline_ms: 60_000 });
        assert.equal(res.status, 200);
        for (const r of res.body.results) {
          assert.equal(r.status, "ok", `${CASES[r.id].name}: ${r.reason}`);
          assert.equal(r.reward, 0, `${CASES[r.id].name}: ${r.reason}`);
        }
        assert.equal((await request(app).get("/healthz")).status, 200);
        const good = await request(app).post("/reward").send({ verifier: "code", response: "print(input())", reference: { inputs: ["hi\n"], outputs: ["hi\n"] } });
        assert.equal(good.body.reward, 1, good.body.reason);
      });
      test("a burst of 12 fork bombs in one batch: 12 zeros with a reason, none null", { timeout: 240_000 }, async () => {
        // On docker these once came back null ("deadline exceeded"): the bombs' own processes
        // queued for the container's one core, the kill and the container's replacement were
        // charged to the item. Now the time a bomb spends behind its own processes is its own
        // (sandbox/meter.ts), its CPU over the whole tree ends it, and the rest is unclocked.
        const { app } = await testApp({}, [], { sandbox: fakeSandbox(sb) });
        const bomb = CASES.find((c) => c.name === "fork bomb")!.src;
        const items = Array.from({ length: 12 }, (_, i) => ({
          id: i, verifier: "code", response: "```python\n" + bomb + "\n```",
          reference: { inputs: ["1\n"], outputs: ["1\n"] }, options: { time_limit_ms: 1000 },
        }));
        const res = await request(app).post("/reward/batch").send({ items });
        assert.equal(res.status, 200);
        for (const r of res.body.results) {
          assert.equal(r.reward, 0, `bomb ${r.id}: ${r.reward} (${r.reason})`);
          assert.match(r.reason, /time limit|runtime error/, `bomb ${r.id}: ${r.reason}`);
        }
        await healthy();
      });
      test("another sample's compiled program is not readable", async () => {
        const secret = "int main(){ /* answer 4242 */ return 0; }";
        const c = await sb.run({ language: "cpp", code: secret, limits: LIMITS });
        assert.equal(c.status, "finished", c.stderr);
        // The reader is C++ too, so in docker it lands in the same pool (the cache is per container).
        const reader = [
          "#include <filesystem>", "#include <fstream>", "#include <iostream>", "namespace fs = std::filesystem;",
          "int main(){ std::error_code ec; int hits = 0;",
          "  for (auto it = fs::recursive_directory_iterator(\"/sandbox\", fs::directory_options::skip_permission_denied, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {",
          "    auto p = it->path(); if (p.parent_path() == fs::current_path()) continue;",
          "    std::ifstream f(p, std::ios::binary); if (f.good() && fs::is_regular_file(p, ec)) { std::cout << p << \"\\n\"; ++hits; } }",
          "  std::cout << \"hits \" << hits << \"\\n\"; }",
        ].join("\n");
        const runs = await Promise.all([1, 2, 3].map(() => sb.run({ language: "cpp", code: reader, limits: LIMITS })));
        for (const r of runs) {
          assert.equal(r.status, "finished", r.stderr || r.compile?.stderr);
          assert.match(r.stdout, /^hits 0$/m, r.stdout);
        }
      });
      if (name === "docker") test("the pool is back to full strength after recycling tainted containers", async () => {
        const stats = () => (sb as any).stats() as { live: number; idle: number; recycled: number }[];
        assert.ok(stats()[0].recycled > 0, "hostile runs should have recycled containers");
        const t0 = Date.now();
        while (!(stats()[0].live === 2 && stats()[0].idle === 2) && Date.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 100));
        assert.deepEqual({ live: stats()[0].live, idle: stats()[0].idle }, { live: 2, idle: 2 });
      });
      test("a language the backend lacks is a sandbox error, not a run elsewhere", async () => {
        const r = await sb.run({ language: "cobol", code: "x", limits: LIMITS });
        assert.equal(r.status, "sandbox_error");
      });
    });
  };
}

await adversarialSuite("docker", () => openDockerForTests(2))();
await adversarialSuite("bwrap", openBwrapForTests)();

// Verifier-level context check: a sandbox that fails is an error, never a 0.
describe("machinery failure is reward null", () => {
  test("sandbox_error from the backend", async () => {
    const broken: Sandbox = {
      name: "broken", languages: ["python"], close: async () => {},
      run: async () => ({ status: "sandbox_error", exitCode: null, signal: null, stdout: "", stderr: "", truncated: false, wallMs: 0, cpuMs: null, message: "container died" }),
    };
    const services = testServices({ sandbox: fakeSandbox(broken) });
    await assert.rejects(verifyDirect(code, { response: "print(1)", reference: { inputs: [""], outputs: ["1"] } }, { services }), /container died/);
  });
});
