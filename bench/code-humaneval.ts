/**
 * HumanEval-shaped items (a function and one `check(candidate)` call: milliseconds of work)
 * through `POST /reward/batch` in chunks of 32, against running the same programs bare (the
 * solution, the test and `check(entry)` as one file, `python3 file.py` in the sandbox image's
 * root filesystem, no isolation) on 2 processes, in the same run. Prints items/s of both and
 * their ratio (goal: at least 1x), each item's latency (p50/p99 of `elapsed_ms`), CPU time per
 * item on both sides (docker: the server process plus every sandbox container's cgroup; bare: the
 * reaped programs'), and where one item's time goes with no other in flight: its program run as
 * the runner timed it (the harness's two processes) and the rest (HTTP, scorer, the runner's
 * round trip and clean-up), from 40 items sent one at a time through `/reward`.
 *
 * Usage: npx tsx bench/code.ts --humaneval [--backend docker|bwrap] [--items 256] [--inflight 2] [--rounds 3]
 * (--inflight: chunks of 32 sent at once; a trainer's reward workers usually keep more than one).
 * Needs the python sandbox image (bash scripts/setup-sandbox.sh).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { loadConfig } from "../src/core/config.js";
import { recipeFor, rootfsDir } from "../sandbox/images.js";
import pino from "pino";
import { createRuntime } from "../src/core/runtime.js";
import { createApp } from "../src/server/app.js";
import { pct, table } from "./lib.js";

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const backend = arg("backend", "docker");
const N = Number(arg("items", "256"));
const INFLIGHT = Number(arg("inflight", "2"));
const ROUNDS = Number(arg("rounds", "3"));
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
async function bare(): Promise<{ rate: number; p50: number; cpuMs: number }> {
  const cpu0 = childrenCpuMs();
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
        await new Promise<void>((resolve, reject) => {
          const c = spawn("chroot", [rootfs, "/usr/bin/python3", `${inside}/p${i}.py`], { stdio: "ignore" });
          c.on("error", reject);
          c.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`bare program ${i}: exit ${code}`))));
        });
        lat.push(performance.now() - s);
      }
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  lat.sort((a, b) => a - b);
  return { rate: N / ((performance.now() - t0) / 1000), p50: pct(lat, 50), cpuMs: (childrenCpuMs() - cpu0) / N };
}

/** CPU time of this process's reaped children so far (cutime + cstime of /proc/self/stat), ms. */
function childrenCpuMs(): number {
  const f = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
  return ((Number(f[13]) + Number(f[14])) * 1000) / 100; // fields 16 and 17, in clock ticks (USER_HZ = 100)
}

/** CPU time of every Assay sandbox container so far, ms, and which they are (docker on cgroup v1 or v2); null elsewhere. */
function containersCpuMs(): { ids: string; ms: number } | null {
  if (backend !== "docker") return null;
  const ids = spawnSync("docker", ["ps", "-q", "--no-trunc", "--filter", "label=assay.sandbox"], { encoding: "utf8" }).stdout.split("\n").filter(Boolean);
  let ns = 0;
  for (const id of ids) {
    try {
      ns += Number(readFileSync(`/sys/fs/cgroup/cpuacct/docker/${id}/cpuacct.usage`, "utf8"));
    } catch {
      try {
        const stat = readFileSync(`/sys/fs/cgroup/system.slice/docker-${id}.scope/cpu.stat`, "utf8");
        ns += Number(/usage_usec (\d+)/.exec(stat)![1]) * 1000;
      } catch {
        return null;
      }
    }
  }
  return { ids: ids.sort().join(), ms: ns / 1e6 };
}

async function main() {
  // The server in this process (as the tests build it): a server started through tsx in its own
  // process did not answer within 30 s on a loaded machine. The client's share of the work (32
  // items a request) is small beside the sandbox's.
  const config = loadConfig({ ...process.env, ASSAY_SANDBOX: backend, ASSAY_LOG_LEVEL: "warn", ASSAY_DATA_DIR: ":memory:" });
  const runtime = await createRuntime(config, { log: pino({ level: "warn" }), only: ["code"] });
  const http = createApp(runtime).app.listen(0, "127.0.0.1");
  await new Promise((r) => http.once("listening", r));
  const server = { url: `http://127.0.0.1:${(http.address() as { port: number }).port}` };
  const stop = () => http.close();
  try {
    const up = Date.now();
    await runtime.warmUp();
    process.stderr.write(`ready in ${Date.now() - up} ms\n`);
    // Warm-up, not counted: every container or slot has run a program.
    await post(server.url + "/reward/batch", { items: Array.from({ length: CHUNK }, (_, i) => item(N + i)) });

    // One item at a time: where its time goes.
    const single: { elapsed: number; run: number; cpu: number }[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await post(server.url + "/reward", item(i));
      if (r.reward !== 1) throw new Error(`item ${i}: ${JSON.stringify(r).slice(0, 300)}`);
      single.push({ elapsed: r.elapsed_ms, run: r.details.tests[0].ms, cpu: r.details.tests[0].cpu_ms ?? NaN });
    }
    process.stderr.write("one at a time: done\n");
    const med = (f: (x: (typeof single)[0]) => number) => pct(single.map(f).sort((a, b) => a - b), 50);

    // Rounds, each Assay's batches then the bare run, so both see the machine's load alike.
    const rows: (string | number)[][] = [["round", "bare items/s", "assay items/s", "assay/bare", "assay p50 / p99 ms per item", "CPU ms per item: bare / assay (server + containers)"]];
    const ratios: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const lat: number[] = [];
      let next = 0;
      const cpu0 = process.cpuUsage();
      const box0 = containersCpuMs();
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
      const c = process.cpuUsage(cpu0);
      const box1 = containersCpuMs();
      // NaN when a container was replaced during the round (its CPU time went with it).
      const assayCpu = box0 !== null && box1 !== null && box1.ids === box0.ids ? ((c.user + c.system) / 1000 + box1.ms - box0.ms) / N : NaN;
      lat.sort((a, b) => a - b);
      const b = await bare();
      ratios.push(rate / b.rate);
      rows.push([round, b.rate.toFixed(1), rate.toFixed(1), `${(rate / b.rate).toFixed(2)}x`, `${pct(lat, 50).toFixed(0)} / ${pct(lat, 99).toFixed(0)}`, `${b.cpuMs.toFixed(1)} / ${assayCpu.toFixed(1)}`]);
      process.stderr.write(`round ${round}: bare ${b.rate.toFixed(1)}/s, assay ${rate.toFixed(1)}/s\n`);
    }
    console.log(`assay ${backend}, ${N} items a round through /reward/batch in chunks of ${CHUNK}, ${INFLIGHT} in flight; bare: python3 on 2 processes\n`);
    console.log(table(rows));
    console.log(`\nassay / bare, median of ${ROUNDS} rounds: ${pct([...ratios].sort((x, y) => x - y), 50).toFixed(2)}x (goal >= 1x)`);
    console.log(`one item at a time (p50 of 40): elapsed ${med((x) => x.elapsed).toFixed(1)} ms = program run ${med((x) => x.run).toFixed(1)} ms (cpu ${med((x) => x.cpu).toFixed(1)} ms) + the rest ${med((x) => x.elapsed - x.run).toFixed(1)} ms`);
  } finally {
    stop();
    await runtime.close();
  }
}

main().then(() => process.exit(0), (e) => {
  console.error(e);
  process.exit(1);
});
