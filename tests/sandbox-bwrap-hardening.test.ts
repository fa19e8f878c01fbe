/**
 * The bwrap backend's second line of defence, against the real backend: the seccomp filter
 * (sandbox/bwrap/seccomp_filter.py), no nested user namespaces (--disable-userns), a size-capped
 * tmpfs scratch (no host directory mounted for a run, nothing written to the host's disk), and
 * the memory ceiling on every request (ASSAY_SANDBOX_MEMORY_MB), /run_code's included. Each
 * hostile program scores 0 through the code verifier and a correct one right after scores 1.
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { arch, tmpdir } from "node:os";
import { readdirSync, readFileSync } from "node:fs";
import request from "supertest";
import { openBwrapForTests, IN_CI } from "./sandboxes.js";
import { testApp, fakeSandbox } from "./helpers.js";
import type { BwrapSandbox } from "../sandbox/bwrap/index.js";

const opened = await openBwrapForTests();
const skip = opened.skip || (arch() !== "x64" ? "syscall numbers below are x86_64's" : false);

/** Each call: [name, syscall number on x86_64, args, errno it must fail with]. */
const DENIED: [string, number, number[], number][] = [
  ["ptrace(PTRACE_TRACEME)", 101, [0, 0, 0, 0], 1],
  ["unshare(CLONE_NEWUSER)", 272, [0x10000000], 1],
  ["unshare(CLONE_NEWNS)", 272, [0x00020000], 1],
  ["clone(CLONE_NEWUSER|SIGCHLD)", 56, [0x10000000 | 17, 0, 0, 0, 0], 1],
  ["clone3", 435, [0, 0], 38],
  ["setns", 308, [0, 0], 1],
  ["mount", 165, [0, 0, 0, 0, 0], 1],
  ["umount2", 166, [0, 0], 1],
  ["pivot_root", 155, [0, 0], 1],
  ["bpf", 321, [0, 0, 0], 1],
  ["keyctl", 250, [0, 0, 0, 0, 0], 1],
  ["add_key", 248, [0, 0, 0, 0, 0], 1],
  ["request_key", 249, [0, 0, 0, 0], 1],
  ["userfaultfd", 323, [0], 1],
  ["perf_event_open", 298, [0, 0, 0, 0, 0], 1],
  ["kexec_load", 246, [0, 0, 0, 0], 1],
  ["init_module", 175, [0, 0, 0], 1],
  ["finit_module", 313, [0, 0, 0], 1],
  ["delete_module", 176, [0, 0], 1],
];

const probe = `import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
for name, nr, args, _ in ${JSON.stringify(DENIED)}:
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    if r == 0 and nr == 56:
        os._exit(0)  # a clone that succeeded: the child leaves at once
    print(name, r, ctypes.get_errno())
`;

