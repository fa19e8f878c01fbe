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
import sys
# Nothing is imported from the scratch directory (this script's): the program may write files
# there (a json.py, a re.py) for a later import of this process to run.
_SCRATCH_PATH = None
if sys.path and sys.path[0] in ("", __import__("os").path.dirname(__import__("os").path.abspath(__file__))):
    _SCRATCH_PATH = sys.path.pop(0)
import ast, json, os


# Plain data across the pipe, both ways: exact builtin types as tagged JSON (never pickle, which
# would let one side run code in the other). Shared by the two processes: the candidate's source
# below starts with it, and this process execs it too.
CODEC = r'''
from collections import deque as _deque
_KEYS, _VALUES, _ITEMS = type({}.keys()), type({}.values()), type({}.items())
EXT = None  # the tests' side: objects of the program's classes made by a test (see Instance)
DECOBJ = None  # the program's side: builds such an object from its replayed construction

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
    # What Python's == compares by builtin value: subclasses of the builtins (Counter,
    # defaultdict, OrderedDict, a namedtuple, an IntEnum) cross as that value, read through the
    # builtin's own methods (an override of __iter__ or __int__ is not asked).
    if isinstance(x, bool):
        return bool(int.__int__(x))
    if isinstance(x, int):
        return int.__int__(x)
    if isinstance(x, str):
        return str.__str__(x)
    if isinstance(x, float):
        return enc(float.__float__(x), depth)
    if isinstance(x, dict):
        return {"dict": [[enc(k, depth + 1), enc(dict.__getitem__(x, k), depth + 1)] for k in dict.__iter__(x)]}
    if isinstance(x, list):
        return [enc(v, depth + 1) for v in list.__iter__(x)]
    if isinstance(x, tuple):
        return {"tuple": [enc(v, depth + 1) for v in tuple.__iter__(x)]}
    if isinstance(x, set):
        return {"set": [enc(v, depth + 1) for v in set.__iter__(x)]}
    if isinstance(x, frozenset):
        return {"frozenset": [enc(v, depth + 1) for v in frozenset.__iter__(x)]}
    if isinstance(x, bytes):
        return {"bytes": bytes.hex(x)}
    # A type crosses as its name (int, str, a class): types compare by name.
    if isinstance(x, type):
        return {"type": "%s.%s" % (type.__getattribute__(x, "__module__"), type.__getattribute__(x, "__qualname__"))}
    if EXT is not None:
        r = EXT(x, depth)
        if r is not None:
            return r
    # Ranges, dict views, deques and iterators (a generator, filter, map, zip, an itertools
    # object) cross as what they are, so that set(f(x)), list(f(x)) and sorted(f(x)) see the
    # values they would, and f(x) == [...] is as false as it would be. An iterator is consumed.
    if t is range:
        return {"range": [enc(x.start), enc(x.stop), enc(x.step)]}
    if t is _KEYS:
        return {"keys": [enc(v, depth + 1) for v in x]}
    if t is _VALUES:
        return {"values": [enc(v, depth + 1) for v in x]}
    if t is _ITEMS:
        return {"items": [[enc(k, depth + 1), enc(v, depth + 1)] for k, v in x]}
    if t is _deque:
        return {"deque": [enc(v, depth + 1) for v in _deque.__iter__(x)]}
    if hasattr(t, "__next__"):
        return {"iter": [enc(v, depth + 1) for v in x]}
    raise TypeError("a %s is not plain data (only builtin values cross between the tests and the program)" % t.__name__)

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
        if k == "range": return range(*[dec(i, depth + 1) for i in v])
        if k == "keys": return dict.fromkeys(dec(i, depth + 1) for i in v).keys()
        if k == "values": return dict(enumerate(dec(i, depth + 1) for i in v)).values()
        if k == "items": return dict((dec(a, depth + 1), dec(b, depth + 1)) for a, b in v).items()
        if k == "deque": return _deque(dec(i, depth + 1) for i in v)
        if k == "iter": return iter([dec(i, depth + 1) for i in v])
        if k == "complex": return complex(float(v[0]), float(v[1]))
        if k == "float": return float(v)
        if k == "type": return type_named(v)
        if k == "obj" and DECOBJ is not None: return DECOBJ(v)
        raise ValueError("malformed value")
    if x is None or type(x) in (bool, int, float, str):
        return x
    raise ValueError("malformed value")

class TypeName:
    """A type of neither builtins nor this side, known by its name: equal to a type of that name."""
    def __init__(self, name): self.name = name
    def __eq__(self, other):
        if isinstance(other, TypeName): return self.name == other.name
        return isinstance(other, type) and "%s.%s" % (other.__module__, other.__qualname__) == self.name
    def __ne__(self, other): return not self == other
    def __hash__(self): return hash(self.name)
    def __repr__(self): return "<class '%s'>" % self.name

def type_named(name):
    import builtins
    if not isinstance(name, str):
        raise ValueError("malformed value")
    mod, _, qual = name.partition(".")
    got = getattr(builtins, qual, None) if mod == "builtins" else None
    return got if isinstance(got, type) else TypeName(name)
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

def built(objs):
    """Objects of the program's classes that a test made, made again here: each its class called
    with the test's arguments, then the attributes the test set on it (objects may refer to each other)."""
    done = {}
    def make(i):
        if i in done:
            return done[i]
        cls, args, kwargs, attrs = objs[i]
        obj = ns[cls](*dec(args), **dec(kwargs))
        done[i] = obj
        for k, v in attrs:
            setattr(obj, k, dec(v))
        return obj
    return make

for line in rpc_in:
    req = json.loads(line)
    try:
        DECOBJ = built(req.get("objs") or [])
        target = ns[req["name"]] if "self" not in req else dec(req["self"])
        for attr in req["path"]:
            target = getattr(target, attr)
        result = target if req.get("get") else target(*dec(req["args"]), **dec(req["kwargs"]))
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
            if _SCRATCH_PATH is not None:
                sys.path.insert(0, "")  # as `python -c` has it: the solution may import its own files
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
    names, classes, imports = set(), set(), []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            if isinstance(node, ast.ClassDef):
                classes.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and not getattr(node, "level", 0):
            imports.append(node)
    entry = data.get("entry_point")
    if entry and entry.isidentifier():
        names.add(entry)
    del tree

    # The tests' own names: a builtin (`set`, `sorted`, `abs`, `int`) or a standard-library
    # module (`math`, `re`) in a test means that builtin or module, never something of the
    # program's. Else `def abs(x): return 0` (or `from builtins import eval as int`, run here)
    # would compute both sides of `assert abs(candidate(x) - y) < 1e-6`. The one exception is
    # the function under test itself when it has such a name (MBPP/126's `sum`): the entry
    # point, or, where none is given, a reserved name the tests call while they call no other
    # name of the program's.
    import builtins
    stdlib = frozenset(getattr(sys, "stdlib_module_names", ()))
    reserved = frozenset(vars(builtins)) | stdlib
    mentioned = set()
    for src in [data.get("setup") or ""] + [t for t in data.get("tests", []) if isinstance(t, str)]:
        try:
            mentioned.update(n.id for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Name))
        except BaseException:
            pass  # reported when the test runs
    if entry and entry.isidentifier():
        under_test = {entry}
    else:
        under_test = set() if any(n in mentioned and n not in reserved for n in names) else {n for n in names if n in mentioned}
    names = {n for n in names if not n.startswith("__") and (n not in reserved or n in under_test)}

    def may_bind(name, obj):
        # a reserved name only as the module it names (`import math`, `import os.path` as os)
        return not name.startswith("__") and (name not in reserved or (type(obj) is type(sys) and getattr(obj, "__name__", None) == name))

    # What the solution imports from the standard library, the tests see too (MBPP's tests use
    # `sys` where the solution imported it): imported here, before the program starts, from the
    # standard library only, never from `builtins`, and under a reserved name only as that
    # module. The program's own names come after and win.
    imported = {}
    for node in imports:
        for alias in node.names:
            mod = node.module if isinstance(node, ast.ImportFrom) else alias.name
            if not mod or mod.split(".")[0] not in stdlib or mod.split(".")[0] in ("builtins", "antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo"):
                continue
            try:
                m = __import__(mod)
                if isinstance(node, ast.ImportFrom):
                    m = sys.modules[mod]
                    if alias.name == "*":
                        imported.update({k: v for k, v in vars(m).items() if not k.startswith("_") and k in getattr(m, "__all__", [k]) and may_bind(k, v)})
                    elif hasattr(m, alias.name):
                        got = getattr(m, alias.name)
                        if may_bind(alias.asname or alias.name, got):
                            imported[alias.asname or alias.name] = got
                elif alias.asname:
                    if may_bind(alias.asname, sys.modules[mod]):
                        imported[alias.asname] = sys.modules[mod]
                else:
                    imported[mod.split(".")[0]] = m
            except BaseException:
                pass

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

    class Instance:
        """An object of the program's class, made by a test (`Pair(5, 24)`, MBPP's `root = Node(1);
        root.left = Node(2)`): what the test did to it (the class's name, the constructor's
        arguments, the attributes it set) is kept here as data, and made again in the program's
        process each time the object is passed to it or a method of it is called. The program
        never sees more of the tests than those arguments. State the program changes does not
        come back."""

        def __init__(self, cls, args, kwargs):
            object.__setattr__(self, "_assay", (cls, args, kwargs, {}))

        def __setattr__(self, attr, value):
            object.__getattribute__(self, "_assay")[3][attr] = value

        def __getattr__(self, attr):
            state = object.__getattribute__(self, "_assay")
            if attr in state[3]:
                return state[3][attr]
            if attr.startswith("__"):
                raise AttributeError(attr)
            return Proxy(state[0], (attr,), on=self)

    table = []  # the objects of one request, in the order they are first passed

    def ext(x, depth):
        if type(x) is not Instance:
            return None
        for i, (o, _) in enumerate(table):
            if o is x:
                return {"obj": i}
        i = len(table)
        entry = [object.__getattribute__(x, "_assay")[0], None, None, []]
        table.append((x, entry))
        cls, args, kwargs, attrs = object.__getattribute__(x, "_assay")
        entry[1], entry[2] = enc(list(args), depth + 1), enc(dict(kwargs), depth + 1)
        entry[3] = [[k, enc(v, depth + 1)] for k, v in attrs.items()]
        return {"obj": i}

    codec["EXT"] = ext

    exceptions = {k: v for k, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, Exception)}

    def call(req):
        if table:
            req["objs"] = [e for _, e in table]
        del table[:]
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

        def __init__(self, name, path=(), on=None):
            self._name, self._path, self._on = name, path, on

        def __getattr__(self, attr):
            if attr.startswith("__"):
                raise AttributeError(attr)
            return Proxy(self._name, self._path + (attr,), self._on)

        def __call__(self, *args, **kwargs):
            del table[:]
            req = {"name": self._name, "path": list(self._path), "args": enc(list(args)), "kwargs": enc(kwargs)}
            if self._on is not None:
                req["self"] = enc(self._on)
            return call(req)

        # An attribute's value (`Pair(5, 24).a == 5`): read in the program's process, compared here.
        def __eq__(self, other):
            del table[:]
            req = {"name": self._name, "path": list(self._path), "get": True}
            if self._on is not None:
                req["self"] = enc(self._on)
            return call(req) == other

        def __ne__(self, other):
            return not self == other

        __hash__ = object.__hash__

    class ClassProxy(Proxy):
        """A class of the solution: calling it makes an Instance (made again on the program's side)."""

        def __call__(self, *args, **kwargs):
            return Instance(self._name, args, kwargs)

    ns = {"__name__": "__assay_tests__"}
    ns.update(imported)
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
