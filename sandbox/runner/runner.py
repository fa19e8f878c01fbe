# Assay's in-sandbox runner: a small long-lived process inside each pre-started container.
# It reads one JSON job per line on stdin, forks one child per run (unprivileged uid, rlimits,
# own session, wall timer, output cap), and writes one JSON result per line on stdout.
# It knows nothing about rewards. Standard library only: it runs on the image's own python3.
import json, os, resource, select, shutil, signal, subprocess, sys, time

SCRATCH = os.environ.get("ASSAY_SCRATCH", "/sandbox")
RUN_UID = 65534
IS_ROOT = os.getuid() == 0
# Only inside a container of our own may the runner sweep every process of the run uid.
SWEEP = IS_ROOT and os.environ.get("ASSAY_IN_SANDBOX") == "1"
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
       "PYTHONUNBUFFERED": "0", "PYTHONHASHSEED": "0"}
SIGNAMES = {getattr(signal, n): n for n in dir(signal) if n.startswith("SIG") and not n.startswith("SIG_")}


def drop_privileges():
    if IS_ROOT:
        os.setgroups([])
        os.setgid(RUN_UID)
        os.setuid(RUN_UID)


def kill_leftovers():
    """Kills every process of the run uid; True if there were any. Done from a child that drops
    to that uid, so kill(-1) reaches exactly the program's processes and never the runner."""
    if not SWEEP:
        return False
    # Most runs leave nothing: the runner (root) reads /proc itself, and forks the sweeping child
    # only when a process of the run uid is there (a fork of the runner per run cost more than
    # the run's own fork).
    reap_all()
    if not _run_uid_processes():
        return False
    # The program's killed processes are zombies of ours (we are the container's pid 1) until
    # reaped, and they still count against the pids limit: a fork bomb leaves the cgroup full,
    # so reap first and retry a fork that fails with EAGAIN. If none succeeds, report leftovers:
    # the container is then recycled, and the run keeps the status it earned.
    for attempt in range(50):
        reap_all()
        try:
            pid = os.fork()
            break
        except BlockingIOError:
            time.sleep(0.02)
    else:
        return True
    if pid == 0:
        found = 0
        try:
            drop_privileges()
            # kill(-1) also "succeeds" while a process it may not signal exists (the fork server,
            # root's), so what is left is read from /proc: processes of the run uid but this one.
            found = 1 if _run_uid_processes() else 0
            for _ in range(10000 if found else 0):
                try:
                    os.kill(-1, signal.SIGKILL)
                except ProcessLookupError:
                    break
        finally:
            os._exit(found)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 1


def _run_uid_processes():
    """Whether any process but this one has the run uid (its real uid, from /proc/<pid>/status:
    a non-dumpable process's /proc directory is root's)."""
    me = str(os.getpid())
    for p in _listdir("/proc"):
        if not p.isdigit() or p == me:
            continue
        try:
            st = slurp("/proc/%s/status" % p)
            i = st.index(b"\nUid:")
            if int(st[i + 5:st.index(b"\n", i + 5)].split()[0]) == RUN_UID:
                return True
        except (OSError, ValueError, IndexError):
            pass
    return False


def slurp(path):
    """A small file's bytes (/proc, /sys): one open, read and close, none of a file object's
    buffering and decoding, which cost several times the read on the runner's per-run path."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, 1 << 16)
    finally:
        os.close(fd)


def reap_all():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def wipe(path):
    """Empties the run directory and /dev/shm. coreutils' rm handles what shutil.rmtree cannot
    (a 3000-deep tree is a RecursionError there); read-only directories are made writable first.
    Returns False when something could not be removed (the container is then not reused)."""
    ok = True
    targets = [path] + [os.path.join("/dev/shm", n) for n in _listdir("/dev/shm")]
    for p in targets:
        if not os.path.lexists(p):
            continue
        try:  # the common case, in-process
            shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.unlink(p)
        except (OSError, RecursionError):
            try:
                subprocess.run(["chmod", "-R", "u+rwX", "--", p], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)
                subprocess.run(["rm", "-rf", "--", p], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)
            except (OSError, subprocess.SubprocessError):
                pass
        ok = ok and not os.path.lexists(p)
    return ok


def _listdir(d):
    try:
        return os.listdir(d)
    except OSError:
        return []


def wipe_ipc():
    """Removes every System V shared memory segment, message queue and semaphore set, and every
    POSIX message queue: a warm container's IPC namespace outlives a run, and a program that
    left 100 MiB of shared memory behind made the next, correct sample hit its memory limit.
    Only an object's owner may remove it (the runner holds no CAP_IPC_OWNER), so a child that
    takes the programs' uid does it."""
    if not _ipc_left():
        return
    if not IS_ROOT:
        return _wipe_ipc()
    pid = os.fork()
    if pid == 0:
        try:
            drop_privileges()
            _wipe_ipc()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def _ipc_left():
    """Whether any System V object or POSIX message queue exists (cheap: most runs leave none)."""
    for kind in ("shm", "msg", "sem"):
        try:
            if slurp("/proc/sysvipc/" + kind).count(b"\n") > 1:
                return True
        except OSError:
            pass
    return bool(_listdir("/dev/mqueue"))


def _wipe_ipc():
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
    except Exception:
        return
    IPC_RMID = 0
    for kind, rm in (("shm", lambda i: libc.shmctl(i, IPC_RMID, None)),
                     ("msg", lambda i: libc.msgctl(i, IPC_RMID, None)),
                     ("sem", lambda i: libc.semctl(i, 0, IPC_RMID))):
        try:
            with open("/proc/sysvipc/" + kind) as f:
                next(f, None)  # header
                ids = [int(line.split()[1]) for line in f if line.strip()]
        except (OSError, ValueError, IndexError):
            continue
        for i in ids:
            rm(i)
    try:
        for name in os.listdir("/dev/mqueue"):
            try:
                os.unlink(os.path.join("/dev/mqueue", name))
            except OSError:
                pass
    except OSError:
        pass


CACHE_MAX_BYTES = 24 << 20  # of the scratch tmpfs: compiled programs never crowd out a run


def tree_size(p):
    """Bytes in a file, or in every file under a directory (a compile output may be either)."""
    if not os.path.isdir(p):
        return os.path.getsize(p)
    total = 0
    for root, _, names in os.walk(p):
        for n in names:
            total += os.lstat(os.path.join(root, n)).st_size
    return total


