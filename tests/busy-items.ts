/**
 * The items and hogs of the busy-machine suite (tests/busy-machine.test.ts) and its benchmark
 * (bench/busy.ts): 42 code items with the reward each deserves, a CPU hog and an I/O and memory
 * hog that the caller starts and stops.
 */
import { spawn, type ChildProcess } from "node:child_process";

const py = (src: string) => "```python\n" + src + "\n```";
const cpp = (src: string) => "```cpp\n" + src + "\n```";

export interface Item {
  name: string;
  response: string;
  reference: unknown;
  options?: Record<string, unknown>;
  reward: number;
}

// Programs that use 60% of their 1 s CPU limit before answering: on a loaded machine their wall
// time passes the wall limit (2 x 1 s + 1 s) many times over, their own time does not.
const PY_NEAR = "import time\nwhile time.process_time() < 0.6: pass\nprint(int(input()) * 2)";
const CPP_NEAR = "#include <ctime>\n#include <iostream>\nint main(){ while (std::clock() < 0.6 * CLOCKS_PER_SEC) {} long long x; std::cin >> x; std::cout << 2 * x << std::endl; }";
const CPP_SUM = "#include <iostream>\nint main(){ long long n, s = 0, x; std::cin >> n; for (long long i = 0; i < n; i++) { std::cin >> x; s += x; } std::cout << s << std::endl; }";
const CPP_WRONG = "#include <iostream>\nint main(){ long long n, s = 0, x; std::cin >> n; for (long long i = 0; i < n; i++) { std::cin >> x; s += x; } std::cout << s + 1 << std::endl; }";
const CPP_LOOP = "int main(){ volatile unsigned long x = 0; for (;;) x++; }";

const bigInput = (n: number) => `${n}\n` + Array.from({ length: n }, (_, i) => String((i * 7919) % 1000)).join(" ") + "\n";
const bigSum = (n: number) => String(Array.from({ length: n }, (_, i) => (i * 7919) % 1000).reduce((a, b) => a + b, 0)) + "\n";

const stdio = (inputs: string[], outputs: string[]) => ({ inputs, outputs });
const call = (fn: string, inputs: unknown[][], outputs: unknown[]) => ({ fn_name: fn, inputs, outputs });

const HOSTILE = {
  sleepers: "import os, time\nfor _ in range(40):\n    if os.fork() == 0:\n        time.sleep(120)\n        os._exit(0)\ntime.sleep(120)",
  memoryBomb: "import os, time\nfor _ in range(7):\n    if os.fork() == 0:\n        break\nx = bytearray(200 << 20)\nfor i in range(0, len(x), 4096): x[i] = 1\ntime.sleep(2)\nprint('survived')",
  msgQueues: [
    "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)",
    "class Msg(ctypes.Structure):\n    _fields_ = [('mtype', ctypes.c_long), ('mtext', ctypes.c_char * 4096)]",
    "m = Msg(1, b'x' * 4096)\nqueues = 0",
    "while queues < 10000:\n    q = libc.msgget(0, 0o1600)\n    if q < 0: break\n    queues += 1\n    while libc.msgsnd(q, ctypes.byref(m), 4096, 0o4000) == 0: pass",
    "while True: pass",
  ].join("\n"),
  forkBomb: "import os\nwhile True:\n    try: os.fork()\n    except OSError: pass",
  loop: "while True: pass",
};

