/**
 * The next warm Python run's process is forked while the current run executes (issue 31, p50 at
 * 1 concurrent back to back): the runner asks the fork server for it as soon as the current
 * run's process has acknowledged its run, not after the reply, so its fork and its rehearsal
 * (the run's first copy-on-write writes, sandbox/README.md) are done when the next job comes
 * straight after the reply. What the waiting process may touch or be touched by is checked here
 * on both backends: it is root and in the fork server's session (out of the run's reach), the
 * leftover sweep neither counts nor kills it (the next run is still that process, and a slot is
 * not retired for it), a run's own leftover is still found while it waits, and its CPU is not
 * the run's. Counts and CPU time, not wall time: the bounds hold on a loaded machine.
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { openDockerForTests, openBwrapForTests } from "./sandboxes.js";
import { Worker } from "../sandbox/docker/worker.js";
import { WarmSlot } from "../sandbox/bwrap/warm.js";
import { BwrapSandbox } from "../sandbox/bwrap/index.js";

// Every job of this file asks for the runner's phases (the run's own faults and CPU); the
// runner's raw replies (with `leftover` and `tainted`) are kept for the tests.
type Reply = { status: string; faults?: number; runCpuMs?: number; cpuMs?: number; leftover?: boolean; tainted?: boolean };
const replies: Reply[] = [];
for (const C of [Worker, WarmSlot] as unknown as { prototype: { exec: (job: any, ...a: unknown[]) => Promise<any> } }[]) {
  const orig = C.prototype.exec;
  C.prototype.exec = async function (this: unknown, job: any, ...a: unknown[]) {
    job.phases = true;
    const r = await orig.call(this, job, ...a);
    replies.push(r);
    return r;
  };
}

const LIMITS = { wallMs: 30_000, cpuMs: 10_000 };
const TRIVIAL = "n = int(input())\nprint(sum(i * i for i in range(n)))\n";
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

// What a run sees of the fork servers (a python3 -c whose session is its own pid) and of the
// processes waiting in their session, and what it can do to those: signal, trace.
const LOOK = String.raw`
import os, json, signal, ctypes, time
time.sleep(float(os.environ.get("NAP", "0.3")))
def stat(p):
    return open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()
procs = {}
for p in os.listdir("/proc"):
    if p.isdigit() and int(p) != os.getpid():
        try:
            procs[int(p)] = (int(stat(p)[3]), os.stat("/proc/" + p).st_uid, open("/proc/%s/cmdline" % p, "rb").read().split(b"\0")[:2])
        except OSError:
            pass
servers = {p for p, (sid, uid, cmd) in procs.items() if sid == p and cmd[1:] == [b"-c"] and cmd[0].endswith(b"python3")}
waiting = [p for p, (sid, uid, cmd) in procs.items() if sid in servers and p not in servers]
libc = ctypes.CDLL(None, use_errno=True)
reach = []
for p in waiting:
    try:
        os.kill(p, signal.SIGKILL)
        reach.append("killed")
    except PermissionError:
        pass
    if libc.ptrace(16, p, 0, 0) == 0:
        reach.append("traced")
me = stat("self")
up = float(open("/proc/uptime").read().split()[0])
print(json.dumps({"servers": len(servers), "waiting": len(waiting), "uids": sorted({procs[p][1] for p in waiting}), "reach": reach,
                  "started": int(me[19]) / os.sysconf("SC_CLK_TCK"), "ended": up}))
`;

for (const [name, open] of [["docker", () => openDockerForTests(1)], ["bwrap", () => openBwrapForTests(1)]] as const) {
  describe(`${name}: the next run's process is forked while a run executes`, async () => {
    const opened = await open();
    const sb = opened.sandbox;
    after(() => sb?.close());
    const skip = opened.skip || (sb instanceof BwrapSandbox && sb.warm !== true ? `no warm slots here: ${sb.warm}` : false);
    const look = async (pre = "", nap = 0.3) => {
      const r = await sb!.run({ language: "python", code: pre + `os_environ_nap = ${nap}\nimport os\nos.environ["NAP"] = str(os_environ_nap)\n` + LOOK, limits: LIMITS });
      assert.equal(r.status, "finished", `${r.message ?? ""} ${r.stderr}`);
      return JSON.parse(r.stdout.trim().split("\n").pop()!) as { servers: number; waiting: number; uids: number[]; reach: string[]; started: number; ended: number };
    };

    test("during a run the next run's process already waits: root, in the fork server's session, out of the run's reach", { skip, timeout: 120_000 }, async () => {
      await look("", 0); // starts the fork server
      const seen = await look();
      assert.equal(seen.servers, 1, JSON.stringify(seen));
      // Main asked for it only after the reply: a run saw none.
      assert.equal(seen.waiting, 1, `a process waiting for the next run, during this one: ${JSON.stringify(seen)}`);
      assert.deepEqual(seen.uids, [0], "it has no run yet, so it is not at the run's uid");
      assert.deepEqual(seen.reach, [], "the program can neither kill nor trace it");
    });

    test("the next run is that process (the sweep after a run neither kills it nor retires the slot for it)", { skip, timeout: 120_000 }, async () => {
      await look("", 0);
      replies.length = 0;
      const a = await look("", 0.5);
      const b = await look("", 0);
      assert.equal(replies[0].leftover, undefined, "the waiting process is no leftover of the run");
      assert.equal(replies[0].tainted, false, JSON.stringify(replies[0]));
      // Forked while run a slept, not after its reply (clock ticks of 10 ms: a wide margin).
      assert.ok(b.started < a.ended - 0.2, `run b's process started at ${b.started} s, run a ended at ${a.ended} s`);
    });

    test("a run's leftover process is still found and swept while the next run's process waits", { skip, timeout: 120_000 }, async () => {
      await look("", 0);
      replies.length = 0;
      // A grandchild in a session of its own: out of reach of the run's process-group kill, so
      // only the sweep of the run uid's processes finds it.
      const LEAVE = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(60)\n    os._exit(0)\nos.wait()\n";
      const left = await look(LEAVE);
      assert.equal(left.waiting, 1, JSON.stringify(left));
      assert.equal(replies[0].leftover, true, `the sweep found the run's leftover: ${JSON.stringify(replies[0])}`);
      assert.equal(replies[0].tainted, true);
      const r = await sb!.run({ language: "python", code: "import os\nprint([p for p in os.listdir('/proc') if p.isdigit() and os.stat('/proc/' + p).st_uid == os.getuid() and int(p) != os.getpid()])", limits: LIMITS });
      assert.equal(r.status, "finished", `${r.message ?? ""} ${r.stderr}`);
      assert.equal(r.stdout.trim(), "[]", "the next run finds none of it");
    });

    test("back to back with no pause, a trivial run pays under 150 minor faults, and its CPU time is its own", { skip, timeout: 120_000 }, async () => {
      const once = async () => {
        const r = await sb!.run({ language: "python", code: TRIVIAL, stdin: "1000\n", limits: LIMITS });
        assert.equal(r.status, "finished", `${r.message ?? ""} ${r.stderr}`);
        assert.equal(r.stdout, "332833500\n");
      };
      for (let i = 0; i < 5; i++) await once();
      replies.length = 0;
      for (let i = 0; i < 40; i++) await once();
      const faults = replies.map((r) => r.faults as number);
      // Asked for after the reply, the fork and rehearsal were not done when the next job came
      // (bwrap 270-274, docker 76-131 on a loaded machine); asked for during the run, 71-82.
      assert.ok(med(faults) < 150, `median minor faults of a trivial run back to back: ${med(faults)} (${faults.join(" ")})`);
      // The container's CPU during the run less the runner's and the fork server's (the next
      // run's fork and rehearsal ran meanwhile): about the run's process's own (runCpuMs, from
      // its rusage once it had the run) and its hand-over.
      const extra = replies.map((r) => (r.cpuMs as number) - (r.runCpuMs as number));
      assert.ok(med(extra) < 1.0, `median CPU ms counted to a run beyond its process's own: ${med(extra).toFixed(3)} (${extra.map((x) => x.toFixed(2)).join(" ")})`);
    });
  });
}
