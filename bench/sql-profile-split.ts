/**
 * The split by phase of bench/sql-profile.ts's CPU profiles (issue 35): each sample goes to the
 * first phase found walking its stack up from the leaf (the leaf's own frame first), for the
 * server's profile (the largest file; its second half, so start-up is left out) and for each
 * SQLite process's (its main thread's profile: `<pid>.0.*`). Shares are of the samples the process
 * was not idle; with --cpu SERVER_US,SQLITE_US (bench/sql.ts's CPU µs per pair, same run) each is
 * also given as µs per pair.
 *
 *   node --cpu-prof --cpu-prof-dir=DIR --import tsx bench/sql-profile.ts --only cold
 *   npx tsx bench/sql-profile-split.ts DIR [--cpu 720,914]
 *
 * A sample's time is wall time: where the kernel switches a process out at a system call (a
 * pipe write that wakes the other side, a getrusage on a busy machine) the samples of that call
 * hold the time it waited for a CPU. Those phases are listed, but left out of the busy total
 * that the µs figures divide (`process.cpuUsage` costs 1.7 µs of CPU a call here, yet took 21% of
 * a SQLite process's samples at load 37).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { table } from "./lib.js";

interface Frame { functionName: string; url: string }
interface Profile { nodes: { id: number; callFrame: Frame; children?: number[] }[]; samples: number[]; timeDeltas: number[] }

/**
 * Phases, the first whose test a frame passes (leaf first). `offCpu`: a system call whose samples
 * are mostly waiting; `once`: start-up, not part of any pair. Neither counts in the busy total.
 */
const PHASES: { name: string; test: (f: Frame) => boolean; offCpu?: boolean; once?: boolean }[] = [
  { name: "idle", test: (f) => f.functionName === "(idle)" },
  { name: "garbage collection", test: (f) => f.functionName === "(garbage collector)" },
  { name: "getrusage (a slice's CPU time)", test: (f) => f.functionName === "cpuUsage", offCpu: true },
  { name: "progress file pwrite", test: (f) => f.functionName === "writeSync", offCpu: true },
  { name: "IPC write (serialise, pipe write)", test: (f) => /writeChannelMessage|target\._send/.test(f.functionName), offCpu: true },
  { name: "IPC read (parse, deserialise)", test: (f) => /parseChannelMessages|channel\.onread|ChildProcessDeserializer/.test(f.functionName) },
  { name: "/proc schedstat reads", test: (f) => f.url.endsWith("meter.ts") },
  { name: "prepare (statement cache misses)", test: (f) => f.functionName === "prepared" || f.functionName === "prepareWithDqs" },
  { name: "digests", test: (f) => f.url.endsWith("digest.ts") || f.functionName === "goldDigestFor" },
  { name: "row values (cell, sizeOf)", test: (f) => /^(cell|intCell|sizeOf)$/.test(f.functionName) },
  { name: "stepping SQLite (runQuery)", test: (f) => f.functionName === "runQuery" },
  { name: "lexing and guards", test: (f) => f.url.endsWith("lex.ts") },
  { name: "comparison", test: (f) => f.url.endsWith("compare.ts") },
  { name: "partial rewards (n-grams)", test: (f) => f.url.endsWith("partial.ts") },
  { name: "extraction", test: (f) => f.url.endsWith("extract.ts") },
  { name: "pool (queue, batches, polls)", test: (f) => f.url.endsWith("sqlite-pool.ts") || f.url.endsWith("load.ts") },
  { name: "service (gold cache, lookups)", test: (f) => f.url.endsWith("service.ts") || f.url.includes("lru-cache") },
  { name: "verifier", test: (f) => f.url.endsWith("sql/index.ts") },
  { name: "scorer, registry, options", test: (f) => f.url.includes("/core/") || f.url.includes("typebox") || /^validate/.test(f.functionName) },
  { name: "abort signals", test: (f) => f.url.includes("abort_controller") || f.url.includes("event_target") },
  { name: "module loading (start-up)", test: (f) => /esm\/|cjs\/|bootstrap|source_map|lexer|tsx|pre_execution/.test(f.url), once: true },
  { name: "worker loop", test: (f) => f.url.endsWith("sqlite-worker.ts") },
];
const OTHER = "other (promises, timers, node internals)";

function split(file: string, from: number): Map<string, number> {
  const p = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const phaseOf = new Map<number, string>();
  const phase = (leaf: number): string => {
    let hit = phaseOf.get(leaf);
    if (hit) return hit;
    hit = OTHER;
    for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
      const f = byId.get(id)!.callFrame;
      const ph = PHASES.find((x) => x.test(f));
      if (ph) {
        hit = ph.name;
        break;
      }
    }
    phaseOf.set(leaf, hit);
    return hit;
  };
  const out = new Map<string, number>();
  for (let i = Math.floor(p.samples.length * from); i < p.samples.length; i++) {
    const k = phase(p.samples[i]);
    out.set(k, (out.get(k) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  return out;
}

const dir = process.argv[2];
if (!dir) throw new Error("usage: npx tsx bench/sql-profile-split.ts DIR [--cpu SERVER_US,SQLITE_US]");
const cpuArg = process.argv.includes("--cpu") ? process.argv[process.argv.indexOf("--cpu") + 1].split(",").map(Number) : null;
const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
// the server's main thread: the largest profile; a SQLite process's: the main thread (.0.) of every other pid
const server = files.reduce((a, b) => (statSync(join(dir, a)).size >= statSync(join(dir, b)).size ? a : b));
const serverPid = server.split(".")[3];
const workers = files.filter((f) => f.split(".")[3] !== serverPid && f.split(".")[4] === "0");
const sum = (ms: Map<string, number>[]) => ms.reduce((t, m) => (m.forEach((v, k) => t.set(k, (t.get(k) ?? 0) + v)), t), new Map<string, number>());
const sides = [
  { name: "server", m: split(join(dir, server), 0.5), us: cpuArg?.[0] },
  { name: `SQLite processes (${workers.length})`, m: sum(workers.map((w) => split(join(dir, w), 0))), us: cpuArg?.[1] },
];
for (const s of sides) {
  const offCpu = new Set(PHASES.filter((p) => p.offCpu).map((p) => p.name));
  const once = new Set(PHASES.filter((p) => p.once).map((p) => p.name));
  const busy = [...s.m].filter(([k]) => k !== "idle" && !offCpu.has(k) && !once.has(k)).reduce((t, [, v]) => t + v, 0);
  const all = [...s.m].reduce((t, [, v]) => t + v, 0);
  console.log(`\n${s.name}: ${(all / 1e6).toFixed(1)} s of samples, idle ${((100 * (s.m.get("idle") ?? 0)) / all).toFixed(1)}%`);
  const rows = [...s.m]
    .filter(([k]) => k !== "idle")
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => {
      const off = offCpu.has(k) || once.has(k);
      const why = offCpu.has(k) ? "(off-CPU wait: not counted)" : "(start-up: not counted)";
      return [k, `${((100 * v) / all).toFixed(1)}%`, off ? why : `${((100 * v) / busy).toFixed(1)}%`, off || s.us === undefined ? "-" : ((s.us * v) / busy).toFixed(0)];
    });
  console.log(table([["phase", "share of samples", "share of busy", "µs/pair"], ...rows]));
}