export function items(): Item[] {
  const out: Item[] = [];
  const add = (name: string, response: string, reference: unknown, reward: number, options?: Record<string, unknown>) => out.push({ name, response, reference, reward, options });
  // Python, stdin/stdout.
  for (let i = 0; i < 4; i++) add(`py echo ${i}`, py("print(input()[::-1])"), stdio([`abc${i}\n`, `xy${i}\n`], [`${i}cba\n`, `${i}yx\n`]), 1);
  add("py sum of a large input", py("import sys\nd = sys.stdin.read().split()\nprint(sum(map(int, d[1:])))"), stdio([bigInput(200_000)], [bigSum(200_000)]), 1);
  add("py sum of a large input, by lines", py("n = int(input())\nprint(sum(int(x) for x in input().split()))"), stdio([bigInput(100_000)], [bigSum(100_000)]), 1);
  for (let i = 0; i < 3; i++) add(`py wrong ${i}`, py("print(input())"), stdio([`abc${i}\n`], [`${i}cba\n`]), 0);
  add("py half right", py("s = input()\nprint(s[::-1] if len(s) < 4 else s)"), stdio(["ab\n", "abcd\n"], ["ba\n", "dcba\n"]), 0.5);
  add("py runtime error", py("raise SystemExit(3)"), stdio(["1\n"], ["1\n"]), 0);
  for (let i = 0; i < 2; i++) add(`py near its CPU limit ${i}`, py(PY_NEAR), stdio([`${21 + i}\n`], [`${2 * (21 + i)}\n`]), 1);
  for (let i = 0; i < 3; i++) add(`py stdin numbers ${i}`, py("a, b = map(int, input().split())\nprint(a * b)"), stdio([`${i} 7\n`, `${i + 3} 5\n`], [`${7 * i}\n`, `${5 * (i + 3)}\n`]), 1);
  // Python, function calls.
  for (let i = 0; i < 4; i++) add(`py call ${i}`, py("def add(a, b):\n    return a + b"), call("add", [[i, 2], [10, i]], [i + 2, 10 + i]), 1);
  add("py call, class Solution", py("class Solution:\n    def twice(self, xs):\n        return [2 * x for x in xs]"), call("twice", [[[1, 2, 3]]], [[2, 4, 6]]), 1);
  for (let i = 0; i < 2; i++) add(`py call wrong ${i}`, py("def add(a, b):\n    return a - b"), call("add", [[i, 2]], [i + 2]), 0);
  add("py call near its CPU limit", py("import time\ndef add(a, b):\n    while time.process_time() < 0.6: pass\n    return a + b"), call("add", [[4, 5]], [9]), 1);
  // C++, stdin/stdout (three sources: each compiles once per backend, the cache serves the rest).
  for (let i = 0; i < 4; i++) add(`cpp sum ${i}`, cpp(CPP_SUM), stdio([bigInput(1000 + i)], [bigSum(1000 + i)]), 1, { language: "cpp" });
  add("cpp sum of a large input", cpp(CPP_SUM), stdio([bigInput(300_000)], [bigSum(300_000)]), 1, { language: "cpp" });
  for (let i = 0; i < 3; i++) add(`cpp wrong ${i}`, cpp(CPP_WRONG), stdio([bigInput(10 + i)], [bigSum(10 + i)]), 0, { language: "cpp" });
  add("cpp near its CPU limit", cpp(CPP_NEAR), stdio(["30\n"], ["60\n"]), 1, { language: "cpp" });
  add("cpp endless loop", cpp(CPP_LOOP), stdio(["1\n"], ["1\n"]), 0, { language: "cpp" });
  add("cpp compile error", cpp("int main( { return 0; }"), stdio(["1\n"], ["1\n"]), 0, { language: "cpp" });
  // Hostile.
  add("many sleeping processes", py(HOSTILE.sleepers), stdio(["1\n"], ["1\n"]), 0);
  add("memory bomb over processes", py(HOSTILE.memoryBomb), stdio(["1\n"], ["1\n"]), 0, { memory_mb: 256 });
  add("System V message queues", py(HOSTILE.msgQueues), stdio(["1\n"], ["1\n"]), 0);
  add("fork bomb", py(HOSTILE.forkBomb), stdio(["1\n"], ["1\n"]), 0);
  for (let i = 0; i < 2; i++) add(`py call, strings ${i}`, py("def join(xs):\n    return '-'.join(xs)"), call("join", [[["a", String(i)]]], [`a-${i}`]), 1);
  add("endless loop", py(HOSTILE.loop), stdio(["1\n"], ["1\n"]), 0);
  return out;
}

/** `n` processes that each keep one CPU busy, until stopped. */
export function cpuHog(n: number): ChildProcess[] {
  return Array.from({ length: n }, () => spawn("sh", ["-c", "while :; do :; done"], { stdio: "ignore", detached: true }));
}

/**
 * Writes and syncs files and keeps touching memory, until stopped: two writers of 64 MiB files
 * (fsync'd) and two processes each holding and re-touching 256 MiB.
 */
export function ioMemoryHog(dir: string): ChildProcess[] {
  const writer = (i: number) => spawn("sh", ["-c", `while :; do dd if=/dev/zero of=${dir}/f${i} bs=1M count=64 conv=fsync status=none; rm -f ${dir}/f${i}; done`], { stdio: "ignore", detached: true });
  const memory = () => spawn("python3", ["-c", "import time\nx = bytearray(256 << 20)\nwhile True:\n    for i in range(0, len(x), 4096): x[i] = (x[i] + 1) & 255\n    time.sleep(0.05)"], { stdio: "ignore", detached: true });
  return [writer(0), writer(1), memory(), memory()];
}

export function stopHogs(hogs: ChildProcess[]): void {
  for (const h of hogs) {
    try {
      process.kill(-h.pid!, "SIGKILL");
    } catch {
      /* gone */
    }
  }
}

