/**
 * Runs one host process with a wall timer and an output cap, killing its whole process group
 * when either is hit. Used by the bwrap backend (around bwrap) and by the benchmark's baseline.
 */
import { spawn } from "node:child_process";
import { constants } from "node:os";
import type { RunOutcome } from "./types.js";

/** A process run with a wall timer and capped output: the raw half of a RunOutcome. */
export interface CappedResult extends Pick<RunOutcome, "exitCode" | "signal" | "stdout" | "stderr" | "truncated" | "wallMs"> {
  killedBy: "time_limit" | "output_limit" | "aborted" | null;
  spawnError?: string;
  /** What the process wrote on fd 3 (with `fd3: true`). */
  fd3?: string;
}

export function spawnCapped(
  argv: string[],
  opts: { fd3?: boolean; stdin?: string; wallMs: number; outputBytes: number; uid?: number; gid?: number; cwd?: string; env?: NodeJS.ProcessEnv; signal?: AbortSignal },
): Promise<CappedResult> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(argv[0], argv.slice(1), {
      stdio: opts.fd3 ? ["pipe", "pipe", "pipe", "pipe"] : ["pipe", "pipe", "pipe"],
      detached: true, // own process group: one kill reaches everything it started
      uid: opts.uid,
      gid: opts.gid,
      cwd: opts.cwd,
      env: opts.env ?? { PATH: "/usr/bin:/bin", LANG: "C.UTF-8" },
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outN = 0;
    let errN = 0;
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
    const timer = setTimeout(() => kill("time_limit"), opts.wallMs);
    const onAbort = () => kill("aborted");
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout!.on("data", (d: Buffer) => {
      outN += d.length;
      if (outN <= opts.outputBytes + 1) out.push(d);
      if (outN > opts.outputBytes) kill("output_limit");
    });
    child.stderr!.on("data", (d: Buffer) => {
      errN += d.length;
      if (errN <= opts.outputBytes + 1) err.push(d);
      if (errN > opts.outputBytes) kill("output_limit");
    });
    let fd3 = "";
    if (opts.fd3) (child.stdio[3] as NodeJS.ReadableStream).on("data", (d: Buffer) => { if (fd3.length < 65536) fd3 += d.toString("utf8"); });
    child.stdin!.on("error", () => {}); // the program may exit without reading its input
    child.on("error", (e) => {
      spawnError = e.message;
    });
    child.stdin!.end(opts.stdin ?? "");
    child.on("close", (code, sig) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      const cap = (bufs: Buffer[]) => {
        const b = Buffer.concat(bufs);
        return b.length > opts.outputBytes ? b.subarray(0, opts.outputBytes) : b;
      };
      const so = cap(out);
      const se = cap(err);
      resolve({
        exitCode: code,
        signal: sig,
        stdout: so.toString("utf8"),
        stderr: se.toString("utf8"),
        truncated: outN > opts.outputBytes || errN > opts.outputBytes,
        wallMs: performance.now() - t0,
        killedBy,
        spawnError,
        ...(opts.fd3 ? { fd3 } : {}),
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