describe("bwrap hardening", { skip }, () => {
  const sb = opened.sandbox as BwrapSandbox;
  after(() => sb?.close());

  test("the seccomp filter is in force (python3-seccomp installed)", () => {
    if (typeof sb.seccomp === "string") {
      if (IN_CI) assert.fail(sb.seccomp);
      return; // a laptop without python3-seccomp: the backend says so at start-up
    }
    assert.ok(sb.seccomp.length > 0 && sb.seccomp.length % 8 === 0, "classic BPF: 8 bytes per instruction");
  });

  test("denied calls fail with EPERM (clone3: ENOSYS), while fork and threads still work", { skip: typeof sb?.seccomp === "string" ? "no seccomp filter here" : false }, async () => {
    const r = await sb.run({ language: "python", code: probe + "pid = os.fork()\nif pid == 0: os._exit(7)\nprint('fork', os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\nimport threading\nt = threading.Thread(target=lambda: print('thread ran'))\nt.start(); t.join()\n" });
    assert.equal(r.status, "finished", JSON.stringify(r));
    for (const [name, , , errno] of DENIED) assert.match(r.stdout, new RegExp(`^${name.replace(/[()|]/g, "\\$&")} -1 ${errno}$`, "m"), `${name}: ${r.stdout}`);
    assert.match(r.stdout, /^fork 7$/m);
    assert.match(r.stdout, /^thread ran$/m);
  });

  // bwrap runs with --disable-userns --assert-userns-disabled: it refuses to start a run in which
  // nested user namespaces are still possible, so this run starting at all proves the flag works
  // (not only the seccomp filter's EPERM).
  test("no nested user namespace (--disable-userns, asserted by bwrap): unshare -U fails", async () => {
    const r = await sb.run({ language: "python", code: "import subprocess\np = subprocess.run(['unshare', '-U', 'true'], capture_output=True, text=True)\nprint('rc', p.returncode)\nprint(p.stderr.strip())" });
    assert.equal(r.status, "finished", JSON.stringify(r));
    assert.match(r.stdout, /^rc [1-9]\d*$/m, r.stdout);
  });

  test("the scratch is a tmpfs: no host path of the scratch in /proc/self/mountinfo, only the image root's", async () => {
    const r = await sb.run({ language: "python", code: "print(open('/proc/self/mountinfo').read())" });
    assert.equal(r.status, "finished");
    // A cold run mounts its tmpfs at /sandbox/run; a warm slot (sandbox/bwrap/warm.ts) at /sandbox.
    assert.match(r.stdout, / \/sandbox(\/run)? rw,[^\n]* - tmpfs tmpfs [^\n]*size=/);
    assert.ok(!r.stdout.includes(tmpdir() + "/") && !r.stdout.includes("assay-bwrap"), r.stdout);
  });

  test("a compiled program runs from its compile output, bound read-only into the tmpfs scratch", async () => {
    const src = "#include <cstdio>\nint main(){ FILE* f = fopen(\"main\", \"w\"); std::puts(f ? \"overwrote\" : \"read-only\"); std::puts(\"hi\"); }";
    const r = await sb.run({ language: "cpp", code: src });
    assert.equal(r.status, "finished", JSON.stringify(r));
    assert.equal(r.stdout, "read-only\nhi\n");
  });

  test("a memory limit past ASSAY_SANDBOX_MEMORY_MB is capped: 1.5 GiB asked for, 1.2 GiB allocated, memory_limit", async () => {
    const r = await sb.run({ language: "python", code: "x = bytearray(1200 << 20)\nprint('allocated')", limits: { memoryMb: 100_000 } });
    assert.equal(r.status, "memory_limit", JSON.stringify({ ...r, stdout: r.stdout.slice(0, 200) }));
  });

  test("over HTTP: writing 1 GiB is contained (scratch full, reward 0), /run_code's memory is capped, and a correct program right after scores 1", { timeout: 60_000 }, async () => {
    const { app } = await testApp({ ASSAY_SANDBOX_MEMORY_MB: "1024" }, [], { sandbox: fakeSandbox(sb) });
    const fence = (s: string) => "```python\n" + s + "\n```";
    const ref = { inputs: ["3 4\n"], outputs: ["7\n"] };
    const writer = fence("import os\nchunk = b'x' * (1 << 20)\nn = 0\ntry:\n    for i in range(64):\n        with open(f'f{i}', 'wb') as f:\n            for _ in range(16):\n                f.write(chunk); n += 1\nexcept OSError as e:\n    print('stopped at', n, 'MiB, errno', e.errno)\nprint(7)");
    const w = await request(app).post("/reward").send({ verifier: "code", response: writer, reference: ref }).expect(200);
    assert.equal(w.body.reward, 0, JSON.stringify(w.body));
    const bomb = await request(app).post("/run_code").send({ code: "x = bytearray(1500 << 20)\nprint('allocated')", language: "python", memory_limit_MB: 100000 }).expect(200);
    assert.notEqual(bomb.body.status, "Success", JSON.stringify(bomb.body));
    assert.doesNotMatch(bomb.body.run_result?.stdout ?? "", /allocated/);
    const ok = await request(app).post("/reward").send({ verifier: "code", response: fence("a, b = map(int, input().split())\nprint(a + b)"), reference: ref }).expect(200);
    assert.equal(ok.body.reward, 1, JSON.stringify(ok.body));
  });

  test("the writer stops at the scratch's size, in memory, not on the host's disk", async () => {
    const r = await sb.run({ language: "python", code: "import os\nchunk = b'x' * (1 << 20)\nn = 0\ntry:\n    for i in range(1024):\n        with open(f'f{i}', 'wb') as f:\n            f.write(chunk); n += 1\nexcept OSError as e:\n    print('stopped at', n, 'MiB, errno', e.errno)", limits: { wallMs: 20_000, cpuMs: 10_000 } });
    const m = /stopped at (\d+) MiB, errno 28/.exec(r.stdout);
    assert.ok(m, JSON.stringify(r));
    assert.ok(Number(m[1]) <= 128, `wrote ${m[1]} MiB into a 128 MiB scratch`);
  });

  test("runs leave nothing behind: 150 in a row on one slot all finish, and no process of a slot's uid remains", { timeout: 60_000 }, async () => {
    // bwrap's own init, orphaned when its outer process returned early, stayed a zombie of the
    // slot's uid wherever the host's init reaps late; the 67th run on one slot then failed to
    // fork ("Can't fork for pid 1") and the item was a sandbox error. The program is pid 1 now.
    const statuses = new Map<string, number>();
    for (let i = 0; i < 150; i++) {
      const r = await sb.run({ language: "python", code: "print(1)" });
      const key = r.status === "finished" && r.stdout === "1\n" ? "ok" : `${r.status}: ${r.message ?? r.stderr.slice(0, 120)}`;
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
    }
    assert.deepEqual([...statuses], [["ok", 150]]);
    if (process.getuid?.() !== 0) return; // slots have their own uids only under root
    await new Promise((r) => setTimeout(r, 300));
    const left: string[] = [];
    for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
      let status = "";
      try {
        status = readFileSync(`/proc/${pid}/status`, "utf8");
      } catch {
        continue; // gone meanwhile
      }
      const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
      if (uid >= 61000 && uid < 61000 + 64) left.push(`${pid} uid ${uid} ${/^State:\s+(.*)$/m.exec(status)?.[1]}`);
    }
    assert.deepEqual(left, []);
  });
});