def copy_out(src, dest):
    """Copies a compile output (a file, or a directory such as Java's classes) to dest."""
    if os.path.isdir(src):
        shutil.copytree(src, dest, symlinks=True)
    else:
        shutil.copy(src, dest)


def chown_tree(p, uid):
    os.chown(p, uid, uid)
    if os.path.isdir(p):
        for root, dirs, names in os.walk(p):
            for n in dirs + names:
                os.lchown(os.path.join(root, n), uid, uid)


def remove(p):
    if os.path.isdir(p) and not os.path.islink(p):
        shutil.rmtree(p, ignore_errors=True)
    else:
        try:
            os.unlink(p)
        except OSError:
            pass


def cache_put(src, dest):
    """Keeps a compiled program for the next identical source, evicting the least recently used
    ones to stay under CACHE_MAX_BYTES. Best effort: a full cache never fails a correct program."""
    try:
        d = os.path.dirname(dest)
        os.makedirs(d, mode=0o700, exist_ok=True)
        size = tree_size(src)
        if size > CACHE_MAX_BYTES // 2:
            return
        entries = []
        for name in os.listdir(d):
            p = os.path.join(d, name)
            try:
                st = os.stat(p)
                entries.append((st.st_atime, tree_size(p), p))
            except OSError:
                pass
        total = sum(e[1] for e in entries)
        for _, sz, p in sorted(entries):
            if total + size <= CACHE_MAX_BYTES:
                break
            remove(p)
            total -= sz
        # Copied under a temporary name, then renamed: a cache entry is whole or absent.
        tmp = dest + ".partial"
        remove(tmp)
        copy_out(src, tmp)
        os.rename(tmp, dest)
    except OSError:
        remove(dest + ".partial")
        remove(dest)


def oom_kills():
    """OOM kills so far in this container's memory cgroup (v1 or v2); 0 where unreadable."""
    for path in ("/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events"):
        try:
            for line in slurp(path).split(b"\n"):
                if line.startswith(b"oom_kill "):
                    return int(line.split()[1])
        except (OSError, ValueError, IndexError):
            pass
    return 0


CPUACCT = ("/sys/fs/cgroup/cpuacct/cpuacct.usage", "/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage")


def cgroup_cpu_ns():
    """CPU time used so far by every process of this container's cgroup, ns (v1 cpuacct.usage or
    v2 cpu.stat usage_usec); None where unreadable, or outside a container of our own (the cgroup
    would hold other work)."""
    if not SWEEP:
        return None
    for path in CPUACCT:
        try:
            return int(slurp(path).strip())
        except (OSError, ValueError):
            pass
    try:
        for line in slurp("/sys/fs/cgroup/cpu.stat").split(b"\n"):
            if line.startswith(b"usage_usec "):
                return int(line.split()[1]) * 1000
    except (OSError, ValueError, IndexError):
        pass
    return None


def self_cpu_ns():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return int((ru.ru_utime + ru.ru_stime) * 1e9)


def machinery_sessions():
    """The sessions of the fork servers (each started with setsid, so its session is its pid):
    a fork server and the processes it forks hold that session until one becomes a run (its
    setsid), so a process of one is never the program's. A program cannot enter it (setsid makes
    a new session, setpgid stays within one)."""
    return {z.pid for z in (ZYG, RBZ, PHPZ) if z.pid}


class WaitMeter:
    """Time the program was runnable but kept off the CPU by other work (sandbox/meter.ts says
    the same for the host side): from the kernel's per-thread run time and run delay
    (/proc/<tid>/schedstat) of every thread of the program (every process in this container but
    the runner), sampled each tick. A tick's wait is its threads' run-delay growth, but at most
    the part of the tick the program did not run: threads that queue behind the program's own
    threads (a fork bomb on its one core) are its own doing, not the host's. A thread that ends
    between two ticks loses its last tick. The kernel adds a wait to the run delay only when it
    ends (the thread gets a CPU), so a thread runnable (state R) at both ends of a tick has its
    whole tick less what it ran counted as waiting: a wait still going on is not mistaken for
    the program's own time. Only inside our own container, where /proc shows nothing else."""

    def __init__(self):
        self.on = METER
        self.seen = {}
        self.wait_ns = 0
        # CPU the fork servers and their pre-forked processes ran since the meter started (a
        # rehearsal step under way when this run's job came, a Ruby or PHP server reaping its
        # middle process): not the program's, so it is left out of the wait and taken off the
        # container's CPU count (spawn's tree_cpu_ns).
        self.machinery_ns = 0
        self.last = time.monotonic()
        self.runnable = False
        self.sessions = machinery_sessions() if self.on else set()
        # The program's processes (pids) at the last sample.
        self.program = set()
        if self.on:
            self.seen, _, _ = self._read()  # whatever exists before the program starts is not its wait

    def _read(self):
        me = str(os.getpid())
        out = {}
        mach = set()
        self.program = set()
        runnable = False
        for p in _listdir("/proc"):
            if not p.isdigit() or p == me:
                continue
            try:
                # state, ppid, pgrp, session: the leader's state, and whose session it is
                st = slurp("/proc/%s/stat" % p).rsplit(b")", 1)[1].split(None, 4)
                ours = int(st[3]) in self.sessions
            except (OSError, ValueError, IndexError):
                continue
            if not ours:
                self.program.add(p)
            for t in _listdir("/proc/%s/task" % p):
                try:
                    fields = slurp("/proc/%s/task/%s/schedstat" % (p, t)).split()
                    out[t] = (int(fields[0]), int(fields[1]))
                    if ours:
                        mach.add(t)
                    elif not runnable:
                        state = st[0] if t == p else slurp("/proc/%s/task/%s/stat" % (p, t)).rsplit(b")", 1)[1].split(None, 1)[0]
                        runnable = state == b"R"
                except (OSError, ValueError, IndexError):
                    pass
        return out, runnable, mach

    def sample(self):
        if not self.on:
            return
        now = time.monotonic()
        cur, runnable, mach = self._read()
        ran = waited = 0
        for t, (r, d) in cur.items():
            before = self.seen.get(t)
            if before is None or r < before[0] or d < before[1]:
                before = (0, 0)  # a new thread (or a reused id)
            if t in mach:
                self.machinery_ns += r - before[0]
                continue
            ran += r - before[0]
            waited += d - before[1]
        self.seen = cur
        idle = int((now - self.last) * 1e9) - ran
        self.wait_ns += max(0, idle if runnable and self.runnable else min(waited, idle))
        self.runnable = runnable
        self.last = now


