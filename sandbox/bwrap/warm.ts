/**
 * A warm bwrap slot: one long-lived bubblewrap sandbox per slot running Assay's runner
 * (sandbox/runner/runner.py), the same runner and fork server a Docker container runs, so a run
 * on bwrap costs one JSON line each way and one fork inside the sandbox instead of a namespace
 * and mount set-up and an interpreter start.
 *
 * The sandbox is the Docker container's equivalent: new pid, network, ipc, uts and cgroup
 * namespaces (no network), the image's root filesystem read-only, a size-capped tmpfs at
 * /sandbox (the runner's scratch: each run's files in /sandbox/run, wiped after it), the
 * seccomp filter every bwrap run loads (no new namespaces, no ptrace, no mounts), and the slot's
 * own memory, pids and CPU-accounting cgroups (bound read-only at /sys/fs/cgroup, where the
 * runner reads its CPU time and OOM kills as it does in a container). Like a container's runner
 * it is root with only the capabilities it needs to drop to the run uid (65534, as in a
 * container: the slot's pid, ipc, network and mount namespaces keep one slot's programs from
 * another's, and its pids cgroup bounds its processes) and to clean up after a run; each run is
 * a fresh child of that uid with its rlimits, wall timer, scratch directory and pipes, reaped
 * (and every process it left killed) before the next.
 * No user namespace is used: a single mapped uid could not separate the runner from the
 * program. So this needs Assay to run as root (as the per-slot uids and cgroups already do);
 * without root each run is a fresh bwrap sandbox as before.
 *
 * A slot whose run timed out, ran out of memory, was SIGKILLed or left processes behind (the
 * runner says `tainted`), or whose runner died or overran, is killed whole and started afresh.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { runnerSourceText } from "../paths.js";
import type { RunnerJob } from "../job.js";
import { runnerReplies } from "../docker/worker.js";

/** The runner's capabilities: those a Docker container's runner keeps (sandbox/docker/worker.ts). */
const CAPS = ["CAP_SETUID", "CAP_SETGID", "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_KILL"];

/** Where the slot's cgroups are, to be bound read-only where the runner reads them. */
export type CgroupBinds = { kind: "v1"; memory: string; cpu?: string } | { kind: "v2"; dir: string };

export interface WarmSpec {
  bwrap: string;
  /** The image's root filesystem. */
  rootfs: string;
  /** Image name (a slot runs one image at a time). */
  image: string;
  scratchMb: number;
  seccomp: Buffer | null;
  /** cgroup.procs files the sandbox joins before it starts. */
  procs: string[];
  cgroups: CgroupBinds | null;
  /** Another in-sandbox program than the runner (the session supervisor, sandbox/sessions/kernel.py), same protocol. */
  program?: string;
  /** Also a tmpfs /tmp (scratchMb) of the sandbox's own (sessions). */
  tmp?: boolean;
}

/** The bwrap command line of a warm slot (exported for tests that read it). */
export function warmArgv(s: WarmSpec): string[] {
  const cg: string[] = [];
  if (s.cgroups) {
    cg.push("--tmpfs", "/sys", "--dir", "/sys/fs");
    if (s.cgroups.kind === "v2") cg.push("--ro-bind", s.cgroups.dir, "/sys/fs/cgroup");
    else {
      cg.push("--dir", "/sys/fs/cgroup", "--ro-bind", s.cgroups.memory, "/sys/fs/cgroup/memory");
      if (s.cgroups.cpu) cg.push("--ro-bind", s.cgroups.cpu, "/sys/fs/cgroup/cpuacct");
    }
  }
  const bw = [
    s.bwrap,
    "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
    "--die-with-parent", "--new-session", "--as-pid-1",
    "--ro-bind", s.rootfs, "/",
    "--proc", "/proc", "--dev", "/dev",
    // /dev/shm as Docker has it: a world-writable sticky tmpfs (the program runs as uid 65534, and
    // --dev's own /dev/shm is root's 0755 here, with no user namespace: multiprocessing's
    // semaphores and any shm_open would fail a correct program). The runner empties it per run.
    "--size", String(s.scratchMb * 1024 * 1024), "--perms", "1777", "--tmpfs", "/dev/shm",
    "--size", String(s.scratchMb * 1024 * 1024), "--perms", "0755", "--tmpfs", "/sandbox",
    ...(s.tmp ? ["--size", String(s.scratchMb * 1024 * 1024), "--perms", "1777", "--tmpfs", "/tmp"] : []),
    ...cg,
    "--chdir", "/sandbox",
    "--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "LANG", "C.UTF-8",
    "--setenv", "ASSAY_SCRATCH", "/sandbox", "--setenv", "ASSAY_IN_SANDBOX", "1",
    ...CAPS.flatMap((c) => ["--cap-add", c]),
    ...(s.seccomp ? ["--seccomp", "3"] : []),
    // The runner's pid on the host: its root filesystem (/proc/<pid>/root) is where the host
    // seeds its compile cache and takes a compiled program from (WarmSlot.rootPath).
    "--info-fd", "4",
    "--",
    "python3", "-u", "-c", s.program ?? runnerSourceText(),
  ];
  // Join the slot's cgroups first (a shell that moves itself, then execs), so every process of
  // the sandbox is inside before the runner starts.
  return s.procs.length ? ["/bin/sh", "-c", s.procs.map((p) => `echo $$ > ${p}`).join(" && ") + ' && exec "$@"', "sh", ...bw] : bw;
}

