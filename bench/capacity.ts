/**
 * Capacity per core, for docs/scaling.md: the CPU time one item costs for each verifier family,
 * and from it items/s per core (1 / CPU seconds per item). CPU time, not wall time: on a shared
 * machine, what other processes take moves items/s but not the CPU an item costs. Counted: the
 * server process (every thread: HTTP, the math pool) and its child processes (SQLite workers), and
 * for code the sandbox containers' cgroups (the program, its compiler, the in-sandbox runner).
 * The idle server's own CPU (timers, the pool's upkeep), measured for 5 s before each family, is
 * taken off: on a loaded machine a cheap family's run is long, and that upkeep would dominate.
 * Also: the memory of one warm sandbox container (cgroup v1 `memory.usage_in_bytes`, idle, after
 * its warm-up), per image.
 *
 *   npm run build && npx tsx bench/capacity.ts [--scale 1] [--families exact,math,sql,code-python,code-cpp,rubric]
 *
 * Items go as `POST /reward/batch` of 64 (deadline 60 s: a loaded machine is slow, and a
 * deadline-cut item would count CPU for no reward), 4 in flight. The rubric family uses the fixture judge
 * (tests/fixtures/judge-server.ts) on loopback: its figure is Assay's own cost per judged item;
 * a real judge's tokens/s is the limit there (docs/scaling.md).
 */
import { readFileSync, readdirSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { execFileSync, spawnSync } from "node:child_process";
import { hostname, tmpdir, cpus, loadavg } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { startAssay, table } from "./lib.js";
import { ordinaryTasks, hardTasks } from "./math-sets.js";
import { startJudgeFixture } from "../tests/fixtures/judge-server.js";

const arg = (name: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
/** Items per family at --scale 1: enough that the family's own work outweighs the run's fixed costs. */
const COUNTS: Record<string, number> = { exact: 8192, math: 2048, sql: 1024, "code-python": 256, "code-cpp": 256, rubric: 512 };
const scale = Number(arg("--scale") ?? 1);
const families = (arg("--families") ?? "exact,math,sql,code-python,code-cpp,rubric").split(",");
const CLK_TCK = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout) || 100;

/** CPU seconds of a process and every descendant (threads included), from /proc. */
function treeCpuS(root: number): number {
  const kids = new Map<number, number[]>();
  const cpu = new Map<number, number>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const pid = Number(d);
      const ppid = Number(f[1]);
      cpu.set(pid, (Number(f[11]) + Number(f[12])) / CLK_TCK);
      (kids.get(ppid) ?? kids.set(ppid, []).get(ppid)!).push(pid);
    } catch {
      /* gone */
    }
  }
  let total = 0;
  const stack = [root];
  while (stack.length) {
    const p = stack.pop()!;
    total += cpu.get(p) ?? 0;
    stack.push(...(kids.get(p) ?? []));
  }
  return total;
}

/** The server's sandbox containers (owner label `<hostname>:<pid>:...`) on the default engine. */
function sandboxContainers(pid: number): string[] {
  // One listing with the labels: other processes' containers come and go between two commands.
  const rows = execFileSync("docker", ["ps", "--no-trunc", "--filter", "label=assay.sandbox", "--format", '{{.ID}} {{.Label "assay.sandbox"}}'], { encoding: "utf8" }).split("\n").filter(Boolean);
  return rows.map((r) => r.split(" ")).filter(([, owner]) => owner?.startsWith(`${hostname()}:${pid}:`)).map(([id]) => id);
}

function cgroupRead(ctrl: string, id: string, file: string): number {
  const p = `/sys/fs/cgroup/${ctrl}/docker/${id}/${file}`;
  return existsSync(p) ? Number(readFileSync(p, "utf8").trim()) : NaN;
}

/** CPU seconds used so far by the containers (cgroup v1 cpuacct), by id. */
function containersCpu(ids: string[]): Map<string, number> {
  return new Map(ids.map((id) => [id, cgroupRead("cpuacct", id, "cpuacct.usage") / 1e9]));
}

type Item = Record<string, unknown>;