# The run's wait for a CPU and the fork servers' share of the container's CPU (a pre-forked
# process's rehearsal step still under way when its job came) are read from each thread's schedstat.
METER = SWEEP and os.path.exists("/proc/self/schedstat")


OOM_MARKERS = ["MemoryError", "std::bad_alloc"]


# A warm Python: the fork server. A Python run (`python3 main.py`) spends most of a trivial
# test starting the interpreter (≈ 15 ms of CPU, more with the harness's imports), so one
# interpreter is started per container at its first Python run (exec'd: nothing of the runner's
# memory), exactly as a run's would be (the same
# executable, environment and flags), with the modules the test harnesses import loaded; each
# Python run is then a fork of it that sets the run's limits, drops to the run uid and runs
# main.py as `python3 main.py` would. It never reads a job: it receives only the run's pipes,
# its directory, environment and limits (the runner writes the files and the stdin), so a run
# forked from it holds no other run's data, and it runs as root, out of the program's reach (no
# signal, no ptrace, no /proc/<pid>/mem across uids). Each run is forked twice so that it is the
# runner's child (the container's pid 1, or a subreaper): the runner times, reaps and ends it
# exactly as a run it forked itself. Anything the fork server cannot do falls back to fork+exec.
ZYGOTE = r"""
import ast, io, json, os, resource, select, signal, socket, subprocess, sys, ctypes, threading, atexit
sock = socket.socket(fileno=int(sys.argv[1]))
PRELOAD = [m for m in sys.argv[2].split(",") if m] if len(sys.argv) > 2 else []
del sys.argv[1:]
# The configured modules (ASSAY_SANDBOX_PRELOAD, or the language's list), imported once here so
# a run that imports them finds them loaded. One that does not import (numpy in the lean image, a
# misspelt name) is skipped, and named in the ready message: the host logs a warning.
SKIPPED = []
for _m in PRELOAD:
    try:
        __import__(_m)
    except BaseException as _e:
        SKIPPED.append("%s (%s: %s)" % (_m, type(_e).__name__, str(_e)[:200]))
# Everything loaded so far goes to the collector's permanent generation (gc.freeze, CPython's
# advice for a pre-forking server): a run's first collection, which compiling its own main.py
# already triggers, then walks only the run's objects. Unfrozen, it walked every preloaded
# object and wrote to each one's header, copying the fork server's pages into the run: 4-5 ms
# of a trivial test's CPU (sandbox/README.md's phase table).
import gc
gc.collect()
gc.freeze()
sock.send(b"ready" + json.dumps(SKIPPED[:20]).encode())

# clone(CLONE_PARENT | SIGCHLD): the run's process is made the runner's child (the fork server's
# own parent) in one step, where a fork needs a middle process that forks it and exits (3 ms of
# CPU a run under load: two forks of the whole interpreter, one exit). Python's own fork
# bookkeeping is done around it (PyOS_BeforeFork / PyOS_AfterFork_*, the C API for "fork() or
# any similar function that clones the current process"; ctypes.pythonapi holds the GIL), and
# only while the fork server is one thread: a raw clone runs no pthread_atfork handler, which a
# library that started threads (OpenBLAS) needs. Elsewhere, or if it fails, the middle process.
_CLONE_NR = {"x86_64": 56, "aarch64": 220}.get(os.uname().machine)
_CLONE_PARENT = 0x00008000
try:
    _syscall = ctypes.PyDLL(None, use_errno=True).syscall
    _syscall.restype = ctypes.c_long
    _syscall.argtypes = [ctypes.c_long] * 6
    _api = ctypes.pythonapi
except (OSError, AttributeError):
    _CLONE_NR = None

def clone_to_runner():
    # A child of the runner, as os.fork() returns: 0 in it, its pid here; None where it cannot.
    if _CLONE_NR is None or len(os.listdir("/proc/self/task")) != 1:
        return None
    _api.PyOS_BeforeFork()
    pid = _syscall(_CLONE_NR, _CLONE_PARENT | signal.SIGCHLD, 0, 0, 0, 0)
    if pid == 0:
        _api.PyOS_AfterFork_Child()
        return 0
    _api.PyOS_AfterFork_Parent()
    return pid if pid > 0 else None

def serve():
    # Forks the next run's process ahead, each time the runner asks ("fork"), as the runner's
    # child (the runner reaps it); it waits, as root and holding nothing of any run, on a
    # channel of its own, which goes to the runner with its pid. The fork is then done between
    # runs, not while a run waits for it.
    while True:
        try:
            msg = sock.recv(64)
        except OSError:
            os._exit(0)
        if not msg:
            os._exit(0)
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = clone_to_runner()
        if pid == 0:
            mine.close()
            return theirs
        if pid is not None:
            theirs.close()
            try:
                socket.send_fds(sock, [str(pid).encode()], [mine.fileno()])
            except OSError:
                os._exit(0)
            mine.close()
            continue
        # No clone: a middle process forks it and exits, so that it is the runner's child.
        r, w = os.pipe()
        go_r, go_w = os.pipe()
        try:
            mid = os.fork()
        except OSError:
            mid = -1
        if mid == 0:
            os.close(r)
            try:
                pid = os.fork()
            except OSError:
                pid = -1
            if pid == 0:
                os.close(w)
                os.close(go_w)
                mine.close()
                # Not before the middle process is gone: the run is then the runner's child, and
                # sees no process of the fork server's but the server itself.
                if os.read(go_r, 1) != b"g":
                    os._exit(127)
                os.close(go_r)
                return theirs
            os.write(w, str(pid).encode())
            os._exit(0)
        os.close(w)
        os.close(go_r)
        theirs.close()
        got = b""
        if mid > 0:
            while True:
                b = os.read(r, 32)
                if not b:
                    break
                got += b
            os.waitpid(mid, 0)
            try:
                os.write(go_w, b"g")
            except OSError:
                got = b""  # no run is waiting for it
        os.close(go_w)
        os.close(r)
        try:
            if got:
                socket.send_fds(sock, [got], [mine.fileno()])
            else:
                sock.send(b"-1")
        except OSError:
            os._exit(0)
        mine.close()

def _rehearse_env():
    env = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    os.environ.clear()

def _rehearse_streams():
    r, w = os.pipe()
    try:
        stream(r, "r", "surrogateescape", False, True)
        stream(w, "w", "surrogateescape", False, True)
        stream(w, "w", "backslashreplace", True, False)
    finally:
        os.close(r)
        os.close(w)
    # The fork server's own standard streams (on /dev/null, never written) are let go here, not
    # on the run's clock; the run's replace these, made here on the same /dev/null.
    sys.stdin = sys.__stdin__ = stream(0, "r", "surrogateescape", False, True)
    sys.stdout = sys.__stdout__ = stream(1, "w", "surrogateescape", False, True)
    sys.stderr = sys.__stderr__ = stream(2, "w", "backslashreplace", True, True)

def _rehearse_parse():
    json.loads(json.dumps({"script": "main.py", "cwd": "/", "env": {"PATH": "/bin"}, "cpu_s": 1, "mem": 0,
                           "nproc": 0, "uid": None, "nice": False}))
    compile("n = int(input())\nprint(sum(i * i for i in range(n)))\n", "main.py", "exec", dont_inherit=True)

def rehearse(ch):
    # While it waits for its run (between runs, off the run's clock), the pre-forked process
    # does once what the run will do first with objects of the fork server's: a forked process
    # pays a copy-on-write fault (≈ 5 µs on a 2-core VM) for each page it first writes, and
    # setting the run's environment, making its standard streams, reading its request and
    # compiling its program first wrote ≈ 190 such pages (a reference count, a cache) on the
    # run's clock: a trivial run took ≈ 280 faults, ≈ 80 after a whole rehearsal
    # (tests/warm-run-cost.test.ts). Each step is only a head start, so none is begun once the
    # run is waiting on the channel: back to back, the run would otherwise wait for them.
    # Nothing of any run is involved: fixed inputs, on pipes of its own, closed or dropped here.
    poller = select.poll()
    poller.register(ch, select.POLLIN)
    for step in (_rehearse_env, _rehearse_streams, _rehearse_parse):
        if poller.poll(0):
            return
        step()

def wait_job(ch):
    # The pre-forked process: nothing open but its channel until the runner sends its run (the
    # run's limits, directory, environment and pipes); it says it has them (with its page faults
    # so far: the run's own are counted from here), then becomes the run.
    sock.close()
    keep = ch.fileno()
    os.closerange(3, keep)
    os.closerange(keep + 1, 65536)
    try:
        rehearse(ch)
    except BaseException:
        os._exit(0)
    try:
        msg, fds, _, _ = socket.recv_fds(ch, 1 << 16, 3)
    except OSError:
        os._exit(0)
    if not msg or len(fds) != 3:
        os._exit(0)
    try:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        ch.send(b"k%d %d" % (ru.ru_minflt, int((ru.ru_utime + ru.ru_stime) * 1e6)))
    except OSError:
        os._exit(0)
    ch.close()
    return json.loads(msg), fds

def env_flag(v):
    # CPython's _Py_get_env_flag: unset or empty is 0; an integer >= 0 is itself; anything else 1.
    if not v:
        return 0
    try:
        n = int(v)
    except ValueError:
        return 1
    return n if n >= 0 else 1

def stream(fd, mode, errors, line, buffered):
    if mode == "r":
        return io.TextIOWrapper(io.BufferedReader(io.FileIO(fd, "r", closefd=False)), encoding="utf-8", errors=errors)
    if buffered:
        return io.TextIOWrapper(io.BufferedWriter(io.FileIO(fd, "w", closefd=False)), encoding="utf-8", errors=errors, line_buffering=line)
    return io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), encoding="utf-8", errors=errors, write_through=True)

def become(req, fds):
    try:
        setup(req, fds)
    except BaseException as e:
        try:
            os.write(2, ("sandbox: cannot start python3: %s\n" % e).encode())
        finally:
            os._exit(127)
    run(req)

def setup(req, fds):
    sock.close()
    os.setsid()
    if req["nice"]:
        os.setpriority(os.PRIO_PROCESS, 0, 10)  # (absolute: the fork server is at 10 already)
    for i, fd in enumerate(fds):
        os.dup2(fd, i)
    os.closerange(3, 65536)
    resource.setrlimit(resource.RLIMIT_CPU, (req["cpu_s"], req["cpu_s"] + 1))
    if req["mem"] > 0:
        resource.setrlimit(resource.RLIMIT_AS, (req["mem"], req["mem"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 20, 64 << 20))
    if req["nproc"]:
        resource.setrlimit(resource.RLIMIT_NPROC, (req["nproc"], req["nproc"]))
    if req["uid"] is not None:
        os.setgroups([])
        os.setgid(req["uid"])
        os.setuid(req["uid"])
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    # The standard streams as python3 makes them (UTF-8 locale; PYTHONUNBUFFERED in the env):
    # stdout block-buffered (a pipe), stderr line-buffered, unless PYTHONUNBUFFERED is on as
    # CPython reads it (_Py_get_env_flag): unset, empty or "0" is off ("0" is what ENV sets), a
    # positive integer or any other text is on. Unbuffered, each print() was two write(2) calls:
    # 450,000 lines took 3 s of CPU instead of 0.4 s.
    buffered = not env_flag(os.environ.get("PYTHONUNBUFFERED"))
    sys.stdin = sys.__stdin__ = stream(0, "r", "surrogateescape", False, buffered)
    sys.stdout = sys.__stdout__ = stream(1, "w", "surrogateescape", False, buffered)
    sys.stderr = sys.__stderr__ = stream(2, "w", "backslashreplace", True, buffered)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    # A fresh random state per run, as a fresh interpreter has: the preloaded numpy was seeded
    # once, in the fork server, and every run would draw the same numbers (the random module
    # reseeds itself in a forked child: os.register_at_fork).
    np = sys.modules.get("numpy")
    if np is not None:
        try:
            np.random.seed()
        except BaseException:
            pass

def run(req):
    path = os.path.join(req["cwd"], req["script"])
    sys.argv[:] = [req["script"]]
    sys.path[0] = req["cwd"]
    code = 0
    # As `python3 main.py` runs it: a fresh __main__ module, the script's own file name in
    # tracebacks, sys.argv == ["main.py"].
    main = type(sys)("__main__")
    main.__file__, main.__cached__, main.__builtins__ = path, None, __builtins__
    sys.modules["__main__"] = main
    try:
        with open(path, "rb") as f:
            src = f.read()
        exec(compile(src, path, "exec", dont_inherit=True), main.__dict__)
    except SystemExit as e:
        c = e.code
        if c is None:
            code = 0
        elif isinstance(c, int):
            code = c & 0xFF
        else:
            try:
                print(c, file=sys.stderr)
            except BaseException:
                pass
            code = 1
    except BaseException as e:
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != path:
            tb = tb.tb_next
        try:
            sys.excepthook(type(e), e.with_traceback(tb), tb)
        except BaseException:
            pass
        code = 1
    # The interpreter's own exit: other threads joined, atexit run, streams flushed.
    try:
        threading._shutdown()
    except BaseException:
        pass
    try:
        atexit._run_exitfuncs()
    except BaseException:
        pass
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except BaseException:
            code = code or 120
    os._exit(code)

become(*wait_job(serve()))
"""


