# Assay assert-script harness (HumanEval / MBPP style). Runs inside the sandbox.
# stdin: {"tests": [script, ...], "setup": str, "entry_point": str|null, "nonce": str}.
#
# Two processes, and the candidate's holds no test:
# - this one (trusted) reads the tests, the expected values and the nonce, and never runs the
#   candidate's code. It reads solution.py only as text, to learn the names it defines (ast),
#   and binds each name to a proxy;
# - a process forked from this one before it reads anything (so it inherits none of the tests,
#   values or nonce; its stdin, stdout and stderr are /dev/null) loads solution.py once the
#   tests are read off stdin, and answers calls over a pipe: it receives the arguments a test passes and sends back the
#   return value as plain data (exact builtin types, tagged JSON), or the exception's type name.
# The asserts then run here on plain values with the builtin ==: no __eq__, patched builtin,
# frame walk, early exit or printed record of the candidate can make a test pass, because the
# candidate never sees a test, an expected value, this process's memory (not dumpable) or the
# nonce under which results are reported.
import ast, json, os, sys


# Plain data across the pipe, both ways: exact builtin types as tagged JSON (never pickle, which
# would let one side run code in the other). Shared by the two processes: the candidate's source
# below starts with it, and this process execs it too.
CODEC = r'''
def enc(x, depth=0):
    t = type(x)
    if depth > 100:
        raise ValueError("a value nests too deeply")
    if x is None or t is bool or t is int or t is str:
        return x
    if t is float:
        return x if x == x and x not in (float("inf"), float("-inf")) else {"float": repr(x)}
    if t is list:
        return [enc(v, depth + 1) for v in x]
    if t is tuple:
        return {"tuple": [enc(v, depth + 1) for v in x]}
    if t is set or t is frozenset:
        return {t.__name__: [enc(v, depth + 1) for v in x]}
    if t is dict:
        return {"dict": [[enc(k, depth + 1), enc(v, depth + 1)] for k, v in x.items()]}
    if t is bytes:
        return {"bytes": x.hex()}
    if t is complex:
        return {"complex": [enc(x.real), enc(x.imag)]}
    raise TypeError("a %s is not plain data (only exact builtin types cross between the tests and the program)" % t.__name__)

def dec(x, depth=0):
    if depth > 100:
        raise ValueError("a value nests too deeply")
    if isinstance(x, list):
        return [dec(v, depth + 1) for v in x]
    if isinstance(x, dict):
        if len(x) != 1:
            raise ValueError("malformed value")
        (k, v), = x.items()
        if k == "tuple": return tuple(dec(i, depth + 1) for i in v)
        if k == "set": return set(dec(i, depth + 1) for i in v)
        if k == "frozenset": return frozenset(dec(i, depth + 1) for i in v)
        if k == "dict": return {dec(a, depth + 1): dec(b, depth + 1) for a, b in v}
        if k == "bytes": return bytes.fromhex(v)
        if k == "complex": return complex(float(v[0]), float(v[1]))
        if k == "float": return float(v)
        raise ValueError("malformed value")
    if x is None or type(x) in (bool, int, float, str):
        return x
    raise ValueError("malformed value")
'''


CANDIDATE = CODEC + r'''
import json, os, sys
rpc_in = os.fdopen(int(sys.argv[1]), "r", encoding="utf-8")
rpc_out = os.fdopen(int(sys.argv[2]), "w", encoding="utf-8")
send = lambda rec: (rpc_out.write(json.dumps(rec) + "\n"), rpc_out.flush())

ns = {"__name__": "solution"}
sys.path.insert(0, os.getcwd())
try:
    with open("solution.py", encoding="utf-8") as f:
        exec(compile(f.read(), "solution.py", "exec"), ns)
except BaseException as e:
    send({"failed": ("%s: %s" % (type(e).__name__, e))[:500]})
    os._exit(1)
send({"ready": True})
for line in rpc_in:
    req = json.loads(line)
    try:
        target = ns[req["name"]]
        if "init" in req:  # a method of a fresh instance: Solution().twoSum(...)
            target = target(*dec(req["init"]))
        for attr in req["path"]:
            target = getattr(target, attr)
        result = target(*dec(req["args"]), **dec(req["kwargs"]))
        send({"ok": enc(result)})
    except BaseException as e:
        try:
            send({"exc": type(e).__name__, "msg": str(e)[:300]})
        except BaseException:
            send({"exc": "Exception", "msg": "an exception that cannot be shown"})
'''


