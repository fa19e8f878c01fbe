# Assay's session supervisor: the long-lived process inside one session's sandbox (a container's
# pid 1, as root with the few capabilities the runner keeps). It starts one interpreter (Python,
# kept like a notebook kernel, or Bash) as the unprivileged run uid in its own process group, sends
# it one cell at a time, and meters each exec: wall and CPU limits (the sandbox cgroup's CPU time),
# an output cap, the cgroup's OOM kills. A limit hit kills the interpreter: the session has ended,
# and the host removes the sandbox. It knows nothing about rewards. Standard library only.
#
# Protocol on stdin/stdout, one JSON object a line: first {"ready": true}; then
#   {"op": "start", "language": "python"|"bash", "files": {path: text}, "value_bytes": n}
#     -> {"ok": true} | {"ok": false, "message": ...}
#   {"op": "exec", "code": ..., "cpu_ms": n, "wall_ms": n, "output_bytes": n}
#     -> {"status": "ok"|"error"|"timeout"|"memory"|"output_limit"|"crashed", "stdout", "stderr",
#         "value", "error", "exit_code", "truncated", "ms", "cpu_ms", "message"}
import json, os, select, signal, sys, time

SCRATCH = os.environ.get("ASSAY_SCRATCH", "/sandbox")
CELLS = "/tmp/.assay-cells"
RUN_UID = 65534
IS_ROOT = os.getuid() == 0
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": SCRATCH, "TMPDIR": "/tmp",
       "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1", "PYTHONHASHSEED": "0", "TERM": "dumb"}

# The Python kernel, run as `python3 -c` by the run uid: fd 3 brings one JSON cell a line, fd 4
# takes one JSON reply a line; stdout and stderr are the cell's own (pipes the supervisor reads).
PY_KERNEL = r'''
import ast, builtins, json, linecache, os, sys, traceback
OUT = 4
ME = os.getpid()
ns = {"__name__": "__main__", "__builtins__": builtins}
sys.argv = [""]
def line():
    b = bytearray()
    while True:
        c = os.read(3, 1 << 16)
        if not c:
            os._exit(0)
        b += c
        if b.endswith(b"\n"):
            return bytes(b)
def reply(d):
    if os.getpid() != ME:  # a process the cell forked that came back here: not the kernel
        os._exit(1)
    data = (json.dumps(d) + "\n").encode()
    while data:
        data = data[os.write(OUT, data):]
while True:
    req = json.loads(line())
    n, code, cap = req["n"], req["code"], req["value_bytes"]
    name = "<cell %d>" % n
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    value = err = None
    try:
        tree = ast.parse(code, name, "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, name, "exec"), ns)
        if last is not None:
            v = eval(compile(last, name, "eval"), ns)
            if v is not None:
                builtins._ = v
                r = repr(v)
                value = r if len(r) <= cap else r[:cap] + "..."
    except BaseException as e:
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != name:
            tb = tb.tb_next  # the kernel's own frames are not the cell's
        if isinstance(e, SyntaxError):
            tb = None
        text = "".join(traceback.format_exception(type(e), e, tb))
        err = {"name": type(e).__name__, "message": str(e)[:cap], "traceback": text[-cap:]}
    for s in (sys.stdout, sys.stderr):
        try:
            s.flush()
        except Exception:
            pass
    reply({"value": value, "error": err})
'''

SIGNAMES = {getattr(signal, n): n for n in dir(signal) if n.startswith("SIG") and not n.startswith("SIG_")}


def send(d):
    sys.stdout.write(json.dumps(d) + "\n")
    sys.stdout.flush()


def oom_kills():
    for path in ("/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events"):
        try:
            with open(path) as f:
                for line in f:
                    if line.startswith("oom_kill "):
                        return int(line.split()[1])
        except OSError:
            pass
    return 0


