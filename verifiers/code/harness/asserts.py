# Assay assert-script harness (HumanEval / MBPP style). Runs inside the sandbox.
# stdin: {"tests": [script, ...], "setup": str, "entry_point": str|null, "nonce": str}.
# The program is solution.py. Each assert in the tests is rewritten before the program runs:
#   assert A == B   ->  both sides must be plain data (exact builtin types, checked recursively),
#                       then compared with the builtin ==, which no program can patch;
#   assert X        ->  every call inside X must return plain data, and X itself too.
# So sys.exit()/os._exit() before the asserts, objects whose __eq__ always says True, patched
# builtins or math functions, and exception-swallowing wrappers earn nothing: a test passes only
# when the harness itself reports that it ran to its end with every assert true.
import ast, json, os, sys, types, math, copy


def _harness():
    write, dumps, type_, repr_, len_ = os.write, json.dumps, type, repr, len
    exit_ = os._exit
    data = json.loads(sys.stdin.read())
    marker = ("\x1eASSAY:" + data.pop("nonce") + " ").encode()
    plain_scalars = (type(None), bool, int, float, complex, str, bytes)
    containers = (list, tuple, set, frozenset)

    def emit(rec):
        write(1, b"\n" + marker + dumps(rec).encode() + b"\n")

    class NotPlain(Exception):
        pass

    def check_plain(x, depth=0):
        t = type_(x)
        if t in plain_scalars:
            return
        if depth > 100:
            raise NotPlain("a value nests too deeply")
        if t in containers:
            for v in x:
                check_plain(v, depth + 1)
            return
        if t is dict:
            for k, v in x.items():
                check_plain(k, depth + 1)
                check_plain(v, depth + 1)
            return
        raise NotPlain("got a %s where plain data was expected" % t.__name__)

    state = {"t": -1}

    def a_eq(k, lf, rf):
        a = lf()
        b = rf()
        try:
            check_plain(a)
            check_plain(b)
        except NotPlain as e:
            emit({"t": state["t"], "k": k, "ok": False, "why": str(e)})
            return
        ok = a == b
        rec = {"t": state["t"], "k": k, "ok": ok is True}
        if ok is not True:
            rec["why"] = ("got %s, expected %s" % (repr_(a)[:200], repr_(b)[:200]))
        emit(rec)

    def a_truth(k, f):
        v = f()
        try:
            check_plain(v)
        except NotPlain as e:
            emit({"t": state["t"], "k": k, "ok": False, "why": str(e)})
            return
        emit({"t": state["t"], "k": k, "ok": bool(v)})

    def a_plain(v):
        check_plain(v)
        return v

    class Rewrite(ast.NodeTransformer):
        def __init__(self):
            self.k = 0

        def visit_Assert(self, node):
            self.k += 1
            k = ast.Constant(self.k)
            test = node.test
            lam = lambda body: ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]), body=body)
            if isinstance(test, ast.Compare) and len_(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
                call = ast.Call(ast.Name("__assay_eq__", ast.Load()), [k, lam(test.left), lam(test.comparators[0])], [])
            else:
                test = WrapCalls().visit(test)
                call = ast.Call(ast.Name("__assay_truth__", ast.Load()), [k, lam(test)], [])
            return ast.copy_location(ast.Expr(call), node)

    class WrapCalls(ast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            return ast.Call(ast.Name("__assay_plain__", ast.Load()), [node], [])

    compiled = []
    for i, src in enumerate(data["tests"]):
        tree = ast.parse(src, "<test %d>" % i)
        defines_check = any(isinstance(n, ast.FunctionDef) and n.name == "check" for n in tree.body)
        tree = ast.fix_missing_locations(Rewrite().visit(tree))
        compiled.append((compile(tree, "<test %d>" % i, "exec"), defines_check))
    setup = compile(data.get("setup") or "", "<setup>", "exec")
    entry = data.get("entry_point")
    call_check = compile("check(%s)" % entry, "<check>", "exec") if entry and entry.isidentifier() else None
    del data

    # Snapshot modules a program might patch; restored before the tests run.
    import builtins, operator, re, collections, itertools, functools, string, heapq, bisect, random
    saved = {}
    for m in (builtins, math, operator, re, collections, itertools, functools, string, heapq, bisect, random, json, copy, ast, os, sys):
        saved[m] = dict(m.__dict__)
    saved_modules = dict(sys.modules)

    ns = {"__name__": "solution", "__builtins__": builtins}
    with open("solution.py", encoding="utf-8") as f:
        src = f.read()
    try:
        exec(compile(src, "solution.py", "exec"), ns)
    except BaseException as e:
        emit({"t": -1, "error": ("the program failed before the tests: %s: %s" % (type_(e).__name__, e))[:500]})
        exit_(1)

    for m, d in saved.items():
        cur = m.__dict__
        for key in [key for key in cur if key not in d]:
            del cur[key]
        cur.update(d)
    sys.modules.update(saved_modules)
    ns["__builtins__"] = builtins
    ns["__assay_eq__"], ns["__assay_truth__"], ns["__assay_plain__"] = a_eq, a_truth, a_plain
    try:
        exec(setup, ns)
    except BaseException as e:
        emit({"t": -1, "error": ("the test setup failed: %s: %s" % (type_(e).__name__, e))[:500]})
        exit_(1)
    for i, (code, defines_check) in enumerate(compiled):
        state["t"] = i
        emit({"t": i, "start": True})
        try:
            exec(code, ns)
            if call_check is not None and defines_check:
                exec(call_check, ns)
            emit({"t": i, "end": True})
        except BaseException as e:
            emit({"t": i, "error": ("%s: %s" % (type_(e).__name__, e))[:500]})
    emit({"done": True})
    exit_(0)


_harness()