class Zygote:
    """The runner's side of the fork server: `spawn(...)` returns the pid of a run forked from
    the warm interpreter (the runner's own child), or None where it cannot."""

    def __init__(self, exe="python3", flag="-c", program=None, name_ok=lambda m: all(p.isidentifier() for p in m.split(".")),
                 encode=lambda req: json.dumps(req).encode()):
        # The interpreter, its flag for a program given as text, the program (ZYGOTE when None:
        # set below the class), which preload names it may be given, and how a run is written.
        self.exe, self.flag, self.program, self.name_ok, self.encode = exe, flag, program, name_ok, encode
        self.sock = None
        self.pid = None
        self.tried = False
        # Whether a pre-forked process was asked for and not yet taken.
        self.asked = False
        # The preloaded modules that did not import ("name (Error: why)"), once, in the reply of
        # the run that started the fork server: the host logs them.
        self.skipped = []
        # The last run's process's minor page faults and CPU µs before it had the run (its ack).
        self.before = None

    def start(self, preload=(), extra_env=None):
        """Started on the first Python run, so a container of another language's image holds no
        idle interpreter against its memory limit. It is exec'd, so it inherits nothing of the
        runner's memory (the jobs it has read)."""
        if self.tried:
            return
        self.tried = True
        if not SWEEP:  # only inside a container of our own, as root, where orphans come to us
            return
        try:
            if os.getpid() != 1:
                import ctypes
                if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
                    return
            import socket
            mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            exe = shutil.which(self.exe, path=ENV["PATH"]) or (sys.executable if self.exe == "python3" else None)
            if exe is None or not (self.program or ZYGOTE):
                return
            pid = os.fork()
            if pid == 0:
                try:
                    mine.close()
                    os.setsid()
                    fd = os.open(os.devnull, os.O_RDWR)
                    for i in (0, 1, 2):
                        os.dup2(fd, i)
                    keep = theirs.fileno()
                    os.set_inheritable(keep, True)
                    os.closerange(3, keep)
                    os.closerange(keep + 1, 65536)
                    os.chdir(SCRATCH)
                    mods = ",".join(m for m in preload if isinstance(m, str) and self.name_ok(m))
                    os.execve(exe, [exe, self.flag, self.program or ZYGOTE, str(keep), mods], dict(ENV, **(extra_env or {})))
                finally:
                    os._exit(127)
            theirs.close()
            # Up before the run that started it is timed: its start is no run's CPU time.
            mine.settimeout(30)  # (its preloaded modules: numpy takes seconds on a loaded host)
            got = mine.recv(1 << 14)
            if not got.startswith(b"ready"):
                raise OSError("the fork server did not start")
            try:
                self.skipped = [str(m) for m in json.loads(got[5:] or b"[]")]
            except ValueError:
                self.skipped = []
            mine.settimeout(None)
            self.sock, self.pid = mine, pid
            # Its forks and the pre-forked processes' rehearsals overlap the runner's leftover
            # sweep, wipe and reply (prefork, asked for once a run is reaped): at the run's nice 10,
            # below the runner's 0, they take the CPU time the runner leaves and do not lengthen
            # its work (at 0 they did, issue 31's first round). A run's process keeps the 10 it
            # has: it could not go back to 0 (no CAP_SYS_NICE in Docker's default set, and
            # RLIMIT_NICE 0), nor does it need to.
            try:
                os.setpriority(os.PRIO_PROCESS, pid, 10)
            except OSError:
                pass
            self.prefork()
        except Exception:
            try:
                mine.close()
            except Exception:
                pass
            self.sock = None

    def prefork(self):
        """Asks the fork server for the next run's process now (once the current run is reaped,
        else after the reply): a run then starts without waiting for a fork. At most one is asked
        for and not yet taken."""
        if self.sock is None or self.asked:
            return
        try:
            self.sock.send(b"fork")
            self.asked = True
        except OSError:
            self.close()

    def take(self):
        """The pre-forked process for this run, (pid, channel), or None where there is none."""
        if self.sock is None:
            return None
        self.prefork()
        if not self.asked:
            return None
        import socket
        try:
            msg, fds, _, _ = socket.recv_fds(self.sock, 64, 1)
            self.asked = False
            pid = int(msg)
        except (OSError, ValueError):
            self.close()
            return None
        if pid <= 0 or not fds:
            for fd in fds:
                os.close(fd)
            return None
        try:
            return pid, socket.socket(fileno=fds[0])
        except OSError:  # not a socket (a fork server that sent the wrong descriptor): fork and exec instead
            for fd in fds:
                os.close(fd)
            self.close()
            return None

    def spawn(self, taken, script, cwd, fds, env, cpu_s, mem, nproc, ini=()):
        """Hands the run to the pre-forked process; its pid once it has the run, else None (it
        is then killed and reaped, and the run is forked and exec'd instead)."""
        pid, ch = taken
        import socket
        req = {"script": script, "cwd": cwd, "env": env, "cpu_s": cpu_s, "mem": mem, "nproc": nproc,
               "uid": RUN_UID if IS_ROOT else None, "nice": SWEEP, "ini": list(ini)}
        try:
            socket.send_fds(ch, [self.encode(req)], fds)
            ch.settimeout(10)
            ack = ch.recv(32)
            ok = ack[:1] == b"k"
        except OSError:
            ok = False
        finally:
            ch.close()
        if ok:
            # Its minor page faults and CPU time before it had the run (fork, rehearsal): the
            # run's own are the rest of its rusage (`faults` and `runCpuMs` with the phases).
            try:
                f, us = ack[1:].split()
                self.before = (int(f), int(us))
            except ValueError:
                self.before = None
            return pid
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass
        return None

    def close(self):
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
        self.sock = None
        self.asked = False


