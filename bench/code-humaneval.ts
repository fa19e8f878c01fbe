/**
 * HumanEval-shaped items (a function and one `check(candidate)` call: milliseconds of work)
 * through `POST /reward/batch` in chunks of 32, against running the same programs bare (the
 * solution, the test and `check(entry)` as one file, `python3 file.py` in the sandbox image's
 * root filesystem, no isolation) on 2 processes, in the same run. Prints items/s of both and
 * their ratio (goal: at least 1x), each item's latency (p50/p99 of `elapsed_ms`), CPU time per
 * item on both sides (the server process plus the sandbox's cgroups: docker's containers, bwrap's slots; bare: the
 * reaped programs'), and where one item's time goes with no other in flight: its program run as
 * the runner timed it (the harness's two processes) and the rest (HTTP, scorer, the runner's
 * round trip and clean-up), from 40 items sent one at a time through `/reward`.
 *
 * Usage: npx tsx bench/code.ts --humaneval [--backend docker,bwrap] [--items 256] [--inflight 2] [--rounds 3]
 * (--backend: comma-separated, each in its own server in this process, every round running each
 * in turn and then the bare programs; bwrap-cold is bwrap without warm slots, a fresh sandbox per run.)
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
import { childrenCpuMs, pct, sandboxCpuMs, table } from "./lib.js";

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const BACKENDS = arg("backend", "docker,bwrap");
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

/** A backend under test: docker, bwrap (warm slots), bwrap-cold (a fresh sandbox per run, ASSAY_SANDBOX_BWRAP_WARM=0). */
interface Backend {
  kind: "docker" | "bwrap" | "bwrap-cold";
  url: string;
  close: () => Promise<void>;
}

async function open(kind: Backend["kind"]): Promise<Backend> {
  // The server in this process (as the tests build it): a server started through tsx in its own
  // process did not answer within 30 s on a loaded machine. The client's share of the work (32
  // items a request) is small beside the sandbox's.
  const env = { ...process.env, ASSAY_SANDBOX: kind === "docker" ? "docker" : "bwrap", ASSAY_SANDBOX_BWRAP_WARM: kind === "bwrap-cold" ? "0" : "1", ASSAY_LOG_LEVEL: "warn", ASSAY_DATA_DIR: ":memory:" };
  const runtime = await createRuntime(loadConfig(env), { log: pino({ level: "warn" }), only: ["code"] });
  const http = createApp(runtime).app.listen(0, "127.0.0.1");
  await new Promise((r) => http.once("listening", r));
  const url = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
  const up = Date.now();
  await runtime.warmUp();
  process.stderr.write(`${kind}: ready in ${Date.now() - up} ms\n`);
  // Warm-up, not counted: every container or slot has run a program.
  await post(url + "/reward/batch", { items: Array.from({ length: CHUNK }, (_, i) => item(N + i)) });
  return { kind, url, close: async () => { http.close(); await runtime.close(); } };
}

/** Each item's time with no other in flight: 40 items one at a time through /reward. */
async function oneAtATime(b: Backend): Promise<string> {
  const single: { elapsed: number; run: number; cpu: number }[] = [];
  for (let i = 0; i < 40; i++) {
    const r = await post(b.url + "/reward", item(i));
    if (r.reward !== 1) throw new Error(`${b.kind} item ${i}: ${JSON.stringify(r).slice(0, 300)}`);
    single.push({ elapsed: r.elapsed_ms, run: r.details.tests[0].ms, cpu: r.details.tests[0].cpu_ms ?? NaN });
  }
  const med = (f: (x: (typeof single)[0]) => number) => pct(single.map(f).sort((a, b) => a - b), 50);
  return `${b.kind}: one item at a time (p50 of 40): elapsed ${med((x) => x.elapsed).toFixed(1)} ms = program run ${med((x) => x.run).toFixed(1)} ms (cpu ${med((x) => x.cpu).toFixed(1)} ms) + the rest ${med((x) => x.elapsed - x.run).toFixed(1)} ms`;
}

