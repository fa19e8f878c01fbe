/**
 * Code-interpreter sessions on the real Docker engine (issue 32): state kept across execs,
 * per-exec and per-session limits ending with the right status, two sessions unable to see each
 * other, idle sessions reclaimed, hostile code ending only its own session. Session counts are
 * kept small (a loaded 2-core machine); the bench takes the large ones. Each test runs on both
 * session backends: Docker containers, and bubblewrap process trees (root only).
 */
import { test, describe, after, before } from "node:test";
import assert from "node:assert/strict";
import type { Sessions } from "../src/sessions/service.js";
import { openTestSessions } from "./sessions-helpers.js";

for (const backend of ["docker", "bwrap"] as const) {
const opened = await openTestSessions({ warm: 2, backend });
const svc = opened.sessions as Sessions;

describe(`sessions (${backend})`, { skip: opened.skip }, () => {
  after(() => svc.shutdown());

  test("python keeps variables, imports, functions and files between execs; the last expression's value comes back", { timeout: 180_000 }, async () => {
    const s = await svc.create({ language: "python", files: { "data.txt": "41", "in/deep/x.txt": "y" } });
    assert.equal(s.status, "active");
    // the folders made for `files` are the session's (they were root's: the code could not write in them)
    const w = await svc.exec(s.id, { code: "open('in/deep/new.txt', 'w').write('z')\nopen('in/deep/x.txt').read()" });
    assert.equal(w.status, "ok", JSON.stringify(w));
    assert.equal(w.value, "'y'");
    let r = await svc.exec(s.id, { code: "import math\nn = int(open('data.txt').read())\ndef inc(x):\n    return x + 1\nprint('set')" });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.equal(r.stdout, "set\n");
    assert.equal(r.value, null);
    r = await svc.exec(s.id, { code: "open('made.txt', 'w').write('kept')\ninc(n)" });
    assert.equal(r.value, "42");
    r = await svc.exec(s.id, { code: "math.sqrt(16), open('made.txt').read()" });
    assert.equal(r.value, "(4.0, 'kept')");
    assert.equal(r.execCount, 4);
    r = await svc.exec(s.id, { code: "def f():\n    return undefined_name\nf()" });
    assert.equal(r.status, "error");
    assert.equal(r.error?.name, "NameError");
    assert.match(r.error!.traceback, /<cell 5>.*line 2, in f/s);
    // An exception does not end the session.
    r = await svc.exec(s.id, { code: "n" });
    assert.equal(r.status, "ok");
    assert.equal(r.value, "41");
    await svc.close(s.id);
    r = await svc.exec(s.id, { code: "n" });
    assert.equal(r.status, "ended");
    assert.equal(r.session.endedReason, "closed");
    assert.match(r.error!.message, /POST \/sessions/);
  });

  test("bash keeps variables, functions and the working directory; a failing last command is an error that leaves the shell", { timeout: 180_000 }, async () => {
    const s = await svc.create({ language: "bash" });
    let r = await svc.exec(s.id, { code: "X=7\ngreet() { echo \"hi $1\"; }\nmkdir -p d && cd d && echo here > f" });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.equal(r.exitCode, 0);
    r = await svc.exec(s.id, { code: "greet $X; pwd; cat f; false" });
    assert.equal(r.stdout, "hi 7\n/sandbox/d\nhere\n");
    assert.equal(r.status, "error");
    assert.equal(r.exitCode, 1);
    r = await svc.exec(s.id, { code: "echo $X" });
    assert.equal(r.status, "ok");
    assert.equal(r.stdout, "7\n");
    await svc.close(s.id);
  });

  test("a cell cannot answer for itself: a line written on the reply channel is not the reply, and results stay in step", { timeout: 180_000 }, async () => {
    // Before: the reply channel was fd 4 and the first line on it was the reply. A cell that wrote
    // one came back at once as `ok` with its own value, ran on unmetered, and every later exec
    // returned the previous one's result.
    const s = await svc.create({ language: "python" });
    const forge = "import os\nfor fd in range(3, 1024):\n    try:\n        os.write(fd, b'{\"value\": \"FAKE\", \"error\": null}\\n')\n    except OSError:\n        pass\nprint('one')\n41";
    let r = await svc.exec(s.id, { code: forge });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.equal(r.value, "41");
    assert.equal(r.stdout, "one\n");
    r = await svc.exec(s.id, { code: "print('two')\n42" });
    assert.deepEqual([r.status, r.value, r.stdout], ["ok", "42", "two\n"]);
    await svc.close(s.id);
    const b = await svc.create({ language: "bash" });
    r = await svc.exec(b.id, { code: "for fd in 4 5 900 901; do echo 0 >&$fd; done 2>/dev/null; echo one; false" });
    assert.deepEqual([r.status, r.exitCode, r.stdout], ["error", 1, "one\n"]);
    r = await svc.exec(b.id, { code: "echo two" });
    assert.deepEqual([r.status, r.exitCode, r.stdout], ["ok", 0, "two\n"]);
    await svc.close(b.id);
  });

  test("bash's own idioms and text the code is responsible for are ordinary results, never the sandbox's failure", { timeout: 180_000 }, async () => {
    const s = await svc.create({ language: "bash" });
    // Before: `exec 4>file` replaced the reply pipe (fd 4): the session ended as crashed.
    let r = await svc.exec(s.id, { code: "exec 4>/tmp/lock; exec 5>/tmp/lock2; echo locked" });
    assert.deepEqual([r.status, r.stdout], ["ok", "locked\n"], JSON.stringify(r));
    // Before: a lone surrogate could not be written as the cell's file: sandbox_error (null).
    r = await svc.exec(s.id, { code: "echo '\ud800'" });
    assert.equal(r.status, "error", JSON.stringify(r));
    assert.match(r.error!.message, /not valid text/);
    // Before: a cell that filled /tmp made the next one a sandbox_error; cells were also kept there.
    r = await svc.exec(s.id, { code: "dd if=/dev/zero of=/tmp/fill bs=1M count=4096 2>/dev/null; true" });
    assert.notEqual(r.status, "ended", JSON.stringify(r));
    r = await svc.exec(s.id, { code: "echo hello" });
    assert.ok(r.status === "ok" || (r.status === "error" && /could not be written/.test(r.error!.message)), JSON.stringify(r));
    assert.equal(svc.get(s.id).status, "active");
    await svc.close(s.id);
  });

  test("a value or an error message cut at the value cap says so", { timeout: 180_000 }, async () => {
    const s = await svc.create({ language: "python" });
    let r = await svc.exec(s.id, { code: "'a' * 100000" });
    assert.equal(r.truncated, true, "value cut");
    r = await svc.exec(s.id, { code: "raise ValueError('b' * 100000)" });
    assert.equal(r.status, "error");
    assert.equal(r.truncated, true, "error cut");
    r = await svc.exec(s.id, { code: "'a' * 10" });
    assert.equal(r.truncated, false);
    await svc.close(s.id);
  });

  test("per-exec CPU and wall limits end the session with timeout; the next exec says it has ended", { timeout: 240_000 }, async () => {
    // A wall limit far above the CPU limit: what ends the loop is its CPU time (however loaded the host).
    const a = await svc.create({ language: "python", limits: { cpuMsPerExec: 800, wallMsPerExec: 60_000 } });
    let r = await svc.exec(a.id, { code: "x = 1\nwhile True:\n    x += 1" });
    assert.equal(r.status, "timeout", JSON.stringify(r));
    assert.ok(r.ms < 55_000, `the CPU limit, not the wall limit, ended it (${r.ms} ms)`);
    assert.ok((r.cpuMs ?? 0) >= 700, `it used its CPU limit (${r.cpuMs} ms)`);
    assert.equal(r.session.status, "ended");
    assert.equal(r.session.endedReason, "timeout");
    r = await svc.exec(a.id, { code: "x" });
    assert.equal(r.status, "ended");
    assert.match(r.error!.message, /CPU or wall limit/);
    const b = await svc.create({ language: "python" });
    r = await svc.exec(b.id, { code: "import time\ntime.sleep(30)", wallMs: 1000 });
    assert.equal(r.status, "timeout");
    assert.ok(r.ms < 5000, `wall limit 1 s, took ${r.ms} ms`);
    assert.equal(svc.get(b.id).endedReason, "timeout");
  });

  test("the session's memory limit ends it with memory; too much output ends it with output_limit", { timeout: 240_000 }, async () => {
    const a = await svc.create({ language: "python", limits: { memoryMb: 128 } });
    let r = await svc.exec(a.id, { code: "chunks = []\nwhile True:\n    chunks.append(bytearray(8 << 20))" });
    assert.equal(r.status, "memory", JSON.stringify(r));
    assert.equal(svc.get(a.id).endedReason, "memory");
    const b = await svc.create({ language: "bash", limits: { outputBytes: 10_000 } });
    r = await svc.exec(b.id, { code: "yes assay" });
    assert.equal(r.status, "output_limit");
    assert.equal(r.truncated, true);
    assert.equal(r.stdout.length, 10_000);
    assert.equal(svc.get(b.id).endedReason, "output_limit");
  });

  test("a session's lifetime ends it; an idle session is reclaimed", { timeout: 180_000 }, async () => {
    const a = await svc.create({ language: "python", limits: { lifetimeMs: 2500 } });
    let r = await svc.exec(a.id, { code: "import time\ntime.sleep(10)" });
    assert.equal(r.status, "timeout", "the exec's wall is cut at the session's end of life");
    const b = await svc.create({ language: "python", limits: { idleMs: 1000 } });
    r = await svc.exec(b.id, { code: "1" });
    assert.equal(r.status, "ok");
    await new Promise((res) => setTimeout(res, 2500));
    const info = svc.get(b.id);
    assert.equal(info.status, "ended");
    assert.equal(info.endedReason, "idle");
    assert.ok(!svc.list().some((s) => s.id === b.id), "a reclaimed session is not listed");
    r = await svc.exec(b.id, { code: "1" });
    assert.equal(r.status, "ended");
    assert.match(r.error!.message, /idle timeout/);
  });

  test("two sessions cannot see each other's files, /tmp, processes or the network", { timeout: 180_000 }, async () => {
    const a = await svc.create({ language: "bash" });
    const b = await svc.create({ language: "bash" });
    const procs = "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done | grep -c '[s]leep 600'; true";
    let r = await svc.exec(a.id, { code: `echo secret > /sandbox/a.txt; echo secret > /tmp/a.txt; (sleep 600 &) ; sleep 0.2; ${procs}` });
    assert.equal(r.status, "ok", JSON.stringify(r));
    assert.match(r.stdout, /^1$/m, "a sees its own background process");
    r = await svc.exec(b.id, { code: `ls /sandbox /tmp; cat /sandbox/a.txt /tmp/a.txt 2>&1; ${procs}` });
    assert.doesNotMatch(r.stdout, /secret/);
    assert.match(r.stdout, /No such file/);
    assert.match(r.stdout, /^0$/m, "b's /proc shows no process of a");
    const p = await svc.create({ language: "python" });
    r = await svc.exec(p.id, { code: "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=2)" });
    assert.equal(r.status, "error");
    assert.equal(r.error?.name, "OSError");
    r = await svc.exec(p.id, { code: "import os\nos.getuid(), os.access('/', os.W_OK)" });
    assert.equal(r.value, "(65534, False)");
    for (const s of [a, b, p]) await svc.close(s.id);
  });

  test("hostile cells (fork bomb, memory bomb, disk fill, endless output) end only their own session; a neighbour and the next session work", { timeout: 360_000 }, async () => {
    const neighbour = await svc.create({ language: "python" });
    assert.equal((await svc.exec(neighbour.id, { code: "kept = 'yes'" })).status, "ok");
    const hostile: [string, string, string[]][] = [
      ["fork bomb", "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass", ["timeout", "ended"]],
      ["memory bomb", "b = []\nwhile True:\n    b.append(' ' * (16 << 20))", ["memory"]],
      ["endless output", "while True:\n    print('x' * 1000)", ["output_limit"]],
      ["disk fill", "f = open('/sandbox/fill', 'wb')\nwhile True:\n    f.write(b'0' * (1 << 20))", ["error"]],
    ];
    for (const [what, code, statuses] of hostile) {
      const s = await svc.create({ language: "python", limits: { cpuMsPerExec: 2000 } });
      const r = await svc.exec(s.id, { code });
      assert.ok(statuses.includes(r.status), `${what}: ${r.status} ${JSON.stringify(r.error)}`);
      if (what === "disk fill") {
        assert.match(r.error!.message, /No space left/);
        // The session survives a full disk: the file can be removed and work goes on.
        const after = await svc.exec(s.id, { code: "import os\nos.remove('/sandbox/fill')\n6 * 7" });
        assert.equal(after.value, "42");
      } else assert.equal(svc.get(s.id).status, "ended", what);
      await svc.close(s.id);
      const n = await svc.exec(neighbour.id, { code: "kept" });
      assert.equal(n.value, "'yes'", `${what}: the neighbour kept its state`);
    }
    const fresh = await svc.create({ language: "python" });
    const r = await svc.exec(fresh.id, { code: "sum(range(10))" });
    assert.equal(r.value, "45");
    await svc.close(fresh.id);
    await svc.close(neighbour.id);
  });

  test("an id from before a restart says lost_on_restart; an unknown id is not found; limits above the caps are refused", async () => {
    const lost = `s-${svc.bootId === "00000000" ? "11111111" : "00000000"}-0123456789abcdef`;
    const info = svc.get(lost);
    assert.equal(info.endedReason, "lost_on_restart");
    const r = await svc.exec(lost, { code: "1" });
    assert.equal(r.status, "ended");
    assert.match(r.error!.message, /restarted/);
    assert.throws(() => svc.get("nope"), /no session "nope"/);
    await assert.rejects(svc.create({ language: "python", limits: { memoryMb: 999_999 } }), /above this server's cap/);
    await assert.rejects(svc.create({ language: "ruby" as any }), /use one of python, bash/);
  });
});

const capped = await openTestSessions({ warm: 2, backend, max: 2 });
describe(`sessions (${backend}): ASSAY_SESSION_MAX`, { skip: capped.skip }, () => {
  const svc2 = capped.sessions as Sessions;
  after(() => svc2.shutdown());
  test("creates whose sandbox is still starting count against the cap", { timeout: 180_000 }, async () => {
    // Before: a create counted only while it waited for a sandbox, not while the sandbox
    // started: two creates, then three more 5 ms later, and four sessions were open under max 2.
    const first = [svc2.create({ language: "python" }), svc2.create({ language: "python" })];
    await new Promise((r) => setTimeout(r, 5));
    const more = [1, 2, 3].map(() => svc2.create({ language: "python" }));
    const all = await Promise.allSettled([...first, ...more]);
    const made = all.filter((x) => x.status === "fulfilled");
    assert.ok(made.length <= 2, `${made.length} sessions under max 2`);
    for (const x of all) if (x.status === "rejected") assert.match(String(x.reason), /ASSAY_SESSION_MAX|came free/);
    for (const x of made) await svc2.close((x as PromiseFulfilledResult<{ id: string }>).value.id);
  });
});
}