ZYG = Zygote()


def _ruby_server():
    """The Ruby fork server's source (sandbox/runner/ruby_server.rb): put in RUBY_SERVER by
    sandbox/paths.ts when this runner is sent into a sandbox as text, else read beside it."""
    if RUBY_SERVER:
        return RUBY_SERVER
    try:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ruby_server.rb")) as f:
            return f.read()
    except (NameError, OSError):
        return None


def _ruby_request(req):
    """A run for the Ruby fork server, NUL-separated (it reads it without loading json, which a
    run would then find loaded): script, cwd, cpu_s, mem, nproc, uid, nice, then KEY=VALUE."""
    head = [req["script"], req["cwd"], str(req["cpu_s"]), str(req["mem"]), str(req["nproc"] or 0),
            "" if req["uid"] is None else str(req["uid"]), "1" if req["nice"] else ""]
    return "\0".join(head + ["%s=%s" % kv for kv in req["env"].items()]).encode()


def _php_server():
    """The PHP fork server's source (sandbox/runner/php_server.php) for `php -r`: put in
    PHP_SERVER by sandbox/paths.ts when this runner is sent into a sandbox as text."""
    src = PHP_SERVER
    if not src:
        try:
            with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "php_server.php")) as f:
                src = f.read()
        except (NameError, OSError):
            return None
    return src[len("<?php"):] if src.startswith("<?php") else src


