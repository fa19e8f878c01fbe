/**
 * A warm slot keeps nothing of one run for the next (issue 31's list): a run forked from the
 * warm interpreter on a Docker container or a bwrap warm slot (sandbox/bwrap/warm.ts) that
 * pollutes everything it can reach (a patched builtin, a monkey-patched module, sys.modules,
 * files in scratch, /tmp and /dev/shm, the environment, the random state, a file descriptor, a
 * signal handler, a System V shared memory segment, a child process) is followed, on the same
 * one-slot sandbox, by a run that sees none of it. Plus what a warm bwrap slot must still
 * deny a program: the runner (its pid 1) out of reach, no network, no host paths, its limits.
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import type { Sandbox } from "../sandbox/types.js";
import { openDockerForTests, openBwrapForTests, assertCleanAfterPollution, type Opened } from "./sandboxes.js";
import { openDocker, dockerOptions } from "../sandbox/docker/index.js";
import { loadConfig } from "../src/core/config.js";
import { openBwrap, BwrapSandbox } from "../sandbox/bwrap/index.js";

const LIMITS = { wallMs: 10_000, cpuMs: 5000, memoryMb: 256 };

const POLLUTE = String.raw`
import os, sys, json, random, signal, builtins, ctypes
builtins.LEAKED = "builtin"
builtins.len = lambda x: -1
json.dumps = lambda *a, **k: "patched"
sys.modules["leaked_module"] = type(sys)("leaked_module")
os.environ["LEAKED"] = "env"
random.seed(1234)
signal.signal(signal.SIGUSR1, lambda *a: None)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
open("/sandbox/run/leaked.txt", "w").write("x")
for p in ("/tmp/leaked.txt", "/dev/shm/leaked.txt", "/sandbox/leaked.txt"):
    try:
        open(p, "w").write("x")
    except OSError:
        pass
fd = os.open("/sandbox/run/leaked.txt", os.O_RDONLY)
os.dup2(fd, 77)
os.set_inheritable(77, True)
libc = ctypes.CDLL(None)
libc.shmget(0x1234, 1 << 20, 0o1666)
print("polluted", random.random())
`;

const PROBE = String.raw`
import os, sys, json, random, signal, builtins, subprocess
def fd_open(n):
    try:
        os.fstat(n)
        return True
    except OSError:
        return False
others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid() and os.stat("/proc/" + p).st_uid == os.getuid()]
shm = open("/proc/sysvipc/shm").read().splitlines()[1:] if os.path.exists("/proc/sysvipc/shm") else []
print(json.dumps({
    "builtin": hasattr(builtins, "LEAKED"), "len": len([1, 2]), "json": json.dumps(1),
    "module": "leaked_module" in sys.modules, "env": "LEAKED" in os.environ,
    "usr1": signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL, "term": signal.getsignal(signal.SIGTERM) == signal.SIG_DFL,
    "files": sorted(os.listdir("/sandbox/run")), "tmp": os.path.exists("/tmp/leaked.txt"),
    "shm_files": os.path.exists("/dev/shm/leaked.txt"), "sandbox": os.path.exists("/sandbox/leaked.txt"),
    "fd77": fd_open(77), "shm": len(shm), "others": others, "random": random.random(),
}))
`;

const CLEAN = {
  builtin: false, len: 2, json: "1", module: false, env: false, usr1: true, term: true, files: ["main.py"], tmp: false,
  shm_files: false, sandbox: false, fd77: false, shm: 0, others: [],
};

function suite(name: string, open: () => Promise<Opened>) {
  return async () => {
    const opened = await open();
    describe(`${name}: a warm slot keeps nothing of one run for the next`, { skip: opened.skip }, () => {
      const sb = opened.sandbox as Sandbox;
      after(() => sb?.close());
      const run = (code: string, limits = LIMITS) => sb.run({ language: "python", code, limits });

      test("a polluting run is followed by a clean one on the same slot, with a fresh random state", async () => {
        await assertCleanAfterPollution(run, POLLUTE, PROBE, CLEAN);
      });

      test("a Python run's process is forked between runs, before its job arrives, and a run costs no fork of the runner", async () => {
        // Its start time against the clock: forked right after the previous reply (the fork server
        // pre-forks), not when the job came. And the pids the slot's namespace handed out between
        // two runs: the run's alone (the fork server clones it straight into the runner's child,
        // with no middle process; the leftover check reads /proc in the runner instead of forking
        // it per run).
        const AGE = String.raw`
import os
st = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
up = float(open("/proc/uptime").read().split()[0])
print(os.getpid(), up - int(st[19]) / os.sysconf("SC_CLK_TCK"))
`;
        const first = await run(AGE);
        assert.equal(first.status, "finished", `${first.message ?? ""} ${first.stderr}`);
        await new Promise((r) => setTimeout(r, 1500));
        const second = await run(AGE);
        assert.equal(second.status, "finished", `${second.message ?? ""} ${second.stderr}`);
        const [p1] = first.stdout.trim().split(" ").map(Number);
        const [p2, age] = second.stdout.trim().split(" ").map(Number);
        assert.ok(age >= 1.0, `the run's process is ${age.toFixed(3)} s old: it was forked when its job came, not ahead`);
        assert.equal(p2 - p1, 1, `${p2 - p1} processes were started between two runs (pids ${p1}, ${p2})`);
      });

      test("a correct program that uses multiprocessing (semaphores in /dev/shm) scores as it would bare", async () => {
        // The warm bwrap slot once had root's 0755 /dev/shm: multiprocessing.Lock() failed with
        // PermissionError for the program's uid 65534, a correct program earning 0.
        const r = await run("import multiprocessing as mp\nlock = mp.Lock()\nwith lock:\n    q = mp.Queue()\n    q.put(6 * 7)\n    print(q.get())");
        assert.equal(r.status, "finished", `${r.message ?? ""} ${r.stderr}`);
        assert.equal(r.stdout.trim(), "42", r.stderr);
      });

      test("a child process left running is gone before the next run, and the slot still serves", async () => {
        const p = await run("import subprocess\nsubprocess.Popen(['sleep', '60'])\nprint('left')");
        assert.equal(p.status, "finished", p.stderr);
        const r = await run(PROBE);
        assert.equal(r.status, "finished", `${r.message ?? ""} ${r.stderr}`);
        assert.deepEqual(JSON.parse(r.stdout).others, []);
      });

      test("the runner is out of the program's reach: no signal, no ptrace, no memory, no job files", async () => {
        const r = await run(String.raw`
import os, signal, ctypes
out = []
for pid in [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]:
    try:
        os.kill(pid, signal.SIGKILL)
        out.append("killed %d" % pid)
    except PermissionError:
        pass
    try:
        open("/proc/%d/mem" % pid, "rb").read(1)
        out.append("read mem %d" % pid)
    except OSError:
        pass
    try:
        os.listdir("/proc/%d/fd" % pid)
        out.append("fds %d" % pid)
    except OSError:
        pass
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(16, 1, 0, 0) == 0:
    out.append("ptrace")
for p in ("/sandbox/cache", "/root"):
    try:
        os.listdir(p)
        out.append("listed " + p)
    except OSError:
        pass
print(out)
`);
        assert.equal(r.status, "finished", `${r.message ?? ""} ${r.stderr}`);
        assert.equal(r.stdout.trim(), "[]");
        const again = await run("print(6*7)");
        assert.equal(again.stdout, "42\n");
      });

      test("the warm interpreter has the datasets' common modules loaded, and a run still starts with a fresh random state", async () => {
        const r = await run("import sys\nprint([m for m in ('fractions', 'decimal', 'statistics', 'heapq', 'bisect', 'random') if m not in sys.modules])");
        assert.equal(r.status, "finished", `${r.message ?? ""} ${r.stderr}`);
        assert.equal(r.stdout, "[]\n");
      });

      test("a run's garbage collections walk only its own objects: the fork server's are frozen, and a full collection costs under 3 ms of CPU", async () => {
        // Unfrozen, a run's first collection (compiling its main.py triggers one) walked every
        // preloaded object of the fork server and copied its pages: 4-5 ms of a trivial test.
        const GC = String.raw`
import gc, time
cpu = []
for _ in range(5):
    t = time.process_time()
    gc.collect()
    cpu.append(time.process_time() - t)
print(gc.get_freeze_count() > 1000, len(gc.get_objects()) < gc.get_freeze_count(), sorted(cpu)[2] * 1000)
`;
        const r = await run(GC);
        assert.equal(r.status, "finished", `${r.message ?? ""} ${r.stderr}`);
        const [frozen, fewer, ms] = r.stdout.trim().split(" ");
        assert.equal(frozen, "True", "the fork server froze nothing: a run's collections walk its preloaded heap");
        assert.equal(fewer, "True");
        assert.ok(Number(ms) < 3, `a full collection in a run took ${Number(ms).toFixed(2)} ms of CPU`);
      });

      if (name === "bwrap" && process.getuid?.() === 0) test("a bwrap slot has a CPU group of its own with one core, and the slots together the CPU weight Docker's group has", async () => {
        // Without one, the run's nice(10) ranked it against every process on the host, and with
        // the default weight a trivial run waited 20 ms for a CPU on a loaded host.
        const r = await run("print('ok')");
        assert.equal(r.stdout, "ok\n");
        const top = ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"].map((d) => `${d}/assay-bwrap-${process.pid}`).find((d) => existsSync(d));
        const v2 = `/sys/fs/cgroup/assay-bwrap-${process.pid}`;
        if (!top) {
          assert.ok(existsSync(`${v2}/slot-0/cpu.max`), "no CPU group for the slots (cgroup v1 cpu or v2 cpu controller)");
          assert.equal(readFileSync(`${v2}/slot-0/cpu.max`, "utf8").trim(), "100000 100000");
          assert.equal(readFileSync(`${v2}/cpu.weight`, "utf8").trim(), "1000");
          return;
        }
        assert.equal(readFileSync(`${top}/cpu.shares`, "utf8").trim(), "10240");
        const slots = readdirSync(top).filter((d) => d.startsWith("slot-"));
        assert.ok(slots.length >= 1);
        const busy = slots.filter((d) => readFileSync(`${top}/${d}/cgroup.procs`, "utf8").trim() !== "");
        // (this file's other bwrap sandboxes share the process's groups: at least this one's slot is busy)
        assert.ok(busy.length >= 1, "the warm slot's runner is in its slot's CPU group");
        for (const d of busy) {
          assert.equal(readFileSync(`${top}/${d}/cpu.cfs_quota_us`, "utf8").trim(), "100000");
          assert.equal(readFileSync(`${top}/${d}/cpu.cfs_period_us`, "utf8").trim(), "100000");
        }
      });

      test("python-sci: the preloaded numpy is loaded and draws fresh random numbers in every run", { skip: sb?.languages.includes("python-sci") ? false : "python-sci is not built" }, async () => {
        const draws = new Set<string>();
        for (let i = 0; i < 2; i++) {
          const r = await sb.run({ language: "python-sci", code: "import sys\nloaded = 'numpy' in sys.modules\nimport numpy\nprint(loaded, numpy.random.random())", limits: LIMITS });
          assert.equal(r.status, "finished", `${r.message ?? ""} ${r.stderr}`);
          const [loaded, x] = r.stdout.trim().split(" ");
          assert.equal(loaded, "True");
          draws.add(x);
        }
        assert.equal(draws.size, 2, "two runs drew the same first numpy random number: the fork server's state is shared");
      });

      if (name === "bwrap" && process.getuid?.() === 0) test("runs are forked from a warm runner (pid 1 of the slot's namespace), with no network and no host paths", async () => {
        const r = await run(String.raw`
import os, socket
print(os.getpid() != 1, os.getppid(), open("/proc/1/cmdline", "rb").read().split(b"\0")[:3])
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2)
    print("network")
except OSError:
    print("no network")
print(os.path.exists("/work"), os.path.exists("/var/lib/assay"), os.path.exists("/home/" + str(os.getuid())))
`);
        assert.equal(r.status, "finished", `${r.message ?? ""} ${r.stderr}`);
        const [pid, net, paths] = r.stdout.trim().split("\n");
        assert.equal(pid, "True 1 [b'python3', b'-u', b'-c']");
        assert.equal(net, "no network");
        assert.equal(paths, "False False False");
      });

      test("hostile runs score as before and the slot recovers: a loop, a memory bomb, a fork bomb, endless output", async () => {
        const loop = await run("while True: pass", { wallMs: 2000, cpuMs: 1000, memoryMb: 256 });
        assert.equal(loop.status, "time_limit");
        const mem = await run("x = []\nwhile True:\n    x.append(bytearray(1 << 24))", { wallMs: 10_000, cpuMs: 5000, memoryMb: 128 });
        assert.equal(mem.status, "memory_limit", `${mem.message ?? ""} ${mem.stderr.slice(-200)}`);
        const bomb = await run("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass", { wallMs: 3000, cpuMs: 2000, memoryMb: 256 });
        assert.notEqual(bomb.status, "sandbox_error", bomb.message);
        assert.notEqual(bomb.status, "finished");
        const out = await run("while True: print('x' * 1000)");
        assert.equal(out.status, "output_limit");
        const after = await run(PROBE);
        assert.equal(after.status, "finished", `${after.message ?? ""} ${after.stderr}`);
        const seen = JSON.parse(after.stdout);
        delete seen.random;
        assert.deepEqual(seen, CLEAN);
      });
    });
  };
}

await suite("docker", () => openDockerForTests(1))();
await suite("bwrap", () => openBwrapForTests(1))();

for (const backend of ["docker", "bwrap"] as const) {
  describe(`${backend}: ASSAY_SANDBOX_PRELOAD replaces the warm interpreter's modules`, async () => {
    const c = loadConfig({ ...process.env, ASSAY_SANDBOX_PRELOAD: "wave, colorsys,not_a_module" }).sandbox;
    const warnings: string[] = [];
    const onWarning = (m: string) => warnings.push(m);
    const got = backend === "docker" ? await openDocker({ ...dockerOptions(c), poolSize: 1, onWarning }) : await openBwrap({ ...c, poolSize: 1, onWarning });
    const skip = got.sandbox ? (got.sandbox instanceof BwrapSandbox && got.sandbox.warm !== true ? `no warm slots: ${got.sandbox.warm}` : false) : got.note;
    after(() => got.sandbox?.close());
    test("the configured modules are loaded, the default list's are not; one that does not import is skipped with a warning in the log", { skip }, async () => {
      const run = () => got.sandbox!.run({ language: "python", code: "import sys\nprint('wave' in sys.modules, 'colorsys' in sys.modules, 'fractions' in sys.modules)", limits: LIMITS });
      const r = await run();
      assert.equal(r.status, "finished", `${r.message ?? ""} ${r.stderr}`);
      assert.equal(r.stdout, "True True False\n");
      const mine = warnings.filter((w) => w.includes("not_a_module"));
      assert.equal(mine.length, 1, `warnings: ${JSON.stringify(warnings)}`);
      assert.match(mine[0], /could not preload not_a_module \(ModuleNotFoundError: No module named 'not_a_module'\).*ASSAY_SANDBOX_PRELOAD/);
      assert.doesNotMatch(mine[0], /wave|colorsys/, "the modules that imported are not named");
      await run();
      assert.equal(warnings.filter((w) => w.includes("not_a_module")).length, 1, "said once, not per run");
    });
  });
}

/**
 * Compile once per item (issue 31): every test of a compiled item finds its binary, whichever
 * container ran the compile (docker: each container's runner caches what it compiled, and a
 * run goes to the container that has its program; bwrap: likewise on warm slots, and one host
 * cache for every slot where each run is a sandbox of its own).
 */
