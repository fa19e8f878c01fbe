/**
 * Time limits by the program's own work, not the host's load (sandbox/README.md#time-limits):
 * - CPU time is counted over the run's whole process tree (its cgroup's CPU accounting), and a
 *   run past its `cpuMs` is a time limit;
 * - the wall limit, the safety net for programs that sleep or block, is applied to wall time
 *   less the time the program was runnable but waiting for a CPU (the kernel's per-thread run
 *   delay, /proc/<tid>/schedstat), so a program slow only because the machine was busy is not
 *   cut off;
 * - the plain wall time is bounded too, at LOAD_WALL_FACTOR times the wall limit: a run stopped
 *   there had not used up its own limits (the host kept it off the CPU), so it is no verdict on
 *   the program: `overloaded`, which the backends report as a sandbox error naming the load
 *   (reward null), never a 0.
 * The docker backend's runner (runner/runner.py) applies the same rule inside the container; this
 * is the host side, for the bwrap backend's slots.
 */
import { closeSync, openSync, readFileSync, readSync } from "node:fs";

/** The plain wall-time bound of a run, as a multiple of its wall limit. */
export const LOAD_WALL_FACTOR = 10;

/** How long a run may last on the wall clock at most, whatever the load (ms). */
export function hardWallMs(wallMs: number): number {
  return wallMs * LOAD_WALL_FACTOR;
}

/** Where a run's processes can be counted: its CPU time so far (ns) and its threads now. */
export interface RunProbe {
  cpuNs(): number | null;
  threads(): string[];
}

/**
 * A thread's (or a process's main thread's) time on a CPU and its run delay (runnable, not
 * running) so far, ns, from /proc/<id>/schedstat; null once it is gone or where /proc cannot say.
 * The one reader: the SQL engines time their processes and backends with it too.
 */
export function schedstat(tid: number | string): [run: number, wait: number] | null {
  try {
    return parseSchedstat(readFileSync(`/proc/${tid}/schedstat`, "latin1"));
  } catch {
    return null;
  }
}

/** A schedstat file's first two fields (ns on a CPU, ns runnable and waiting); null if it says otherwise. */
function parseSchedstat(text: string): [run: number, wait: number] | null {
  const f = text.split(" ");
  const r = Number(f[0]);
  const d = Number(f[1]);
  return f.length >= 2 && Number.isFinite(r) && Number.isFinite(d) ? [r, d] : null;
}

/**
 * The same reading as `schedstat`, from a file kept open: one pread a reading instead of
 * readFileSync's open, fstat, read and close (26 µs against 3 µs a reading here), for a reader
 * that polls one process for its whole life (the SQLite pool reads each of its processes at
 * every task start and poll, issue 35). The open file is that process's own entry: once it has
 * exited a reading is null, never another process's that reused its pid.
 */
export class SchedstatFile {
  private fd: number | null;
  private readonly buf = Buffer.allocUnsafe(128);
  constructor(tid: number | string) {
    try {
      this.fd = openSync(`/proc/${tid}/schedstat`, "r");
    } catch {
      this.fd = null;
    }
  }
  /** Time on a CPU and run delay so far, ns; null once the process is gone or where /proc cannot say. */
  read(): [run: number, wait: number] | null {
    if (this.fd === null) return null;
    let n: number;
    try {
      n = readSync(this.fd, this.buf, 0, this.buf.length, 0);
    } catch {
      return null;
    }
    return parseSchedstat(this.buf.toString("latin1", 0, n));
  }
  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

/** Whether a thread is running or runnable now (state R in /proc/<tid>/stat). */
function isRunnable(tid: string): boolean {
  try {
    const s = readFileSync(`/proc/${tid}/stat`, "utf8");
    return s.slice(s.lastIndexOf(")") + 2, s.lastIndexOf(")") + 3) === "R";
  } catch {
    return false;
  }
}

/**
 * The CPU and the wait-for-CPU of one run, sampled each tick. The wait of one tick is its
 * threads' run-delay growth, but at most the part of the tick the program did not run: threads
 * queued behind the program's own threads (a fork bomb) are its own doing, not the host's, and
 * two threads waiting at once are one wait. A thread that ends between two ticks loses its last
 * tick. The kernel adds a wait to the run delay only when it ends (the thread gets a CPU), so a
 * program with a thread runnable (state R) at both ends of a tick has its whole tick less what
 * it ran counted as waiting: a wait still going on is not mistaken for the program's own time
 * (a runnable program that is not waiting runs, and its CPU limit ends it).
 */
export class RunMeter {
  private seen = new Map<string, [number, number]>();
  private waitNs = 0;
  private last = performance.now();
  private runnable = false;
  private readonly cpu0: number | null;
  readonly t0 = performance.now();

