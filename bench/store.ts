/**
 * The store on the /reward path: `/reward` with a stored rubric (`reference.rubric_id`) and the
 * judge's verdict cache on, so after the first call each request is a rubric lookup and a cache
 * lookup in the store and no judge call (the loopback judge fixture answers the first). Compares
 * two Assay trees run the same way (from sources, through tsx), alternately for --rounds rounds:
 * the one this file is in and `--base DIR` (e.g. an older commit unpacked with `git archive`).
 * Reports requests/s and the server's CPU time per request (what a shared machine moves least),
 * and before that, in this process, the CPU time of one stored-rubric lookup in each tree's store.
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
import { load, median, root, startServer, table, type Load } from "./lib.js";
import { startJudgeFixture } from "../tests/fixtures/judge-server.js";

const argOf = (name: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const seconds = Number(argOf("--seconds") ?? 5);
const rounds = Number(argOf("--rounds") ?? 3);
const base = argOf("--base");
const storeUrl = argOf("--store-url");

/**
 * In-process first: the per-lookup cost the store adds to every /reward that names a stored
 * rubric (rubrics.get on an in-memory SQLite), this tree's async store against --base's, CPU time
 * per call over many calls, so a loaded machine moves it little.
 */
async function lookups(dir: string, n: number): Promise<number> {
  const mod = (await import(join(dir, "src/store/index.ts"))) as { openStore: (d: string) => unknown };
  const store = (await mod.openStore(":memory:")) as { rubrics: { create: (id: string, c: unknown) => unknown; get: (id: string) => unknown }; close: () => Promise<void> };
  await store.rubrics.create("bench", { title: "Colours", criteria: [{ id: "red", description: 'Mentions "red".', weight: 1 }] });
  for (let i = 0; i < 2000; i++) await store.rubrics.get("bench");
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await store.rubrics.get("bench");
  const u = process.cpuUsage(t0);
  await store.close();
  return (u.user + u.system) / n;
}
if (base) {
  const rows: (string | number)[][] = [["store", "CPU µs per rubrics.get (median of 5 x 20,000)"]];
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[2];
  const b: number[] = [], t: number[] = [];
  for (let r = 0; r < 5; r++) {
    b.push(await lookups(resolve(base), 20_000));
    t.push(await lookups(root, 20_000));
  }
  rows.push([`base (${base}), synchronous`, med(b).toFixed(2)], ["this tree, async over SQLite", med(t).toFixed(2)]);
  console.log(table(rows));
}

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