for (const [name, open] of [["docker", () => openDockerForTests(2)], ["bwrap", () => openBwrapForTests(2)]] as const) {
  describe(`${name}: a compiled program's later tests reuse its binary`, async () => {
    const opened = await open();
    const sb = opened.sandbox as Sandbox;
    after(() => sb?.close());
    test("two programs compiled at once on two slots: each one's next run is not compiled again", { skip: opened.skip || (sb.languages.includes("cpp") ? false : "cpp is not built"), timeout: 300_000 }, async () => {
      const limits = { wallMs: 10_000, cpuMs: 5000, memoryMb: 256 };
      for (let round = 0; round < 2; round++) {
        const src = (w: string) => `#include <cstdio>\nint main(){ puts("${w}-${round}-${Date.now()}"); }\n`;
        const [x, y] = [src("x"), src("y")];
        const first = await Promise.all([x, y].map((code) => sb.run({ language: "cpp", code, limits, compileWallMs: 60_000 })));
        for (const r of first) assert.equal(r.status, "finished", `${r.message ?? ""} ${r.compile?.stderr ?? ""} ${r.stderr}`);
        for (const code of [x, y]) {
          const r = await sb.run({ language: "cpp", code, limits, compileWallMs: 60_000 });
          assert.equal(r.status, "finished", `${r.message ?? ""} ${r.stderr}`);
          assert.equal(r.compile?.wallMs, 0, `round ${round}: the program was compiled again (${r.compile?.wallMs} ms)`);
        }
      }
    });
  });
}

