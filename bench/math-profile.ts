/**
 * A CPU profile of the compiled server's main thread under POST /reward/batch of 64 math items
 * (ASSAY_WORKERS=2, 2 connections, 5 s after 2 s of warm-up): the top frames by self time and
 * the request's stages (bench/profile.ts's summarise and byStage), over the last 4 s. What the
 * event loop pays per math item beside the workers' grading: HTTP, scorer, the verifier's quick
 * path and the pool's dispatch. Issue 38.
 *
 *   npx tsc -p tsconfig.json && npx tsx bench/math-profile.ts [hard|ordinary] [DIR]   (DIR: another checkout with its dist/ built)
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { once } from "node:events";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { load, startServer, table, waitReady } from "./lib.js";
import { summarise, byStage } from "./profile.js";
import { ordinaryTasks, hardTasks } from "./math-sets.js";
const set = process.argv[2] === "hard" ? hardTasks(240) : ordinaryTasks(240);
const distDir = process.argv[3] ?? ".";
const dir = mkdtempSync(join(tmpdir(), "mprof-"));
const server = await startServer(["--cpu-prof", "--cpu-prof-dir", dir, `${distDir}/dist/src/cli/main.js`, "serve"], { ASSAY_SANDBOX: "none", ASSAY_WORKERS: "2", ASSAY_LOG_LEVEL: "warn" });
await waitReady(server.url);
const body = JSON.stringify({ items: set.slice(0, 64).map((t) => ({ verifier: "math", ...t })) });
await load(`${server.url}/reward/batch`, body, 2, 2);
const l = await load(`${server.url}/reward/batch`, body, 2, 5, server.child.pid);
server.child.kill("SIGTERM");
await once(server.child, "exit");
const file = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile")).sort()[0]!;
const p = JSON.parse(readFileSync(join(dir, file), "utf8"));
const s = summarise(p, 4e6);
console.log(file, "items/s", (l.rps * 64).toFixed(0), "cpu µs/item (all threads)", (l.cpuUsPerRequest / 64).toFixed(1), "samples", s.samples, readFileSync("/proc/loadavg", "utf8").slice(0, 15));
console.log(table([["share", "frame"], ...s.frames.slice(0, 30).map(([k, v]) => [`${(100 * v).toFixed(1)}%`, k])]));
console.log(table([["share", "module"], ...s.modules.slice(0, 12).map(([k, v]) => [`${(100 * v).toFixed(1)}%`, k])]));
console.log(table([["share", "stage"], ...byStage(p, 4e6).map(([k, v]) => [`${(100 * v).toFixed(1)}%`, k])]));
