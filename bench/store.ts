/**
 * The store on the /reward path: `/reward` with a stored rubric (`reference.rubric_id`) and the
 * judge's verdict cache on, so after the first call each request is a rubric lookup and a cache
 * lookup in the store and no judge call (the loopback judge fixture answers the first). Compares
 * two Assay trees run the same way (from sources, through tsx), alternately for --rounds rounds:
 * the one this file is in and `--base DIR` (e.g. an older commit unpacked with `git archive`).
 * Reports requests/s and the server's CPU time per request (what a shared machine moves least).
 *
 *   git archive e7b73d5 | tar -x -C /tmp/assay-base && ln -s $PWD/node_modules /tmp/assay-base/
 *   npx tsx bench/store.ts --base /tmp/assay-base [--seconds 5] [--rounds 3] [--store-url postgres://...]
 *
 * --store-url runs this tree's server on that store instead (a PostgreSQL), for the shared
 * backend's figure beside SQLite's.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { load, root, startServer, table, type Load } from "./lib.js";
import { startJudgeFixture } from "../tests/fixtures/judge-server.js";

const argOf = (name: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const seconds = Number(argOf("--seconds") ?? 5);
const rounds = Number(argOf("--rounds") ?? 3);
const base = argOf("--base");
const storeUrl = argOf("--store-url");

const fx = await startJudgeFixture();
const dirs: string[] = [];
const trees: { name: string; dir: string; env: Record<string, string> }[] = [];
if (base) trees.push({ name: `base (${base})`, dir: resolve(base), env: {} });
trees.push({ name: "this tree, SQLite", dir: root, env: {} });
if (storeUrl) trees.push({ name: "this tree, PostgreSQL", dir: root, env: { ASSAY_STORE_URL: storeUrl } });

const body = JSON.stringify({ verifier: "rubric", prompt: "Name a colour.", response: "red and green", reference: { rubric_id: "bench" } });
const servers = [];
try {
  for (const t of trees) {
    const data = mkdtempSync(join(tmpdir(), "assay-bench-store-"));
    dirs.push(data);
    const s = await startServer(["--import", "tsx", join(t.dir, "src/cli/main.ts"), "serve"], {
      ASSAY_SANDBOX: "none", ASSAY_DATA_DIR: data, ASSAY_JUDGE_BASE_URL: fx.url, ASSAY_JUDGE_MODEL: "fx", ASSAY_JUDGE_CACHE: "1", ASSAY_LOG_LEVEL: "warn", ...t.env,
    }, { pin: true, startMs: 240_000 });
    servers.push(s);
    const made = await fetch(`${s.url}/rubrics`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: "bench", title: "Colours", criteria: [{ id: "red", description: 'Mentions "red".', weight: 1 }] }),
    });
    if (made.status !== 201 && made.status !== 409) throw new Error(`${t.name}: POST /rubrics answered ${made.status}`);
    const first = (await (await fetch(`${s.url}/reward`, { method: "POST", headers: { "content-type": "application/json" }, body })).json()) as { reward: number };
    if (first.reward !== 1) throw new Error(`${t.name}: /reward gave ${JSON.stringify(first)}`);
    await load(`${s.url}/reward`, body, 16, 2, s.child.pid); // warm
  }
  const runs: Load[][] = trees.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < trees.length; i++) runs[i].push(await load(`${servers[i].url}/reward`, body, 16, seconds, servers[i].child.pid));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`/reward, stored rubric, verdict from the cache; 16 connections, ${rounds} rounds of ${seconds} s, medians; calls to the judge: ${fx.stats.requests}`);
  console.log(
    table([
      ["server", "requests/s", "p50 ms", "p99 ms", "CPU µs/request", "errors+non-2xx"],
      ...trees.map((t, i) => [
        t.name,
        median(runs[i].map((x) => x.rps)).toFixed(0),
        median(runs[i].map((x) => x.p50)).toFixed(1),
        median(runs[i].map((x) => x.p99)).toFixed(1),
        median(runs[i].map((x) => x.cpuUsPerRequest)).toFixed(0),
        runs[i].reduce((a, x) => a + x.errors + x.non2xx, 0),
      ]),
    ]),
  );
} finally {
  for (const s of servers) s.child.kill();
  await fx.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
