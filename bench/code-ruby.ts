/**
 * The warm Ruby (issue 31, sandbox/runner/ruby_server.rb) against starting ruby, in one run, on
 * both backends: the same trivial Ruby test (read n, print a sum) run
 *   warm:  as a `ruby` run, forked from the slot's warm interpreter;
 *   spawn: as a `ruby` run whose program execs `ruby t.rb` (the same test in a freshly started
 *          interpreter, in the same slot, under the same limits: what every Ruby run cost before);
 * and the same two ways for MultiPL-E's shape (the function and its test/unit test case, the
 * harness run at exit: the warm Ruby has test/unit's machinery loaded),
 * at 1 and 16 concurrent, on a pool of max(4, 4 x cores) slots. Per cell: tests/s, p50 and p99
 * wall, CPU per test (this process's plus the sandboxes' cgroups', as bench/code.ts counts it)
 * and the runner's own cpuMs of the run (median), with the load average at the cell's end. Then
 * the memory the warm Ruby holds per slot: PSS and RSS of every `ruby -e` process (the fork
 * server and its pre-forked next run) over the slots, from /proc/<pid>/smaps_rollup.
 * `--lang php`: the same for the warm PHP (sandbox/runner/php_server.php): warm against a run
 * whose program `pcntl_exec`s `php -d memory_limit=… -d display_errors=stderr t.php` (no
 * test/unit rows).
 * Usage: npx tsx bench/code-ruby.ts [--quick] [--backends docker,bwrap] [--lang php]
 */
import { readFileSync, readdirSync } from "node:fs";
import { cpus } from "node:os";
import { openDocker, dockerOptions } from "../sandbox/docker/index.js";
import { openBwrap } from "../sandbox/bwrap/index.js";
import { loadConfig } from "../src/core/config.js";
import type { Sandbox } from "../sandbox/types.js";
import { closedLoop, sandboxCpuMs, table } from "./lib.js";
import { EXPECT, STDIN } from "./code-program.js";

const quick = process.argv.includes("--quick");
const bi = process.argv.indexOf("--backends");
const backends = bi > 0 ? process.argv[bi + 1].split(",") : ["docker", "bwrap"];
const li = process.argv.indexOf("--lang");
const lang = li > 0 ? process.argv[li + 1] : "ruby";
if (lang !== "ruby" && lang !== "php") throw new Error(`--lang ${JSON.stringify(lang)}: ruby or php`);
const PROGRAM = lang === "php"
  ? "<?php\n$n = (int) fgets(STDIN);\n$s = 0;\nfor ($i = 0; $i < $n; $i++) $s += $i * $i;\necho $s, \"\\n\";\n"
  : "n = gets.to_i\nputs (0...n).sum { |i| i * i }\n";
const LIMITS = { wallMs: 30_000, cpuMs: 10_000 };
/** MultiPL-E's shape: the function, then its test/unit test case (the harness runs it at exit). */
const TESTUNIT = "require 'test/unit'\ndef sq_sum(n) = (0...n).sum { |i| i * i }\nclass TestHumanEval < Test::Unit::TestCase\n  def test_sq_sum\n    assert_equal(" + EXPECT + ", sq_sum(gets.to_i))\n  end\nend\n";
const PASSED = /1 tests, 1 assertions, 0 failures, 0 errors/;
const PHP_WAYS = {
  warm: { code: PROGRAM, files: undefined, ok: (out: string) => out.trim() === EXPECT },
  spawn: { code: '<?php\npcntl_exec("/usr/bin/php", ["-d", "memory_limit=192M", "-d", "display_errors=stderr", "t.php"]);\n', files: { "t.php": PROGRAM }, ok: (out: string) => out.trim() === EXPECT },
};
const RUBY_WAYS = {
  warm: { code: PROGRAM, files: undefined, ok: (out: string) => out.trim() === EXPECT },
  spawn: { code: 'exec("ruby", "t.rb")\n', files: { "t.rb": PROGRAM }, ok: (out: string) => out.trim() === EXPECT },
  "warm test/unit": { code: TESTUNIT, files: undefined, ok: (out: string) => PASSED.test(out) },
  "spawn test/unit": { code: 'exec("ruby", "t.rb")\n', files: { "t.rb": TESTUNIT }, ok: (out: string) => PASSED.test(out) },
};
const WAYS: Record<string, { code: string; files?: Record<string, string>; ok: (out: string) => boolean }> = lang === "php" ? PHP_WAYS : RUBY_WAYS;
const COUNTS: Record<string, [number, number]> = quick
  ? { warm: [30, 96], spawn: [10, 32], "warm test/unit": [20, 64], "spawn test/unit": [10, 32] }
  : { warm: [100, 320], spawn: [30, 96], "warm test/unit": [60, 192], "spawn test/unit": [30, 96] };

