/**
 * Code-execution throughput, one run, four ways of running the same small Python test
 * (read n, print a sum), at 1, 16 and 128 concurrent runs:
 *   (a) limit:  the sandbox image's own python3 spawned directly per test (chroot into the image's
 *               root filesystem, no limits, no isolation) — the cost of starting the interpreter;
 *   (b) naive:  one `docker run --rm --network none -i <image> python3 main.py` per test;
 *   (c) assay docker: Assay's docker backend (warm pool, in-container runner);
 *   (d) assay bwrap:  Assay's bwrap backend (one bubblewrap sandbox per test);
 *   (e) docker exec:  one `docker exec` (Engine API, no CLI) per test into warm containers — the
 *               other way to reach a pre-started container, measured to justify attaching instead.
 * (c) and (d) fork each Python run from the slot's warm interpreter (the fork server, issue 31).
 * Then the same test in C++, compiled once (issue 31: "the C++ row's per-test cost after the
 * compile within 1.2x of running the binary bare"):
 *   (f) the binary run bare (chroot into the cpp image's root filesystem, compiled there once);
 *   (g) assay docker and (h) assay bwrap running the same source (compiled on its first test,
 *       from the slot's cache after).
 * And the memory a warm bwrap slot holds (its runner and fork server: PSS, from smaps_rollup).
 * Prints tests/s, p50 and p99 per cell, and the ratios against (a), (b) and (f). Targets:
 * (c), (d) >= 2x (a) at 16 and 128 concurrent, p50 < 3 ms at 1; (c) >= 10x (b); (g), (h) per
 * test <= 1.2x (f). Both backends run the same number of slots (the pool), started ahead
 * (docker fills its pool, bwrap's warmUp starts its slots and their fork servers).
 * Usage: npx tsx bench/code.ts [--quick] [--ways a,c,d,f,g,h] (default: all);
 * npx tsx bench/code.ts --latency [--n 200]: one test at a time on each backend, where its time
 * goes (the runner's phases, the channel, the host) and what /reward adds on top (an in-process
 * server, the code verifier, the same program as one stdin/stdout test);
 * npx tsx bench/code.ts --humaneval [...] runs bench/code-humaneval.ts instead (HumanEval-shaped
 * items through /reward/batch against bare runs).
 */
import { mkdtempSync, writeFileSync, rmSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir, cpus } from "node:os";
import { recipeFor, imageTag, rootfsDir } from "../sandbox/images.js";
import { openDocker, dockerOptions } from "../sandbox/docker/index.js";
import { loadConfig } from "../src/core/config.js";
import { openBwrap } from "../sandbox/bwrap/index.js";
import type { Sandbox } from "../sandbox/types.js";
import { childrenCpuMs, closedLoop, sandboxCpuMs, spawnOut, type Cell } from "./lib.js";
import { buildCppBare, CPP, EXPECT, PROGRAM, STDIN } from "./code-program.js";
import Docker from "dockerode";
import { spawnSync } from "node:child_process";
import { LABEL, OWNER } from "../sandbox/docker/worker.js";
import { PassThrough, type Duplex } from "node:stream";

const quick = process.argv.includes("--quick");
const waysArg = process.argv.indexOf("--ways");
const only = waysArg > 0 ? new Set(process.argv[waysArg + 1].split(",")) : null;
const want = (letter: string) => !only || only.has(letter);
const LEVELS = [1, 16, 128];

type RunOnce = () => Promise<string>;

/** Where a way's CPU time is counted: the bench's reaped children (bare), or the sandboxes' cgroups. */
type CpuFrom = "bare" | "docker" | "bwrap";

/**
 * One cell: `run` in a closed loop, each output checked; with the CPU time per test (the bench
 * process's own, plus its reaped children's for a bare way or the sandboxes' cgroups': on a
 * shared machine it says more than tests/s, see bench/README.md).
 */