def cpu_ns(pid):
    """CPU time of the sandbox (its cgroup: every process of the session), else the interpreter's own."""
    for path in ("/sys/fs/cgroup/cpuacct/cpuacct.usage", "/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage"):
        try:
            with open(path) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            pass
    try:
        with open("/sys/fs/cgroup/cpu.stat") as f:
            for line in f:
                if line.startswith("usage_usec "):
                    return int(line.split()[1]) * 1000
    except (OSError, ValueError):
        pass
    try:
        with open("/proc/%d/stat" % pid) as f:
            parts = f.read().rsplit(")", 1)[1].split()
        return sum(int(x) for x in parts[11:15]) * (10 ** 9 // os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None


class Kernel:
    def __init__(self, language, value_bytes):
        self.language = language
        self.value_bytes = value_bytes
        self.n = 0
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        cmd_r, cmd_w = os.pipe()
        rep_r, rep_w = os.pipe()
        os.makedirs(CELLS, mode=0o755, exist_ok=True)
        pid = os.fork()
        if pid == 0:
            try:
                os.setsid()
                null = os.open("/dev/null", os.O_RDONLY)
                if language == "python":
                    os.dup2(null, 0)
                    os.dup2(cmd_r, 3)
                else:
                    os.dup2(cmd_r, 0)  # bash reads its commands here; each cell's stdin is /dev/null
                os.dup2(out_w, 1)
                os.dup2(err_w, 2)
                os.dup2(rep_w, 4)
                os.closerange(5, 1 << 16)
                if IS_ROOT:
                    os.setgroups([])
                    os.setgid(RUN_UID)
                    os.setuid(RUN_UID)
                os.chdir(SCRATCH)
                if language == "python":
                    os.execve("/usr/bin/env", ["env", "python3", "-u", "-c", PY_KERNEL], ENV)
                os.execve("/bin/bash", ["bash", "--noprofile", "--norc"], ENV)
            finally:
                os._exit(127)
        for fd in (out_w, err_w, cmd_r, rep_w):
            os.close(fd)
        self.pid, self.out, self.err, self.cmd, self.rep = pid, out_r, err_r, cmd_w, rep_r
        for fd in (out_r, err_r, rep_r):
            os.set_blocking(fd, False)
        self.dead = False

    def kill(self):
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass

    def write_cmd(self, data):
        while data:
            data = data[os.write(self.cmd, data):]

    def exec(self, req):
        self.n += 1
        n = self.n
        code = req["code"]
        cap = int(req["output_bytes"])
        if self.language == "python":
            cmd = (json.dumps({"n": n, "code": code, "value_bytes": self.value_bytes}) + "\n").encode()
        else:
            path = "%s/%d" % (CELLS, n)
            with open(path, "w") as f:
                f.write(code if code.endswith("\n") else code + "\n")
            os.chmod(path, 0o644)
            cmd = ("{ . %s; } </dev/null; echo \"$?\" >&4\n" % path).encode()
        bufs = {self.out: bytearray(), self.err: bytearray()}
        reply = bytearray()
        oom0 = oom_kills()
        cpu0 = cpu_ns(self.pid)
        t0 = time.monotonic()
        wall_s = req["wall_ms"] / 1000
        status = None
        try:
            self.write_cmd(cmd)
        except OSError:
            status = "crashed"
        open_fds = [self.out, self.err, self.rep]
        while status is None:
            r, _, _ = select.select(open_fds, [], [], 0.02)
            for fd in r:
                try:
                    chunk = os.read(fd, 1 << 16)
                except BlockingIOError:
                    continue
                if fd == self.rep:
                    if not chunk:
                        status = "crashed"
                        break
                    reply += chunk
                    if reply.endswith(b"\n"):
                        status = "done"
                elif not chunk:
                    open_fds.remove(fd)
                else:
                    bufs[fd] += chunk
                    if len(bufs[fd]) > cap:
                        status = "output_limit"
            if status is None:
                if time.monotonic() - t0 > wall_s:
                    status = "timeout"
                else:
                    c = cpu_ns(self.pid)
                    if c is not None and cpu0 is not None and (c - cpu0) / 1e6 > req["cpu_ms"]:
                        status = "timeout"
        ms = (time.monotonic() - t0) * 1000
        if status == "done":
            # What the interpreter flushed before it replied is in the pipes now.
            for fd in (self.out, self.err):
                while len(bufs[fd]) <= cap:
                    try:
                        chunk = os.read(fd, 1 << 16)
                    except (BlockingIOError, OSError):
                        break
                    if not chunk:
                        break
                    bufs[fd] += chunk
            if len(bufs[self.out]) > cap or len(bufs[self.err]) > cap:
                status = "output_limit"
        c = cpu_ns(self.pid)
        cpu_ms = None if c is None or cpu0 is None else round((c - cpu0) / 1e6, 3)
        res = {"stdout": "", "stderr": "", "value": None, "error": None, "exit_code": None, "truncated": False,
               "ms": round(ms, 3), "cpu_ms": cpu_ms, "message": None}
        if status != "done":
            self.kill()
            self.dead = True
            try:
                _, st = os.waitpid(self.pid, 0)
            except ChildProcessError:
                st = None
            if status == "crashed" or status == "timeout":
                if oom_kills() > oom0:
                    status = "memory"
            if status == "crashed":
                if st is not None and os.WIFSIGNALED(st):
                    res["message"] = "the interpreter was killed by %s" % SIGNAMES.get(os.WTERMSIG(st), os.WTERMSIG(st))
                elif st is not None:
                    res["message"] = "the interpreter exited with status %d" % os.WEXITSTATUS(st)
        else:
            status = "ok"
            if self.language == "python":
                try:
                    d = json.loads(bytes(reply).decode("utf-8", "replace"))
                except ValueError:
                    d = {"value": None, "error": {"name": "KernelError", "message": "unreadable kernel reply", "traceback": ""}}
                res["value"] = d.get("value")
                res["error"] = d.get("error")
                if res["error"]:
                    status = "error"
            else:
                try:
                    code_ = int(bytes(reply).split()[-1])
                except (ValueError, IndexError):
                    code_ = -1
                res["exit_code"] = code_
                if code_ != 0:
                    status = "error"
                    res["error"] = {"name": "ExitCode", "message": "the cell's last command exited with status %d" % code_, "traceback": ""}
        for key, fd in (("stdout", self.out), ("stderr", self.err)):
            b = bufs[fd]
            if len(b) > cap:
                b = b[:cap]
                res["truncated"] = True
            res[key] = bytes(b).decode("utf-8", "replace")
        res["status"] = status
        return res


def write_files(files):
    for rel, text in (files or {}).items():
        p = os.path.normpath(os.path.join(SCRATCH, rel))
        if not p.startswith(SCRATCH + "/"):
            raise ValueError("file path %r leaves the scratch directory" % rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
        if IS_ROOT:
            os.chown(p, RUN_UID, RUN_UID)


def main():
    if IS_ROOT:
        os.chown(SCRATCH, RUN_UID, RUN_UID)
    kernel = None
    send({"ready": True})
    for raw in sys.stdin:
        try:
            req = json.loads(raw)
        except ValueError:
            continue
        try:
            if req.get("op") == "start":
                write_files(req.get("files"))
                kernel = Kernel(req["language"], int(req.get("value_bytes", 65536)))
                send({"ok": True})
            elif req.get("op") == "exec":
                if kernel is None or kernel.dead:
                    send({"status": "crashed", "message": "no interpreter", "stdout": "", "stderr": "", "value": None,
                          "error": None, "exit_code": None, "truncated": False, "ms": 0, "cpu_ms": None})
                else:
                    send(kernel.exec(req))
            # reap whatever the cell left behind that has exited (zombies count against pids)
            while True:
                try:
                    pid, _ = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                if kernel is not None and pid == kernel.pid:
                    kernel.dead = True
        except Exception as e:  # our own failure: say so, the host ends the session as sandbox_error
            send({"ok": False, "status": "sandbox_error", "message": "%s: %s" % (type(e).__name__, e)})


if __name__ == "__main__":
    main()
