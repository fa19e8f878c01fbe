/**
 * Tests per second for each language through Assay's sandbox against the same toolchain run
 * bare, measured in the same run: `bwrap` straight over the image's root filesystem (no
 * runner, no limits, no pool, no Assay), compile once, then the program once per test.
 *
 *   npx tsx bench/languages.ts [docker|bwrap] [N] [lang ...]
 *
 * Each language: one compile (both sides: Assay's compile cache is emptied by using a fresh
 * program text), then N runs of a correct a+b program, one at a time. Reported: compile ms,
 * tests/s, and the ratio bare/sandbox (how many times slower a test is through the sandbox).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync, chmodSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { loadConfig } from "../src/core/config.js";
import { LANGUAGES } from "../sandbox/languages.js";
import { makeJob } from "../sandbox/job.js";
import { recipeFor, rootfsDir, hasPython } from "../sandbox/images.js";
import { SAMPLES } from "../tests/languages-samples.js";
import type { Sandbox } from "../sandbox/types.js";

const backend = process.argv[2] ?? "docker";
const N = Number(process.argv[3] ?? 20);
const only = process.argv.slice(4);
const cfg = loadConfig().sandbox;
const limits = { wallMs: 10_000, cpuMs: 10_000, memoryMb: 512, outputBytes: 1 << 20, pids: 64 };

async function open(): Promise<Sandbox> {
  if (backend === "bwrap") {
    const { openBwrap } = await import("../sandbox/bwrap/index.js");
    const b = await openBwrap(cfg);
    if (!b.sandbox) throw new Error(b.note);
    return b.sandbox;
  }
  const { openDocker, dockerOptions } = await import("../sandbox/docker/index.js");
  const d = await openDocker({ ...dockerOptions(cfg), poolSize: 1 });
  if (!d.sandbox) throw new Error(d.note);
  return d.sandbox;
}

/** The bare baseline: the same argv in bwrap over the rootfs, nothing else around it. */
function bare(rootfs: string, dir: string, argv: string[], env: Record<string, string>, stdin: string): { ok: boolean; out: string } {
  const args = [
    "--unshare-all", "--die-with-parent", "--clearenv", "--ro-bind", rootfs, "/", "--proc", "/proc", "--dev", "/dev",
    "--bind", dir, "/sandbox/run", "--chdir", "/sandbox/run", "--setenv", "HOME", "/sandbox/run", "--setenv", "TMPDIR", "/sandbox/run", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin",
    ...Object.entries(env).flatMap(([k, v]) => ["--setenv", k, v]), "--", ...argv,
  ];
  const r = spawnSync("bwrap", args, { input: stdin, encoding: "utf8" });
  return { ok: r.status === 0, out: r.stdout + r.stderr };
}

const sb = await open();
const rows: string[][] = [];
for (const [lang, s] of Object.entries(SAMPLES)) {
  if (only.length && !only.includes(lang)) continue;
  const spec = LANGUAGES[lang];
  const r = spec.image ? recipeFor(spec.image) : undefined;
  if (!r || !hasPython(rootfsDir(r, cfg)) || !sb.languages.includes(lang)) {
    console.error(`${lang}: image not built, skipped`);
    continue;
  }
  const code = `${s.ok}${lang === "php" ? "" : "\n"}${commentOf(lang)} ${Date.now()}\n`;
  // Assay: the first run compiles, the rest reuse the cached binary.
  let t = performance.now();
  const first = await sb.run({ language: lang, code, stdin: "2 3\n", limits });
  const sbCompile = first.compile?.wallMs ?? 0;
  if (first.stdout.trim() !== "5") throw new Error(`${lang} in the sandbox: ${JSON.stringify(first)}`);
  t = performance.now();
  for (let i = 0; i < N; i++) {
    const o = await sb.run({ language: lang, code, stdin: `${i} 3\n`, limits });
    if (o.stdout.trim() !== String(i + 3)) throw new Error(`${lang}: ${JSON.stringify(o)}`);
  }
  const sbRate = N / ((performance.now() - t) / 1000);
  // Bare: the same files, compile command and run command the job would use.
  const job = makeJob({ language: lang, code }, spec, limits);
  const dir = mkdtempSync(join(tmpdir(), "bench-lang-"));
  chmodSync(dir, 0o777);
  for (const [n, text] of Object.entries(job.files)) writeFileSync(join(dir, n), text);
  const rootfs = rootfsDir(r, cfg);
  let bareCompile = 0;
  if (job.compile) {
    t = performance.now();
    const c = bare(rootfs, dir, job.compile.argv, job.compile.env, "");
    bareCompile = performance.now() - t;
    if (!c.ok) throw new Error(`${lang} bare compile: ${c.out}`);
  }
  t = performance.now();
  for (let i = 0; i < N; i++) {
    const o = bare(rootfs, dir, job.argv, job.env, `${i} 3\n`);
    if (o.out.trim() !== String(i + 3)) throw new Error(`${lang} bare: ${o.out}`);
  }
  const bareRate = N / ((performance.now() - t) / 1000);
  rmSync(dir, { recursive: true, force: true });
  rows.push([lang, spec.image!, bareCompile ? bareCompile.toFixed(0) : "-", sbCompile ? sbCompile.toFixed(0) : "-", bareRate.toFixed(1), sbRate.toFixed(1), `${(bareRate / sbRate).toFixed(2)}x`]);
  console.error(`${lang}: done`);
}
await sb.close();

function commentOf(lang: string): string {
  return ["python", "python-sci", "bash", "ruby", "perl", "r"].includes(lang) ? "#" : lang === "lua" ? "--" : "//";
}

const head = ["language", "image", "bare compile ms", "assay compile ms", "bare tests/s", `assay (${backend}) tests/s`, "slowdown"];
console.log(`\n${N} runs each, one at a time; ${backend} backend against bwrap with nothing around it\n`);
console.log(`| ${head.join(" | ")} |\n| ${head.map(() => "---").join(" | ")} |`);
for (const r of rows) console.log(`| ${r.join(" | ")} |`);
