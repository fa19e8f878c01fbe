/**
 * Runs one host process with a wall timer and an output cap, killing its whole process group
 * when either is hit. Used by the bwrap backend (around bwrap) and by the benchmark's baseline.
 */
import { spawn } from "node:child_process";
import { constants } from "node:os";
import type { RunOutcome } from "./types.js";

/** A process run with a wall timer and capped output: the raw half of a RunOutcome. */
export interface CappedResult extends Pick<RunOutcome, "exitCode" | "signal" | "stdout" | "stderr" | "truncated" | "wallMs"> {
  killedBy: "time_limit" | "output_limit" | "aborted" | "overloaded" | null;
  spawnError?: string;
  /** What the process wrote on fd 3 (with `fd3: true`). */
  fd3?: string;
}

/** Gathers a stream's chunks up to `cap` bytes, calling `over` once the cap is passed. */
class Capped {
  private readonly chunks: Buffer[] = [];
  total = 0;
  constructor(private readonly cap: number, private readonly over: () => void) {}
  push = (d: Buffer): void => {
    this.total += d.length;
    if (this.total <= this.cap + 1) this.chunks.push(d);
    if (this.total > this.cap) this.over();
  };
  get passed(): boolean {
    return this.total > this.cap;
  }
  text(): string {
    const b = Buffer.concat(this.chunks);
    return (b.length > this.cap ? b.subarray(0, this.cap) : b).toString("utf8");
  }
}

export interface SpawnCappedOptions {
  fd3?: boolean;
  stdin?: string;
  wallMs: number;
  outputBytes: number;
  uid?: number;
  gid?: number;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  /** Data for file descriptors 4, 5, ... (pipes the child reads: bwrap's --seccomp and --file). */
  inputs?: (string | Buffer)[];
  /**
   * Limits measured while the process runs (sandbox/meter.ts): `check` is called every `everyMs`
   * and a reason it returns ends the process. With a watch, `wallMs` is the plain wall-time bound
   * and passing it ends the process as `overloaded`; without, as `time_limit`.
   */
  watch?: { everyMs: number; check(): "time_limit" | "overloaded" | null };
}

export function spawnCapped(argv: string[], opts: SpawnCappedOptions): Promise<CappedResult> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const stdio: "pipe"[] = Array(opts.inputs?.length ? 4 + opts.inputs.length : opts.fd3 ? 4 : 3).fill("pipe");
    const child = spawn(argv[0]!, argv.slice(1), {
      stdio,
      detached: true, // own process group: one kill reaches everything it started
      uid: opts.uid,
      gid: opts.gid,
      cwd: opts.cwd,
      env: opts.env ?? { PATH: "/usr/bin:/bin", LANG: "C.UTF-8" },
    });
    let killedBy: CappedResult["killedBy"] = null;
    let spawnError: string | undefined;
    const kill = (why: NonNullable<CappedResult["killedBy"]>) => {
      if (!killedBy) killedBy = why;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => kill(opts.watch ? "overloaded" : "time_limit"), opts.wallMs);
    const watch = opts.watch && setInterval(() => {
      const why = opts.watch!.check();
      if (why) kill(why);
    }, opts.watch.everyMs);
    const onAbort = () => kill("aborted");
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    const out = new Capped(opts.outputBytes, () => kill("output_limit"));
    const err = new Capped(opts.outputBytes, () => kill("output_limit"));
    const fd3 = new Capped(65_536, () => {});
    child.stdout!.on("data", out.push);
    child.stderr!.on("data", err.push);
    if (opts.fd3) (child.stdio[3] as NodeJS.ReadableStream).on("data", fd3.push);
    child.stdin!.on("error", () => {}); // the program may exit without reading its input
    child.on("error", (e) => {
      spawnError = e.message;
    });
    child.stdin!.end(opts.stdin ?? "");
    (opts.inputs ?? []).forEach((data, i) => {
      const w = child.stdio[4 + i] as NodeJS.WritableStream | null;
      w?.on("error", () => {}); // bwrap failed before reading it: its answer says why
      w?.end(data);
    });
    child.on("exit", () => clearInterval(watch)); // what it did is measured: no verdict after it ended
    child.on("close", (code, sig) => {
      clearTimeout(timer);
      clearInterval(watch);
      opts.signal?.removeEventListener("abort", onAbort);
      resolve({
        exitCode: code,
        signal: sig,
        stdout: out.text(),
        stderr: err.text(),
        truncated: out.passed || err.passed,
        wallMs: performance.now() - t0,
        killedBy,
        spawnError,
        ...(opts.fd3 ? { fd3: fd3.text() } : {}),
      });
    });
  });
}

/** Signal name for a shell-style exit status above 128 (bwrap reports a killed child so). */
export function signalOfExit(code: number | null): string | null {
  if (code === null || code <= 128 || code > 128 + 64) return null;
  const n = code - 128;
  for (const [name, v] of Object.entries(constants.signals)) if (v === n) return name;
  return null;
}