interface Pending {
  resolve: (r: any) => void;
  reject: (e: Error) => void;
}

export class WarmSlot {
  dead = false;
  /**
   * Compile keys of the programs this slot's runner compiled and holds in its cache (a tmpfs in
   * the slot): every test of a compiled item goes to the slot that has its binary (bounded: a
   * stale key costs one compile).
   */
  readonly compiled = new Set<string>();
  readonly ready: Promise<void>;
  /** Resolves once the sandbox's outer process has exited (its namespace and every process in it gone). */
  readonly gone: Promise<void>;
  private pending: Pending | null = null;
  private stderrTail = "";
  private readonly child: ChildProcess;
  /** The runner's pid on the host (bwrap's --info-fd), once bwrap has said it. */
  private hostPid?: number;

  constructor(readonly spec: WarmSpec) {
    const argv = warmArgv(spec);
    this.child = spawn(argv[0], argv.slice(1), {
      stdio: ["pipe", "pipe", "pipe", spec.seccomp ? "pipe" : "ignore", "pipe"],
      detached: true, // its own process group: one kill reaches the outer bwrap and the shell
    });
    if (spec.seccomp) {
      const w = this.child.stdio[3] as NodeJS.WritableStream;
      w.on("error", () => {});
      w.end(spec.seccomp);
    }
    let info = "";
    const infoStream = this.child.stdio[4] as NodeJS.ReadableStream;
    infoStream.on("error", () => {});
    infoStream.on("data", (d: Buffer) => {
      if (this.hostPid !== undefined || info.length > 4096) return;
      info += d.toString("utf8");
      const m = /"child-pid":\s*(\d+)/.exec(info);
      if (m) this.hostPid = Number(m[1]);
    });
    let readyResolve!: () => void;
    let readyReject!: (e: Error) => void;
    this.ready = new Promise((res, rej) => {
      readyResolve = res;
      readyReject = rej;
    });
    this.ready.catch(() => {});
    this.gone = new Promise((res) => this.child.once("close", () => res()));
    this.child.stderr!.on("data", (d: Buffer) => {
      this.stderrTail = (this.stderrTail + d.toString("utf8")).slice(-2000);
    });
    this.child.stdin!.on("error", () => {});
    this.child.stdout!.on("data", runnerReplies(() => readyResolve(), (msg) => {
      const p = this.pending;
      this.pending = null;
      p?.resolve(msg);
    }));
    const onEnd = (why: string) => {
      if (this.dead) return;
      this.dead = true;
      const e = new Error(`the warm bwrap sandbox ended unexpectedly (${why})${this.stderrTail ? ": " + this.stderrTail.trim().slice(-300) : ""}`);
      readyReject(e);
      const p = this.pending;
      this.pending = null;
      p?.reject(e);
    };
    this.child.once("error", (e) => onEnd(e.message));
    this.child.once("exit", (code, sig) => onEnd(sig ?? `exit ${code}`));
  }

  /** Sends one job; resolves with the runner's answer, rejects if the sandbox dies, overruns or the caller gives up. */
  exec(job: RunnerJob, timeoutMs: number, signal?: AbortSignal): Promise<any> {
    if (this.dead) return Promise.reject(new Error("the warm bwrap sandbox is gone"));
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      const onAbort = () => {
        this.pending = null;
        done();
        reject(new Error("aborted"));
      };
      const timer = setTimeout(() => {
        this.pending = null;
        done();
        reject(new Error(`the sandbox runner did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      this.pending = {
        resolve: (r) => {
          done();
          resolve(r);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      };
      this.child.stdin!.write(JSON.stringify(job) + "\n");
    });
  }

  /**
   * A path inside the slot's own filesystem as the host reaches it (`/proc/<runner>/root/...`:
   * the slot's tmpfs scratch is no host directory), or undefined when the slot is gone or bwrap
   * has not said its runner's pid.
   */
  rootPath(inside: string): string | undefined {
    return this.dead || this.hostPid === undefined ? undefined : `/proc/${this.hostPid}/root${inside}`;
  }

  /** Kills the whole sandbox (the runner is its pid 1: its namespace takes every process with it); resolves once it is gone. */
  kill(): Promise<void> {
    this.dead = true;
    try {
      process.kill(-this.child.pid!, "SIGKILL");
    } catch {
      /* already gone */
    }
    return this.gone;
  }
}
