/**
 * The bwrap backend, for hosts without a Docker engine: each run is one bubblewrap sandbox over
 * the image's root filesystem (kept on disk by `assay sandbox build`), read-only, with new user,
 * pid, network, ipc and uts namespaces (so no network) and no further user namespaces
 * (--disable-userns), a seccomp filter (seccomp_filter.py), a fresh size-capped tmpfs at
 * /sandbox/run that the program's files are copied into through file descriptors (no host
 * directory is mounted for a run), and rlimits set by prlimit (CPU, address space, processes,
 * files, file size). A compiled language's compile step alone works in a host scratch directory
 * bound in, so its output can be cached; the run then gets that output bound read-only.
 * Each concurrent slot runs under its own host uid, so the process limit counts only that run's
 * processes; when the program's first process exits, the pid namespace dies and takes every
 * leftover process with it. Wall time and output are capped from outside (sandbox/process.ts).
 */
import { rm, cp, mkdir, rename, lstat, readdir } from "node:fs/promises";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, chownSync, writeFileSync, cpSync, mkdtempSync, chmodSync, readdirSync, readFileSync, statSync, lstatSync } from "node:fs";
import { join, dirname, normalize } from "node:path";
import { tmpdir } from "node:os";
import type { RunOutcome, RunRequest, RunStatus, Sandbox, SandboxLoad } from "../types.js";
import { Ledger } from "../load.js";
import { LANGUAGES, notBuiltReason } from "../languages.js";
import { hasPython, recipeFor, rootfsDir } from "../images.js";
import type { SandboxConfig } from "../../src/core/config.js";
import { jobHardWallMs, limitsOf, makeJob, notStarted, NotStartedError, outcomeOf, preloadWarner, sandboxError, specOf, type JobLimits, type RunnerJob } from "../job.js";
import { WarmSlot } from "./warm.js";
import { withTimeout } from "../docker/worker.js";
import { spawnCapped, signalOfExit, type CappedResult } from "../process.js";
import { SlotCgroups } from "./cgroups.js";
import { RunMeter, overloadMessage } from "../meter.js";

/** A bwrap run's result with what its meter measured (null where the slot has no cgroups). */
type Metered = CappedResult & { cpuMs: number | null; waitMs: number | null };
import { PACKAGE_ROOT } from "../paths.js";
import { Waiters } from "../waiters.js";

const BASE_UID = 61000;

export interface BwrapOptions {
  slots: number;
  bwrap: string;
  prlimit: string;
  /** Size of each run's tmpfs scratch, MiB. */
  scratchMb: number;
  /** Ceiling of any run's memory limit, MiB (its cgroup and address space). */
  memoryMb: number;
  /** Ceiling of any run's process limit. */
  pids: number;
  /**
   * Warm slots (warm.ts): a long-lived sandbox per slot running the runner and its warm Python,
   * for the languages without a compile step. Default: on where it can be (root and cgroups);
   * false: a fresh sandbox per run (benchmarks compare the two).
   */
  warm?: boolean;
  /** Python's warm interpreter imports these (empty: each language's own list, sandbox/languages.ts). */
  preload?: string[];
  /** Told what an operator should fix (a preloaded module that does not import); the server logs it as a warning. */
  onWarning?: (message: string) => void;
  /**
   * ASSAY_SANDBOX_MAX_WAIT_MS: a run waiting for a slot without a `startBy` is served as if it
   * had one this far after it began waiting (../waiters.ts; default 30 s).
   */
  maxWaitMs?: number;
}

/** The biggest compiled program a slot's cache is seeded with or gives the host (the runner caches up to half its 24 MiB). */
const SEED_MAX_BYTES = 12 << 20;

/**
 * Bytes in a file or a directory tree of plain files, or -1 when it holds anything else (a link,
 * a device) or passes `max` (checked as it goes: linear, bounded).
 */