  constructor(private readonly probe: RunProbe) {
    this.seen = this.read(); // what is in the group before the program starts is not its wait
    this.cpu0 = probe.cpuNs();
  }

  private read(): Map<string, [number, number]> {
    const m = new Map<string, [number, number]>();
    let runnable = false;
    for (const tid of this.probe.threads()) {
      const s = schedstat(tid);
      if (s) m.set(tid, s);
      if (s && !runnable) runnable = isRunnable(tid);
    }
    this.runnableNow = runnable;
    return m;
  }

  private runnableNow = false;

  sample(): void {
    const now = performance.now();
    const cur = this.read();
    let ran = 0;
    let waited = 0;
    for (const [tid, [r, d]] of cur) {
      let before = this.seen.get(tid);
      if (!before || r < before[0] || d < before[1]) before = [0, 0]; // a new thread (or a reused id)
      ran += r - before[0];
      waited += d - before[1];
    }
    this.seen = cur;
    const idle = (now - this.last) * 1e6 - ran;
    this.waitNs += Math.max(0, this.runnable && this.runnableNow ? idle : Math.min(waited, idle));
    this.runnable = this.runnableNow;
    this.last = now;
  }

  /** CPU time of the run's tree so far, ms; null without CPU accounting. */
  cpuMs(): number | null {
    const c = this.probe.cpuNs();
    return c === null || this.cpu0 === null ? null : Math.max(0, c - this.cpu0) / 1e6;
  }

  /** Time spent waiting for a CPU so far, ms. */
  waitMs(): number {
    return Math.min(this.waitNs / 1e6, performance.now() - this.t0);
  }

  /** The limit this run has passed now, if any (sampling first). */
  check(limits: { wallMs: number; cpuMs: number }): "time_limit" | "overloaded" | null {
    this.sample();
    const wall = performance.now() - this.t0;
    const cpu = this.cpuMs();
    if (wall - this.waitMs() >= limits.wallMs || (cpu !== null && cpu > limits.cpuMs)) return "time_limit";
    if (wall >= hardWallMs(limits.wallMs)) return "overloaded";
    return null;
  }
}

/**
 * A run's own time: its wall time (and its compile's) less the time it waited for a CPU; for a
 * run a limit ended, at most that limit: what it took past it to end and reap a process tree on
 * a loaded host is the machine's time. What a caller's deadline is charged for a run it waited
 * for with the clock stopped (VerifyContext.unclocked).
 */
export function ownTimeMs(
  r: { status: string; wallMs: number; waitMs?: number | null; compile?: { status: string; wallMs: number; waitMs?: number | null } },
  wallLimitMs: number,
  compileLimitMs: number,
): number {
  const ended = (status: string) => status !== "finished" && status !== "runtime_error";
  const own = (status: string, wall: number, wait: number | null | undefined, cap: number) => {
    const t = Math.max(0, wall - (wait ?? 0));
    return ended(status) ? Math.min(cap, t) : t;
  };
  return own(r.status, r.wallMs, r.waitMs, wallLimitMs) + (r.compile ? own(r.compile.status, r.compile.wallMs, r.compile.waitMs, compileLimitMs) : 0);
}

/** Why an `overloaded` run is no verdict: the reason of the null it becomes. */
export function overloadMessage(r: { wallMs: number; waitMs?: number | null; cpuMs?: number | null }, limits?: { wallMs: number; cpuMs: number }, what = "the program"): string {
  const ms = (x: number | null | undefined) => (x === null || x === undefined ? "?" : String(Math.round(x)));
  return `the host is overloaded: ${what} waited ${ms(r.waitMs)} ms of ${ms(r.wallMs)} ms for a CPU and was stopped at ${LOAD_WALL_FACTOR}x its wall limit` +
    (limits ? ` (${limits.wallMs} ms) with its own time and its ${ms(r.cpuMs)} ms of CPU within its limits` : "") +
    "; this is no verdict on the program: retry when the machine is less loaded (fewer concurrent runs: ASSAY_SANDBOX_POOL)";
}
