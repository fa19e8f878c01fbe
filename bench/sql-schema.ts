/**
 * Schema linking (the sql verifier's `weights.schema`): node-sql-parser in the parse process
 * (verifiers/sql/parse-process.ts, one query at a time over IPC) against the same parse in
 * this process, the baseline, on the same queries in the same run.
 *
 *   npx tsx bench/sql-schema.ts [--queries 500] [--rounds 3]
 */
import { ParseProcess } from "../verifiers/sql/parse-process.js";
import { schemaItems } from "../verifiers/sql/schema-items.js";

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const n = arg("queries", 500);
const rounds = arg("rounds", 3);
const qs = Array.from({ length: n }, (_, i) => `SELECT T1.name, count(*) FROM singer AS T1 JOIN concert AS T2 ON T1.id = T2.sid WHERE T1.age > ${i} GROUP BY T1.name ORDER BY 2 DESC`);

const p = new ParseProcess();
await p.items("SELECT 1", "sqlite"); // the process's start is not a parse
for (let r = 0; r < rounds; r++) {
  let t = performance.now();
  for (const q of qs) schemaItems(q, "sqlite");
  const inProcess = (performance.now() - t) / n;
  const cpu0 = process.cpuUsage();
  t = performance.now();
  for (const q of qs) await p.items(q, "sqlite");
  const child = (performance.now() - t) / n;
  const cpu = process.cpuUsage(cpu0);
  const hostCpu = (cpu.user + cpu.system) / 1000 / n;
  console.log(`round ${r + 1}: in-process ${inProcess.toFixed(3)} ms/query; parse process ${child.toFixed(3)} ms/query (${(child / inProcess).toFixed(2)}x), this process's CPU ${hostCpu.toFixed(3)} ms/query (${(hostCpu / inProcess).toFixed(2)}x)`);
}
p.close();