async function measure(run: RunOnce, concurrency: number, total: number, from: CpuFrom): Promise<Cell & { cpuMs: number }> {
  const checked = async () => {
    const out = await run();
    if (out.trim() !== EXPECT) throw new Error(`wrong output: ${JSON.stringify(out.slice(0, 200))}`);
  };
  const warmup = Math.min(concurrency, 8);
  const box = () => (from === "bare" ? { ids: "", ms: childrenCpuMs() } : sandboxCpuMs(from));
  const [me0, box0] = [process.cpuUsage(), box()];
  // Warm-up: one run per slot, not counted in tests/s (its CPU is: divided by every run).
  const cell = await closedLoop(checked, concurrency, total, warmup);
  const [me, box1] = [process.cpuUsage(me0), box()];
  const cpuMs = box0 && box1 && box0.ids === box1.ids ? ((me.user + me.system) / 1000 + box1.ms - box0.ms) / (total + warmup) : NaN;
  return { ...cell, cpuMs };
}

async function main() {
  const config = loadConfig().sandbox;
  const recipe = recipeFor("python")!;
  const tag = imageTag(recipe);
  const rootfs = rootfsDir(recipe, config);
  const work = mkdtempSync(join(tmpdir(), "assay-bench-"));
  writeFileSync(join(work, "main.py"), PROGRAM);
  // (a) needs the program inside the chroot: the image's scratch dir on disk.
  writeFileSync(join(rootfs, "sandbox", "run", "bench_main.py"), PROGRAM);

  const ways: { name: string; run: RunOnce; counts: number[]; cpu: CpuFrom; close?: () => Promise<void> }[] = [];
  const big = quick ? [40, 120, 256] : [150, 600, 1200];
  if (want("a")) ways.push({ name: "(a) python3 spawned directly (limit)", run: () => spawnOut(["chroot", rootfs, "/usr/bin/python3", "/sandbox/run/bench_main.py"], STDIN), counts: big, cpu: "bare" });
  if (want("b")) ways.push({
    name: "(b) docker run per test (naive)",
    run: () => spawnOut(["docker", "run", "--rm", "-i", "--network", "none", "-v", `${work}:/w:ro`, "-w", "/w", tag, "/usr/bin/python3", "main.py"], STDIN),
    counts: quick ? [4, 16, 32] : [10, 32, 128],
    cpu: "bare", // (the docker CLI's; the container's own CPU is not counted)
  });
  // ASSAY_SANDBOX_POOL when set, else a pool sized to the cores (the server's default: one per core, at least 4).
  const pool = process.env.ASSAY_SANDBOX_POOL ? config.poolSize : Math.max(4, cpus().length * 4);
  const d = await openDocker({ ...dockerOptions(config), poolSize: pool });
  if (!d.sandbox) throw new Error(d.note);
  (d.sandbox as any).warm("python");
  const sbRun = (sb: Sandbox) => async () => {
    const r = await sb.run({ language: "python", code: PROGRAM, stdin: STDIN, limits: { wallMs: 30_000, cpuMs: 10_000 } });
    if (r.status !== "finished" || r.exitCode !== 0) {
      throw new Error(`${sb.name}: ${r.status} exit ${r.exitCode} ${r.message ?? ""} ${r.stderr.slice(-500)}`);
    }
    return r.stdout;
  };
  if (want("c")) ways.push({ name: `(c) assay docker (pool ${pool}, fork server)`, run: sbRun(d.sandbox), counts: big, cpu: "docker" });
  // As many slots as docker's pool (128 slots on two cores once made the 128-concurrent cell
  // start 128 warm slots, two interpreter starts each, inside its 256 tests), started ahead.
  const b = await openBwrap({ ...config, poolSize: pool });
  await b.sandbox?.warmUp();
  if (b.sandbox && want("d")) ways.push({ name: `(d) assay bwrap (${b.sandbox.warm === true ? "warm slots, fork server" : "a sandbox per run"})`, run: sbRun(b.sandbox), counts: big, cpu: "bwrap" });
  else if (!b.sandbox) console.log(`(d) skipped: ${b.note}`);
  // (e): warm idle containers, one `exec` per test through the Engine API.
  const docker = new Docker();
  if (want("e")) {
  for (const c of await docker.listContainers({ all: true, filters: { label: ["assay.bench"] } })) {
    await docker.getContainer(c.Id).remove({ force: true }).catch(() => {});
  }
  const idle: Docker.Container[] = [];
  for (let i = 0; i < pool; i++) {
    const c = await docker.createContainer({
      Image: tag, Cmd: ["/usr/bin/python3", "-c", "import time\nwhile True: time.sleep(3600)"],
      NetworkDisabled: true, Labels: { "assay.bench": "1" },
      HostConfig: { NetworkMode: "none", ReadonlyRootfs: true, AutoRemove: false, LogConfig: { Type: "none", Config: {} } },
    });
    await c.start();
    idle.push(c);
  }
  const waiters: ((c: Docker.Container) => void)[] = [];
  const take = () => (idle.length ? Promise.resolve(idle.pop()!) : new Promise<Docker.Container>((r) => waiters.push(r)));
  const give = (c: Docker.Container) => (waiters.length ? waiters.shift()!(c) : idle.push(c));
  const all = [...idle];
  ways.push({
    name: `(e) docker exec per test (pool ${pool})`,
    counts: quick ? [20, 60, 128] : [60, 200, 400],
    cpu: "bare", // (the exec'd processes run in the containers' cgroups: not counted)
    run: async () => {
      const c = await take();
      try {
        const ex = await c.exec({ Cmd: ["/usr/bin/python3", "-c", PROGRAM], AttachStdin: true, AttachStdout: true, AttachStderr: true, User: "65534" });
        const stream = (await ex.start({ hijack: true, stdin: true })) as unknown as Duplex;
        const out = new PassThrough();
        let text = "";
        out.on("data", (d) => (text += d));
        docker.modem.demuxStream(stream, out, new PassThrough());
        stream.write(STDIN);
        stream.end();
        await new Promise((r) => stream.on("end", r));
        return text;
      } finally {
        give(c);
      }
    },
    close: async () => {
      await Promise.all(all.map((c) => c.remove({ force: true }).catch(() => {})));
    },
  });
  }
  // C++: the binary bare (f) against Assay's docker (g) and bwrap (h) running the same source.
  const cppRecipe = recipeFor("cpp")!;
  const cppRoot = rootfsDir(cppRecipe, config);
  const cppFiles: string[] = [];
  const smallCounts = quick ? [40, 120, 256] : [150, 600, 1200];
  if (want("f")) {
    const bare = await buildCppBare(cppRoot);
    cppFiles.push(...bare.files);
    ways.push({ name: "(f) C++ binary run directly (bare)", run: () => spawnOut(bare.argv, STDIN), counts: smallCounts, cpu: "bare" });
  }
  const cppRun = (sb: Sandbox) => async () => {
    const r = await sb.run({ language: "cpp", code: CPP, stdin: STDIN, limits: { wallMs: 30_000, cpuMs: 10_000 }, compileWallMs: 120_000 });
    if (r.status !== "finished" || r.exitCode !== 0) throw new Error(`${sb.name} cpp: ${r.status} exit ${r.exitCode} ${r.message ?? ""} ${r.compile?.stderr ?? ""} ${r.stderr.slice(-500)}`);
    return r.stdout;
  };
  if (want("g")) ways.push({ name: `(g) C++ on assay docker (compiled once)`, run: cppRun(d.sandbox), counts: smallCounts, cpu: "docker" });
  if (want("h") && b.sandbox) ways.push({ name: `(h) C++ on assay bwrap (${b.sandbox.warm === true ? "warm slots" : "a sandbox per run"}, compiled once)`, run: cppRun(b.sandbox), counts: smallCounts, cpu: "bwrap" });
  const closeAll = async () => {
    await d.sandbox!.close().catch(() => {});
    await b.sandbox?.close().catch(() => {});
  };
  // Let the pool finish starting before timing.
  await new Promise((r) => setTimeout(r, 3000));

  const results: Record<string, (Cell & { cpuMs: number })[]> = {};
  let memory = "";
  try {
    for (const w of ways) {
      results[w.name] = [];
      for (let i = 0; i < LEVELS.length; i++) {
        const c = await measure(w.run, LEVELS[i], w.counts[i], w.cpu);
        results[w.name].push(c);
        process.stderr.write(`${w.name} @${LEVELS[i]}: ${c.rate.toFixed(1)} tests/s, p50 ${c.p50.toFixed(2)} ms, p99 ${c.p99.toFixed(0)} ms, CPU ${c.cpuMs.toFixed(2)} ms/test (${c.n} tests)\n`);
      }
      // The python slots, right after their row (the C++ rows move slots to the cpp image).
      if (w.name.startsWith("(d)") && b.sandbox?.warm === true) memory = warmSlotMemory(b.sandbox);
    }
  } finally {
    // Containers, scratch folders and cgroups go even when a way fails.
    for (const w of ways) await w.close?.().catch(() => {});
    await closeAll();
    rmSync(work, { recursive: true, force: true });
    rmSync(join(rootfs, "sandbox", "run", "bench_main.py"), { force: true });
    for (const f of cppFiles) rmSync(f, { force: true });
  }

  const lines: string[] = [];
  lines.push(`| way | ${LEVELS.map((l) => `${l} concurrent: tests/s (p50 / p99 ms) [CPU ms/test]`).join(" | ")} |`);
  lines.push(`| --- | ${LEVELS.map(() => "---").join(" | ")} |`);
  for (const [name, cells] of Object.entries(results)) {
    lines.push(`| ${name} | ${cells.map((c) => `${c.rate.toFixed(1)} (${c.p50 < 10 ? c.p50.toFixed(1) : c.p50.toFixed(0)} / ${c.p99.toFixed(0)}) [${c.cpuMs.toFixed(1)}]`).join(" | ")} |`);
  }
  const row = (letter: string) => Object.entries(results).find(([name]) => name.startsWith(`(${letter})`))?.[1];
  const ratio = (x: string, y: string, what: string) => {
    const [p, q] = [row(x), row(y)];
    if (p && q) {
      lines.push(`(${x})/(${y}) tests/s: ${LEVELS.map((l, i) => `${l}: ${(p[i].rate / q[i].rate).toFixed(2)}x`).join(", ")} (${what}); ` +
        `by CPU per test, (${y})/(${x}): ${LEVELS.map((l, i) => `${l}: ${(q[i].cpuMs / p[i].cpuMs).toFixed(2)}x`).join(", ")}`);
    }
  };
  lines.push("");
  ratio("c", "a", "target >= 2x at 16 and 128");
  ratio("d", "a", "target >= 2x at 16 and 128");
  ratio("c", "b", "target >= 10x");
  for (const x of ["c", "d"]) if (row(x)) lines.push(`(${x}) p50 at 1 concurrent: ${row(x)![0].p50.toFixed(2)} ms (target < 3 ms)`);
  // Per-test cost: the inverse of tests/s, against the bare binary's (target <= 1.2x).
  for (const x of ["g", "h"]) {
    const [p, q] = [row(x), row("f")];
    if (p && q) {
      lines.push(`(${x}) per-test cost / (f): by tests/s ${LEVELS.map((l, i) => `${l}: ${(q[i].rate / p[i].rate).toFixed(2)}x`).join(", ")}; ` +
        `by CPU ${LEVELS.map((l, i) => `${l}: ${(p[i].cpuMs / q[i].cpuMs).toFixed(2)}x`).join(", ")} (target <= 1.2x)`);
    }
  }
  if (memory) lines.push(memory);
  console.log(lines.join("\n"));
}