/** One round of N items through /reward/batch, INFLIGHT chunks at once. */
async function round(b: Backend): Promise<{ rate: number; p50: number; p99: number; cpuMs: number; serverMs: number }> {
  const lat: number[] = [];
  let next = 0;
  const cpu0 = process.cpuUsage();
  const box0 = sandboxCpuMs(b.kind);
  const t0 = performance.now();
  await Promise.all(Array.from({ length: INFLIGHT }, async () => {
    while (next < N) {
      const from = next;
      next += CHUNK;
      const items = Array.from({ length: Math.min(CHUNK, N - from) }, (_, j) => item(from + j));
      const out = await post(b.url + "/reward/batch", { items });
      for (const r of out.results) {
        if (r.reward !== 1) throw new Error(`${b.kind} item ${r.id}: ${JSON.stringify(r).slice(0, 300)}`);
        lat.push(r.elapsed_ms);
      }
    }
  }));
  const rate = N / ((performance.now() - t0) / 1000);
  const c = process.cpuUsage(cpu0);
  const box1 = sandboxCpuMs(b.kind);
  // NaN when a container was replaced during the round (its CPU time went with it). The
  // server's CPU is this process's (both servers live here: the idle one's share is small).
  const serverMs = (c.user + c.system) / 1000 / N;
  const cpuMs = box0 !== null && box1 !== null && box1.ids === box0.ids ? serverMs + (box1.ms - box0.ms) / N : NaN;
  lat.sort((a, b) => a - b);
  return { rate, p50: pct(lat, 50), p99: pct(lat, 99), cpuMs, serverMs };
}

async function main() {
  const kinds = BACKENDS.split(",").map((k) => k.trim()) as Backend["kind"][];
  for (const k of kinds) if (!["docker", "bwrap", "bwrap-cold"].includes(k)) throw new Error(`--backend: ${k}? docker, bwrap or bwrap-cold (comma-separated)`);
  const backends: Backend[] = [];
  try {
    for (const k of kinds) backends.push(await open(k));
    const notes: string[] = [];
    for (const b of backends) notes.push(await oneAtATime(b));
    process.stderr.write("one at a time: done\n");
    // Rounds, each every backend's batches then the bare run, so all see the machine's load alike.
    const rows: (string | number)[][] = [["round", "bare items/s", ...kinds.flatMap((k) => [`${k} items/s`, `${k}/bare`]), ...kinds.map((k) => `${k} p50 / p99 ms`), `CPU ms per item: bare / ${kinds.join(" / ")}`, `of which the server process: ${kinds.join(" / ")}`]];
    const ratios: Record<string, number[]> = Object.fromEntries(kinds.map((k) => [k, []]));
    for (let r = 1; r <= ROUNDS; r++) {
      const got = [];
      for (const b of backends) got.push(await round(b));
      const bb = await bare();
      got.forEach((g, i) => ratios[kinds[i]].push(g.rate / bb.rate));
      rows.push([r, bb.rate.toFixed(1), ...got.flatMap((g) => [g.rate.toFixed(1), `${(g.rate / bb.rate).toFixed(2)}x`]), ...got.map((g) => `${g.p50.toFixed(0)} / ${g.p99.toFixed(0)}`), [bb.cpuMs, ...got.map((g) => g.cpuMs)].map((x) => x.toFixed(1)).join(" / "), got.map((g) => g.serverMs.toFixed(1)).join(" / ")]);
      process.stderr.write(`round ${r}: bare ${bb.rate.toFixed(1)}/s, ${got.map((g, i) => `${kinds[i]} ${g.rate.toFixed(1)}/s`).join(", ")}\n`);
    }
    console.log(`${N} items a round through /reward/batch in chunks of ${CHUNK}, ${INFLIGHT} in flight; bare: python3 on 2 processes\n`);
    console.log(table(rows));
    console.log();
    for (const k of kinds) console.log(`${k} / bare, median of ${ROUNDS} rounds: ${pct([...ratios[k]].sort((x, y) => x - y), 50).toFixed(2)}x (goal >= 1x)`);
    for (const n of notes) console.log(n);
  } finally {
    for (const b of backends) await b.close();
  }
}

main().then(() => process.exit(0), (e) => {
  console.error(e);
  process.exit(1);
});