def _candidate():
    """The candidate's process, forked before this one reads anything: it holds none of the
    tests, the expected values or the nonce (the same as a fresh interpreter, at a fork's cost
    instead of an interpreter's start), and its standard streams are /dev/null. It loads
    solution.py only when the tests have been read off stdin (one byte on its pipe), so nothing
    is left there to read. Returns (pid, to_child, from_child)."""
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            a, b = sorted((to_child_r, from_child_w))
            os.closerange(3, a)  # nothing of this process's but its own two pipe ends
            os.closerange(a + 1, b)
            os.closerange(b + 1, 65536)
            if not os.read(to_child_r, 1):
                os._exit(0)  # the tests never came: nothing to answer
            sys.argv[:] = ["-c", str(to_child_r), str(from_child_w)]
            exec(compile(CANDIDATE, "<candidate>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
        finally:
            os._exit(0)
    os.close(to_child_r)
    os.close(from_child_w)
    return pid, to_child_w, from_child_r


def _exit_code(pid, timeout):
    """The candidate's exit status as subprocess reports it (-N: killed by signal N), waiting at
    most `timeout` s; None if it is still running."""
    import time
    end = time.monotonic() + timeout
    while True:
        got, status = os.waitpid(pid, os.WNOHANG)
        if got:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() >= end:
            return None
        time.sleep(0.005)


def _harness():
    write, dumps, type_ = os.write, json.dumps, type
    # Not dumpable, before the fork so the candidate is not either: a process of the same uid
    # cannot read this one's memory or open its descriptors through /proc.
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except Exception:
        pass
    child_pid, to_child_w, from_child_r = _candidate()
    data = json.loads(sys.stdin.read())
    marker = ("\x1eASSAY:" + data.pop("nonce") + " ").encode()

    def emit(rec):
        write(1, b"\n" + marker + dumps(rec).encode() + b"\n")

    # The names the solution defines, read from its text without running it.
    try:
        with open("solution.py", encoding="utf-8") as f:
            tree = ast.parse(f.read(), "solution.py")
    except BaseException as e:
        emit({"t": -1, "error": ("the program failed before the tests: %s: %s" % (type_(e).__name__, e))[:500]})
        os._exit(1)
    names, classes = set(), set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            if isinstance(node, ast.ClassDef):
                classes.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    entry = data.get("entry_point")
    if entry and entry.isidentifier():
        names.add(entry)
    del tree

    # The candidate (forked above, holding no test) loads solution.py now and answers calls
    # over its two pipes.
    os.write(to_child_w, b"g")
    rpc_out = os.fdopen(to_child_w, "w", encoding="utf-8")
    rpc_in = os.fdopen(from_child_r, "r", encoding="utf-8")
    MAX_REPLY = 1 << 22

    class Ended(Exception):
        """The program's process ended (or broke the channel): no test after this can pass."""

        def __init__(self, why, status=None):
            super().__init__(why)
            self.status = status

    def reply():
        line = rpc_in.readline(MAX_REPLY)
        if line.endswith("\n"):
            return json.loads(line)
        code = _exit_code(child_pid, 1)
        if code is None:
            os.kill(child_pid, 9)
            raise Ended("the program sent a reply over %d bytes" % MAX_REPLY)
        if code == -24:  # SIGXCPU: its CPU-time limit
            raise Ended("the program's process hit its CPU time limit", "time_limit")
        if code == -9:  # SIGKILL: the memory limit (the OOM killer) or the hard CPU limit
            raise Ended("the program's process was killed (memory or CPU limit)", "memory_limit")
        raise Ended("the program's process ended (exit code %s) instead of answering" % code)

    hello = reply()
    if "failed" in hello:
        emit({"t": -1, "error": ("the program failed before the tests: %s" % hello["failed"])[:500]})
        os._exit(1)

    codec = {}
    exec(CODEC, codec)
    enc, dec = codec["enc"], codec["dec"]

    import builtins
    exceptions = {k: v for k, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, Exception)}

    def call(req):
        rpc_out.write(dumps(req) + "\n")
        rpc_out.flush()
        r = reply()
        if "ok" in r:
            return dec(r["ok"])
        if r.get("exc") == "MemoryError":
            raise Ended("MemoryError in the program", "memory_limit")
        raise exceptions.get(r.get("exc"), Exception)(str(r.get("msg", ""))[:300])

    class Proxy:
        """A name of the solution: calling it calls the program in its own process."""

        def __init__(self, name, path=(), init=None):
            self._name, self._path, self._init = name, path, init

        def __getattr__(self, attr):
            if attr.startswith("__"):
                raise AttributeError(attr)
            return Proxy(self._name, self._path + (attr,), self._init)

        def __call__(self, *args, **kwargs):
            req = {"name": self._name, "path": list(self._path), "args": enc(list(args)), "kwargs": enc(kwargs)}
            if self._init is not None:
                req["init"] = self._init
            return call(req)

    class ClassProxy(Proxy):
        """A class of the solution: an instance's methods each run on a fresh instance made with
        the same constructor arguments (enough for Solution-style classes; state does not carry)."""

        def __call__(self, *args, **kwargs):
            if kwargs:
                raise TypeError("keyword arguments to a class of the program are not supported")
            return Proxy(self._name, (), enc(list(args)))

    ns = {"__name__": "__assay_tests__"}
    for n in names:
        ns[n] = ClassProxy(n) if n in classes else Proxy(n)

    try:
        exec(compile(data.get("setup") or "", "<setup>", "exec"), ns)
    except BaseException as e:
        emit({"t": -1, "error": ("the test setup failed: %s: %s" % (type_(e).__name__, e))[:500]})
        os._exit(1)
    call_check = compile("check(%s)" % entry, "<check>", "exec") if entry and entry.isidentifier() else None
    for i, src in enumerate(data["tests"]):
        emit({"t": i, "start": True})
        try:
            tree = ast.parse(src, "<test %d>" % i)
            defines_check = any(isinstance(n, ast.FunctionDef) and n.name == "check" for n in tree.body)
            exec(compile(tree, "<test %d>" % i, "exec"), ns)
            if call_check is not None and defines_check:
                exec(call_check, ns)
            emit({"t": i, "end": True})
        except Ended as e:
            emit({"t": i, "error": str(e), **({"status": e.status} if e.status else {})})
        except AssertionError as e:
            tb = e.__traceback__
            while tb is not None and tb.tb_next is not None:
                tb = tb.tb_next
            line = tb.tb_lineno if tb is not None else "?"
            emit({"t": i, "error": ("AssertionError: assert at line %s is false%s" % (line, (": %s" % e) if str(e) else ""))[:500]})
        except BaseException as e:
            emit({"t": i, "error": ("%s: %s" % (type_(e).__name__, e))[:500]})
    emit({"done": True})
    try:
        os.kill(child_pid, 9)
    except Exception:
        pass
    os._exit(0)


_harness()
