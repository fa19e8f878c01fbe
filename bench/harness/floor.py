# The floor of a pre-forked Python test on this host (bench/code-floor.ts): a warm interpreter
# that forks one process per test, with none of a sandbox's work (no uid, rlimits, meter, leftover
# sweep, scratch, seccomp). Jobs are JSON lines on stdin ({"code", "stdin"}), replies JSON lines on
# stdout ({"rc", "stdout"}). It is run by the sandbox image's own python3 (chroot), with the
# fork server's imports and preload (argv[1]: the preload list), and gc.freeze() as runner.py's
# fork server does.
#
# argv[2], when the next test's process is forked:
#   reply - after the reply is written (the order before issue 31's fifth round)
#   reap  - once the run is reaped, before its output is read and the reply written (Assay's order;
#           here the fork is this process's own, so the reply waits for it, where runner.py's
#           fork server forks beside the runner's reply: "reply" is the nearer model of that)
#   early - as soon as the run has its job, so it forks while the run runs (a process the run can
#           see: tests/sandbox-adversarial.test.ts allows a run only the runner, the fork server
#           and itself)
# and "ping": no fork at all, the reply written at once (the channel's own floor).
import ast, io, json, os, resource, select, signal, socket, subprocess, sys, ctypes, threading, atexit

for _m in [m for m in sys.argv[1].split(",") if m]:
    try:
        __import__(_m)
    except BaseException:
        pass
MODE = sys.argv[2]
import gc

gc.collect()
gc.freeze()

inp = sys.stdin.buffer
out = sys.stdout.buffer


def prefork():
    jr, jw = os.pipe()
    orr, ow = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(jw)
        os.close(orr)
        data = b""
        while not data.endswith(b"\n"):
            b = os.read(jr, 65536)
            if not b:
                os._exit(3)
            data += b
        os.close(jr)
        job = json.loads(data)
        r0, w0 = os.pipe()
        os.write(w0, job["stdin"].encode())
        os.close(w0)
        os.dup2(r0, 0)
        os.close(r0)
        os.dup2(ow, 1)
        os.close(ow)
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False))
        g = {"__name__": "__main__", "__builtins__": __builtins__}
        try:
            exec(compile(job["code"], "main.py", "exec"), g)
            rc = 0
        except SystemExit as e:
            rc = 0 if e.code is None else e.code if isinstance(e.code, int) else 1
        except BaseException:
            rc = 1
        sys.stdout.flush()
        os._exit(rc)
    os.close(jr)
    os.close(ow)
    return pid, jw, orr


nxt = None if MODE == "ping" else prefork()
while True:
    line = inp.readline()
    if not line:
        break
    if MODE == "ping":
        out.write(b'{"rc": 0, "stdout": ""}\n')
        out.flush()
        continue
    pid, jw, orr = nxt
    os.write(jw, line)
    os.close(jw)
    if MODE == "early":
        nxt = prefork()
    _, st = os.waitpid(pid, 0)
    if MODE == "reap":
        nxt = prefork()
    got = b""
    while True:
        b = os.read(orr, 65536)
        if not b:
            break
        got += b
    os.close(orr)
    out.write(json.dumps({"rc": os.waitstatus_to_exitcode(st), "stdout": got.decode()}).encode() + b"\n")
    out.flush()
    if MODE == "reply":
        nxt = prefork()
