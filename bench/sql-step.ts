/**
 * Is SQLite itself slower under better-sqlite3 than under Python's sqlite3 (BIRD's loop)? The
 * bench's queries (bench/sql-data.ts: six golds and their model answers, those that prepare) on
 * its database, one open connection each, µs of CPU a query: better-sqlite3 `raw().all()` with the
 * statement prepared once, `iterate()` with `safeIntegers` (what the SQLite worker runs), and a
 * text prepared fresh each time (every cold gold is); Python's sqlite3 the same two ways, in a
 * child process timing itself (time.process_time). Issue 35: the cold pair's gap to BIRD's loop.
 *
 *   npx tsx bench/sql-step.ts [--reps 200]
 */
import Database from "better-sqlite3";
import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { buildDb, GROUPS } from "./sql-data.js";

const reps = Number(process.argv[process.argv.indexOf("--reps") + 1]) || 200;
const { dir, path } = buildDb(1);
const db = new Database(path, { readonly: true });
const qs = GROUPS.flatMap((g) => [g.gold, ...g.preds]).filter((q) => { try { db.prepare(q); return true; } catch { return false; } });
const all = qs.map((q) => db.prepare(q).raw(true));
const iter = qs.map((q) => db.prepare(q).raw(true).safeIntegers(true));
const cpu = () => { const c = process.cpuUsage(); return c.user + c.system; };
function round(kind: "all" | "iterate" | "fresh"): string {
  const c0 = cpu();
  for (let r = 0; r < reps; r++) {
    for (let i = 0; i < qs.length; i++) {
      if (kind === "all") all[i].all();
      else if (kind === "iterate") for (const row of iter[i].iterate()) void row;
      else db.prepare(`${qs[i]} -- ${r}`).raw(true).all();
    }
  }
  return ((cpu() - c0) / (reps * qs.length)).toFixed(1);
}
const qfile = join(dir, "queries.json");
writeFileSync(qfile, JSON.stringify(qs));
const PY = `
import json, sqlite3, sys, time
qs = json.load(open(sys.argv[1])); reps = int(sys.argv[3])
conn = sqlite3.connect(sys.argv[2])
def rnd(fresh):
    t0 = time.process_time()
    for r in range(reps):
        for q in qs: conn.execute(q + (" -- %d" % r if fresh else "")).fetchall()
    return (time.process_time() - t0) * 1e6 / (reps * len(qs))
for k in range(3): print("Python sqlite3 (SQLite %s): cached statement %.1f, text prepared fresh %.1f µs CPU a query" % (sqlite3.sqlite_version, rnd(False), rnd(True)))
`;
console.log(`${qs.length} queries x ${reps}, load ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
for (let k = 0; k < 3; k++) console.log(`better-sqlite3 (SQLite ${String(db.prepare("SELECT sqlite_version()").pluck().get())}): all() ${round("all")}, iterate() + safeIntegers ${round("iterate")}, text prepared fresh ${round("fresh")} µs CPU a query`);
process.stdout.write(spawnSync("python3", ["-c", PY, qfile, path, String(reps)], { encoding: "utf8" }).stdout);
db.close();
rmSync(dir, { recursive: true, force: true });
