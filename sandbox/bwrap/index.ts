/**
 * The bwrap backend, for hosts without a Docker engine: each run is one bubblewrap sandbox over
 * the image's root filesystem (kept on disk by `assay sandbox build`), read-only, with new user,
 * pid, network, ipc and uts namespaces (so no network), a fresh scratch directory bound at
 * /sandbox/run, and rlimits set by prlimit (CPU, address space, processes, files, file size).
 * Each concurrent slot runs under its own host uid, so the process limit counts only that run's
 * processes; when the program's first process exits, the pid namespace dies and takes every
 * leftover process with it. Wall time and output are capped from outside (sandbox/process.ts).
 */
import { rm } from "node:fs/promises";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, chownSync, writeFileSync, cpSync, mkdtempSync, chmodSync, readdirSync, statSync, lstatSync } from "node:fs";
import { join, dirname, normalize } from "node:path";
import { tmpdir } from "node:os";
import type { RunOutcome, RunRequest, RunStatus, Sandbox } from "../types.js";
import { LANGUAGES, notBuiltReason } from "../languages.js";
import { hasPython, recipeFor, rootfsDir } from "../images.js";
import type { SandboxConfig } from "../../src/core/config.js";
import { limitsOf, makeJob, notStarted, NotStartedError, sandboxError, specOf, type JobLimits } from "../job.js";
import { spawnCapped, signalOfExit, type CappedResult } from "../process.js";
import { SlotCgroups } from "./cgroups.js";

const BASE_UID = 61000;

export interface BwrapOptions {
  slots: number;
  bwrap: string;
  prlimit: string;
}

