/**
 * The next warm Python run's process is asked for as soon as the current run's process is reaped
 * (issue 31, p50 at 1 concurrent back to back), not after the reply: its fork and its rehearsal
 * (the run's first copy-on-write writes, sandbox/README.md) overlap the leftover sweep, the
 * scratch wipe, the reply and the host's next job, where after the reply they were not done when
 * the next job came 1.5-2 ms later. What that process may touch or be touched by is checked here
 * on both backends: it is forked before the wipe, which leaves it be; the leftover sweep neither
 * counts nor kills it (the slot is not retired for it) and still finds a run's own leftover; a run
 * still sees only the processes a fresh run does; and the fork server's work is not the run's
 * CPU. Counts, clock ticks against a long wipe, and CPU time: the bounds hold on a loaded machine.
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { openDockerForTests, openBwrapForTests, recordRunnerReplies } from "./sandboxes.js";
import { BwrapSandbox } from "../sandbox/bwrap/index.js";

// Every job of this file asks for the runner's phases (the run's own faults and CPU); the
// runner's raw replies (with `leftover` and `tainted`) are kept for the tests.
type Reply = { status: string; faults?: number; runCpuMs?: number; cpuMs?: number; leftover?: boolean; tainted?: boolean; phases?: [string, number][] };
const replies = recordRunnerReplies<Reply>();

const LIMITS = { wallMs: 30_000, cpuMs: 10_000 };
const TRIVIAL = "n = int(input())\nprint(sum(i * i for i in range(n)))\n";
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

// What a run sees of the fork servers (a python3 -c whose session is its own pid) and of the
// processes waiting in their session; its own process's start and its end, in clock ticks.
const LOOK = String.raw`
import os, json, time
time.sleep(NAP)
def stat(p):
    return open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()
procs = {}
for p in os.listdir("/proc"):
    if p.isdigit() and int(p) != os.getpid():
        try:
            procs[int(p)] = (int(stat(p)[3]), open("/proc/%s/cmdline" % p, "rb").read().split(b"\0")[:2])
        except OSError:
            pass
servers = {p for p, (sid, cmd) in procs.items() if sid == p and cmd[1:] == [b"-c"] and cmd[0].endswith(b"python3")}
waiting = [p for p, (sid, cmd) in procs.items() if sid in servers and p not in servers]
me = stat("self")
up = float(open("/proc/uptime").read().split()[0])
print(json.dumps({"servers": len(servers), "waiting": len(waiting), "started": int(me[19]) / os.sysconf("SC_CLK_TCK"), "ended": up}))
`;

for (const [name, open] of [["docker", () => openDockerForTests(1)], ["bwrap", () => openBwrapForTests(1)]] as const) {
  describe(`${name}: the next run's process is forked once a run is reaped`, async () => {
    const opened = await open();
    const sb = opened.sandbox;
    after(() => sb?.close());
    const skip = opened.skip || (sb instanceof BwrapSandbox && sb.warm !== true ? `no warm slots here: ${sb.warm}` : false);
    const look = async (pre: string, nap: number) => {
      const r = await sb!.run({ language: "python", code: `${pre}NAP = ${nap}\n${LOOK}`, limits: LIMITS });
      assert.equal(r.status, "finished", `${r.message ?? ""} ${r.stderr}`);
      return JSON.parse(r.stdout.trim().split("\n").pop()!) as { servers: number; waiting: number; started: number; ended: number };
    };

    test("the next run's process is forked once a run is reaped, before its scratch is wiped and its reply sent; the wipe and the sweep leave it be", { skip, timeout: 120_000 }, async () => {
      await look("", 0); // starts the fork server
      // Run a leaves 40,000 files for the runner to wipe after it (hundreds of ms): asked for
      // after the reply (main), run b's process would start after the wipe; asked for once run a
      // is reaped, before it.
      replies.length = 0;
      const a = await look("for i in range(40000):\n    open('f%d' % i, 'w').close()\n", 0);
      const b = await look("", 0);
      const ph = Object.fromEntries(replies[0].phases!);
      const wipe = (ph.wiped - ph.swept) / 1000;
      assert.ok(wipe > 0.15, `the wipe took ${wipe} s: too short to tell before from after`);
      assert.equal(replies[0].leftover, undefined, `the waiting process is no leftover of the run: ${JSON.stringify(replies[0])}`);
      assert.equal(replies[0].tainted, false, JSON.stringify(replies[0]));
      // Clock ticks of 10 ms; run b's process is the one forked for it (it is not at the run's
      // uid until it has its run, and it holds no file of run a's).
      assert.ok(b.started - a.ended < wipe / 2, `run b's process started ${(b.started - a.ended).toFixed(3)} s after run a ended; the wipe took ${wipe.toFixed(3)} s`);
      assert.equal(b.servers, 1, JSON.stringify(b));
      assert.equal(b.waiting, 0, `during a run no other process waits (the processes a fresh run sees): ${JSON.stringify(b)}`);
    });

    test("a run's leftover process is still found and swept, and the next run's process serves the run after it", { skip, timeout: 120_000 }, async () => {
      await look("", 0);
      replies.length = 0;
      // A grandchild in a session of its own: out of reach of the run's process-group kill, so
      // only the sweep of the run uid's processes finds it.
      const LEAVE = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(60)\n    os._exit(0)\nos.wait()\n";
      await look(LEAVE, 0);
      assert.equal(replies[0].leftover, true, `the sweep found the run's leftover: ${JSON.stringify(replies[0])}`);
      assert.equal(replies[0].tainted, true);
      const r = await sb!.run({ language: "python", code: "import os\nprint([p for p in os.listdir('/proc') if p.isdigit() and os.stat('/proc/' + p).st_uid == os.getuid() and int(p) != os.getpid()])", limits: LIMITS });
      assert.equal(r.status, "finished", `${r.message ?? ""} ${r.stderr}`);
      assert.equal(r.stdout.trim(), "[]", "the next run finds none of it");
    });

    test("a warm run's nice value is 10, as a forked-and-exec'd run's (the fork servers run at 10; a run sets its own, not adds to it)", { skip, timeout: 120_000 }, async () => {
      const probes: [string, string][] = [
        ["python", "import os\nprint(os.getpriority(os.PRIO_PROCESS, 0))"],
        ["ruby", "puts Process.getpriority(Process::PRIO_PROCESS, 0)"],
        ["php", "<?php echo pcntl_getpriority(), \"\\n\";"],
      ];
      for (const [language, code] of probes) {
        if (!sb!.languages.includes(language)) continue; // (the scripting image not built here)
        for (let i = 0; i < 3; i++) { // the first starts the fork server; the others are forked from it
          const r = await sb!.run({ language, code, limits: LIMITS });
          assert.equal(r.status, "finished", `${language}: ${r.message ?? ""} ${r.stderr}`);
          assert.equal(r.stdout.trim(), "10", `${language} run ${i}`);
        }
      }
    });

    test("back to back with no pause, every run is a warm one on the same slot, untainted, and its CPU time is its own", { skip, timeout: 120_000 }, async () => {
      const once = async () => {
        const r = await sb!.run({ language: "python", code: TRIVIAL, stdin: "1000\n", limits: LIMITS });
        assert.equal(r.status, "finished", `${r.message ?? ""} ${r.stderr}`);
        assert.equal(r.stdout, "332833500\n");
      };
      for (let i = 0; i < 5; i++) await once();
      replies.length = 0;
      for (let i = 0; i < 40; i++) await once();
      // The sweep after each run met the next run's process being forked or waiting: it counted
      // it as no leftover (a tainted run would retire the slot), and each run was handed to a
      // pre-forked process (a fork and exec reports no faults of its own before its run).
      assert.deepEqual(replies.filter((r) => r.tainted || r.leftover), [], "no run was taken for one that left processes");
      assert.ok(replies.every((r) => typeof r.faults === "number" && r.faults < 1000), `each run was forked from the warm interpreter: ${replies.map((r) => r.faults).join(" ")}`);
      // The container's CPU during the run less the runner's and the fork server's (a step of
      // the rehearsal still under way when the job came): about the run's process's own
      // (runCpuMs, from its rusage once it had the run) and its hand-over. With the fork server's
      // work counted (asked for while the run executes, an earlier version): 1.96 ms.
      const extra = replies.map((r) => (r.cpuMs as number) - (r.runCpuMs as number));
      assert.ok(med(extra) < 1.0, `median CPU ms counted to a run beyond its process's own: ${med(extra).toFixed(3)} (${extra.map((x) => x.toFixed(2)).join(" ")})`);
    });
  });
}
