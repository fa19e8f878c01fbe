/**
 * The SQL benches' database and pairs (bench/sql.ts, bench/sql-worker.ts): concert_singer's
 * schema grown to ~2.7k rows over 5 tables (`scale` 10 for ~27k), and GRPO-shaped groups of 16
 * model queries against six golds.
 */
import Database from "better-sqlite3";
import { mkdtempSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SCHEMA } from "../verifiers/sql/fixtures.js";

export function buildDb(scale = 1): { dir: string; path: string } {
  const n = (x: number) => Math.max(1, Math.round(x * scale));
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
export const GROUPS: { gold: string; preds: string[] }[] = [
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

export interface Pair { gold: string; pred: string }
let unique = 0;
export function pairs(n: number, uniqueGold: boolean): Pair[] {
  const out: Pair[] = [];
  for (let i = 0; out.length < n; i++) {
    const g = GROUPS[Math.floor(i / 16) % GROUPS.length];
    const gold = uniqueGold ? `${g.gold} /* ${unique++} */` : g.gold;
    out.push({ gold, pred: "```sql\n" + g.preds[i % g.preds.length] + "\n```" });
  }
  return out;
}
