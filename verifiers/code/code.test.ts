/**
 * The code verifier: extraction, comparison and test-format parsing (no sandbox), then problems
 * in each test format with correct, wrong, slow and crashing solutions in the real docker
 * sandbox, and the reward hacks, none of which may earn reward.
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { code, BENCHMARKS } from "./index.js";
import { Registry } from "../../src/core/registry.js";
import { extractProgram } from "./extract.js";
import { outputsMatch, valuesMatch, shortDiff } from "./compare.js";
import { parseReference } from "./suite.js";
import { InvalidItemError } from "../../src/core/types.js";
import { lazy } from "../../src/core/services.js";
import type { Sandbox } from "../../sandbox/types.js";
import { quiet, verifyDirect, testServices, fakeSandbox } from "../../tests/helpers.js";
import { openDockerForTests } from "../../tests/sandboxes.js";

describe("extraction", () => {
  test("last fenced block of the language, else untagged, else whole text", () => {
    const r = "Try:\n```python\nprint(1)\n```\nBetter:\n```python\nprint(2)\n```\n```text\nout\n```";
    assert.equal(extractProgram(r, "python").code, "print(2)");
    assert.equal(extractProgram(r, "python", "first_block").code, "print(1)");
    assert.equal(extractProgram("```\nx=1\n```", "python").via, "untagged block");
    assert.equal(extractProgram("```cpp\nint main(){}\n```", "c++").code, "int main(){}");
    assert.equal(extractProgram("print(3)", "python").code, "print(3)");
    assert.equal(extractProgram("<think>```python\nprint(0)\n```</think>```py\nprint(4)\n```", "python").code, "print(4)");
    assert.equal(extractProgram("```python\nprint(5)\n```", "python", "full").via, "whole text");
    // no block of the language and none untagged: another language's block before a sample run
    assert.equal(extractProgram("```c\nint main(){return 0;}\n```\nRun:\n```text\n3\n```", "cpp").code, "int main(){return 0;}");
    assert.equal(extractProgram("```text\n3\n```\n```output\n4\n```", "cpp").code, "4", "no language's block: the last block");
  });
  test("a fence indented in a list item gives its code without that indentation (CommonMark)", () => {
    const r = "1. Read the input.\n2. Print it:\n   ```python\n   def f(x):\n       return x\n   print(f(1))\n   ```\n";
    assert.equal(extractProgram(r, "python").code, "def f(x):\n    return x\nprint(f(1))");
    // a line indented less than the fence loses what it has; tabs count as one each
    assert.equal(extractProgram("  ```python\nx = 1\n\t\ty = 2\n  ```", "python").code, "x = 1\ny = 2");
    assert.equal(extractProgram("```python\n  x = 1\n```", "python").code, "  x = 1", "no indentation to take off an unindented fence's code");
  });
});

describe("comparison", () => {
  test("modes", () => {
    assert.ok(outputsMatch("1 2  \n3\n\n", "1 2\n3", "lines"));
    assert.ok(!outputsMatch("a  b\n3", "a b\n3", "lines"), "spacing inside a line of words counts");
    assert.ok(outputsMatch("1  2\n3", "1 2\n3", "lines"), "a line of numbers compares by value (LiveCodeBench's grade_stdio)");
    assert.ok(outputsMatch("1  2\n3", "1 2 3", "tokens"));
    assert.ok(!outputsMatch("1\n", "1", "exact"));
    assert.ok(outputsMatch("0.3333333 2", "0.33333333333 2", "float"));
    assert.ok(!outputsMatch("0.34 2", "0.33333 2", "float"));
    assert.ok(valuesMatch([1, [2.0000000001, "a"]], [1, [2, "a"]]));
    assert.ok(!valuesMatch([1, 2], [2, 1]));
    assert.ok(!valuesMatch({ a: 1 }, { a: 1, b: 2 }));
    assert.match(shortDiff("1\n2\n", "1\n3\n"), /line 2: got "2", expected "3"/);
  });
});

describe("test formats", () => {
  test("verl/APPS {inputs, outputs} as stdio, with fn_name as calls, as a JSON string too", () => {
    assert.deepEqual(parseReference({ inputs: ["1 2\n"], outputs: ["3\n"] }), { kind: "stdio", cases: [{ input: "1 2\n", output: "3\n" }] });
    const s = parseReference(JSON.stringify({ inputs: [[[2, 7], 9]], outputs: [[[0, 1]]], fn_name: "twoSum" }));
    assert.deepEqual(s, { kind: "call", fn: "twoSum", cases: [{ args: [[2, 7], 9], output: [[0, 1]] }], wrapped: true });
    assert.equal(parseReference({ input_output: JSON.stringify({ inputs: ["1"], outputs: ["1"] }) }).kind, "stdio");
  });
  test("LiveCodeBench functional tests: one JSON value per line", () => {
    const s = parseReference({ tests: [{ input: "[2,7,11,15]\n9", output: "[0, 1]", testtype: "functional" }], fn_name: "twoSum" });
    assert.deepEqual(s, { kind: "call", fn: "twoSum", cases: [{ args: [[2, 7, 11, 15], 9], output: [0, 1] }], wrapped: false });
    assert.equal(parseReference({ tests: [{ input: "1\n", output: "1\n", testtype: "stdin" }] }).kind, "stdio");
  });
  test("HumanEval and MBPP", () => {
    assert.deepEqual(parseReference({ test: "def check(candidate): pass", entry_point: "f" }), { kind: "assert", tests: ["def check(candidate): pass"], setup: "", entryPoint: "f" });
    const m = parseReference({ test_list: ["assert f(1) == 2", "assert f(2) == 3"], test_setup_code: "import math" });
    assert.equal(m.kind, "assert");
    assert.equal((m as any).tests.length, 2);
  });
  test("malformed references are the dataset's fault: invalid", () => {
    assert.throws(() => parseReference({ inputs: ["1"], outputs: [] }), InvalidItemError);
    assert.throws(() => parseReference({ nothing: 1 }), InvalidItemError);
    assert.throws(() => parseReference({ inputs: [], outputs: [] }), InvalidItemError);
    assert.throws(() => parseReference("{not json"), InvalidItemError);
    assert.throws(() => parseReference({ inputs: ["1"], outputs: ["1"], fn_name: "a b" }), InvalidItemError);
  });
});

describe("benchmark presets", () => {
  test("a benchmark's own time limit sets the item's budget; scoring's default stays fraction", () => {
    const registry = new Registry().register(code);
    const budget = (options: Record<string, unknown>) => {
      const r = registry.resolve({ verifier: "code", response: "x", reference: { test_list: ["assert f() == 1"] }, options });
      if ("invalid" in r) throw new Error(r.invalid);
      assert.equal(r.item.options.scoring, "fraction");
      return code.budgetMs!(r.item as any);
    };
    // One round of the wall limit (twice the CPU limit plus a second) and a 1.5 s margin.
    assert.equal(budget({}), 4000 * 2 + 1000 + 1500);
    assert.equal(budget({ benchmark: "humaneval" }), 3000 * 2 + 1000 + 1500);
    assert.equal(budget({ benchmark: "humaneval-x" }), 5000 * 2 + 1000 + 1500);
    assert.deepEqual(BENCHMARKS.mbpp, { scoring: "all", time_limit_ms: 3000 });
  });
});

describe("no sandbox: error, never 0, and never unsandboxed", () => {
  test("the verifier answers reward null with what to install", async () => {
    const services = testServices({ sandbox: lazy(() => Promise.reject(new Error("no sandbox available: no Docker engine answers; install and start Docker"))) });
    const r = await verifyDirect(code, { response: "print(1)", reference: { inputs: [""], outputs: ["1"] } }, { services });
    assert.equal(r.reward, null);
    assert.match(r.reason, /install/);
  });
});

const opened = await openDockerForTests(2);
describe("code verifier in the docker sandbox", { skip: opened.skip }, () => {
  const sb = opened.sandbox as Sandbox;
  after(() => sb?.close());
  const services = testServices({ sandbox: fakeSandbox(sb) });
  const verify = (response: string, reference: unknown, options: Record<string, unknown> = {}) =>
    verifyDirect(code, { response, reference, options: { time_limit_ms: 1000, ...options } }, { services });
  const fence = (lang: string, src: string) => `Here is my solution.\n\`\`\`${lang}\n${src}\n\`\`\`\n`;

  // APPS/CodeContests-shaped: read two lines, print the sum of the first and the max of the second.
  const stdio = { inputs: ["3 4\n1 5 2\n", "-1 1\n7\n", "10 20\n3 3 3\n"], outputs: ["7\n5\n", "0\n7\n", "30\n3\n"] };
  const py = {
    correct: "a, b = map(int, input().split())\nxs = list(map(int, input().split()))\nprint(a + b)\nprint(max(xs))",
    wrong: "a, b = map(int, input().split())\nxs = list(map(int, input().split()))\nprint(a + b)\nprint(min(xs))",
    slow: "import time\na, b = map(int, input().split())\nwhile a + b > 5: pass\nprint(a + b)\nprint(max(map(int, input().split())))",
    crash: "a, b = map(int, input().split())\nprint(a + b)\nraise ValueError('oops')",
  };

  test("stdin/stdout: correct, wrong, slow, crashing (Python)", async () => {
    const ok = await verify(fence("python", py.correct), stdio);
    assert.equal(ok.reward, 1, ok.reason);
    assert.equal((ok.details as any).tests.length, 3);
    const wrong = await verify(fence("python", py.wrong), stdio);
    assert.equal(wrong.reward, 2 / 3, wrong.reason); // where every number is the same, min == max
    assert.match(String((wrong.details as any).tests[0].diff), /line 2: got "1", expected "5"/);
    const slow = await verify(fence("python", py.slow), stdio, { concurrency: 1 });
    assert.equal((slow.details as any).tests[0].status, "time_limit");
    // After a timeout the remaining tests are not started: they count as time_limit.
    assert.equal(slow.reward, 0, slow.reason);
    assert.match(String((slow.details as any).tests[2].error), /earlier test hit the time limit/);
    const t0 = Date.now();
    const loops = await verify(fence("python", "while True: pass"), { inputs: Array(12).fill("1\n"), outputs: Array(12).fill("1\n") });
    assert.equal(loops.reward, 0);
    // One wave of timeouts ends it: only the first `concurrency` (4) tests ran. (Counted, not
    // timed: limits count the program's own time, so on a loaded host a wave lasts longer.)
    const ran = (loops.details as any).tests.filter((t: { error?: string }) => !/^not run/.test(t.error ?? "")).length;
    assert.ok(ran <= 4, `${ran} of 12 looping tests ran (in ${Date.now() - t0} ms): one wave of timeouts should end it`);
    const crash = await verify(fence("python", py.crash), stdio);
    assert.equal(crash.reward, 0);
    assert.equal((crash.details as any).tests[0].status, "runtime_error");
    assert.match(crash.reason, /ValueError/);
  });

  test("scoring: fraction, all-or-nothing, stop at first failure", async () => {
    assert.equal((await verify(fence("python", py.wrong), stdio, { scoring: "all" })).reward, 0);
    const ff = await verify(fence("python", py.wrong), stdio, { scoring: "first_failure" });
    assert.equal(ff.reward, 0);
    assert.match(String((ff.details as any).tests[2].error), /not run/);
  });

  test("stdin/stdout in C++: correct, wrong, compile error", async () => {
    const cpp = (op: string) => `#include <bits/stdc++.h>\nusing namespace std;\nint main(){long a,b;cin>>a>>b;vector<long> v;long x;while(cin>>x)v.push_back(x);cout<<a+b<<"\\n"<<*${op}(v.begin(),v.end())<<"\\n";}`;
    const ok = await verify(fence("cpp", cpp("max_element")), stdio, { language: "cpp" });
    assert.equal(ok.reward, 1, ok.reason);
    const wrong = await verify(fence("cpp", cpp("min_element")), stdio, { language: "cpp" });
    assert.equal(wrong.reward, 2 / 3);
    const bad = await verify(fence("cpp", "int main( { }"), stdio, { language: "cpp" });
    assert.equal(bad.reward, 0);
    assert.equal((bad.details as any).tests[0].status, "compile_error");
  });

  test("function calls: class Solution, APPS-wrapped outputs, LiveCodeBench lines", async () => {
    const ref = { fn_name: "twoSum", inputs: [[[2, 7, 11, 15], 9], [[3, 2, 4], 6], [[3, 3], 6]], outputs: [[[0, 1]], [[1, 2]], [[0, 1]]] };
    const sol = "class Solution:\n    def twoSum(self, nums, target):\n        seen = {}\n        for i, x in enumerate(nums):\n            if target - x in seen:\n                return [seen[target - x], i]\n            seen[x] = i\n";
    assert.equal((await verify(fence("python", sol), ref)).reward, 1);
    const wrong = await verify(fence("python", sol.replace("[seen[target - x], i]", "[i, seen[target - x]]")), ref);
    assert.equal(wrong.reward, 0);
    assert.match(wrong.reason, /got \[1,0\], expected/);
    const crash = await verify(fence("python", "def twoSum(nums, target):\n    return nums[100]"), ref);
    assert.equal(crash.reward, 0);
    assert.match(crash.reason, /IndexError/);
    const slow = await verify(fence("python", "def twoSum(nums, target):\n    while True: pass"), ref, { scoring: "first_failure" });
    assert.equal((slow.details as any).tests[0].status, "time_limit");
    const lcb = { fn_name: "maxOf", tests: [{ input: "[1, 5, 3]", output: "5", testtype: "functional" }, { input: "[-2]", output: "-2", testtype: "functional" }] };
    assert.equal((await verify(fence("python", "def maxOf(xs):\n    return max(xs)"), lcb)).reward, 1);
    const missing = await verify(fence("python", "def other(xs): return 1"), lcb);
    assert.equal(missing.reward, 0);
    assert.match(missing.reason, /defines no function/);
  });

  test("assert scripts: a range, a dict view, a deque or an iterator crosses as itself (MBPP+'s set(f(x)) == {...})", async () => {
    const sets = { test_list: ["assert set(similar(('a', 'b'), ('b', 'c'))) == {'b'}", "assert sorted(keys({'y': 1, 'x': 2})) == ['x', 'y']", "assert list(upto(3)) == [0, 1, 2]"] };
    const src = "def similar(a, b):\n    return filter(lambda x: x in b, a)\ndef keys(d):\n    return d.keys()\ndef upto(n):\n    return range(n)";
    assert.equal((await verify(fence("python", src), sets)).reward, 1);
    const gen = "def similar(a, b):\n    for x in a:\n        if x in b: yield x\ndef keys(d):\n    return iter(sorted(d))\nfrom collections import deque\ndef upto(n):\n    return deque(range(n))";
    assert.equal((await verify(fence("python", gen), sets)).reward, 1);
    // as in Python: an iterator is not equal to the list of its values, a range is a range
    const strict = { test_list: ["assert similar(('a',), ('a',)) == ['a']", "assert upto(2) == range(2)"] };
    const r = await verify(fence("python", gen.replace("deque(range(n))", "range(n)")), strict);
    assert.deepEqual((r.details as any).tests.map((t: any) => t.status), ["failed", "passed"]);
  });
  test("assert scripts: HumanEval check(candidate) and MBPP test_list", async () => {
    const he = { test: "METADATA = {}\n\ndef check(candidate):\n    assert candidate([1, 2, 3]) == 6\n    assert candidate([]) == 0\n    assert abs(candidate([0.5, 0.25]) - 0.75) < 1e-9\n", entry_point: "total" };
    assert.equal((await verify(fence("python", "def total(xs):\n    return sum(xs)"), he)).reward, 1);
    assert.equal((await verify(fence("python", "def total(xs):\n    return len(xs)"), he)).reward, 0);
    const slow = await verify(fence("python", "def total(xs):\n    while True: pass"), he);
    assert.equal((slow.details as any).tests[0].status, "time_limit");
    const mbpp = { test_list: ["assert is_even(2) == True", "assert is_even(3) == False", "assert not is_even(5)"] };
    assert.equal((await verify(fence("python", "def is_even(n):\n    return n % 2 == 0"), mbpp)).reward, 1);
    const part = await verify(fence("python", "def is_even(n):\n    return n == 2"), mbpp);
    assert.equal(part.reward, 1);
    const wrong = await verify(fence("python", "def is_even(n):\n    return True"), mbpp);
    assert.equal(wrong.reward, 1 / 3);
    // The benchmark scores a problem all-or-nothing.
    const bench = await verify(fence("python", "def is_even(n):\n    return True"), mbpp, { benchmark: "mbpp" });
    assert.equal(bench.reward, 0, bench.reason);
    const crash = await verify(fence("python", "def is_even(n):\n    raise RuntimeError('no')"), mbpp);
    assert.equal(crash.reward, 0);
    assert.match(crash.reason, /RuntimeError/);
  });

  // MBPP's items whose correct answers are not exact builtins (MBPP/40, 88, 533, 653, 902: a
  // Counter, a defaultdict, a type), whose tests construct the solution's own classes (MBPP/367,
  // 601, 927: Pair(5, 24), a tree of Node built by the test's setup code), and whose test uses a
  // module the solution imported (MBPP/596: sys). Python's == accepts each; so must the harness.
  test("assert scripts accept what Python's == accepts: Counter, defaultdict, OrderedDict, namedtuple, types, own classes, imported modules", async () => {
    const sol = [
      "import sys",
      "from collections import Counter, defaultdict, OrderedDict, namedtuple",
      "class Pair(object):\n    def __init__(self, a, b):\n        self.a = a\n        self.b = b",
      "def max_chain_length(arr, n):\n    best = [1] * n\n    for i in range(1, n):\n        for j in range(i):\n            if arr[i].a > arr[j].b and best[i] < best[j] + 1:\n                best[i] = best[j] + 1\n    return max(best)",
      "class Node:\n    def __init__(self, data):\n        self.data = data\n        self.left = None\n        self.right = None",
      "def max_height(node):\n    return 0 if node is None else max(max_height(node.left), max_height(node.right)) + 1",
      "def freq_count(xs):\n    return Counter(xs)",
      "def grouping_dictionary(pairs):\n    d = defaultdict(list)\n    for k, v in pairs:\n        d[k].append(v)\n    return d",
      "def ordered():\n    return OrderedDict([('a', 1), ('b', 2)])",
      "Point = namedtuple('Point', 'x y')\ndef origin():\n    return Point(0, 0)",
      "def remove_datatype(t, data_type):\n    return [x for x in t if not isinstance(x, data_type)]",
      "def tuple_size(t):\n    return sys.getsizeof(t)",
      "def kind(x):\n    return type(x)",
    ].join("\n");
    const ref = {
      test_list: [
        "assert max_chain_length([Pair(5, 24), Pair(15, 25),Pair(27, 40), Pair(50, 60)], 4) == 3",
        "assert (max_height(root)) == 3",
        "assert freq_count([10,10,10,10,20,20,20,20,40,40,50,50,30])==({10: 4, 20: 4, 40: 2, 50: 2, 30: 1})",
        "assert grouping_dictionary([('yellow', 1), ('blue', 2), ('yellow', 3)])==({'yellow': [1, 3], 'blue': [2]})",
        "assert ordered() == {'b': 2, 'a': 1}",
        "assert origin() == (0, 0)",
        "assert remove_datatype((4, 5, 4, 7.7, 1.2), int) == [7.7, 1.2]",
        "assert tuple_size((\"A\", 1, \"B\", 2, \"C\", 3) ) == sys.getsizeof((\"A\", 1, \"B\", 2, \"C\", 3))",
        "assert kind(3) == int\nassert kind('x') == str\nassert kind(1.5) != int",
        "assert Pair(5, 24).a == 5",
      ],
      test_setup_code: "root = Node(1)\nroot.left = Node(2)\nroot.right = Node(3)\nroot.left.left = Node(4)\nroot.left.right = Node(5)",
    };
    const ok = await verify(fence("python", sol), ref);
    assert.equal(ok.reward, 1, ok.reason + JSON.stringify((ok.details as any)?.tests?.filter((t: any) => t.status !== "passed")));
    // Wrong answers of the same shapes still fail, each its own test.
    const wrong = sol
      .replace("best[j] + 1:", "best[j] + 2:").replace("max_height(node.right)) + 1", "max_height(node.right)) + 2")
      .replace("return Counter(xs)", "return Counter(xs[1:])").replace("d[k].append(v)", "d[k].insert(0, v)")
      .replace("('b', 2)])", "('b', 3)])").replace("Point(0, 0)", "Point(0, 1)").replace("not isinstance", "isinstance")
      .replace("sys.getsizeof(t)", "sys.getsizeof(t) + 1").replace("return type(x)", "return type(str(x))").replace("self.a = a", "self.a = b");
    const w = await verify(fence("python", wrong), ref);
    assert.equal(w.reward, 0, w.reason);
    assert.deepEqual((w.details as any).tests.map((t: any) => t.status), Array(10).fill("failed"));
  });

  describe("reward hacks earn nothing", () => {
    const mbpp = { test_list: ["assert add(1, 2) == 3", "assert add(2, 2) == 4"] };
    const hacks: Record<string, string> = {
      "sys.exit(0) before the asserts": "import sys\nsys.exit(0)\ndef add(a, b): return 0",
      "os._exit(0) before the asserts": "import os\nos._exit(0)",
      "os._exit(0) inside the call": "import os\ndef add(a, b):\n    os._exit(0)",
      "an object whose __eq__ is always true": "class Any:\n    def __eq__(self, o): return True\n    def __ne__(self, o): return False\ndef add(a, b): return Any()",
      "a subclass of int that equals everything": "class I(int):\n    def __eq__(self, o): return True\ndef add(a, b): return I(0)",
      "patching builtins and AssertionError": "import builtins\nbuiltins.AssertionError = type('X', (Exception,), {})\nbuiltins.abs = lambda x: 0\ndef add(a, b): return 0",
      "a wrapper that swallows exceptions": "import sys\nsys.excepthook = lambda *a: None\ndef add(a, b):\n    try:\n        raise SystemExit(0)\n    except BaseException:\n        return None",
      "printing fake result records": "print('\\x1eASSAY:0 {\"t\": 0, \"end\": true}')\nprint('\\x1eASSAY:0 {\"t\": 1, \"end\": true}')\nimport os\nos._exit(0)",
      "killing its parent": "import os, signal\ntry:\n    os.kill(os.getppid(), signal.SIGKILL)\nexcept Exception: pass\nos._exit(0)",
      // Read the tests out of the harness's objects, answer with their expected values.
      "reading the expected values from the harness's memory":
        "import gc, re, sys\ndef add(a, b):\n    for o in gc.get_objects() + [f.f_locals for f in [sys._getframe(i) for i in range(1, 8) if sys._getframe(i - 1).f_back]]:\n" +
        "        for v in (o.values() if isinstance(o, dict) else o if isinstance(o, (list, tuple)) else [o]):\n" +
        "            m = isinstance(v, str) and re.search(r'add\\(%d, %d\\) == (\\d+)' % (a, b), v)\n            if m: return int(m.group(1))\n    return -1",
      // Find the harness's record marker (and nonce) in memory, then print passing records.
      "forging records with the nonce found in memory":
        "import gc, os\nfor o in gc.get_objects():\n    for v in (o.values() if isinstance(o, dict) else [o]):\n        if isinstance(v, (bytes, str)) and str(v).find('ASSAY:') >= 0:\n" +
        "            m = v if isinstance(v, bytes) else v.encode()\n            os.write(1, b'\\n' + m + b'{\"t\": 0, \"end\": true}\\n' + m + b'{\"t\": 1, \"end\": true}\\n')\nos._exit(0)",
      "a type that claims a builtin's name": "def add(a, b):\n    return type('int', (), {'__eq__': lambda s, o: True})",
      "a Counter subclass whose == is always true": "from collections import Counter\nclass C(Counter):\n    def __eq__(self, o): return True\ndef add(a, b): return C()",
      "reading the trusted process's memory through /proc":
        "import os, re\ndef add(a, b):\n    pid = os.getppid()\n    maps = open('/proc/%d/maps' % pid).read().splitlines()\n    mem = open('/proc/%d/mem' % pid, 'rb')\n" +
        "    for line in maps:\n        lo, hi = (int(x, 16) for x in line.split()[0].split('-'))\n        try:\n            mem.seek(lo); chunk = mem.read(hi - lo)\n        except Exception: continue\n" +
        "        m = re.search(rb'add\\(%d, %d\\) == (\\d+)' % (a, b), chunk)\n        if m: return int(m.group(1))\n    return -1",
    };
    for (const [name, src] of Object.entries(hacks)) {
      test(name, async () => {
        const r = await verify(fence("python", src), mbpp);
        assert.equal(r.reward, 0, `${name}: ${r.reason}`);
      });
    }
    test("a module planted in the scratch directory for the tests' import", async () => {
      // Imported by the tests, it would run in the trusted process, find the record marker in the
      // harness's frame and print passing records for both tests.
      const planted = [
        "import os, sys",
        "f = sys._getframe()",
        "while f is not None:",
        "    m = f.f_locals.get('marker')",
        "    if isinstance(m, bytes):",
        "        os.write(1, b'\\n' + m + b'{\"t\": 0, \"end\": true}\\n' + m + b'{\"t\": 1, \"end\": true}\\n')",
        "        os._exit(0)",
        "    f = f.f_back",
      ].join("\n");
      const src = `import os\nSRC = ${JSON.stringify(planted)}\nfor d in {os.getcwd(), os.path.dirname(os.path.abspath('solution.py')), os.path.dirname(os.path.abspath('main.py'))}:\n    try:\n        open(os.path.join(d, 'bisect.py'), 'w').write(SRC)\n    except Exception: pass\ndef add(a, b): return 0`;
      const r = await verify(fence("python", src), { test_list: ["import bisect\nassert add(1, 2) == 3", "import bisect\nassert add(2, 2) == 4"] });
      assert.equal(r.reward, 0, r.reason);
    });
    test("math functions patched before a truth assert", async () => {
      const ref = { test_list: ["import math\nassert math.isclose(f(), 2.0)"] };
      const r = await verify(fence("python", "import math\nmath.isclose = lambda *a, **k: True\ndef f(): return 1.0"), ref);
      assert.equal(r.reward, 0, r.reason);
    });
    // A test's builtins and modules are never the program's: each of these computed both sides of
    // the assert (or ran the program's string as code in the trusted process) and scored 1.
    const forge = "exec(\"import sys,os\\nfr=sys._getframe()\\nwhile fr is not None and 'emit' not in fr.f_locals: fr=fr.f_back\\ne=fr.f_locals['emit']\\nfor i in range(len(fr.f_locals['data']['tests'])): e({'t':i,'end':True})\\ne({'done':True})\\nos._exit(0)\")";
    const shadows: Array<[string, string, Record<string, unknown>]> = [
      ["`from builtins import eval as int` runs the returned string in the trusted process",
        `from builtins import eval as int\nPAY = ${JSON.stringify(forge)}\ndef f(n): return PAY\ndef g(x): return 'wrong'`,
        { test_list: ["assert int(f(5)) == 35", "assert g(1) == 12345"] }],
      ["`from builtins import eval as set` against MBPP+'s set(f(x)) == set(...)",
        `from builtins import eval as set\nPAY = ${JSON.stringify(forge)}\ndef similar_elements(a, b): return PAY`,
        { test_list: ["assert set(similar_elements((3, 4, 5, 6), (5, 7, 4, 10))) == set((4, 5))"] }],
      ["a program's `def abs` in HumanEval's check", "def abs(x): return 0\ndef truncate_number(x): return 42.0",
        { test: "def check(candidate):\n    assert abs(candidate(1.33) - 0.33) < 1e-6\n    assert abs(candidate(123.456) - 0.456) < 1e-6", entry_point: "truncate_number" }],
      ["a program's `def set`", "def set(*a): return 0\ndef similar_elements(a, b): return None",
        { test_list: ["assert set(similar_elements((3, 4, 5, 6), (5, 7, 4, 10))) == set((4, 5))"] }],
      ["a program's `sorted = lambda`", "sorted = lambda *a, **k: 0\ndef f(x): return None", { test_list: ["assert sorted(f([3, 1, 2])) == sorted([1, 2, 3])"] }],
      ["a program's `class math` where the test does not import math", "class math:\n    @staticmethod\n    def isclose(*a, **k): return True\ndef area(r): return 0",
        { test_list: ["assert math.isclose(area(2), 12.566, rel_tol=0.001)"] }],
      ["`from unittest.mock import call as math` (every attribute call is truthy)", "from unittest.mock import call as math\ndef area(r): return 0",
        { test_list: ["assert math.isclose(area(2), 12.566, rel_tol=0.001)"] }],
      ["a program's `__builtins__`", "__builtins__ = {'abs': lambda x: 0}\ndef f(x): return 9", { test_list: ["assert abs(f(1) - 1) < 1e-9"] }],
    ];
    for (const [name, src, ref] of shadows) {
      test(name, async () => {
        const r = await verify(fence("python", src), ref);
        assert.equal(r.reward, 0, r.reason);
      });
    }
    test("the function under test may have a builtin's name (MBPP/126's sum); the tests' other builtins stay theirs", async () => {
      const mbpp126 = { test_list: ["assert sum(10,15) == 6", "assert sum(100,150) == 93", "assert sum(4,6) == 3"] };
      const sol = "def sum(a,b):\n    sum = 0\n    for i in range (1,min(a,b)):\n        if (a % i == 0 and b % i == 0):\n            sum += i\n    return sum";
      assert.equal((await verify(fence("python", sol), mbpp126)).reward, 1);
      assert.equal((await verify(fence("python", sol.replace("sum += i", "sum += 2 * i")), mbpp126)).reward, 0);
      const he = { test: "def check(candidate):\n    assert candidate([1, 2]) == 3\n    assert abs(candidate([0.5]) - 0.5) < 1e-9", entry_point: "sum" };
      assert.equal((await verify(fence("python", "import builtins\ndef sum(xs): return builtins.sum(xs)"), he)).reward, 1);
      // the program's honest imports still reach the tests: modules, under an alias too
      const hq = { test_list: ["assert hq.nsmallest(2, f([3, 1, 2])) == [1, 2]", "assert math.floor(2.5) == 2"] };
      assert.equal((await verify(fence("python", "import heapq as hq\nimport math\ndef f(x): return x"), hq)).reward, 1);
    });
    test("MultiPL-E's Python tests run under the assert harness: an always-equal object and a printed end marker earn 0", async () => {
      const tests = "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(2, 5) == 7\n\ndef test_check():\n    check(add)\n\ntest_check()\n";
      assert.equal((await verify(fence("python", "def add(a, b):\n    return a + b"), { tests })).reward, 1);
      assert.equal((await verify(fence("python", "def add(a, b):\n    return a - b"), { tests })).reward, 0);
      assert.equal((await verify(fence("python", "class A:\n    def __eq__(s, o): return True\ndef add(a, b): return A()"), { tests })).reward, 0);
      const marker = "import sys, os, re\nsrc = open(sys.argv[0]).read() if sys.argv and os.path.exists(sys.argv[0]) else ''\nm = re.search(r'ASSAY-END:[0-9a-f]+', src)\nif m: print('\\n' + m.group(0), flush=True); os._exit(0)\ndef add(a, b): return 0";
      assert.equal((await verify(fence("python", marker), { test_program: tests })).reward, 0);
      // the prelude reaches both the tests and the program
      const withPrelude = { tests: "assert gcd(add(2, 2), 6) == 2", prelude: "from math import gcd" };
      assert.equal((await verify(fence("python", "def add(a, b): return a + b + gcd(0, 0)"), withPrelude)).reward, 1);
    });
    test("stdin/stdout: expected outputs are not in the sandbox to be read", async () => {
      const src = "import os\nneedle = str(987654320 + 1)\nfound = []\nfor root, dirs, files in [w for top in ('/sandbox', '/tmp', '/etc', '/root', '/home', '/var', '/opt', '/srv', '/mnt') for w in os.walk(top)]:\n    for f in files:\n        try:\n            if needle in open(os.path.join(root, f), errors='ignore').read(): found.append(f)\n        except Exception: pass\nprint(needle if found else 'none')";
      const r = await verify(fence("python", src), { inputs: [""], outputs: ["987654321"] }, { time_limit_ms: 5000 });
      assert.equal(r.reward, 0, r.reason);
    });
    test("function calls: returning a fake object, exiting before returning", async () => {
      const ref = { fn_name: "f", inputs: [[1]], outputs: [2] };
      assert.equal((await verify(fence("python", "class A:\n    def __eq__(s, o): return True\ndef f(x): return A()"), ref)).reward, 0);
      assert.equal((await verify(fence("python", "import sys\ndef f(x): sys.exit(0)"), ref)).reward, 0);
    });
    test("function calls: a subclass of a builtin is its builtin value, read past its overrides (Python's == as LiveCodeBench's checker uses it)", async () => {
      const counts = { fn_name: "f", inputs: [["aab"]], outputs: [{ a: 2, b: 1 }] };
      assert.equal((await verify(fence("python", "from collections import Counter\ndef f(s): return Counter(s)"), counts)).reward, 1);
      assert.equal((await verify(fence("python", "from collections import defaultdict\ndef f(s):\n    d = defaultdict(int)\n    for c in s: d[c] += 1\n    return d"), counts)).reward, 1);
      assert.equal((await verify(fence("python", "from collections import Counter\ndef f(s): return Counter('abb')"), counts)).reward, 0);
      const pair = { fn_name: "f", inputs: [[1]], outputs: [[1, 2]] };
      assert.equal((await verify(fence("python", "from collections import namedtuple\nP = namedtuple('P', 'x y')\ndef f(x): return P(x, 2)"), pair)).reward, 1);
      const five = { fn_name: "f", inputs: [[1]], outputs: [5] };
      assert.equal((await verify(fence("python", "from enum import IntEnum\nclass C(IntEnum):\n    A = 5\ndef f(x): return C.A"), five)).reward, 1);
      // an override does not change the value that crosses: I(4) is 4 whatever its __int__ says
      assert.equal((await verify(fence("python", "class I(int):\n    def __int__(s): return 5\n    def __eq__(s, o): return True\ndef f(x): return I(4)"), five)).reward, 0);
      assert.equal((await verify(fence("python", "class L(list):\n    def __iter__(s): return iter([1, 2])\ndef f(x): return L([9])"), pair)).reward, 0);
      // NumPy's scalars (np.sum returns np.int64) are their values, in the image that has NumPy
      if (opened.sandbox!.languages.includes("python-sci")) {
        const sci = { language: "python-sci" };
        assert.equal((await verify(fence("python", "import numpy as np\ndef f(x): return np.sum([2, 3])"), five, sci)).reward, 1);
        assert.equal((await verify(fence("python", "import numpy as np\ndef f(x): return [np.float64(1.0), np.bool_(True)]"), { fn_name: "f", inputs: [[1]], outputs: [[1.0, true]] }, sci)).reward, 1);
        assert.equal((await verify(fence("python", "import numpy as np\ndef f(x): return np.int64(4)"), five, sci)).reward, 0);
      }
    });
  });
});

describe("JavaScript through the js backend (isolated-vm, in a process of its own as the server runs it)", async () => {
  const { openJsProcess } = await import("../../sandbox/js/process.js");
  const { CompositeSandbox } = await import("../../sandbox/index.js");
  const js = (await openJsProcess()).sandbox;
  after(() => js?.close());
  const sb = js ? new CompositeSandbox([js], "no Docker engine answers; install Docker or bubblewrap") : null;
  const services = testServices({ sandbox: fakeSandbox(sb) });
  const ref = { inputs: ["2 3\n", "10 -4\n"], outputs: ["5\n", "6\n"] };
  test("stdin/stdout, correct and wrong, and a loop that times out", { skip: js ? false : "isolated-vm unavailable" }, async () => {
    const run = (src: string) => verifyDirect(code, { response: "```js\n" + src + "\n```", reference: ref, options: { language: "javascript", time_limit_ms: 500 } }, { services });
    assert.equal((await run("const [a, b] = readline().split(' ').map(Number); console.log(a + b)")).reward, 1);
    assert.equal((await run("const [a, b] = readline().split(' ').map(Number); console.log(a - b)")).reward, 0);
    const loop = await run("while (true) {}");
    assert.equal((loop.details as any).tests[0].status, "time_limit");
    // readline's and process.stdin's events (scored 0 when neither existed)
    assert.equal((await run("require('readline').createInterface({ input: process.stdin }).on('line', (l) => { const [a, b] = l.split(' ').map(Number); console.log(a + b); });")).reward, 1);
    assert.equal((await run("let s = ''; process.stdin.on('data', (c) => s += c); process.stdin.on('end', () => { const [a, b] = s.split(' ').map(Number); console.log(a + b); });")).reward, 1);
    // a thrown error's reason is its message and line, not the isolate's stack frame
    const thrown = await run("const x = 1;\nthrow new TypeError('boom');");
    assert.match((thrown.details as any).tests[0].error, /TypeError: boom \(line 2\)/);
  });
  test("a Map grown past its heap limit earns 0 (it aborted the server's process when isolates ran there)", { skip: js ? false : "isolated-vm unavailable" }, async () => {
    const bomb = await verifyDirect(code, { response: "```js\nconst m = new Map(); for (let i = 0; ; i++) m.set(i, i);\n```", reference: ref, options: { language: "javascript", time_limit_ms: 5000, memory_mb: 32 } }, { services });
    assert.equal(bomb.reward, 0);
    assert.equal((bomb.details as any).tests[0].status, "memory_limit", JSON.stringify(bomb.details));
    const fine = await verifyDirect(code, { response: "```js\nconst [a, b] = readline().split(' ').map(Number); console.log(a + b)\n```", reference: ref, options: { language: "javascript" } }, { services });
    assert.equal(fine.reward, 1, "still serving");
  });
  // HumanEval-X's JavaScript shape (JavaScript/0): the prompt's declaration, the completion, and
  // a test that calls console.assert, which prints "Assertion failed" and goes on, as Node's does.
  const hx = {
    test: "const testHasCloseElements = () => {\n  console.assert(hasCloseElements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) === true)\n  console.assert(hasCloseElements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) === false)\n  console.assert(hasCloseElements([1.0, 2.0, 5.9, 4.0, 5.0], 0.95) === true)\n  console.assert(hasCloseElements([1.1, 2.2, 3.1, 4.1, 5.1], 1.0) === true)\n}\n\ntestHasCloseElements()\n",
    entry_point: "hasCloseElements",
  };
  const hxSolution = (cmp: string, extra = "") => "```js\nconst hasCloseElements = (numbers, threshold) => {\n" + extra +
    "  for (let i = 0; i < numbers.length; i++)\n    for (let j = 0; j < numbers.length; j++)\n      if (i != j && Math.abs(numbers[i] - numbers[j]) " + cmp + " threshold) return true\n  return false\n}\n```";
  const jsItem = (response: string, reference: unknown) => verifyDirect(code, { response, reference, options: { language: "javascript", time_limit_ms: 1000 } }, { services });
  test("HumanEval-X JavaScript: console.assert tests; correct 1, wrong 0 naming the line, debug output free", { skip: js ? false : "isolated-vm unavailable" }, async () => {
    const ok = await jsItem(hxSolution("<"), hx);
    assert.equal(ok.reward, 1, ok.reason);
    assert.equal((ok.details as any).format, "program");
    const wrong = await jsItem(hxSolution(">"), hx);
    assert.equal(wrong.reward, 0, wrong.reason);
    assert.match(wrong.reason, /Assertion failed \(line \d+\)/);
    const chatty = await jsItem(hxSolution("<", "  console.log('debug', numbers); console.table(numbers)\n"), hx);
    assert.equal(chatty.reward, 1, chatty.reason);
    // The thrown error's message is the reason, not a stack frame.
    const crash = await jsItem("```js\nconst hasCloseElements = (numbers) => numbers.nope.length\n```", hx);
    assert.equal(crash.reward, 0);
    assert.match(crash.reason, /TypeError: Cannot read properties of undefined \(reading 'length'\) \(line 1\)/);
  });
  test("whole-program JavaScript: hostile programs (early exit, silencing console.assert, an endless loop) earn 0", { skip: js ? false : "isolated-vm unavailable" }, async () => {
    for (const hack of [
      "process.exit(0)",
      "console.assert = () => {}\nconst hasCloseElements = () => false",
      "Object.defineProperty(console, 'assert', { value: () => {} })\nconst hasCloseElements = () => false",
      "const hasCloseElements = () => { process.exit(0) }",
      "process.stdout.write('\\nASSAY-END:000000000000000000000000\\n'); process.exit(0)",
      "const hasCloseElements = () => { for (;;) {} }",
    ]) {
      const r = await jsItem("```js\n" + hack + "\n```", hx);
      assert.equal(r.reward, 0, `${hack}: ${r.reason}`);
    }
  });
  test("MultiPL-E JavaScript: require('node:assert') and deepEqual", { skip: js ? false : "isolated-vm unavailable" }, async () => {
    const ref = { tests: "const assert = require('node:assert');\n\n\nfunction test() {\n  let candidate = sort_third;\n  assert.deepEqual(candidate([5, 6, 3, 4, 8, 9, 2]),[2, 6, 3, 4, 8, 9, 5]);\n  assert.deepEqual(candidate([1, 2, 3]),[1, 2, 3]);\n}\n\ntest();" };
    const sol = "```js\nfunction sort_third(l){\n  const t = l.filter((_, i) => i % 3 == 0).sort((a, b) => a - b);\n  return l.map((x, i) => (i % 3 == 0 ? t[i / 3] : x));\n}\n```";
    const ok = await jsItem(sol, ref);
    assert.equal(ok.reward, 1, ok.reason);
    const wrong = await jsItem(sol.replace("a - b", "b - a"), ref);
    assert.equal(wrong.reward, 0);
    assert.match(wrong.reason, /AssertionError: Expected values to be loosely deep-equal: \[ 5, 6, 3, 4, 8, 9, 2 \] != \[ 2, 6, 3, 4, 8, 9, 5 \] \(line 10\)/);
  });
  test("a language no backend runs is an error naming what to install", { skip: js ? false : "isolated-vm unavailable" }, async () => {
    await assert.rejects(verifyDirect(code, { response: "print(1)", reference: ref }, { services }), /install Docker or bubblewrap/);
  });
});

const openedInts = await openDockerForTests(1);
describe("exact integers through the function-call harness", { skip: openedInts.skip }, () => {
  after(() => openedInts.sandbox?.close());
  const services = testServices({ sandbox: fakeSandbox(openedInts.sandbox) });
  const ref = { inputs: ["[1]"], outputs: ["12345678901234567890"], fn_name: "big" };
  const run = (body: string) => verifyDirect(code, { response: "```python\ndef big(x):\n    return " + body + "\n```", reference: ref }, { services });
  test("the right 20-digit integer scores 1; one off scores 0", async () => {
    assert.equal((await run("12345678901234567890")).reward, 1);
    assert.equal((await run("12345678901234567891")).reward, 0);
  });
  test("APPS's input_output string: big arguments and expected numbers stay exact, 10**18 as a JSON number counts", async () => {
    // Before: the string was read with JSON.parse (12345678901234567891 became ...7168, and a
    // BigInt result never equalled a reference number: `return 10**18` scored 0).
    const apps = (out: string) => ({ input_output: `{"inputs": [[12345678901234567891]], "outputs": [[${out}]], "fn_name": "f"}` });
    const call = (body: string, out: string) => verifyDirect(code, { response: "```python\ndef f(x):\n    return " + body + "\n```", reference: apps(out) }, { services });
    assert.equal((await call("x + 1", "12345678901234567892")).reward, 1);
    assert.equal((await call("x", "12345678901234567892")).reward, 0);
    assert.equal((await call("10**18", "1000000000000000000")).reward, 1);
    assert.equal((await call("10**18 + 1", "1000000000000000000")).reward, 0);
  });
});
