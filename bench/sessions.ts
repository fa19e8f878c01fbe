/**
 * Code-interpreter sessions (issue 32): a trivial cell's exec latency (p50/p99) at 1, 64 and 256
 * concurrent sessions against a local persistent Python interpreter driven the same way (one
 * JSON line each way over pipes, the same number of interpreters and the same concurrency) in
 * the same run, the ratio of the two; sessions per GiB of memory (each session's sandbox cgroup,
 * from the engine's stats after the trivial cells); creation time from the warm pool.
 *
 *   npx tsx bench/sessions.ts                      # levels 1,16 (a small machine)
 *   npx tsx bench/sessions.ts --levels 1,64,256    # the levels (256 containers: a big host)
 *   --execs N   cells per session per level (default 20)
 *
 * Needs Docker and the python sandbox image. Everything it starts it removes.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { performance } from "node:perf_hooks";
import { DockerBoxes } from "../sandbox/sessions/index.js";
import { Sessions } from "../src/sessions/service.js";
import type { SessionLimits } from "../src/sessions/types.js";
import { lines } from "../sandbox/docker/worker.js";

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : dflt;
};
const LEVELS = arg("levels", "1,16").split(",").map(Number);
const EXECS = Number(arg("execs", "20"));
const CELL = "x = 1 + 1\nx";

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

/** A local persistent python: one JSON cell a line in, one JSON reply a line out (exec/eval in one namespace). */
const LOCAL = `
import ast, json, sys
ns = {}
for line in sys.stdin:
    code = json.loads(line)["code"]
    tree = ast.parse(code)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, "<cell>", "exec"), ns)
    v = eval(compile(ast.Expression(last.value), "<cell>", "eval"), ns) if last else None
    sys.stdout.write(json.dumps({"value": repr(v)}) + "\\n"); sys.stdout.flush()
`;

class Local {
  private readonly p: ChildProcess;
  private waiting: (() => void) | null = null;
  constructor() {
    this.p = spawn("python3", ["-u", "-c", LOCAL], { stdio: ["pipe", "pipe", "inherit"] });
    this.p.stdout!.on("data", lines(() => {
      const w = this.waiting;
      this.waiting = null;
      w?.();
    }));
  }
  exec(code: string): Promise<void> {
    return new Promise((res) => {
      this.waiting = res;
      this.p.stdin!.write(JSON.stringify({ code }) + "\n");
    });
  }
  kill() {
    this.p.kill("SIGKILL");
  }
}

async function run(n: number, one: (i: number) => Promise<void>): Promise<number[]> {
  const ms: number[] = [];
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      for (let k = 0; k < EXECS; k++) {
        const t0 = performance.now();
        await one(i);
        ms.push(performance.now() - t0);
      }
    }),
  );
  return ms;
}

const limits: SessionLimits = { memoryMb: 256, cpuMsPerExec: 10_000, wallMsPerExec: 60_000, lifetimeMs: 3_600_000, idleMs: 3_600_000, outputBytes: 1 << 20 };

async function main() {
  const max = Math.max(...LEVELS);
  console.log(`sessions bench: levels ${LEVELS.join(", ")}, ${EXECS} trivial cells per session per level; load average ${(await import("node:os")).loadavg().map((x) => x.toFixed(1)).join(" ")}`);
  // Creation from the warm pool: 4 warm boxes, 4 creations once they are warm.
  {
    const boxes = new DockerBoxes({ warm: 4, memoryMb: limits.memoryMb, pids: 128, scratchMb: 64 });
    const svc = new Sessions(boxes, { defaults: limits, maxLimits: limits, max: 16, maxWaitMs: 120_000, retryAfterS: 1 });
    boxes.fill();
    await svc.warmUp();
    while (boxes.stats().warm < 4) await new Promise((r) => setTimeout(r, 100));
    const created: number[] = [];
    const first: number[] = [];
    for (let i = 0; i < 4; i++) {
      const t0 = performance.now();
      const s = await svc.create({ language: "python" });
      created.push(performance.now() - t0);
      const t1 = performance.now();
      await svc.exec(s.id, { code: "1" });
      first.push(performance.now() - t1);
    }
    const t0 = performance.now();
    const cold = await svc.create({ language: "python", startBy: Date.now() + 120_000 });
    const coldMs = performance.now() - t0;
    void cold;
    console.log(`creation from the warm pool: p50 ${pct(created, 50).toFixed(1)} ms (max ${Math.max(...created).toFixed(1)}); first exec after it ${pct(first, 50).toFixed(1)} ms; a fifth creation at once after (the pool refilling) ${coldMs.toFixed(0)} ms`);
    await svc.shutdown();
  }
  const rows: string[] = [];
  for (const n of LEVELS) {
    const boxes = new DockerBoxes({ warm: n, memoryMb: limits.memoryMb, pids: 128, scratchMb: 64 });
    const svc = new Sessions(boxes, { defaults: limits, maxLimits: limits, max: max + 8, maxWaitMs: 600_000, retryAfterS: 1 });
    boxes.fill();
    const tc = performance.now();
    const ids = await Promise.all(Array.from({ length: n }, () => svc.create({ language: "python" }).then((s) => s.id)));
    const startS = (performance.now() - tc) / 1000;
    for (const id of ids) await svc.exec(id, { code: "0" }); // the interpreter's first cell (its start) is not the trivial cell's cost
    const sess = await run(n, async (i) => {
      const r = await svc.exec(ids[i]!, { code: CELL });
      if (r.value !== "2") throw new Error(`unexpected: ${JSON.stringify(r)}`);
    });
    // Memory of each session's sandbox (its cgroup: the interpreter, supervisor and tmpfs), a sample of up to 16.
    const docker = (boxes as any).docker as import("dockerode");
    const mine = (await docker.listContainers({ filters: { label: ["assay.session=1"] } })).slice(0, 16);
    const mem = await Promise.all(mine.map((c) => docker.getContainer(c.Id).stats({ stream: false }).then((s: any) => (s.memory_stats.usage - (s.memory_stats.stats?.inactive_file ?? 0)) / 2 ** 20)));
    const perMb = mem.reduce((a, b) => a + b, 0) / Math.max(1, mem.length);
    await svc.shutdown();
    const locals = Array.from({ length: n }, () => new Local());
    for (const l of locals) await l.exec("0");
    const loc = await run(n, (i) => locals[i]!.exec(CELL));
    for (const l of locals) l.kill();
    const row = `| ${n} | ${pct(sess, 50).toFixed(2)} | ${pct(sess, 99).toFixed(2)} | ${pct(loc, 50).toFixed(2)} | ${pct(loc, 99).toFixed(2)} | ${(pct(sess, 50) / pct(loc, 50)).toFixed(2)}x | +${(pct(sess, 50) - pct(loc, 50)).toFixed(2)} | ${perMb.toFixed(1)} | ${Math.floor(1024 / perMb)} | ${startS.toFixed(1)} |`;
    rows.push(row);
    console.log(row);
  }
  console.log("\n| sessions | session p50 ms | session p99 ms | local p50 ms | local p99 ms | p50 ratio | p50 overhead ms | MiB per session | sessions per GiB | start all s |");
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const r of rows) console.log(r);
}

await main();
process.exit(0);