/**
 * The memory each warm bwrap slot holds between runs: its runner and fork server (every process
 * in the slot's warm group), PSS and RSS from /proc/<pid>/smaps_rollup, in MiB.
 */
function warmSlotMemory(sb: import("../sandbox/bwrap/index.js").BwrapSandbox): string {
  const cg = sb.cgroups;
  if (typeof cg === "string") return "";
  const slots = (sb as unknown as { opts: { slots: number } }).opts.slots;
  const per: { pss: number; rss: number; procs: number }[] = [];
  for (let s = 0; s < slots; s++) {
    const pids = new Set<string>();
    for (const tid of cg.threads(slots + s)) {
      try {
        pids.add(/^Tgid:\s+(\d+)/m.exec(readFileSync(`/proc/${tid}/status`, "utf8"))![1]);
      } catch {
        /* gone */
      }
    }
    if (!pids.size) continue;
    let pss = 0;
    let rss = 0;
    for (const pid of pids) {
      try {
        const t = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
        pss += Number(/^Pss:\s+(\d+)/m.exec(t)?.[1] ?? 0);
        rss += Number(/^Rss:\s+(\d+)/m.exec(t)?.[1] ?? 0);
      } catch {
        /* gone */
      }
    }
    per.push({ pss: pss / 1024, rss: rss / 1024, procs: pids.size });
  }
  if (!per.length) return "";
  const med = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  return `memory per warm bwrap slot (python image, ${per.length} slots up after the (d) row): PSS median ${med(per.map((p) => p.pss)).toFixed(1)} MiB, max ${Math.max(...per.map((p) => p.pss)).toFixed(1)} MiB; RSS median ${med(per.map((p) => p.rss)).toFixed(1)} MiB; processes per slot ${med(per.map((p) => p.procs))}`;
}