def _php_request(req):
    """A run for the PHP fork server, as _ruby_request's, with its `-d` settings (\x01-separated) before the environment."""
    head = [req["script"], req["cwd"], str(req["cpu_s"]), str(req["mem"]), str(req["nproc"] or 0),
            "" if req["uid"] is None else str(req["uid"]), "1" if req["nice"] else "", "\x01".join(req.get("ini") or ())]
    return "\0".join(head + ["%s=%s" % kv for kv in req["env"].items()]).encode()


RUBY_SERVER = None
PHP_SERVER = None
# Warm Ruby (issue 31): `ruby main.rb` forked from a warm interpreter, as Python's (ruby_server.rb).
RBZ = Zygote("ruby", "-e", _ruby_server(), lambda m: m.replace("/", "").replace("_", "").replace("-", "").isalnum(), _ruby_request)
# Warm PHP: `php -d k=v ... main.php` forked from a warm php (php_server.php), its settings set per run.
PHPZ = Zygote("php", "-r", _php_server(), lambda m: False, _php_request)
# The fork server of each warm command line.
WARM = {("python3", "main.py"): ZYG, ("ruby", "main.rb"): RBZ}


def warm_for(argv):
    """The fork server for a run's command line, the script it runs and its `-d` settings."""
    z = WARM.get(tuple(argv))
    if z is not None:
        return z, argv[1], ()
    if (len(argv) >= 2 and argv[0] == "php" and argv[-1] == "main.php" and len(argv) % 2 == 0
            and all(a == "-d" for a in argv[1:-1:2]) and all("=" in a and "\0" not in a and "\x01" not in a for a in argv[2:-1:2])):
        return PHPZ, argv[-1], tuple(argv[2:-1:2])
    return None, None, ()


