/**
 * Where untrusted code runs. A sandbox knows nothing about rewards: it runs a program with
 * limits and reports what happened.
 */

export type RunStatus =
  | "finished" // exited on its own (any exit code; see exitCode)
  | "runtime_error" // killed by a signal or crashed (non-zero exit is "finished" + exitCode)
  | "time_limit" // CPU limit (the whole process tree's) or wall limit (less the wait for a CPU) hit
  | "memory_limit" // memory limit hit (OOM kill)
  | "output_limit" // stdout/stderr exceeded the cap (process killed)
  | "compile_error" // a compile step failed
  | "sandbox_error" // the sandbox machinery failed: not the program's fault
  | "not_started"; // no slot came free before `startBy`: nothing ran (neither a failure nor a result)

export interface RunLimits {
  /** Wall-clock limit in ms. */
  wallMs: number;
  /** CPU-time limit in ms. */
  cpuMs: number;
  /** Address-space / cgroup memory limit in MiB. */
  memoryMb: number;
  /** Max bytes captured per stream; more sets `truncated` and ends the run with output_limit. */
  outputBytes: number;
  /** Max processes/threads. */
  pids: number;
}

export interface RunRequest {
  /** Language key understood by the backend, e.g. "python", "cpp", "javascript". */
  language: string;
  /** Program source. */
  code: string;
  /** Extra files placed in the scratch directory, path -> content (utf8) . */
  files?: Record<string, string>;
  stdin?: string;
  limits?: Partial<RunLimits>;
  /** Optional compile-time limit for compiled languages, ms. */
  compileWallMs?: number;
  signal?: AbortSignal;
  /**
   * Epoch ms by which the run must have started: a request still waiting for a free container
   * or slot then gives up with status "not_started", so a caller with a budget (an HTTP client's
   * timeout) can answer "retry" instead of running late. Unset: wait as long as it takes.
   * Backends without a queue (js) start at once and ignore it.
   */
  startBy?: number;
  /**
   * Wraps the backend's wait for a free container or slot (the code verifier passes the
   * scorer's `ctx.unclocked`, so time spent queued behind other items never counts against this
   * item's deadline; its limits are counted from when it gets a slot). Unset: waited as is.
   */
  queued?: <T>(wait: Promise<T>) => Promise<T>;
}

export interface RunOutcome {
  status: RunStatus;
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  wallMs: number;
  /** CPU time of the run's whole process tree, ms (null where the backend cannot count it). */
  cpuMs: number | null;
  /**
   * Of `wallMs`, the time the program was runnable but waiting for a CPU (the host's load), ms;
   * the wall limit is applied to `wallMs - waitMs` (sandbox/meter.ts). Absent or null where the
   * backend cannot measure it (then the wall limit is applied to wall time).
   */
  waitMs?: number | null;
  /** For compiled languages: what the compiler said. */
  compile?: { status: RunStatus; stdout: string; stderr: string; wallMs: number; cpuMs?: number | null; waitMs?: number | null };
  /** Human-readable note from the backend (why sandbox_error, etc.). */
  message?: string;
}

export interface Sandbox {
  /** Backend name: "docker" | "bwrap" | "js" ... */
  readonly name: string;
  /** Languages this backend can run. */
  readonly languages: readonly string[];
  run(req: RunRequest): Promise<RunOutcome>;
  /** The backlog now (backends with a slot queue): admission refuses work that would wait too long. */
  load?(): SandboxLoad;
  /**
   * Looks again for what runs `language` (an image built since start-up), rate-limited by the
   * backend; resolves true when it runs it now. Backends whose languages never change omit it.
   */
  refresh?(language: string): Promise<boolean>;
  /** Resolves once a plain program can start at once (docker: the default image's pool has a warm container); the server reports ready after it. */
  warmUp?(): Promise<void>;
  close(): Promise<void>;
}

/** A backend's backlog: see sandbox/load.ts for how `waitMs` is estimated. */
export interface SandboxLoad {
  slots: number;
  running: number;
  queued: number;
  /** Estimated ms before a run sent now would get a slot. */
  waitMs: number;
  /** The recent typical run length, ms (0 before any run ended). */
  typicalMs: number;
}

export const DEFAULT_LIMITS: RunLimits = {
  wallMs: 10_000,
  cpuMs: 5_000,
  memoryMb: 512,
  outputBytes: 1 << 20,
  pids: 64,
};