/**
 * CPU time (ms) the Docker engine's own processes on this machine have used so far: dockerd and
 * containerd (the oldest of each name: the engine at /var/run/docker.sock), and the
 * containerd-shim of each of this process's sandbox containers (the parent of its pid 1), which
 * carry the attach stream. Not in the containers' cgroups nor in the bench's own CPU: this says
 * what the channel through dockerd costs beside them. null without a local engine.
 */
function engineCpuMs(): { ms: number; shims: number } | null {
  const ticks = (pid: number) => {
    const t = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = t.slice(t.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  };
  const oldest = (name: string) => Number(spawnSync("pgrep", ["-xo", name], { encoding: "utf8" }).stdout.trim()) || 0;
  const [dockerd, containerd] = [oldest("dockerd"), oldest("containerd")];
  if (!dockerd) return null;
  const ids = spawnSync("docker", ["ps", "-q", "--no-trunc", "--filter", `label=${LABEL}=${OWNER}`], { encoding: "utf8" }).stdout.split("\n").filter(Boolean);
  const inits = ids.length ? spawnSync("docker", ["inspect", "-f", "{{.State.Pid}}", ...ids], { encoding: "utf8" }).stdout.split("\n").filter(Boolean).map(Number) : [];
  try {
    const shims = inits.map((p) => Number(readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1].split(" ")[1]));
    return { ms: [dockerd, containerd, ...shims].filter(Boolean).reduce((a, p) => a + ticks(p), 0), shims: shims.length };
  } catch {
    return null;
  }
}