/**
 * bwrap's warm slots are started ahead (warmUp, which the server calls at start-up, as the docker
 * pool fills), fork server and all: the first tests on every slot find a process forked for them.
 */
describe("bwrap: warmUp starts every slot's warm sandbox and fork server ahead of the first runs", async () => {
  const opened = await openBwrapForTests(2);
  const sb = opened.sandbox as BwrapSandbox | null;
  const skip = opened.skip || (sb && sb.warm !== true ? `no warm slots here: ${sb.warm}` : false);
  after(() => sb?.close());
  test("two runs at once after warmUp: each on its own slot, each process forked before the runs were sent", { skip }, async () => {
    await (sb as { warmUp?: () => Promise<void> }).warmUp?.();
    await new Promise((r) => setTimeout(r, 1500));
    const AGE = String.raw`
import os
st = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
up = float(open("/proc/uptime").read().split()[0])
print(open("/proc/1/stat").read().rsplit(")", 1)[1].split()[19], up - int(st[19]) / os.sysconf("SC_CLK_TCK"))
`;
    const rs = await Promise.all([0, 1].map(() => sb!.run({ language: "python", code: AGE, limits: LIMITS })));
    for (const r of rs) assert.equal(r.status, "finished", `${r.message ?? ""} ${r.stderr}`);
    const seen = rs.map((r) => r.stdout.trim().split(" "));
    assert.notEqual(seen[0][0], seen[1][0], "both runs went to one slot");
    for (const [, age] of seen) assert.ok(Number(age) >= 1.0, `a run's process is ${Number(age).toFixed(3)} s old: its slot started when the run came`);
  });
});