def spawn(argv, cwd, stdin, lim, extra_env=None, oom=None, warm=False, preload=()):
    """Runs argv once under limits; returns the outcome dict (no files, no compile). The
    address-space rlimit is lim["addressSpaceMb"] when given (0: none, for VMs that reserve far
    more than they use; the container's cgroup still caps real memory), else lim["memoryMb"]."""
    cpu_s = max(1, -(-int(lim["cpuMs"]) // 1000))
    mem = int(lim.get("addressSpaceMb", lim["memoryMb"])) * 1024 * 1024
    cap = int(lim["outputBytes"])
    # The limits measure the program's own work (sandbox/README.md#time-limits): CPU time over its
    # whole process tree, and wall time less the time it waited for a CPU. hardWallMs bounds the
    # plain wall time: reached only when the host kept the program off the CPU.
    wall = lim["wallMs"] / 1000.0
    hard = max(wall, lim.get("hardWallMs", lim["wallMs"]) / 1000.0)
    cpu_cap_ns = int(lim["cpuMs"]) * 1_000_000
    taken = None
    zyg, script, ini = warm_for(argv) if warm else (None, None, ())
    if zyg is not None:
        zyg.start(preload, extra_env)
        taken = zyg.take()  # (before the run's clocks start: the fork was between runs)
    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    r_err, w_err = os.pipe()
    ooms = oom_kills()
    meter = WaitMeter()
    cg0 = cgroup_cpu_ns()
    me0 = self_cpu_ns()
    t0 = time.monotonic()
    pid = None
    mark("started")
    if taken:
        env = dict(ENV, HOME=cwd, TMPDIR=cwd)
        env.update(extra_env or {})
        nproc = int(lim["nproc"]) if lim.get("nproc") else 0
        pid = zyg.spawn(taken, script, cwd, [r_in, w_out, w_err], env, cpu_s, mem, nproc, ini)
    before = zyg.before if pid is not None else (0, 0)
    if pid is not None and before and str(pid) in meter.seen:
        # What the pre-forked process ran after the meter's first read and before it had the run
        # (the rest of a rehearsal step under way when its job came) is the fork server's work,
        # not the run's: it is the run's own from here (it leaves the fork server's session).
        meter.machinery_ns += max(0, before[1] * 1000 - meter.seen[str(pid)][0])
    if pid is None:
        pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            if SWEEP:
                # Below the runner within the container's CPU share: a fork bomb's hundred
                # runnable processes cannot starve the runner that must time and end them. The
                # container's share against the host's other work is the cgroup's, unchanged.
                os.nice(10)
            os.dup2(r_in, 0)
            os.dup2(w_out, 1)
            os.dup2(w_err, 2)
            os.closerange(3, 65536)
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
            if mem > 0:
                resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
            resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 20, 64 << 20))
            if lim.get("nproc"):
                resource.setrlimit(resource.RLIMIT_NPROC, (int(lim["nproc"]), int(lim["nproc"])))
            drop_privileges()
            os.chdir(cwd)
            env = dict(ENV, HOME=cwd, TMPDIR=cwd)
            env.update(extra_env or {})
            exe = argv[0] if "/" in argv[0] else (shutil.which(argv[0], path=env["PATH"]) or argv[0])
            os.execve(exe, argv, env)
        except BaseException as e:
            try:
                os.write(2, ("sandbox: cannot start %s: %s\n" % (argv[0], e)).encode())
            finally:
                os._exit(127)
    for fd in (r_in, w_out, w_err):
        os.close(fd)
    data = stdin.encode() if stdin else b""
    if data:
        os.set_blocking(w_in, False)
    else:
        os.close(w_in)
        w_in = -1
    bufs = {r_out: bytearray(), r_err: bytearray()}
    open_fds = {r_out, r_err}
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    for fd in open_fds:
        poller.register(fd, select.POLLIN)
    poller.register(pidfd, select.POLLIN)
    if w_in >= 0:
        poller.register(w_in, select.POLLOUT)
    killed_by = None
    exited = False
    lone_exit = False
    grace_until = None
    tick = 0.1
    used = None

    def tree_cpu_ns():
        cg = cgroup_cpu_ns()
        # Less the runner's own CPU, and the fork servers' (WaitMeter), as of the meter's sample
        # just before.
        return None if cg is None or cg0 is None else max(0, (cg - cg0) - (self_cpu_ns() - me0) - meter.machinery_ns)

    while True:
        now = time.monotonic()
        if not exited:
            if now - meter.last >= tick:  # not on every chunk of output: once a tick
                meter.sample()
                used = tree_cpu_ns()
            own = now - t0 - meter.wait_ns / 1e9
            if own >= wall or (used is not None and used > cpu_cap_ns):
                killed_by = "time_limit"
                break
            if now - t0 >= hard:
                killed_by = "overloaded"
                break
        if exited and (not open_fds or now >= grace_until):
            break
        timeout = (grace_until - now) if exited else min(tick, t0 + hard - now, max(0.001, wall - own))
        events = poller.poll(max(1, int(timeout * 1000) + 1))
        for fd, ev in events:
            if fd == pidfd:
                mark("exited")
                # A zombie's schedstat is still there and final: take its last tick now, before
                # the reap below loses it.
                meter.sample()
                # With no other process of the program's left (most runs), nothing of it can run
                # after this: the sample after the reap would add nothing.
                lone_exit = meter.on and meter.program <= {str(pid)}
                exited = True
                grace_until = time.monotonic() + 0.05
                poller.unregister(pidfd)
            elif fd == w_in:
                try:
                    n = os.write(w_in, data[:65536])
                    data = data[n:]
                except (BrokenPipeError, BlockingIOError, OSError) as e:
                    if isinstance(e, BlockingIOError):
                        continue
                    data = b""
                if not data:
                    poller.unregister(w_in)
                    os.close(w_in)
                    w_in = -1
            else:
                chunk = os.read(fd, 65536)
                if not chunk:
                    poller.unregister(fd)
                    open_fds.discard(fd)
                    continue
                bufs[fd] += chunk
                if len(bufs[fd]) > cap:
                    killed_by = "output_limit"
        if killed_by:
            break
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    _, status, ru = os.wait4(pid, 0)
    wall_ms = (time.monotonic() - t0) * 1000
    # The run's process group was just killed; its processes that had outlived the program (the
    # assert harness's candidate, say) are ours now and dying. Reap them before the leftover
    # sweep, which would otherwise find one not yet dead and retire a container for nothing.
    settle = time.monotonic() + 0.2
    while True:
        try:
            got, _ = os.waitpid(-pid, os.WNOHANG)
        except ChildProcessError:
            break
        if got == 0:
            if time.monotonic() > settle:
                break
            time.sleep(0.001)
    if not lone_exit:
        meter.sample()
    mark("collected")
    wait_ms = min(wall_ms, meter.wait_ns / 1e6)
    tree = tree_cpu_ns()
    if zyg is not None:
        # The next run's process is asked for now, once this run's process is reaped and its CPU
        # read, not after the reply: its fork and rehearsal overlap the leftover sweep, the wipe,
        # the reply and the host's next job (back to back, the 1.5-2 ms between a reply and the
        # next job were less than they take). Not earlier: a run sees the processes a fresh one
        # does (the runner, the fork server, itself), and no fork server's work is on its clock.
        # It is root, in the fork server's session, with no run until the next job: the leftover
        # sweep (the run uid's processes) neither counts nor kills it.
        zyg.prefork()
    os.close(pidfd)
    for fd in list(open_fds):
        os.close(fd)
    if w_in >= 0:
        os.close(w_in)
    truncated = False
    out = {}
    for name, fd in (("stdout", r_out), ("stderr", r_err)):
        b = bufs[fd]
        if len(b) > cap:
            b = b[:cap]
            truncated = True
        out[name] = b.decode("utf-8", "replace")
    # The whole tree's CPU time from the container's cgroup (rusage counts only the processes
    # waited for, not a fork bomb's orphans), else the program's own and its reaped children's.
    cpu_ms = tree / 1e6 if tree is not None else (ru.ru_utime + ru.ru_stime) * 1000
    code = sig = None
    if os.WIFEXITED(status):
        code = os.WEXITSTATUS(status)
    elif os.WIFSIGNALED(status):
        s = os.WTERMSIG(status)
        sig = SIGNAMES.get(s, str(s))
    st = killed_by
    if st == "overloaded" and cpu_ms > lim["cpuMs"]:
        st = "time_limit"
    # Runtimes print the out-of-memory line first and a stack dump after it (Go, V8): both ends.
    tail = out["stderr"][:2000] + out["stderr"][-2000:]
    if st is None:
        if sig in ("SIGXCPU",) or (sig == "SIGKILL" and cpu_ms >= cpu_s * 1000):
            st = "time_limit"
        elif cpu_ms > lim["cpuMs"]:
            st = "time_limit"
        elif oom_kills() > ooms:
            st = "memory_limit"  # some process of the run was killed by the cgroup's OOM killer
        elif (code != 0 or sig) and any(m in tail for m in (OOM_MARKERS if oom is None else oom)):
            st = "memory_limit"
        elif sig == "SIGKILL":
            st = "memory_limit"  # killed by the cgroup's OOM killer (nothing else here sends SIGKILL)
        elif sig:
            st = "runtime_error"
        else:
            st = "finished"
    return {"status": st, "exitCode": code, "signal": sig, "stdout": out["stdout"], "stderr": out["stderr"],
            "truncated": truncated, "wallMs": round(wall_ms, 3), "cpuMs": round(cpu_ms, 3), "waitMs": round(wait_ms, 3),
            "_own": None if before is None else [ru.ru_minflt - before[0], round((ru.ru_utime + ru.ru_stime) * 1000 - before[1] / 1000, 3)]}