async function main() {
  const sqlDir = mkdtempSync(join(tmpdir(), "assay-capacity-sql-"));
  const db = new Database(join(sqlDir, "shop.sqlite"));
  db.exec("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, price REAL, cat TEXT)");
  const ins = db.prepare("INSERT INTO item (name, price, cat) VALUES (?, ?, ?)");
  for (let i = 0; i < 2000; i++) ins.run(`item${i}`, (i * 37) % 500, `c${i % 13}`);
  db.close();
  const judge = await startJudgeFixture();
  const assay = await startAssay({ ASSAY_SANDBOX: "docker", ASSAY_SANDBOX_POOL: "2", ASSAY_WORKERS: "1", ASSAY_SQL_DIR: sqlDir, ASSAY_SQL_WORKERS: "1", ASSAY_DATA_DIR: ":memory:", ASSAY_LOG_LEVEL: "warn" });
  const pid = assay.child.pid!;
  const math = [...ordinaryTasks(512), ...hardTasks(512)];
  const make: Record<string, (i: number) => Item> = {
    exact: (i) => ({ verifier: "exact", response: String(i % 3), reference: "0" }),
    math: (i) => ({ verifier: "math", ...math[i % math.length] }),
    sql: (i) => ({ verifier: "sql", response: `SELECT name, price FROM item WHERE cat = 'c${i % 13}' AND price < ${100 + (i % 300)}`, reference: `SELECT name, price FROM item WHERE price < ${100 + (i % 300)} AND cat = 'c${i % 13}'`, options: { database: "shop" } }),
    "code-python": (i) => ({ verifier: "code", response: "```python\na, b = map(int, input().split())\nprint(a + b)\n```", reference: { inputs: [`${i} 1\n`, `2 ${i}\n`, "0 0\n"], outputs: [`${i + 1}\n`, `${i + 2}\n`, "0\n"] } }),
    "code-cpp": (i) => ({ verifier: "code", response: "```cpp\n#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a+b<<\"\\n\";}\n```", reference: { inputs: [`${i} 1\n`, `2 ${i}\n`, "0 0\n"], outputs: [`${i + 1}\n`, `${i + 2}\n`, "0\n"] } }),
    rubric: (i) => ({ verifier: "rubric", prompt: "Name the capital of France and its river.", response: i % 2 ? "Paris, on the Seine." : "Lyon.", reference: { criteria: [{ id: "city", description: 'Names "Paris".', weight: 2 }, { id: "river", description: 'Names the "Seine".', weight: 1 }] }, options: { judge: { base_url: judge.url, model: `bench${i}` } } }),
  };
  const rows: (string | number)[][] = [["family", "items", "CPU ms/item (server)", "CPU ms/item (sandboxes)", "items/s per core", "wall items/s here"]];
  const post = async (items: Item[]) => {
    const r = await fetch(`${assay.url}/reward/batch`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ items, deadline_ms: 60_000 }) });
    const out = (await r.json()) as { results: { status: string; reason: string }[] };
    const bad = out.results.find((x) => x.status !== "ok");
    if (!r.ok || bad) throw new Error(`HTTP ${r.status}: ${bad?.reason ?? JSON.stringify(out).slice(0, 300)}`);
  };
  const memory: string[] = [];
  const idle: string[] = [];
  try {
    for (const fam of families) {
      const gen = make[fam];
      if (!gen) throw new Error(`unknown family ${fam}; known: ${Object.keys(make).join(", ")}`);
      const N = Math.max(64, Math.round(COUNTS[fam] * scale));
      await post(Array.from({ length: 8 }, (_, i) => gen(i))); // warm-up: pools, images, compile caches
      const boxes = fam.startsWith("code") ? sandboxContainers(pid) : [];
      if (boxes.length) {
        const mib = boxes.map((id) => cgroupRead("memory", id, "memory.usage_in_bytes") / 2 ** 20);
        memory.push(`${fam}: ${mib.map((m) => m.toFixed(1)).join(", ")} MiB per warm container (idle)`);
      }
      // What the idle server spends anyway (timers, the sandbox pool's upkeep), per second, over
      // 5 s: taken off the run's CPU, or a slow run on a loaded machine would charge it to items.
      const i0 = treeCpuS(pid);
      await new Promise((r) => setTimeout(r, 5_000));
      const idlePerS = (treeCpuS(pid) - i0) / 5;
      const c0 = treeCpuS(pid);
      const b0 = containersCpu(boxes);
      const t0 = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (next < N) {
            const start = next;
            next += 64;
            await post(Array.from({ length: Math.min(64, N - start) }, (_, j) => gen(start + j)));
          }
        }),
      );
      const wall = (performance.now() - t0) / 1000;
      const server = Math.max(0, treeCpuS(pid) - c0 - idlePerS * wall);
      idle.push(`${fam}: ${(idlePerS * 1000).toFixed(1)} ms/s`);
      let box = 0;
      // Containers recycled mid-run are missed; those that lived through it are counted.
      for (const [id, v] of containersCpu(sandboxContainers(pid))) if (b0.has(id)) box += v - b0.get(id)!;
      const perItem = (server + box) / N;
      rows.push([fam, N, ((server / N) * 1000).toFixed(2), boxes.length ? ((box / N) * 1000).toFixed(2) : "-", (1 / perItem).toFixed(0), (N / wall).toFixed(0)]);
      process.stderr.write(`${rows.at(-1)!.join(" | ")}\n`);
    }
  } finally {
    assay.child.kill("SIGTERM");
    await new Promise((r) => assay.child.once("exit", r));
    await judge.close();
    rmSync(sqlDir, { recursive: true, force: true });
  }
  console.log(table(rows));
  for (const m of memory) console.log(m);
  console.log(`idle server CPU taken off each run (measured over 5 s before it): ${idle.join(", ")}`);
  console.log(`\n${cpus().length} cores (${cpus()[0].model}), load ${loadavg().map((l) => l.toFixed(1)).join(" ")} during the run`);
}

await main();
