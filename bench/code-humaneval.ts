/**
 * HumanEval-shaped items (a function and one `check(candidate)` call: milliseconds of work)
 * through `POST /reward/batch` in chunks of 32, against running the same programs bare (the
 * solution, the test and `check(entry)` as one file, `python3 file.py` in the sandbox image's
 * root filesystem, no isolation) on 2 processes, in the same run. Prints items/s of both and
 * their ratio (goal: at least 1x), each item's latency (p50/p99 of `elapsed_ms`), and where an
 * item's time goes one at a time: the program's own run (the runner's wall time), the sandbox
 * round trip around it (`Sandbox.run` less the run), and the server around that (the item's
 * `elapsed_ms` less `Sandbox.run`, measured through `/reward` with no other item in flight).
 *
 * Usage: npx tsx bench/code.ts --humaneval [--backend docker|bwrap] [--items 256] [--inflight 2]
 * (--inflight: chunks of 32 sent at once; a trainer's reward workers usually keep more than one).
 * Needs the python sandbox image (bash scripts/setup-sandbox.sh).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../src/core/config.js";
import { recipeFor, rootfsDir } from "../sandbox/images.js";
import { pct, spawnOut, startServer, table } from "./lib.js";

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const backend = arg("backend", "docker");
const N = Number(arg("items", "256"));
const INFLIGHT = Number(arg("inflight", "2"));
const CHUNK = 32;

/** Item i: one of a few small HumanEval-like tasks, each with its own numbers. */
export function task(i: number): { solution: string; test: string; entry: string } {
  const k = i % 4;
  if (k === 0) return { entry: "add", solution: "def add(a, b):\n    return a + b\n", test: `def check(candidate):\n    assert candidate(${i}, 2) == ${i + 2}\n    assert candidate(-1, 1) == 0\n` };
  if (k === 1) return { entry: "rev", solution: "def rev(s):\n    return s[::-1]\n", test: `def check(candidate):\n    assert candidate("ab${i}") == "${String(i).split("").reverse().join("")}ba"\n` };
  if (k === 2) return { entry: "evens", solution: "def evens(n):\n    return [x for x in range(n) if x % 2 == 0]\n", test: `def check(candidate):\n    assert candidate(${(i % 50) + 2}) == list(range(0, ${(i % 50) + 2}, 2))\n` };
  return { entry: "fib", solution: "def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n", test: `def check(candidate):\n    assert candidate(${i % 30}) == ${fib(i % 30)}\n    assert candidate(1) == 1\n` };
}
function fib(n: number) {
  let a = 0, b = 1;
  for (let j = 0; j < n; j++) [a, b] = [b, a + b];
  return a;
}

const item = (i: number) => {
  const t = task(i);
  return { id: String(i), verifier: "code", response: "```python\n" + t.solution + "```", reference: { test: t.test, entry_point: t.entry } };
};

async function post(url: string, body: unknown): Promise<any> {
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status} ${await r.text()}`);
  return r.json();
}

/** The bare run: N programs, 2 at a time, each `python3 prog.py` in the image's root filesystem. */
async function bare(): Promise<{ rate: number; p50: number }> {
  const rootfs = rootfsDir(recipeFor("python")!, loadConfig().sandbox);
  const dir = mkdtempSync(join(rootfs, "sandbox", "run", "bench-he-"));
  const inside = "/sandbox/run/" + dir.split("/").pop();
  for (let i = 0; i < N; i++) {
    const t = task(i);
    writeFileSync(join(dir, `p${i}.py`), `${t.solution}\n${t.test}\ncheck(${t.entry})\n`);
  }
  const lat: number[] = [];
  let next = 0;
  const t0 = performance.now();
  try {
    await Promise.all([0, 1].map(async () => {
      while (next < N) {
        const i = next++;
        const s = performance.now();
        await spawnOut(["chroot", rootfs, "/usr/bin/python3", `${inside}/p${i}.py`]);
        lat.push(performance.now() - s);
      }
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  lat.sort((a, b) => a - b);
  return { rate: N / ((performance.now() - t0) / 1000), p50: pct(lat, 50) };
}

async function main() {
  const server = await startServer(["--import", "tsx", "src/cli/main.ts", "serve"], {
    ASSAY_SANDBOX: backend, ASSAY_LOG_LEVEL: "warn", ASSAY_DATA_DIR: ":memory:",
  });
  try {
    for (;;) {
      const r = await fetch(server.url + "/readyz");
      if (r.ok) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    // Warm-up, not counted: every container or slot has run a program.
    await post(server.url + "/reward/batch", { items: Array.from({ length: CHUNK }, (_, i) => item(N + i)) });

    // One item at a time: where its time goes.
    const single: { elapsed: number; run: number; cpu: number }[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await post(server.url + "/reward", item(i));
      if (r.reward !== 1) throw new Error(`item ${i}: ${JSON.stringify(r).slice(0, 300)}`);
      single.push({ elapsed: r.elapsed_ms, run: r.details.tests[0].ms, cpu: r.details.tests[0].cpu_ms ?? NaN });
    }
    const med = (f: (x: (typeof single)[0]) => number) => pct(single.map(f).sort((a, b) => a - b), 50);

    // Batches: chunks of 32, INFLIGHT at once.
    const lat: number[] = [];
    let next = 0;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: INFLIGHT }, async () => {
      while (next < N) {
        const from = next;
        next += CHUNK;
        const items = Array.from({ length: Math.min(CHUNK, N - from) }, (_, j) => item(from + j));
        const out = await post(server.url + "/reward/batch", { items });
        for (const r of out.results) {
          if (r.reward !== 1) throw new Error(`item ${r.id}: ${JSON.stringify(r).slice(0, 300)}`);
          lat.push(r.elapsed_ms);
        }
      }
    }));
    const rate = N / ((performance.now() - t0) / 1000);
    lat.sort((a, b) => a - b);
    const b = await bare();
    console.log(table([
      ["way", "items/s", "per item p50 ms", "per item p99 ms"],
      ["bare python3, 2 processes", b.rate.toFixed(1), b.p50.toFixed(1), "—"],
      [`assay ${backend}, /reward/batch of ${CHUNK}, ${INFLIGHT} in flight`, rate.toFixed(1), pct(lat, 50).toFixed(1), pct(lat, 99).toFixed(1)],
    ]));
    console.log(`\nassay / bare: ${(rate / b.rate).toFixed(2)}x (goal >= 1x)`);
    console.log(`one item at a time (p50 of 40): elapsed ${med((x) => x.elapsed).toFixed(1)} ms = program run ${med((x) => x.run).toFixed(1)} ms (cpu ${med((x) => x.cpu).toFixed(1)} ms) + the rest ${med((x) => x.elapsed - x.run).toFixed(1)} ms; bare python3 run p50 ${b.p50.toFixed(1)} ms`);
  } finally {
    server.child.kill("SIGTERM");
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