function which(cmd: string): string | null {
  const r = spawnSync("sh", ["-c", `command -v ${cmd}`], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** Removes scratch folders left by Assay processes that are gone. */
function removeStaleScratch(): void {
  for (const n of readdirSync(tmpdir())) {
    const m = /^assay-bwrap-(\d+)-/.exec(n);
    if (!m) continue;
    try {
      process.kill(Number(m[1]), 0);
    } catch {
      void removeTree(join(tmpdir(), n)); // in the background: a deep tree must not stop start-up
    }
  }
}

/**
 * Written to stderr by a shell inside the sandbox just before it execs the program. bwrap
 * reports "child-pid" on its status fd once its own pid 1 exists, but that pid 1 still has to
 * fork the program, and under load that fork can fail ("bwrap: Can't fork for pid 1: Resource
 * temporarily unavailable", exit 1): the program never ran, and scoring that as its failure
 * would give reward 0 for our fault. The marker comes first on stderr and is written before the
 * program exists, so a program can neither remove it nor gain anything by printing it.
 */
export const EXEC_MARK = "\u001eassay-exec\u001e";
const EXEC_SHIM = ["/bin/sh", "-c", 'printf "\\036assay-exec\\036" >&2 && exec "$@"', "sh"];

/** bwrap itself failed before starting the program: no child-pid, or no exec marker. */
export function isSetupFailure(r: CappedResult): boolean {
  if (r.killedBy || r.spawnError) return false;
  return !/"child-pid"/.test(r.fd3 ?? "") || !r.stderr.startsWith(EXEC_MARK);
}

/** The program's own stderr: without the exec marker. */
function programStderr(r: CappedResult): CappedResult {
  return r.stderr.startsWith(EXEC_MARK) ? { ...r, stderr: r.stderr.slice(EXEC_MARK.length) } : r;
}

export class BwrapSandbox implements Sandbox {
  readonly name = "bwrap";
  readonly languages: readonly string[];
  private readonly free: number[] = [];
  private readonly waiters: ((slot: number) => void)[] = [];
  private readonly base: string;
  private readonly root = process.getuid?.() === 0;
  /** Per-slot memory and pids cgroups, or why there are none (rlimits only). */
  readonly cgroups: SlotCgroups | string;

  constructor(private readonly rootfs: Record<string, string>, private readonly opts: BwrapOptions) {
    this.languages = Object.keys(LANGUAGES).filter((l) => rootfs[LANGUAGES[l].image ?? ""]);
    for (let i = 0; i < opts.slots; i++) this.free.push(i);
    removeStaleScratch();
    this.base = mkdtempSync(join(tmpdir(), `assay-bwrap-${process.pid}-`));
    chmodSync(this.base, 0o711);
    mkdirSync(join(this.base, "cache"), { mode: 0o700 }); // compiled binaries: never readable by a run
    this.cgroups = SlotCgroups.open();
  }

  /** A free slot, or a wait for one; past `startBy` (epoch ms) the wait ends in NotStartedError. */
  private acquire(startBy?: number): Promise<number> {
    const s = this.free.pop();
    if (s !== undefined) return Promise.resolve(s);
    if (startBy !== undefined && startBy <= Date.now()) return Promise.reject(new NotStartedError("no sandbox slot came free in time"));
    return new Promise((res, rej) => {
      let timer: NodeJS.Timeout | undefined;
      const waiter = (slot: number) => {
        clearTimeout(timer);
        res(slot);
      };
      this.waiters.push(waiter);
      if (startBy !== undefined) {
        timer = setTimeout(() => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) {
            this.waiters.splice(i, 1);
            rej(new NotStartedError("no sandbox slot came free before the start deadline"));
          }
        }, Math.max(0, startBy - Date.now()));
      }
    });
  }

  private release(slot: number): void {
    const w = this.waiters.shift();
    if (w) w(slot);
    else this.free.push(slot);
  }

  private runs = 0;

  /** A fresh scratch directory for one run (a new name each time: the last may still be going). */
  private scratch(slot: number): string {
    const dir = join(this.base, `run-${slot}-${++this.runs}`);
    mkdirSync(dir, { mode: 0o700 });
    if (this.root) chownSync(dir, BASE_UID + slot, BASE_UID + slot);
    return dir;
  }

  private writeFiles(dir: string, slot: number, files: Record<string, string>): void {
    for (const [name, content] of Object.entries(files)) {
      const p = normalize(join(dir, name));
      if (!p.startsWith(dir + "/")) throw new Error(`file name escapes the scratch directory: ${JSON.stringify(name)}`);
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, content);
      if (this.root) chownSync(p, BASE_UID + slot, BASE_UID + slot);
    }
  }

  private exec(slot: number, rootfs: string, dir: string, argv: string[], limits: JobLimits, env: Record<string, string>, stdin: string, signal?: AbortSignal): Promise<CappedResult> {
    const cpuS = Math.max(1, Math.ceil(limits.cpuMs / 1000));
    const uid = BASE_UID + slot;
    // A VM's spec lifts the address-space rlimit (0) and leaves memory to the slot's cgroup;
    // where there is no cgroup, a generous rlimit still bounds it.
    const as = limits.addressSpaceMb || (typeof this.cgroups === "string" ? limits.memoryMb + 4096 : 0);
    const pl = [
      this.opts.prlimit,
      `--cpu=${cpuS}:${cpuS + 1}`,
      `--as=${as ? as * 1024 * 1024 : "unlimited"}`,
      "--nofile=256",
      `--fsize=${64 << 20}`,
      "--core=0",
      ...(this.root ? [`--nproc=${limits.pids + 4}`] : []),
      "--",
    ];
    const bw = [
      this.opts.bwrap,
      "--unshare-all", "--die-with-parent", "--new-session",
      "--ro-bind", rootfs, "/",
      "--proc", "/proc", "--dev", "/dev",
      "--bind", dir, "/sandbox/run", "--chdir", "/sandbox/run",
      "--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/sandbox/run",
      "--setenv", "TMPDIR", "/sandbox/run", "--setenv", "LANG", "C.UTF-8",
      ...Object.entries(env).flatMap(([k, v]) => ["--setenv", k, v]),
      "--uid", "65534", "--gid", "65534",
      "--json-status-fd", "3",
      "--",
      ...EXEC_SHIM,
    ];
    // Join the slot's cgroups first (a shell that moves itself, then execs), so every process of
    // the run is inside before the program starts.
    let join_: string[] = [];
    if (typeof this.cgroups !== "string") {
      const procs = this.cgroups.prepare(slot, uid, limits.memoryMb + 64, limits.pids + 8);
      join_ = ["/bin/sh", "-c", procs.map((p) => `echo $$ > ${p}`).join(" && ") + ' && exec "$@"', "sh"];
    }
    return spawnCapped([...join_, ...pl, ...bw, ...argv], {
      stdin,
      wallMs: limits.wallMs,
      outputBytes: limits.outputBytes,
      uid: this.root ? uid : undefined,
      gid: this.root ? uid : undefined,
      signal,
      fd3: true,
    });
  }

  async run(req: RunRequest): Promise<RunOutcome> {
    const spec = specOf(req.language);
    const rootfs = spec?.image && this.rootfs[spec.image];
    if (!spec || !rootfs) return sandboxError(notBuiltReason(req.language) ?? `the bwrap backend does not run ${JSON.stringify(req.language)}; it runs ${this.languages.join(", ")}`);
    const limits = limitsOf(req);
    const job = makeJob(req, spec, limits);
    let slot: number;
    const t0 = performance.now();
    try {
      slot = await this.acquire(req.startBy);
    } catch (e) {
      return notStarted((e as Error).message, performance.now() - t0);
    }
    let dir = "";
    try {
      dir = this.scratch(slot);
      this.writeFiles(dir, slot, job.files);
      let compile: RunOutcome["compile"];
      if (job.compile) {
        const c = await this.compileStep(slot, rootfs, dir, job.compile, req.signal);
        if ("failed" in c) return c.failed;
        compile = c.compile;
      }
      const ooms = typeof this.cgroups === "string" ? 0 : this.cgroups.oomKills(slot);
      const r = await this.execRetrying(slot, rootfs, dir, job.argv, job.limits, job.env, job.stdin, req.signal);
      if (r.spawnError) return sandboxError(`cannot start bwrap: ${r.spawnError}`);
      if (r.killedBy === "aborted") return sandboxError("aborted", r.wallMs);
      if (isSetupFailure(r)) return sandboxError(`bwrap failed: ${r.stderr.trim().slice(0, 300)}`, r.wallMs);
      // bwrap reports a child killed by a signal as 128+signal.
      const sig = r.signal ?? signalOfExit(r.exitCode);
      const stderr = programStderr(r).stderr;
      return {
        status: this.statusOf(r, sig, stderr, slot, ooms, job.oom, job.limits.cpuMs),
        exitCode: sig ? null : r.exitCode,
        signal: sig,
        stdout: r.stdout,
        stderr,
        truncated: r.truncated,
        wallMs: r.wallMs,
        cpuMs: null,
        ...(compile ? { compile } : {}),
      };
    } catch (e) {
      return sandboxError(`bwrap sandbox failed: ${(e as Error).message}`);
    } finally {
      // The slot is free at once; its old scratch goes in the background, and nothing it holds
      // (a 3000-deep tree, read-only directories) can throw here or block the event loop.
      this.release(slot);
      if (dir) void removeTree(dir);
    }
  }

  /** The compile step, from the root-only cache when this program was compiled before. */
  private async compileStep(
    slot: number, rootfs: string, dir: string, step: NonNullable<ReturnType<typeof makeJob>["compile"]>, signal?: AbortSignal,
  ): Promise<{ compile: NonNullable<RunOutcome["compile"]> } | { failed: RunOutcome }> {
    const cached = join(this.base, "cache", step.key);
    const target = join(dir, step.output);
    if (existsSync(cached)) {
      // A file (a binary) or a directory (Java's classes).
      cpSync(cached, target, { recursive: true });
      if (this.root) chownTree(target, BASE_UID + slot);
      if (!statSync(target).isDirectory()) chmodSync(target, 0o755);
      return { compile: { status: "finished", stdout: "", stderr: "", wallMs: 0 } };
    }
    const raw = await this.exec(slot, rootfs, dir, step.argv, step.limits, step.env, "", signal);
    if (raw.spawnError) return { failed: sandboxError(`cannot start bwrap: ${raw.spawnError}`) };
    if (isSetupFailure(raw)) return { failed: sandboxError(`bwrap failed: ${raw.stderr.trim().slice(0, 300)}`) };
    const c = programStderr(raw);
    const ok = !c.killedBy && c.exitCode === 0 && existsSync(target);
    const compile = { status: ok ? "finished" : c.killedBy === "time_limit" ? "time_limit" : "compile_error", stdout: c.stdout, stderr: c.stderr, wallMs: c.wallMs } as const;
    if (!ok) {
      return { failed: { status: "compile_error", exitCode: c.exitCode, signal: c.signal, stdout: "", stderr: c.stderr, truncated: c.truncated, wallMs: 0, cpuMs: null, compile } };
    }
    // Copied under a temporary name, then renamed: a run of the same program starting meanwhile
    // sees either no binary or a whole one, never a half-written file.
    const partial = `${cached}.${process.pid}.${++this.runs}.partial`;
    cpSync(target, partial, { recursive: true });
    renameSync(partial, cached);
    return { compile };
  }

  /**
   * Runs the program. bwrap's own setup can fail transiently under load (EAGAIN creating
   * namespaces): the program never started, so trying again is safe.
   */
  private async execRetrying(...args: Parameters<BwrapSandbox["exec"]>): ReturnType<BwrapSandbox["exec"]> {
    let r = await this.exec(...args);
    for (let attempt = 1; attempt < 3 && isSetupFailure(r); attempt++) {
      await new Promise((res) => setTimeout(res, 50 * attempt));
      r = await this.exec(...args);
    }
    return r;
  }

  /** What ended the program: our limits first, then the kernel's and the runtime's own words. */
  private statusOf(r: { killedBy?: RunStatus | "aborted" | null; exitCode: number | null; wallMs: number }, sig: string | null, stderr: string, slot: number, ooms: number, oomMarkers: string[], cpuMs: number): RunStatus {
    // Runtimes print the out-of-memory line first and a stack dump after it (Go, V8): both ends.
    const tail = stderr.slice(0, 2000) + stderr.slice(-2000);
    if (r.killedBy && r.killedBy !== "aborted") return r.killedBy;
    if (sig === "SIGXCPU") return "time_limit";
    if (typeof this.cgroups !== "string" && this.cgroups.oomKills(slot) > ooms) return "memory_limit";
    if ((r.exitCode !== 0 || sig) && oomMarkers.some((m) => tail.includes(m))) return "memory_limit";
    // SIGKILL is the CPU rlimit's hard limit (a runtime that ignores SIGXCPU, as Go's does) once
    // the run has lasted past it, else the memory cgroup's or the kernel's OOM killer.
    if (sig === "SIGKILL") return r.wallMs >= Math.ceil(cpuMs / 1000) * 1000 ? "time_limit" : "memory_limit";
    if (sig) return "runtime_error";
    return "finished";
  }

  async close(): Promise<void> {
    await removeTree(this.base);
    if (typeof this.cgroups !== "string") this.cgroups.close(this.opts.slots);
  }
}

