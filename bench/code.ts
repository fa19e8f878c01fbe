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
 * Prints tests/s, p50 and p99 per cell, and (c)/(a) and (c)/(b) ratios. Targets: (c) >= 50% of
 * (a) and >= 10x (b). Usage: npx tsx bench/code.ts [--quick]; npx tsx bench/code.ts --humaneval [...]
 * runs bench/code-humaneval.ts instead (HumanEval-shaped items through /reward/batch against bare runs).
 */
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir, cpus } from "node:os";
import { recipeFor, imageTag, rootfsDir } from "../sandbox/images.js";
import { openDocker, dockerOptions } from "../sandbox/docker/index.js";
import { loadConfig } from "../src/core/config.js";
import { openBwrap } from "../sandbox/bwrap/index.js";
import type { Sandbox } from "../sandbox/types.js";
import { closedLoop, spawnOut, type Cell } from "./lib.js";
import Docker from "dockerode";
import { PassThrough, type Duplex } from "node:stream";

const quick = process.argv.includes("--quick");
const PROGRAM = "n = int(input())\nprint(sum(i * i for i in range(n)))\n";
const STDIN = "1000\n";
const EXPECT = String(Array.from({ length: 1000 }, (_, i) => i * i).reduce((a, b) => a + b, 0));
const LEVELS = [1, 16, 128];

type RunOnce = () => Promise<string>;

/** One cell: `run` in a closed loop, each output checked. */
function measure(run: RunOnce, concurrency: number, total: number): Promise<Cell> {
  const checked = async () => {
    const out = await run();
    if (out.trim() !== EXPECT) throw new Error(`wrong output: ${JSON.stringify(out.slice(0, 200))}`);
  };
  // Warm-up: one run per slot, not counted.
  return closedLoop(checked, concurrency, total, Math.min(concurrency, 8));
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

  const ways: { name: string; run: RunOnce; counts: number[]; close?: () => Promise<void> }[] = [];
  const big = quick ? [40, 120, 256] : [150, 600, 1200];
  ways.push({ name: "(a) python3 spawned directly (limit)", run: () => spawnOut(["chroot", rootfs, "/usr/bin/python3", "/sandbox/run/bench_main.py"], STDIN), counts: big });
  ways.push({
    name: "(b) docker run per test (naive)",
    run: () => spawnOut(["docker", "run", "--rm", "-i", "--network", "none", "-v", `${work}:/w:ro`, "-w", "/w", tag, "/usr/bin/python3", "main.py"], STDIN),
    counts: quick ? [4, 16, 32] : [10, 32, 128],
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
  ways.push({ name: `(c) assay docker (pool ${pool})`, run: sbRun(d.sandbox), counts: big, close: () => d.sandbox!.close() });
  const b = await openBwrap({ ...config, poolSize: Math.max(128, pool) });
  if (b.sandbox) ways.push({ name: "(d) assay bwrap", run: sbRun(b.sandbox), counts: big, close: () => b.sandbox!.close() });
  else console.log(`(d) skipped: ${b.note}`);
  // (e): warm idle containers, one `exec` per test through the Engine API.
  const docker = new Docker();
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
  // Let the pool finish starting before timing.
  await new Promise((r) => setTimeout(r, 3000));

  const results: Record<string, Cell[]> = {};
  try {
    for (const w of ways) {
      results[w.name] = [];
      for (let i = 0; i < LEVELS.length; i++) {
        const c = await measure(w.run, LEVELS[i], w.counts[i]);
        results[w.name].push(c);
        process.stderr.write(`${w.name} @${LEVELS[i]}: ${c.rate.toFixed(1)} tests/s, p50 ${c.p50.toFixed(0)} ms, p99 ${c.p99.toFixed(0)} ms (${c.n} tests)\n`);
      }
    }
  } finally {
    // Containers, scratch folders and cgroups go even when a way fails.
    for (const w of ways) await w.close?.().catch(() => {});
  }
  rmSync(work, { recursive: true, force: true });
  rmSync(join(rootfs, "sandbox", "run", "bench_main.py"), { force: true });

  const lines: string[] = [];
  lines.push(`| way | ${LEVELS.map((l) => `${l} concurrent: tests/s (p50 / p99 ms)`).join(" | ")} |`);
  lines.push(`| --- | ${LEVELS.map(() => "---").join(" | ")} |`);
  for (const [name, cells] of Object.entries(results)) {
    lines.push(`| ${name} | ${cells.map((c) => `${c.rate.toFixed(1)} (${c.p50.toFixed(0)} / ${c.p99.toFixed(0)})`).join(" | ")} |`);
  }
  const a = results[ways[0].name];
  const nb = results[ways[1].name];
  const c = results[ways[2].name];
  lines.push("");
  lines.push(`(c)/(a) throughput: ${LEVELS.map((l, i) => `${l}: ${((100 * c[i].rate) / a[i].rate).toFixed(0)}%`).join(", ")} (target >= 50%)`);
  lines.push(`(c)/(b) throughput: ${LEVELS.map((l, i) => `${l}: ${(c[i].rate / nb[i].rate).toFixed(1)}x`).join(", ")} (target >= 10x)`);
  console.log(lines.join("\n"));
}

// --humaneval: HumanEval-shaped items through /reward/batch against the same programs run bare
// (bench/code-humaneval.ts); otherwise the four ways above.
if (process.argv.includes("--humaneval")) {
  await import("./code-humaneval.js");
} else {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