export async function plainTreeBytes(p: string, max: number): Promise<number> {
  let total = 0;
  const walk = async (q: string): Promise<boolean> => {
    let st;
    try {
      st = await lstat(q);
    } catch {
      return false;
    }
    if (st.isFile()) {
      total += st.size;
      return total <= max;
    }
    if (!st.isDirectory()) return false;
    for (const name of await readdir(q).catch(() => null) ?? [null]) {
      if (name === null || !(await walk(join(q, name)))) return false;
    }
    return true;
  };
  return (await walk(p)) ? total : -1;
}

/** Memory a warm slot's runner and fork server hold beside a run (MiB), added to its cgroup's limit. */
const WARM_OVERHEAD_MB = 64;

/**
 * A run's scratch: files copied into a fresh tmpfs (path inside /sandbox/run, content, mode), and
 * host paths bound read-only into it (a compiled language's output: a binary, or a directory
 * such as Java's classes, from the compile step's host scratch).
 */
interface RunFiles {
  files: { name: string; data: string | Buffer; mode: number }[];
  binds: { name: string; host: string }[];
}

const SCRATCH = "/sandbox/run";

/**
 * The seccomp filter as classic BPF for `bwrap --seccomp`, generated by libseccomp (Debian's
 * python3-seccomp) for this host's architecture; or why there is none.
 */