def prepare_dir(path):
    os.mkdir(path, 0o755)
    if IS_ROOT:
        os.chown(path, RUN_UID, RUN_UID)


def write_files(root, files):
    for name, content in (files or {}).items():
        p = os.path.normpath(os.path.join(root, name))
        if not p.startswith(root + "/"):
            raise ValueError("file name escapes the scratch directory: %r" % name)
        d = os.path.dirname(p)
        if d != root:
            os.makedirs(d, exist_ok=True)
        data = memoryview(content.encode("utf-8"))  # (a lone surrogate raises, as a text file's write did)
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
        try:
            while data:
                data = data[os.write(fd, data):]
            if IS_ROOT:
                os.fchown(fd, RUN_UID, RUN_UID)
        finally:
            os.close(fd)


COUNTER = [0]
# Where a run's time goes inside the runner (ms since the job was read, by phase): sent back when
# the job asks (`phases`), for bench/code.ts --phases; sandbox/README.md has the figures.
PHASES = []


def mark(name):
    PHASES.append((name, time.perf_counter()))


def handle(job):
    COUNTER[0] += 1
    del PHASES[:]
    mark("read")
    work = os.path.join(SCRATCH, "run")
    if os.path.exists(work) and not wipe(work):
        return {"status": "sandbox_error", "message": "runner: the last run's files could not be removed", "tainted": True}
    prepare_dir(work)
    result = {}
    try:
        write_files(work, job.get("files"))
        argv = job["argv"]
        comp = job.get("compile")
        if comp:
            cache = os.path.join(SCRATCH, "cache", comp["key"]) if comp.get("key") else None
            if cache and os.path.exists(cache):
                os.utime(cache)  # recently used: evicted last
                copy_out(cache, os.path.join(work, comp["output"]))
                if IS_ROOT:
                    chown_tree(os.path.join(work, comp["output"]), RUN_UID)
                result["compile"] = {"status": "finished", "stdout": "", "stderr": "", "wallMs": 0, "cached": True}
            else:
                c = spawn(comp["argv"], work, "", comp["limits"], comp.get("env"), [])
                result["compile"] = {"status": c["status"], "stdout": c["stdout"], "stderr": c["stderr"], "wallMs": c["wallMs"],
                                     "cpuMs": c["cpuMs"], "waitMs": c["waitMs"]}
                ok = c["status"] == "finished" and c["exitCode"] == 0
                if ok and cache:
                    # root-only: one sample's binary is never readable by another sample's program
                    cache_put(os.path.join(work, comp["output"]), cache)
                if kill_leftovers():
                    result["tainted"] = True
                if c["status"] == "overloaded":  # the host, not the source: no verdict on it
                    result.update({k: c[k] for k in ("status", "exitCode", "signal", "wallMs", "cpuMs", "waitMs")})
                    result.update({"stdout": "", "stderr": "", "truncated": False, "tainted": True})
                    return result
                if not ok:
                    if c["status"] == "finished":
                        result["compile"]["status"] = "compile_error"
                    result.update({"status": "compile_error", "exitCode": c["exitCode"], "signal": c["signal"],
                                   "stdout": "", "stderr": c["stderr"], "truncated": c["truncated"],
                                   "wallMs": 0, "cpuMs": 0})
                    return result
        if comp and job.get("compileOnly"):
            # The compile step alone (a warm bwrap slot compiles under the compiler's limits, then
            # runs each test under the program's): `cached` says whether the next job finds it.
            result.update({"status": "finished", "exitCode": 0, "signal": None, "stdout": "", "stderr": "",
                           "truncated": False, "wallMs": 0, "cpuMs": 0,
                           "cached": bool(cache) and os.path.exists(cache), "tainted": result.get("tainted", False)})
            return result
        mark("files")
        r = spawn(argv, work, job.get("stdin") or "", job["limits"], job.get("env"), job.get("oom"), warm=not comp, preload=job.get("preload") or ())
        own = r.pop("_own")
        if job.get("phases") and own:
            # The run's process's minor page faults and CPU time from the moment it had the run
            # (a cold run: from its fork), its reaped children's included.
            result["faults"], result["runCpuMs"] = own
        tainted = result.get("tainted", False)
        result.update(r)
        for z in (ZYG, RBZ, PHPZ):
            if z.skipped:
                result["preloadSkipped"], z.skipped = z.skipped, []
        if kill_leftovers():
            tainted = True
            result["leftover"] = True
        mark("swept")
        if r["status"] in ("time_limit", "memory_limit") or r["signal"] == "SIGKILL":
            tainted = True
        result["tainted"] = tainted
        return result
    finally:
        reap_all()
        if not wipe(work):
            result["tainted"] = True
        wipe_ipc()
        if job.get("phases"):
            mark("wiped")
            result["phases"] = [[n, round((t - PHASES[0][1]) * 1000, 3)] for n, t in PHASES]


def main():
    inp = sys.stdin.buffer
    out = sys.stdout.buffer
    os.makedirs(SCRATCH, exist_ok=True)
    out.write(json.dumps({"ready": True, "python": sys.version.split()[0]}).encode() + b"\n")
    out.flush()
    while True:
        line = inp.readline()
        if not line:
            return
        try:
            job = json.loads(line)
        except ValueError:
            continue
        try:
            res = handle(job)
        except Exception as e:  # machinery failure: report it, keep serving
            res = {"status": "sandbox_error", "message": "runner: %s: %s" % (type(e).__name__, e), "tainted": True}
        res["id"] = job.get("id")
        out.write(json.dumps(res).encode() + b"\n")
        out.flush()
        # The next run's process, if none was asked for once this job's run was reaped (a job
        # that ran no warm command, or ended before its run): forked while the host reads this
        # reply and sends the next job.
        for z in (ZYG, RBZ, PHPZ):
            z.prefork()


if __name__ == "__main__":
    main()