/**
 * --latency: one test at a time, `n` of each after a warm-up, on docker and bwrap: the sandbox
 * API's p50 (the backend's run call), split into the runner's phases (ms since it read the job:
 * `files` written, program `started` (handed to the pre-forked process, clocks running),
 * `exited`, outcome `collected`, leftovers `swept`, scratch `wiped`), the channel (the job's
 * line out and the reply back, less the runner's time) and the host's own share; then the same
 * program as a one-test item through POST /reward (in-process server) and the p50 it adds.
 */
async function latency() {
  const n = Number(process.argv[process.argv.indexOf("--n") + 1]) || 200;
  const { Worker } = await import("../sandbox/docker/worker.js");
  const { WarmSlot } = await import("../sandbox/bwrap/warm.js");
  const { createRuntime } = await import("../src/core/runtime.js");
  const { createApp } = await import("../src/server/app.js");
  const pino = (await import("pino")).default;
  let phases: [string, number][][] = [];
  let channel: number[] = [];
  let faults: number[] = [];
  let runCpu: number[] = [];
  for (const C of [Worker, WarmSlot] as unknown as { prototype: { exec: (job: any, ...a: unknown[]) => Promise<any> } }[]) {
    const orig = C.prototype.exec;
    C.prototype.exec = async function (this: unknown, job: any, ...a: unknown[]) {
      job.phases = true;
      const t = performance.now();
      const r = await orig.call(this, job, ...a);
      if (r.phases) {
        phases.push(r.phases);
        if (typeof r.faults === "number") faults.push(r.faults);
        if (typeof r.runCpuMs === "number") runCpu.push(r.runCpuMs);
        channel.push(performance.now() - t - r.phases[r.phases.length - 1][1]);
      }
      return r;
    };
  }
  const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1] ?? NaN;
  const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  const lines: string[] = [];
  for (const kind of ["docker", "bwrap"] as const) {
    const env = { ...process.env, ASSAY_SANDBOX: kind, ASSAY_SANDBOX_POOL: "2", ASSAY_LOG_LEVEL: "warn", ASSAY_DATA_DIR: ":memory:" };
    const runtime = await createRuntime(loadConfig(env), { log: pino({ level: "warn" }), only: ["code"] });
    await runtime.warmUp();
    const sb = (await runtime.services.sandbox())!;
    const once = async () => {
      const r = await sb.run({ language: "python", code: PROGRAM, stdin: STDIN, limits: { wallMs: 30_000, cpuMs: 10_000 } });
      if (r.stdout.trim() !== EXPECT) throw new Error(`${kind}: ${r.status} ${r.message ?? ""} ${r.stderr.slice(-300)}`);
    };
    for (let i = 0; i < 20; i++) await once();
    phases = [];
    channel = [];
    faults = [];
    runCpu = [];
    const l0 = load();
    const box0 = sandboxCpuMs(kind);
    const eng0 = kind === "docker" ? engineCpuMs() : null;
    const me0 = process.cpuUsage();
    const ts: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await once();
      ts.push(performance.now() - t);
    }
    const me = process.cpuUsage(me0);
    const eng1 = kind === "docker" ? engineCpuMs() : null;
    const box1 = sandboxCpuMs(kind);
    const hostCpu = (me.user + me.system) / 1000 / n;
    const boxCpu = box0 && box1 && box0.ids === box1.ids ? (box1.ms - box0.ms) / n : NaN;
    const names = phases[0].map(([name]) => name);
    let prev = 0;
    const split = names.map((name, i) => {
      const at = med(phases.map((p) => p[i]?.[1] ?? NaN));
      const part = `${name} +${(at - prev).toFixed(2)}`;
      prev = at;
      return part;
    });
    const runnerMs = med(phases.map((p) => p[p.length - 1][1]));
    lines.push(`${kind} sandbox API, ${n} tests one at a time: p50 ${med(ts).toFixed(2)} ms, p10 ${ts.sort((x, y) => x - y)[Math.floor(n / 10)].toFixed(2)} ms; ` +
      `runner ${runnerMs.toFixed(2)} ms (${split.join(", ")}; the run's process once it had the run, p50: ${med(faults)} minor page faults, ${med(runCpu).toFixed(2)} ms CPU), channel ${med(channel).toFixed(2)} ms, host ${(med(ts) - runnerMs - med(channel)).toFixed(2)} ms; ` +
      `CPU per test: host ${hostCpu.toFixed(2)} ms, sandbox ${boxCpu.toFixed(2)} ms` +
      (eng0 && eng1 && eng0.shims === eng1.shims ? `, docker engine (dockerd, containerd, ${eng1.shims} shims) ${((eng1.ms - eng0.ms) / n).toFixed(2)} ms` : "") +
      `; load average ${l0} -> ${load()}`);
    // The same program as one test of a code item, through POST /reward.
    const http = createApp(runtime).app.listen(0, "127.0.0.1");
    await new Promise((r) => http.once("listening", r));
    const url = `http://127.0.0.1:${(http.address() as { port: number }).port}/reward`;
    const item = { verifier: "code", response: "```python\n" + PROGRAM + "```", reference: { inputs: [STDIN], outputs: [EXPECT + "\n"] } };
    const post = async () => {
      const r = await (await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(item) })).json();
      if (r.reward !== 1) throw new Error(`${kind} /reward: ${JSON.stringify(r).slice(0, 300)}`);
    };
    for (let i = 0; i < 20; i++) await post();
    const rs: number[] = [];
    const m0 = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await post();
      rs.push(performance.now() - t);
    }
    const m = process.cpuUsage(m0);
    lines.push(`${kind} POST /reward (code, one stdin/stdout test), ${n} one at a time: p50 ${med(rs).toFixed(2)} ms (+${(med(rs) - med(ts)).toFixed(2)} ms over the sandbox API); ` +
      `host CPU per request ${((m.user + m.system) / 1000 / n).toFixed(2)} ms (server and client, one process); load average ${load()}`);
    http.close();
    await runtime.close();
  }
  console.log(lines.join("\n"));
}

// --humaneval: HumanEval-shaped items through /reward/batch against the same programs run bare
// (bench/code-humaneval.ts); otherwise the four ways above.
if (process.argv.includes("--humaneval")) {
  await import("./code-humaneval.js");
} else if (process.argv.includes("--latency")) {
  latency().then(() => process.exit(0), (e) => {
    console.error(e);
    process.exit(1);
  });
} else {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