export function seccompFilter(dir: string): Buffer | string {
  const script = join(PACKAGE_ROOT, "sandbox", "bwrap", "seccomp_filter.py");
  const out = join(dir, "seccomp.bpf");
  // Debian's own interpreter first: python3-seccomp is installed for it, not for a pyenv python.
  for (const py of ["/usr/bin/python3", "python3"]) {
    const r = spawnSync(py, [script, out], { encoding: "utf8", timeout: 20_000, cwd: dir });
    if (r.status === 0 && existsSync(out)) return readFileSync(out);
    if (py === "python3") return `no seccomp filter: ${(r.stderr || r.error?.message || "").trim().split("\n").slice(-1)[0]} (apt-get install python3-seccomp)`;
  }
  return "no seccomp filter";
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
 * reports "child-pid" on its status fd once the sandbox's first process exists, but its set-up
 * (mounts, seccomp, the exec itself) can still fail under load ("Resource temporarily
 * unavailable", exit 1): the program never ran, and scoring that as its failure would give
 * reward 0 for our fault. The marker comes first on stderr and is written before the program
 * exists, so a program can neither remove it nor gain anything by printing it.
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
  /** Runs waiting for a slot, served earliest deadline first (../waiters.ts). */
  private readonly waiters: Waiters<number>;
  private readonly base: string;
  private readonly root = process.getuid?.() === 0;
  /** Per-slot memory and pids cgroups, or why there are none (rlimits only). */
  readonly cgroups: SlotCgroups | string;
  /** The runs queued for and running in the slots (admission reads its backlog). */
  private readonly ledger: Ledger;
  /** The seccomp filter every run and compile loads, or why there is none. */
  readonly seccomp: Buffer | string;
  /** Whether runs go to warm slots (compiled languages too: compiled once per slot), or why not. */
  warm: true | string;
  /** Each slot's warm sandbox, if started (it runs one image at a time). */
  private readonly warmSlots: (WarmSlot | undefined)[] = [];
  /** Warm sandboxes that failed to start in a row (three: warm slots are turned off, with the reason). */
  private warmFailures = 0;
  /** Logs the preloaded modules a warm slot's Python could not import (once per image and list). */
  private readonly warnPreload: ReturnType<typeof preloadWarner>;

  constructor(private readonly rootfs: Record<string, string>, private readonly opts: BwrapOptions) {
    this.languages = Object.keys(LANGUAGES).filter((l) => rootfs[LANGUAGES[l].image ?? ""]);
    for (let i = 0; i < opts.slots; i++) this.free.push(i);
    this.ledger = new Ledger(opts.slots);
    this.waiters = new Waiters(opts.maxWaitMs);
    removeStaleScratch();
    this.base = mkdtempSync(join(tmpdir(), `assay-bwrap-${process.pid}-`));
    chmodSync(this.base, 0o711);
    mkdirSync(join(this.base, "cache"), { mode: 0o700 }); // compiled binaries: never readable by a run
    this.cgroups = SlotCgroups.open();
    this.seccomp = seccompFilter(this.base);
    this.warnPreload = preloadWarner(opts.onWarning);
    this.warm = opts.warm === false ? "turned off" : !this.root ? "not root (a warm slot's runner must be root to drop to the run uid)" : typeof this.cgroups === "string" ? `no per-slot cgroups (${this.cgroups})` : true;
  }

  /**
   * A free slot: one whose warm sandbox holds this program's compiled binary first, then one
   * already warm for its image, then one with no warm sandbox.
   */
  private pick(image?: string, key?: string): number | undefined {
    if (image !== undefined && this.warm === true) {
      const live = (s: number) => this.warmSlots[s]?.spec.image === image && !this.warmSlots[s]?.dead;
      let i = key === undefined ? -1 : this.free.findIndex((s) => live(s) && this.warmSlots[s]!.compiled.has(key));
      if (i < 0) i = this.free.findIndex(live);
      if (i < 0) i = this.free.findIndex((s) => !this.warmSlots[s]);
      if (i >= 0) return this.free.splice(i, 1)[0];
    }
    return this.free.pop();
  }

  /**
   * A free slot, or a wait for one; past `startBy` (epoch ms) the wait ends in NotStartedError.
   * A slot that comes free goes to the waiter with the earliest deadline (its `startBy`, else
   * when it began waiting plus ASSAY_SANDBOX_MAX_WAIT_MS), whatever its image: pick()'s
   * preference is among free slots.
   */
  private acquire(startBy?: number, image?: string, key?: string): Promise<number> {
    const s = this.pick(image, key);
    if (s !== undefined) return Promise.resolve(s);
    if (startBy !== undefined && startBy <= Date.now()) return Promise.reject(new NotStartedError("no sandbox slot came free in time"));
    return this.waiters.wait({ startBy, late: "no sandbox slot came free before the start deadline" });
  }

  private release(slot: number): void {
    if (!this.waiters.give(slot)) this.free.push(slot);
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

  /**
   * One bubblewrap sandbox. `scratch`: a host directory bound at /sandbox/run (the compile step,
   * whose output is kept), or the files of a run, copied into a fresh tmpfs of ASSAY_SANDBOX_SCRATCH_MB.
   */
  private async exec(slot: number, rootfs: string, scratch: string | RunFiles, argv: string[], limits: JobLimits, env: Record<string, string>, stdin: string, signal?: AbortSignal): Promise<Metered> {
    const cpuS = Math.max(1, Math.ceil(limits.cpuMs / 1000));
    const uid = BASE_UID + slot;
    // A VM's spec lifts the address-space rlimit (0) and leaves memory to the slot's cgroup;
    // where there is no cgroup, a generous rlimit still bounds it.
    const as = limits.addressSpaceMb || (typeof this.cgroups === "string" ? limits.memoryMb + 4096 : 0);
    // Descriptors 4, 5, ...: the seccomp filter, then each file of a run.
    const inputs: (string | Buffer)[] = typeof this.seccomp === "string" ? [] : [this.seccomp];
    const mounts: string[] = [];
    if (typeof scratch === "string") mounts.push("--bind", scratch, SCRATCH);
    else {
      mounts.push("--size", String(this.opts.scratchMb * 1024 * 1024), "--tmpfs", SCRATCH);
      const dirs = new Set<string>();
      for (const f of [...scratch.files, ...scratch.binds]) {
        const p = normalize(join(SCRATCH, f.name));
        if (!p.startsWith(SCRATCH + "/")) throw new Error(`file name escapes the scratch directory: ${JSON.stringify(f.name)}`);
        for (let d = dirname(p); d !== SCRATCH && !dirs.has(d); d = dirname(d)) dirs.add(d);
      }
      for (const d of [...dirs].sort((a, b) => a.length - b.length)) mounts.push("--dir", d);
      for (const f of scratch.files) {
        mounts.push("--perms", f.mode.toString(8).padStart(4, "0"), "--file", String(4 + inputs.length), normalize(join(SCRATCH, f.name)));
        inputs.push(f.data);
      }
      for (const b of scratch.binds) mounts.push("--ro-bind", b.host, normalize(join(SCRATCH, b.name)));
    }
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
      "--unshare-all", "--unshare-user", "--disable-userns", "--assert-userns-disabled", "--die-with-parent", "--new-session",
      // The program is the namespace's pid 1, without bwrap's own init. With that init, bwrap's
      // outer process returns as soon as the init reports the program's status, before the init
      // is reaped (bubblewrap issue #697): the init is orphaned to the host's init, and where that
      // reaps late or never (node as a container's pid 1, some VM inits) each run leaves a zombie
      // of the slot's uid until RLIMIT_NPROC and the pids cgroup refuse new runs ("Can't fork for
      // pid 1"): measured here, the 67th run on one slot failed. As pid 1 the program still takes
      // every process it left with it when it exits.
      "--as-pid-1",
      "--ro-bind", rootfs, "/",
      "--proc", "/proc", "--dev", "/dev",
      ...mounts,
      "--chdir", SCRATCH,
      "--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/sandbox/run",
      "--setenv", "TMPDIR", "/sandbox/run", "--setenv", "LANG", "C.UTF-8",
      ...Object.entries(env).flatMap(([k, v]) => ["--setenv", k, v]),
      "--uid", "65534", "--gid", "65534",
      "--json-status-fd", "3",
      ...(typeof this.seccomp === "string" ? [] : ["--seccomp", "4"]),
      "--",
      ...EXEC_SHIM,
    ];
    // Join the slot's cgroups first (a shell that moves itself, then execs), so every process of
    // the run is inside before the program starts.
    let join_: string[] = [];
    let meter: RunMeter | undefined;
    const cg = this.cgroups;
    if (typeof cg !== "string") {
      const procs = cg.prepare(slot, uid, limits.memoryMb + 64, limits.pids + 8);
      join_ = ["/bin/sh", "-c", procs.map((p) => `echo $$ > ${p}`).join(" && ") + ' && exec "$@"', "sh"];
      // The slot's CPU accounting and threads time the run by its own work (sandbox/meter.ts).
      if (cg.cpuNs(slot) !== null) meter = new RunMeter({ cpuNs: () => cg.cpuNs(slot), threads: () => cg.threads(slot) });
    }
    const r = await spawnCapped([...join_, ...pl, ...bw, ...argv], {
      stdin,
      // With a meter, the wall limit is applied to wall time less the wait for a CPU, and this
      // is the plain bound; without, the wall limit itself.
      wallMs: meter ? limits.hardWallMs : limits.wallMs,
      outputBytes: limits.outputBytes,
      uid: this.root ? uid : undefined,
      gid: this.root ? uid : undefined,
      signal,
      fd3: true,
      inputs,
      ...(meter ? { watch: { everyMs: 100, check: () => meter!.check(limits) } } : {}),
    });
    if (!meter) return { ...r, cpuMs: null, waitMs: null };
    meter.sample();
    return { ...r, cpuMs: meter.cpuMs(), waitMs: meter.waitMs() };
  }

  /**
   * Starts python's warm slots now, as the docker backend fills its pool at start-up, rather
   * than in the first runs: each free slot without a warm sandbox gets one, and its fork server
   * (one trivial Python job, `pass`, whose outcome is dropped). A slot's start is a bubblewrap
   * sandbox and two interpreter starts (≈ 40 ms of CPU); 128 of them started inside a burst of
   * 256 tests were most of bwrap's CPU at 128 concurrent (bench/README.md). Resolves once every
   * one has started or failed (a slot that fails is started by its first run, as before).
   */
  async warmUp(): Promise<void> {
    const spec = specOf("python");
    const rootfs = spec?.image && this.rootfs[spec.image];
    if (this.warm !== true || !spec || !rootfs) return;
    const slots = this.free.filter((s) => !this.warmSlots[s]);
    for (const s of slots) this.free.splice(this.free.indexOf(s), 1);
    const req: RunRequest = { language: "python", code: "pass" };
    const job = makeJob(req, spec, limitsOf(req, { memoryMb: this.opts.memoryMb, pids: this.opts.pids }), this.opts.preload);
    await Promise.all(slots.map(async (slot) => {
      try {
        const w = await this.warmSlot(slot, spec.image!, rootfs);
        if (w) await this.warmStep(slot, w, job, job.limits, jobHardWallMs(job) + 30_000);
      } catch {
        /* its first run starts it */
      } finally {
        this.release(slot);
      }
    }));
  }

  async run(req: RunRequest): Promise<RunOutcome> {
    const spec = specOf(req.language);
    const rootfs = spec?.image && this.rootfs[spec.image];
    if (!spec || !rootfs) return sandboxError(notBuiltReason(req.language) ?? `the bwrap backend does not run ${JSON.stringify(req.language)}; it runs ${this.languages.join(", ")}`);
    const limits = limitsOf(req, { memoryMb: this.opts.memoryMb, pids: this.opts.pids });
    const job = makeJob(req, spec, limits, this.opts.preload);
    let slot: number;
    const t0 = performance.now();
    const ticket = this.ledger.enter(limits.wallMs + (job.compile?.limits.wallMs ?? 0));
    const warm = this.warmFor(job);
    try {
      const waiting = this.acquire(req.startBy, warm ? spec.image : undefined, job.compile?.key);
      slot = await (req.queued ? req.queued(waiting) : waiting);
    } catch (e) {
      ticket.end(false);
      return notStarted((e as Error).message, performance.now() - t0);
    }
    ticket.start();
    let dir = "";
    try {
      if (warm) {
        const out = await this.runWarm(slot, spec.image!, rootfs, job, req.signal);
        if (out) return out;
      }
      const files: RunFiles = { files: Object.entries(job.files).map(([name, data]) => ({ name, data, mode: 0o644 })), binds: [] };
      let compile: RunOutcome["compile"];
      if (job.compile) {
        dir = this.scratch(slot);
        this.writeFiles(dir, slot, job.files);
        const c = await this.compileStep(slot, rootfs, dir, job.compile, req.signal);
        if ("failed" in c) return c.failed;
        compile = c.compile;
        files.binds.push({ name: job.compile.output, host: join(dir, job.compile.output) });
      }
      const ooms = typeof this.cgroups === "string" ? 0 : this.cgroups.oomKills(slot);
      const r = await this.execRetrying(slot, rootfs, files, job.argv, job.limits, job.env, job.stdin, req.signal);
      if (r.spawnError) return sandboxError(`cannot start bwrap: ${r.spawnError}`);
      if (r.killedBy === "aborted") return sandboxError("aborted", r.wallMs);
      if (isSetupFailure(r)) return sandboxError(`bwrap failed: ${r.stderr.trim().slice(0, 300)}`, r.wallMs);
      // Stopped at the plain wall bound within its own limits: the host's load, no verdict.
      if (r.killedBy === "overloaded" && !(r.cpuMs !== null && r.cpuMs > job.limits.cpuMs)) {
        return { ...sandboxError(overloadMessage(r, job.limits), r.wallMs), cpuMs: r.cpuMs, waitMs: r.waitMs };
      }
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
        cpuMs: r.cpuMs,
        waitMs: r.waitMs,
        ...(compile ? { compile } : {}),
      };
    } catch (e) {
      return sandboxError(`bwrap sandbox failed: ${(e as Error).message}`);
    } finally {
      // The slot is free at once; its old scratch goes in the background, and nothing it holds
      // (a 3000-deep tree, read-only directories) can throw here or block the event loop.
      ticket.end();
      this.release(slot);
      if (dir) void removeTree(dir);
    }
  }

  /**
   * The slot's warm sandbox for `image`: the one it has, or a new one (a slot's sandbox for
   * another image is ended first). Undefined when one cannot be started (the run then takes a
   * fresh sandbox); after three such failures in a row warm slots are turned off, with the reason.
   */
  private async warmSlot(slot: number, image: string, rootfs: string): Promise<WarmSlot | undefined> {
    const had = this.warmSlots[slot];
    if (had && !had.dead && had.spec.image === image) return had;
    this.warmSlots[slot] = undefined;
    if (had) await had.kill();
    const cg = this.cgroups as SlotCgroups;
    const group = this.opts.slots + slot; // its own groups, apart from the slot's fresh-sandbox runs
    let w: WarmSlot | undefined;
    try {
      const procs = cg.prepare(group, 0, this.opts.memoryMb + 64 + WARM_OVERHEAD_MB, this.opts.pids + 16);
      w = new WarmSlot({
        bwrap: this.opts.bwrap, rootfs, image, scratchMb: this.opts.scratchMb,
        seccomp: typeof this.seccomp === "string" ? null : this.seccomp, procs, cgroups: cg.binds(group),
      });
      await withTimeout(w.ready, 20_000, "its runner did not start within 20 s");
    } catch (e) {
      await w?.kill();
      if (++this.warmFailures >= 3) this.warm = `warm slots failed to start 3 times in a row (${(e as Error).message}); every run takes a fresh sandbox`;
      return undefined;
    }
    this.warmFailures = 0;
    this.warmSlots[slot] = w;
    return w;
  }

  /**
   * Whether a run goes to a warm slot: every language when warm slots are on, but a compiled
   * program whose binary was too big for a slot's cache (it then takes a fresh sandbox, whose
   * compile cache is on the host).
   */
  private warmFor(job: RunnerJob): boolean {
    return this.warm === true && !(job.compile && this.coldKeys.has(job.compile.key));
  }

  /** Compile keys whose output a warm slot's runner would not cache (bounded: a stale key costs a compile). */
  private readonly coldKeys = new Set<string>();

  /**
   * One run on the slot's warm sandbox, as a Docker container runs it (the same runner). A
   * compiled program is compiled once per slot, as a job of its own under the compiler's limits
   * (its output stays in the runner's cache, and the slot is preferred for the item's later
   * tests: pick()); each test then runs under the program's limits. A run that leaves the
   * runner's sandbox suspect (timed out, out of memory, SIGKILLed, processes left) ends it: the
   * slot's next run starts a fresh one. Undefined: no warm sandbox could start (or the binary is
   * too big for its cache), and the run takes a fresh sandbox.
   */
  private async runWarm(slot: number, image: string, rootfs: string, job: RunnerJob, signal?: AbortSignal): Promise<RunOutcome | undefined> {
    const w = await this.warmSlot(slot, image, rootfs);
    if (!w) return undefined;
    let compiled: RunOutcome["compile"] | undefined;
    const comp = job.compile;
    if (comp && !w.compiled.has(comp.key) && (await this.seedSlot(w, comp.key))) {
      // Compiled before on another slot (or a fresh sandbox): the host's cache seeded this one's.
      if (w.compiled.size >= 256) w.compiled.clear();
      w.compiled.add(comp.key);
    }
    if (comp && !w.compiled.has(comp.key)) {
      const c = await this.warmStep(slot, w, { ...job, compileOnly: true }, comp.limits, comp.limits.hardWallMs + 30_000, signal);
      if ("outcome" in c) return c.outcome;
      if (c.reply.status !== "finished") return outcomeOf(c.reply, job); // compile error, compiler out of time, host overloaded
      if (!c.reply.cached || w.dead) {
        if (!c.reply.cached) {
          if (this.coldKeys.size >= 256) this.coldKeys.clear();
          this.coldKeys.add(comp.key);
        }
        return undefined;
      }
      if (w.compiled.size >= 256) w.compiled.clear();
      w.compiled.add(comp.key);
      compiled = outcomeOf(c.reply, job).compile;
      await this.keepFromSlot(w, comp.key);
    }
    const r = await this.warmStep(slot, w, job, job.limits, jobHardWallMs(job) + 30_000, signal);
    if ("outcome" in r) return r.outcome;
    // Evicted from the slot's cache since (the runner compiled it again): not there any more.
    if (comp && r.reply.compile && !r.reply.compile.cached) w.compiled.delete(comp.key);
    const out = outcomeOf(r.reply, job);
    return compiled && out.compile ? { ...out, compile: compiled } : out;
  }

  /**
   * One job on a warm slot under `limits` (its cgroup's memory and processes, on top of what the
   * runner and its fork server hold). `reply`: the runner's answer (a suspect slot is already
   * retired); `outcome`: what the run came to when the slot failed (undefined: take a fresh sandbox).
   */
  private async warmStep(slot: number, w: WarmSlot, job: RunnerJob, limits: JobLimits, budgetMs: number, signal?: AbortSignal): Promise<{ reply: any } | { outcome: RunOutcome | undefined }> {
    const cg = this.cgroups as SlotCgroups;
    const group = this.opts.slots + slot;
    const retire = async () => {
      if (this.warmSlots[slot] === w) this.warmSlots[slot] = undefined;
      await w.kill();
    };
    try {
      // (its pids cgroup is its process limit: the run uid, 65534, is every warm slot's, as every
      // container's, so an RLIMIT_NPROC would count other slots' runs)
      cg.prepare(group, 0, limits.memoryMb + 64 + WARM_OVERHEAD_MB, limits.pids + 12);
    } catch {
      await retire(); // (lowering the limit below what the sandbox holds fails: start afresh)
      return { outcome: undefined };
    }
    const ooms = cg.oomKills(group);
    const t0 = performance.now();
    try {
      const r = await w.exec(job, budgetMs, signal);
      this.warnPreload(w.spec.image, r);
      if (r.tainted || r.status === "sandbox_error") await retire();
      return { reply: r };
    } catch (e) {
      await retire();
      if (signal?.aborted) return { outcome: sandboxError("aborted", performance.now() - t0) };
      // The cgroup's OOM killer took the runner with the program: the program's memory use.
      if (cg.oomKills(group) > ooms) {
        return { outcome: { status: "memory_limit", exitCode: null, signal: "SIGKILL", stdout: "", stderr: "", truncated: false, wallMs: performance.now() - t0, cpuMs: null, message: "the program's memory use took down its sandbox" } };
      }
      return { outcome: sandboxError(`warm bwrap sandbox failed: ${(e as Error).message}`, performance.now() - t0) };
    }
  }

  /**
   * Copies a compiled program from the host's cache (content-addressed: the compile key hashes
   * the image, compiler, flags, environment and every file) into a warm slot's runner cache, so
   * only the first slot that gets a program compiles it: every other slot it lands on finds it
   * there (its tmpfs, reached through /proc/<runner>/root; root-only, as the runner keeps it).
   * False where there is nothing to seed, or it cannot be done (the slot then compiles).
   */
  private async seedSlot(w: WarmSlot, key: string): Promise<boolean> {
    const host = join(this.base, "cache", key);
    const dir = w.rootPath("/sandbox/cache");
    if (!dir || !existsSync(host) || (await plainTreeBytes(host, SEED_MAX_BYTES)) < 0) return false;
    const partial = `${dir}/${key}.seed`;
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await cp(host, partial, { recursive: true });
      await rename(partial, `${dir}/${key}`);
      return !w.dead;
    } catch {
      await rm(partial, { recursive: true, force: true }).catch(() => {});
      return false;
    }
  }

  /**
   * Keeps what a warm slot compiled in the host's cache (whole or not at all: copied under a
   * temporary name, then renamed), for seedSlot and the fresh-sandbox path. Only plain files and
   * directories within SEED_MAX_BYTES (the runner caches nothing bigger), never a link.
   */
  private async keepFromSlot(w: WarmSlot, key: string): Promise<void> {
    const src = w.rootPath(`/sandbox/cache/${key}`);
    const dest = join(this.base, "cache", key);
    if (!src || existsSync(dest) || (await plainTreeBytes(src, SEED_MAX_BYTES)) < 0) return;
    const partial = `${dest}.${process.pid}.${++this.runs}.partial`;
    try {
      await cp(src, partial, { recursive: true });
      renameSync(partial, dest);
    } catch {
      await rm(partial, { recursive: true, force: true }).catch(() => {});
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
    if (raw.killedBy === "overloaded" && !(raw.cpuMs !== null && raw.cpuMs > step.limits.cpuMs)) {
      return { failed: { ...sandboxError(overloadMessage(raw, step.limits, "the compiler"), raw.wallMs), cpuMs: raw.cpuMs, waitMs: raw.waitMs } };
    }
    const c = programStderr(raw) as Metered;
    const ok = !c.killedBy && c.exitCode === 0 && existsSync(target);
    const timedOut = c.killedBy === "time_limit" || c.killedBy === "overloaded" || (c.cpuMs !== null && c.cpuMs > step.limits.cpuMs);
    const compile = { status: ok ? "finished" : timedOut ? "time_limit" : "compile_error", stdout: c.stdout, stderr: c.stderr, wallMs: c.wallMs, cpuMs: c.cpuMs, waitMs: c.waitMs } as const;
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
  private statusOf(r: Pick<Metered, "killedBy" | "exitCode" | "wallMs" | "cpuMs">, sig: string | null, stderr: string, slot: number, ooms: number, oomMarkers: string[], cpuMs: number): RunStatus {
    // Runtimes print the out-of-memory line first and a stack dump after it (Go, V8): both ends.
    const tail = stderr.slice(0, 2000) + stderr.slice(-2000);
    // (overloaded reaches here only past its CPU limit: a time limit.)
    if (r.killedBy === "overloaded") return "time_limit";
    if (r.killedBy && r.killedBy !== "aborted") return r.killedBy;
    if (sig === "SIGXCPU") return "time_limit";
    // The whole tree's CPU time (a program that spread its work over processes, each under
    // the per-process rlimit).
    if (r.cpuMs !== null && r.cpuMs > cpuMs) return "time_limit";
    if (typeof this.cgroups !== "string" && this.cgroups.oomKills(slot) > ooms) return "memory_limit";
    if ((r.exitCode !== 0 || sig) && oomMarkers.some((m) => tail.includes(m))) return "memory_limit";
    // SIGKILL is the CPU rlimit's hard limit (a runtime that ignores SIGXCPU, as Go's does) once
    // the run has lasted past it, else the memory cgroup's or the kernel's OOM killer.
    if (sig === "SIGKILL") return r.wallMs >= Math.ceil(cpuMs / 1000) * 1000 ? "time_limit" : "memory_limit";
    if (sig) return "runtime_error";
    return "finished";
  }

  load(): SandboxLoad {
    return this.ledger.load();
  }

  async close(): Promise<void> {
    await Promise.all(this.warmSlots.map((w) => w?.kill()));
    this.warmSlots.length = 0;
    await removeTree(this.base);
    if (typeof this.cgroups !== "string") this.cgroups.close(2 * this.opts.slots);
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

export async function openBwrap(c: Pick<SandboxConfig, "rootfs" | "poolSize" | "scratchMb" | "memoryMb" | "pids"> & Partial<Pick<SandboxConfig, "maxWaitMs">> & { bwrapWarm?: boolean; preload?: string[]; onWarning?: (message: string) => void }): Promise<{ sandbox: BwrapSandbox | null; note: string }> {
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
  const sb = new BwrapSandbox(rootfs, { slots, bwrap, prlimit, scratchMb: c.scratchMb, memoryMb: c.memoryMb, pids: c.pids, warm: c.bwrapWarm, preload: c.preload, onWarning: c.onWarning, maxWaitMs: c.maxWaitMs });
  const probe = await sb.run({ language: "python", code: "print(6*7)", limits: { wallMs: 10_000 } });
  if (probe.status !== "finished" || probe.stdout.trim() !== "42") {
    await sb.close();
    return { sandbox: null, note: `bwrap is installed but cannot run a sandbox here (${probe.message ?? probe.stderr.trim().slice(0, 200)}); user namespaces may be disabled` };
  }
  const limits = typeof sb.cgroups === "string" ? `rlimits per run (no per-run cgroup: ${sb.cgroups})` : "memory and pids cgroups plus rlimits per run";
  const warm = sb.warm === true ? ", warm slots (a runner and warm Python per slot)" : `; a fresh sandbox per run (no warm slots: ${sb.warm})`;
  const filter = typeof sb.seccomp === "string" ? `; ${sb.seccomp}` : ", seccomp filter";
  return { sandbox: sb, note: `bwrap: ${slots} slots over ${Object.values(rootfs).join(", ")}, no network, ${limits}${filter}${warm}` };
}
