/**
 * The warm R's question on Assay's real backends (issue 31; sandbox/README.md's table of fork
 * servers): inside an R run as a program gets it today (uid 65534, the run's rlimits, the slot's
 * seccomp filter on bwrap, docker's on docker), (1) what one fork of the running R costs
 * (parallel:::mcfork, mcexit, mccollect; the run's own proc.time) against the run's whole CPU,
 * which is an Rscript start's; and (2) whether a process forked from an R of the same uid can
 * open that R's memory for writing (/proc/<pid>/mem), which is what a fork server running at its
 * runs' uid would be open to. Trivial runs, bounded: `--runs` per backend (default 10).
 *
 *     npx tsx bench/r-fork-sandbox.ts [--backend docker,bwrap] [--runs 10]
 */
import { cpuUsage } from "node:process";
import { readFileSync } from "node:fs";
import { openBackend } from "../tests/sandboxes.js";
import { median } from "./lib.js";

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : dflt;
};
const backends = arg("backend", "docker,bwrap").split(",");
const runs = Math.max(1, Math.min(50, Number(arg("runs", "10"))));
const LIMITS = { wallMs: 20_000, cpuMs: 10_000, memoryMb: 512 };

const FORK = String.raw`
n <- 20
t0 <- proc.time()
for (i in 1:n) {
  p <- parallel:::mcfork()
  if (inherits(p, "masterProcess")) parallel:::mcexit(0L)
  suppressWarnings(parallel::mccollect(p))
}
d <- proc.time() - t0
cat(sprintf("%.3f %.3f\n", 1000 * sum(d[c(1, 2, 4, 5)]) / n, 1000 * d[[3]] / n))
`;
const MEM = String.raw`
server <- Sys.getpid()
p <- parallel:::mcfork()
if (inherits(p, "masterProcess")) {
  r <- tryCatch({ con <- file(sprintf("/proc/%d/mem", server), "r+b"); close(con); "opened for reading and writing" },
    error = conditionMessage, warning = conditionMessage)
  cat(sprintf("uid %s, forked from pid %d (same uid): /proc/<parent>/mem %s\n", system("id -u", intern = TRUE), server, r))
  parallel:::mcexit(0L)
}
invisible(suppressWarnings(parallel::mccollect(p)))
`;
const TRIVIAL = 'cat(1 + 1, "\\n")';

const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

for (const backend of backends) {
  const sb = await openBackend(backend, 1);
  try {
    if (!sb.languages.includes("r")) throw new Error(`${backend}: the r image is not built (assay sandbox build --lang r)`);
    await sb.run({ language: "r", code: TRIVIAL, limits: LIMITS }); // the slot started, R's files in the page cache
    const trivial: number[] = [];
    const trivialWall: number[] = [];
    const fork: number[] = [];
    const forkWall: number[] = [];
    const c0 = cpuUsage();
    for (let i = 0; i < runs; i++) {
      const t = await sb.run({ language: "r", code: TRIVIAL, limits: LIMITS });
      if (t.status !== "finished" || t.exitCode !== 0) throw new Error(`${backend}: trivial R run ${t.status} ${t.exitCode}: ${t.stderr}`);
      if (t.cpuMs != null) trivial.push(t.cpuMs);
      trivialWall.push(t.wallMs);
      const f = await sb.run({ language: "r", code: FORK, limits: LIMITS });
      const m = /^([\d.]+) ([\d.]+)$/m.exec(f.stdout);
      if (f.status !== "finished" || !m) throw new Error(`${backend}: fork run ${f.status}: ${f.stdout} ${f.stderr}`);
      fork.push(Number(m[1]));
      forkWall.push(Number(m[2]));
    }
    const c = cpuUsage(c0);
    const mem = await sb.run({ language: "r", code: MEM, limits: LIMITS });
    console.log(`${backend} (${new Date().toISOString().slice(0, 16)} UTC, load average ${loadavg()}, ${runs} runs each, this process ${((c.user + c.system) / 1000).toFixed(0)} ms CPU):`);
    console.log(`  trivial Rscript --vanilla main.R: run's cpuMs p50 ${median(trivial).toFixed(1)} (min ${Math.min(...trivial).toFixed(1)}), wallMs p50 ${median(trivialWall).toFixed(1)}`);
    console.log(`  one fork, exit and collect inside a run: ${median(fork).toFixed(2)} ms CPU p50 (min ${Math.min(...fork).toFixed(2)}), ${median(forkWall).toFixed(2)} ms wall p50`);
    console.log(`  start / fork, CPU: ${(median(trivial) / median(fork)).toFixed(1)}x`);
    console.log(`  ${mem.status} exit ${mem.exitCode}: ${mem.stdout.trim()} ${mem.stderr.trim()}`);
  } finally {
    await sb.close();
  }
}