/** PSS and RSS (MiB) of every warm server process (`ruby -e`, `php -r`: fork servers and their pre-forked runs) on this machine. */
function serverMemory(exe: string, flag: string): { pss: number; rss: number; procs: number } {
  let pss = 0;
  let rss = 0;
  let procs = 0;
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const argv = readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0");
      if (!argv[0].endsWith(exe) || argv[1] !== flag) continue;
      const t = readFileSync(`/proc/${p}/smaps_rollup`, "utf8");
      pss += Number(/^Pss:\s+(\d+)/m.exec(t)?.[1] ?? 0) / 1024;
      rss += Number(/^Rss:\s+(\d+)/m.exec(t)?.[1] ?? 0) / 1024;
      procs++;
    } catch {
      /* gone, or not ours to read */
    }
  }
  return { pss, rss, procs };
}

const config = loadConfig().sandbox;
const pool = process.env.ASSAY_SANDBOX_POOL ? config.poolSize : Math.max(4, cpus().length * 4);
const rows: (string | number)[][] = [["backend", "way", "concurrent", "tests/s", "p50 ms", "p99 ms", "CPU ms/test", "runner cpuMs p50", "load avg"]];
const notes: string[] = [];
const rate: Record<string, number> = {};
const cpuPer: Record<string, number> = {};
for (const backend of backends) {
  const opened = backend === "docker" ? await openDocker({ ...dockerOptions(config), poolSize: pool }) : await openBwrap({ ...config, poolSize: pool });
  const sb = opened.sandbox as Sandbox | null;
  if (!sb) {
    notes.push(`${backend}: skipped (${opened.note})`);
    continue;
  }
  const w = (sb as { warm?: unknown }).warm;
  if (typeof w === "function") w.call(sb, lang);
  // Every slot up (docker's pool filled, each bwrap slot's warm Ruby started) before any cell:
  // a cell's CPU is read from the set of containers, which must not change within it.
  for (let round = 0; round < 3; round++) {
    await Promise.all(Array.from({ length: pool }, () => sb.run({ language: lang, code: PROGRAM, stdin: STDIN, limits: LIMITS })));
    await new Promise((r) => setTimeout(r, 1000));
  }
  const kind = backend === "docker" ? "docker" : "bwrap";
  for (const [way, req] of Object.entries(WAYS)) {
    for (const [i, conc] of [1, 16].entries()) {
      const cpus: number[] = [];
      const once = async () => {
        const r = await sb.run({ language: lang, code: req.code, files: req.files, stdin: STDIN, limits: LIMITS });
        if (r.status !== "finished" || r.exitCode !== 0 || !req.ok(r.stdout)) throw new Error(`${backend} ${way}: ${r.status} ${r.message ?? ""} ${r.stdout.slice(0, 200)} ${r.stderr.slice(-300)}`);
        if (r.cpuMs !== null) cpus.push(r.cpuMs);
      };
      const total = COUNTS[way][i];
      const warmup = Math.min(conc, pool);
      const [me0, box0] = [process.cpuUsage(), sandboxCpuMs(kind)];
      const cell = await closedLoop(once, conc, total, warmup);
      const [me, box1] = [process.cpuUsage(me0), sandboxCpuMs(kind)];
      const cpuMs = box0 && box1 && box0.ids === box1.ids ? ((me.user + me.system) / 1000 + box1.ms - box0.ms) / (total + warmup) : NaN;
      cpus.sort((a, b) => a - b);
      const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
      rows.push([backend, way, conc, cell.rate.toFixed(1), cell.p50.toFixed(2), cell.p99.toFixed(2), cpuMs.toFixed(2), cpus[Math.floor(cpus.length / 2)]?.toFixed(2) ?? "-", load]);
      rate[`${backend} ${way} ${conc}`] = cell.rate;
      cpuPer[`${backend} ${way} ${conc}`] = cpuMs;
      console.error(rows.at(-1)!.join(" | "));
    }
  }
  const m = serverMemory(lang === "php" ? "php" : "ruby", lang === "php" ? "-r" : "-e");
  notes.push(`${backend}: warm ${lang} memory over ${pool} slots: ${m.procs} ${lang} ${lang === "php" ? "-r" : "-e"} processes, PSS ${(m.pss / pool).toFixed(1)} MiB per slot (RSS ${(m.rss / pool).toFixed(1)} MiB per slot, shared pages counted in each)`);
  for (const conc of [1, 16]) {
    for (const tail of lang === "php" ? [""] : ["", " test/unit"]) {
      const k = (w: string) => `${backend} ${w}${tail} ${conc}`;
      notes.push(`${backend}${tail} at ${conc}: warm/spawn tests/s ${(rate[k("warm")] / rate[k("spawn")]).toFixed(2)}x, CPU per test spawn/warm ${(cpuPer[k("spawn")] / cpuPer[k("warm")]).toFixed(2)}x`);
    }
  }
  await sb.close();
}
console.log(table(rows));
console.log(notes.join("\n"));
process.exit(0);