/** chown of a compile output, a file or every entry of a directory. */
function chownTree(p: string, uid: number): void {
  chownSync(p, uid, uid);
  if (!lstatSync(p).isDirectory()) return;
  for (const n of readdirSync(p, { recursive: true }) as string[]) {
    const q = join(p, n);
    if (!lstatSync(q).isSymbolicLink()) chownSync(q, uid, uid);
  }
}

/**
 * Removes a directory a program filled, without throwing and off the event loop: fs.rm first;
 * for what it cannot remove (paths past PATH_MAX, directories the program made read-only), a
 * chmod and rm -rf in a child process, bounded in time.
 */
export async function removeTree(dir: string): Promise<void> {
  try {
    await rm(dir, { recursive: true, force: true });
    return;
  } catch {
    /* fall through */
  }
  await new Promise<void>((resolve) => {
    const p = spawn("/bin/sh", ["-c", 'chmod -R u+rwX -- "$1" 2>/dev/null; rm -rf -- "$1"', "sh", dir], { stdio: "ignore", timeout: 60_000, killSignal: "SIGKILL" });
    p.on("error", () => resolve());
    p.on("close", () => resolve());
  });
}

export async function openBwrap(c: Pick<SandboxConfig, "rootfs" | "poolSize">): Promise<{ sandbox: BwrapSandbox | null; note: string }> {
  const bwrap = which("bwrap");
  const prlimit = which("prlimit");
  if (!bwrap || !prlimit) {
    return { sandbox: null, note: `bwrap: ${!bwrap ? "bubblewrap" : "prlimit (util-linux)"} is not installed; apt-get install bubblewrap (scripts/setup-sandbox.sh does)` };
  }
  const rootfs: Record<string, string> = {};
  for (const name of new Set(Object.values(LANGUAGES).flatMap((l) => (l.image ? [l.image] : [])))) {
    const r = recipeFor(name);
    if (r && hasPython(rootfsDir(r, c))) {
      rootfs[name] = rootfsDir(r, c);
      // The scratch mount point (made at build time; made here too for older builds).
      if (process.getuid?.() === 0) mkdirSync(join(rootfs[name], "sandbox", "run"), { recursive: true });
    }
  }
  if (!rootfs.python) return { sandbox: null, note: "bwrap: no image root filesystem on disk; run `npx assay sandbox build`" };
  const slots = c.poolSize;
  const sb = new BwrapSandbox(rootfs, { slots, bwrap, prlimit });
  const probe = await sb.run({ language: "python", code: "print(6*7)", limits: { wallMs: 10_000 } });
  if (probe.status !== "finished" || probe.stdout.trim() !== "42") {
    await sb.close();
    return { sandbox: null, note: `bwrap is installed but cannot run a sandbox here (${probe.message ?? probe.stderr.trim().slice(0, 200)}); user namespaces may be disabled` };
  }
  const limits = typeof sb.cgroups === "string" ? `rlimits per run (no per-run cgroup: ${sb.cgroups})` : "memory and pids cgroups plus rlimits per run";
  return { sandbox: sb, note: `bwrap: ${slots} slots over ${Object.values(rootfs).join(", ")}, no network, ${limits}` };
}
