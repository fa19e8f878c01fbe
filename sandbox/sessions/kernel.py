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
import binascii, json, os, select, signal, sys, time

SCRATCH = os.environ.get("ASSAY_SCRATCH", "/sandbox")
CELLS = "/tmp/.assay-cells"
RUN_UID = 65534
IS_ROOT = os.getuid() == 0
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": SCRATCH, "TMPDIR": "/tmp",
       "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1", "PYTHONHASHSEED": "0", "TERM": "dumb"}

# The interpreter's command and reply channels sit on high descriptors, out of the way of the
# 3-9 that shell scripts use (`exec 4>/tmp/lock` closed a reply pipe on fd 4, which the
# supervisor read as a crash); bash's own saved descriptors are taken upwards from 10.
CMD_FD = 900
REPLY_FD = 901

# The Python kernel, run as `python3 -c` by the run uid: CMD_FD brings one JSON cell a line,
# REPLY_FD takes one JSON reply a line, starting with the cell's nonce; stdout and stderr are the
# cell's own (pipes the supervisor reads).
PY_KERNEL = r'''
import ast, builtins, json, linecache, os, sys, traceback
OUT = @REPLY_FD@
CMD = @CMD_FD@
ME = os.getpid()
ns = {"__name__": "__main__", "__builtins__": builtins}
sys.argv = [""]
def line():
    b = bytearray()
    while True:
        c = os.read(CMD, 1 << 16)
        if not c:
            os._exit(0)
        b += c
        if b.endswith(b"\n"):
            return bytes(b)
def reply(nonce, d):
    if os.getpid() != ME:  # a process the cell forked that came back here: not the kernel
        os._exit(1)
    data = (nonce + " " + json.dumps(d) + "\n").encode()
    while data:
        data = data[os.write(OUT, data):]
while True:
    req = json.loads(line())
    n, code, cap, nonce = req["n"], req["code"], req["value_bytes"], req["nonce"]
    del req
    cut = False
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
                cut = len(r) > cap
                value = r if not cut else r[:cap] + "..."
    except BaseException as e:
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != name:
            tb = tb.tb_next  # the kernel's own frames are not the cell's
        if isinstance(e, SyntaxError):
            tb = None
        text = "".join(traceback.format_exception(type(e), e, tb))
        msg = str(e)
        cut = len(msg) > cap or len(text) > cap
        err = {"name": type(e).__name__, "message": msg[:cap], "traceback": text[-cap:]}
    for s in (sys.stdout, sys.stderr):
        try:
            s.flush()
        except Exception:
            pass
    reply(nonce, {"value": value, "error": err, "cut": cut})
'''.replace("@REPLY_FD@", str(REPLY_FD)).replace("@CMD_FD@", str(CMD_FD))

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
                    os.dup2(cmd_r, CMD_FD)
                else:
                    os.dup2(cmd_r, 0)  # bash reads its commands here; each cell's stdin is /dev/null
                os.dup2(out_w, 1)
                os.dup2(err_w, 2)
                os.dup2(rep_w, REPLY_FD)
                os.closerange(3, CMD_FD)
                os.closerange(REPLY_FD + 1, 1 << 16)
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

    def drain_replies(self):
        """Drops what is waiting on the reply channel: a reply the cell wrote itself, or the real one
        of a cell that went on running after a forged one was taken (never this exec's reply)."""
        while True:
            try:
                if not os.read(self.rep, 1 << 16):
                    return
            except (BlockingIOError, OSError):
                return

    def cell_file(self, n, code):
        """Writes a bash cell for `.` to read; None, or the code's own error when it cannot be written
        (the cell filled /tmp, or the code is not encodable text: a lone surrogate)."""
        path = "%s/%d" % (CELLS, n)
        try:
            data = (code if code.endswith("\n") else code + "\n").encode("utf-8")
        except UnicodeEncodeError as e:
            return None, {"name": "UnicodeEncodeError", "message": "the cell is not valid text: %s" % e, "traceback": ""}
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                while data:
                    data = data[os.write(fd, data):]
            finally:
                os.close(fd)
        except OSError as e:
            try:
                os.unlink(path)
            except OSError:
                pass
            return None, {"name": "OSError", "message": "the cell could not be written to %s: %s (the session's /tmp is full?)" % (CELLS, e.strerror), "traceback": ""}
        return path, None

    def exec(self, req):
        self.n += 1
        n = self.n
        code = req["code"]
        cap = int(req["output_bytes"])
        # Each exec's reply carries a fresh nonce: a line the cell writes to the reply channel
        # itself is not taken for the reply (it was, and every later result was one exec late).
        nonce = binascii.hexlify(os.urandom(12)).decode()
        self.drain_replies()
        cell = None
        if self.language == "python":
            cmd = (json.dumps({"n": n, "code": code, "value_bytes": self.value_bytes, "nonce": nonce}) + "\n").encode()
        else:
            cell, err = self.cell_file(n, code)
            if err is not None:
                return {"status": "error", "stdout": "", "stderr": "", "value": None, "error": err, "exit_code": None,
                        "truncated": False, "ms": 0, "cpu_ms": 0, "message": None}
            cmd = ("{ . %s; } </dev/null; echo \"%s $?\" >&%d\n" % (cell, nonce, REPLY_FD)).encode()
        try:
            return self.run(cmd, nonce, cap, req)
        finally:
            if cell is not None:
                try:
                    os.unlink(cell)  # cells are not kept: they filled /tmp
                except OSError:
                    pass

    def run(self, cmd, nonce, cap, req):
        bufs = {self.out: bytearray(), self.err: bytearray()}
        reply = bytearray()
        pending = bytearray()
        mark = (nonce + " ").encode()
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
                    pending += chunk
                    while status is None and b"\n" in pending:
                        line, _, rest = bytes(pending).partition(b"\n")
                        pending = bytearray(rest)
                        at = line.find(mark)  # a line without this exec's nonce was written by the cell
                        if at >= 0:
                            reply = bytearray(line[at + len(mark):])
                            status = "done"
                    if len(pending) > (1 << 20):
                        pending = pending[-(1 << 16):]  # a cell flooding the channel: keep only a line's worth
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
                if d.get("cut"):
                    res["truncated"] = True
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
        # the folders made for it are the session's too, so its code can write in them
        made = []
        d = os.path.dirname(p)
        while d != SCRATCH and not os.path.isdir(d):
            made.append(d)
            d = os.path.dirname(d)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if IS_ROOT:
            for d in made:
                os.chown(d, RUN_UID, RUN_UID)
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
            send({"ok": False, "status": "sandbox_error", "message": "%s: %s" % (type(e).__name__, e), "stdout": "", "stderr": "",
                  "value": None, "error": None, "exit_code": None, "truncated": False, "ms": 0, "cpu_ms": None})


if __name__ == "__main__":
    main()
