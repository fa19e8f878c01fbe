/**
 * SQL verifier throughput on a Spider-sized database (concert_singer's schema grown to ~2.7k rows
 * over 5 tables; --scale 10 for ~27k), all measured in this run on this machine:
 * - baseline: both queries run directly with better-sqlite3 on the main thread, results compared
 *   with the verifier's own compareResultsSync (what a single-process evaluator does per pair);
 * - the verifier through the scorer (registry, options, child-process pool), gold queries shared
 *   by GRPO groups of 16 (the gold cache), and with the cache defeated (every gold text unique).
 * Target: the cached path >= 50% of the baseline's pairs/s.
 *
 * Each figure is the best of 3 rounds of --pairs pairs (default 1600 = 100 groups of 16).
 *
 *   npx tsx bench/sql.ts [--pairs 1600] [--scale 1]
 */
import Database from "better-sqlite3";
import { mkdtempSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { loadConfig } from "../src/core/config.js";
import { createRuntime } from "../src/core/runtime.js";
import { compareResultsSync } from "../verifiers/sql/compare.js";
import { SCHEMA } from "../verifiers/sql/fixtures.js";
import { table } from "./lib.js";

const pairsArg = Number(process.argv[process.argv.indexOf("--pairs") + 1]) || 1600;
/** Rows scale: 1 = ~2.7k rows (a typical Spider database), 10 = ~27k (a large one). */
const scale = Number(process.argv[process.argv.indexOf("--scale") + 1]) || 1;
const n = (x: number) => Math.max(1, Math.round(x * scale));
const ROUNDS = 3;

function buildDb(): { dir: string; path: string } {
  const dir = mkdtempSync(join(tmpdir(), "assay-bench-sql-"));
  mkdirSync(join(dir, "spider"), { recursive: true });
  const path = join(dir, "spider", "concert_big.sqlite");
  const db = new Database(path);
  db.exec(SCHEMA);
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const countries = ["France", "Netherlands", "United States", "Japan", "Brazil", "Kenya", "India", "Spain"];
  db.transaction(() => {
    const st = db.prepare("INSERT INTO stadium VALUES (?, ?, ?, ?, ?)");
    for (let i = 1; i <= n(20); i++) st.run(i, `Stadium ${i}`, `City ${i % 40}`, 1000 + Math.floor(rnd() * 60000), rnd() < 0.1 ? null : Math.round(rnd() * 50000) / 10);
    const si = db.prepare("INSERT INTO singer VALUES (?, ?, ?, ?, ?)");
    for (let i = 1; i <= n(200); i++) si.run(i, `Singer ${i}`, countries[i % countries.length], rnd() < 0.05 ? null : 18 + Math.floor(rnd() * 60), Math.round(rnd() * 10000) / 100);
    const co = db.prepare("INSERT INTO concert VALUES (?, ?, ?, ?, ?)");
    for (let i = 1; i <= n(100); i++) co.run(i, `Concert ${i}`, `Theme ${i % 25}`, 1 + (i % n(20)), String(2000 + (i % 25)));
    const sic = db.prepare("INSERT OR IGNORE INTO singer_in_concert VALUES (?, ?)");
    for (let i = 1; i <= n(800); i++) sic.run(1 + Math.floor(rnd() * n(100)), 1 + Math.floor(rnd() * n(200)));
    const t = db.prepare("INSERT INTO ticket VALUES (?, ?, ?, ?)");
    for (let i = 1; i <= n(1600); i++) t.run(i, 1 + Math.floor(rnd() * n(100)), Math.round(rnd() * 20000) / 100, `S${i % 500}`);
  })();
  db.close();
  return { dir, path };
}

/** Spider-like gold queries, each with a group of model answers (right, rewritten, wrong, broken). */
const GROUPS: { gold: string; preds: string[] }[] = [
  {
    gold: "SELECT country, count(*) FROM singer GROUP BY country",
    preds: ["SELECT country, count(*) FROM singer GROUP BY country", "SELECT count(*), country FROM singer GROUP BY country", "SELECT country, count(singer_id) FROM singer GROUP BY 1", "SELECT country FROM singer"],
  },
  {
    gold: "SELECT name FROM stadium WHERE capacity > 50000 ORDER BY capacity DESC",
    preds: ["SELECT name FROM stadium WHERE capacity > 50000 ORDER BY capacity DESC", "SELECT s.name FROM stadium AS s WHERE s.capacity > 50000 ORDER BY s.capacity DESC", "SELECT name FROM stadium WHERE capacity > 50000 ORDER BY capacity", "SELECT name FROM stadum"],
  },
  {
    gold: "SELECT T2.name, count(*) FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.stadium_id GROUP BY T1.stadium_id, T2.name",
    preds: ["SELECT s.name, count(*) FROM stadium s JOIN concert c ON c.stadium_id = s.stadium_id GROUP BY s.stadium_id, s.name", "SELECT name, (SELECT count(*) FROM concert c WHERE c.stadium_id = s.stadium_id) FROM stadium s WHERE stadium_id IN (SELECT stadium_id FROM concert)", "SELECT s.name, count(*) FROM stadium s JOIN concert c ON c.stadium_id = s.stadium_id GROUP BY s.name", "SELECT name FROM stadium"],
  },
  {
    gold: "SELECT avg(age), min(age), max(age) FROM singer WHERE country = 'France'",
    preds: ["SELECT avg(age), min(age), max(age) FROM singer WHERE country = 'France'", "SELECT AVG(age), MIN(age), MAX(age) FROM singer WHERE country = 'France';", "SELECT avg(age), min(age), max(age) FROM singer", "SELECT avg(age) FROM singer WHERE country = 'France'"],
  },
  {
    gold: "SELECT DISTINCT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id JOIN concert AS T3 ON T2.concert_id = T3.concert_id WHERE T3.year = '2014'",
    preds: ["SELECT name FROM singer WHERE singer_id IN (SELECT singer_id FROM singer_in_concert WHERE concert_id IN (SELECT concert_id FROM concert WHERE year = '2014'))", "SELECT DISTINCT s.name FROM singer s, singer_in_concert sc, concert c WHERE s.singer_id = sc.singer_id AND sc.concert_id = c.concert_id AND c.year = '2014'", "SELECT s.name FROM singer s JOIN singer_in_concert sc ON s.singer_id = sc.singer_id JOIN concert c ON sc.concert_id = c.concert_id WHERE c.year = '2014'", "SELECT name FROM singer WHERE year = 2014"],
  },
  {
    gold: "SELECT concert_id, sum(price) FROM ticket GROUP BY concert_id HAVING sum(price) > 200",
    preds: ["SELECT concert_id, sum(price) FROM ticket GROUP BY concert_id HAVING sum(price) > 200", "SELECT concert_id, total(price) FROM ticket GROUP BY concert_id HAVING total(price) > 2000", "SELECT concert_id, sum(price) FROM ticket GROUP BY concert_id", "SELECT concert_id FROM ticket WHERE price > 2000"],
  },
];

interface Pair { gold: string; pred: string }
let unique = 0;
function pairs(n: number, uniqueGold: boolean): Pair[] {
  const out: Pair[] = [];
  for (let i = 0; out.length < n; i++) {
    const g = GROUPS[Math.floor(i / 16) % GROUPS.length];
    const gold = uniqueGold ? `${g.gold} /* ${unique++} */` : g.gold;
    out.push({ gold, pred: "```sql\n" + g.preds[i % g.preds.length] + "\n```" });
  }
  return out;
}

function direct(path: string, ps: Pair[]): number {
  const db = new Database(path, { readonly: true });
  const t0 = performance.now();
  let right = 0;
  for (const p of ps) {
    const gold = db.prepare(p.gold).raw(true).all() as (number | string | null)[][];
    let pred: (number | string | null)[][] | null = null;
    try {
      pred = db.prepare(p.pred.slice(7, -4)).raw(true).all() as (number | string | null)[][];
    } catch {
      pred = null;
    }
    if (pred && compareResultsSync(gold, pred, { rows: "bag", ordered: /order by/i.test(p.gold), columnOrder: "any", floatDigits: 12 }).match) right++;
  }
  const s = (performance.now() - t0) / 1000;
  db.close();
  if (!right) throw new Error("baseline scored nothing right");
  return ps.length / s;
}

async function main() {
  const { dir, path } = buildDb();
  const config = loadConfig({ ASSAY_SQL_DIR: dir, ASSAY_LOG_LEVEL: "silent", ASSAY_SANDBOX: "none", ASSAY_SQL_TIMEOUT_MS: "10000" });
  const runtime = await createRuntime(config, { log: pino({ level: "silent" }), only: ["sql"] });
  const items = (ps: Pair[]) => ps.map((p) => ({ verifier: "sql", response: p.pred, reference: p.gold, options: { database: "concert_big" } }));
  // warm: processes started, code paths compiled, database pages cached
  await runtime.scorer.scoreBatch(items(pairs(64, true)));
  const verifier = async (uniqueGold: boolean) => {
    const ps = items(pairs(pairsArg, uniqueGold));
    const t0 = performance.now();
    const rs = await runtime.scorer.scoreBatch(ps);
    const s = (performance.now() - t0) / 1000;
    const bad = rs.filter((r) => r.status !== "ok");
    if (bad.length) throw new Error(`${bad.length} items not ok, e.g. ${bad[0].reason}`);
    return ps.length / s;
  };
  const best = async (f: () => number | Promise<number>) => {
    let top = 0;
    for (let r = 0; r < ROUNDS; r++) top = Math.max(top, await f());
    return top;
  };
  const base = await best(() => direct(path, pairs(pairsArg, false)));
  const cached = await best(() => verifier(false));
  const uncached = await best(() => verifier(true));
  const svc = await runtime.services.sql();
  const st = svc.stats();
  console.log(`SQL verifier, Spider-sized database (scale ${scale}), ${pairsArg} pairs a round, best of ${ROUNDS}; ${config.sql.threads || config.workers} SQLite processes`);
  console.log(
    table([
        ["path", "pairs/s", "vs direct"],
        ["direct better-sqlite3, both queries (baseline)", base.toFixed(0), "1.00"],
        ["verifier, gold cache (groups of 16)", cached.toFixed(0), (cached / base).toFixed(2)],
        ["verifier, no gold cache (every gold unique)", uncached.toFixed(0), (uncached / base).toFixed(2)],
    ]),
  );
  console.log(`gold runs ${st.goldRuns}, gold cache hits ${st.goldHits}; target: cached >= 0.50 of direct -> ${cached / base >= 0.5 ? "met" : "NOT met"}`);
  await runtime.close();
}

await main();
