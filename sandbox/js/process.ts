/**
 * The js backend as the server runs it: isolated-vm's isolates in a child process of their own
 * (child.ts), so that V8 aborting an isolate's process takes only that process. A Map, a Set or
 * an object's properties grown until their hash table cannot be reallocated within the heap
 * limit is a catastrophic error in V8 (isolated-vm cannot recover the isolate); in the server's
 * own process it ended the server, from a model's JavaScript answer.
 *
 * Programs share one process. When it dies, or stops answering past a run's wall limit plus
 * STUCK_MS, every program that was running in it is run again alone, in a process of its own:
 * the one that kills that process too is the program's fault (memory_limit, or time_limit when it
 * stopped answering), and the others get their own result. A sandbox knows no rewards: these are
 * run statuses, as the in-process backend reports them.
 */
import type { RunOutcome, RunRequest, Sandbox } from "../types.js";
import { limitsOf, sandboxError } from "../job.js";
import { siblingModule } from "../../src/core/sibling.js";
import { ChildPool, type ChildHost } from "../../src/core/child-host.js";
import { openJs } from "./index.js";

/** Past a run's wall limit (and the in-process backend's own grace), how long its answer is awaited before its process counts as stuck. */
const STUCK_MS = 5_000;

/** What crosses to the process: the request's data (no signal, no callbacks). */
type Sent = Pick<RunRequest, "language" | "code" | "files" | "stdin" | "limits" | "compileWallMs">;

const WHAT = "the JavaScript process";

/** Runs `sent` in `host`: its outcome, or ChildLost. */
async function runIn(host: ChildHost, sent: Sent): Promise<RunOutcome> {
  const limits = limitsOf(sent as RunRequest);
  const a = (await host.ask({ req: sent }, Math.min(limits.wallMs, limits.cpuMs) + 1000 + STUCK_MS)) as { outcome?: RunOutcome; error?: string };
  return a.outcome ?? sandboxError(`${WHAT} could not run the program: ${a.error ?? "no answer"}`, 0);
}

export class JsProcessSandbox implements Sandbox {
  readonly name = "js";
  readonly languages = ["javascript"] as const;
  private readonly pool = new ChildPool(siblingModule(import.meta.url, "child", "the js backend's process"), WHAT);

  /** Shared processes lost with programs in them, and programs that lost a process of their own (tests). */
  get lostShared(): number {
    return this.pool.lostShared;
  }
  get blamed(): number {
    return this.pool.blamed;
  }

  async run(req: RunRequest): Promise<RunOutcome> {
    const t0 = performance.now();
    const sent: Sent = { language: req.language, code: req.code, files: req.files, stdin: req.stdin, limits: req.limits, compileWallMs: req.compileWallMs };
    return this.pool.run<RunOutcome>(
      (host) => runIn(host, sent),
      (e) => sandboxError(`the js backend failed: ${e.message}`, performance.now() - t0),
      (lost) => {
        const base = { exitCode: null, signal: null, stdout: "", stderr: "", truncated: false, wallMs: performance.now() - t0, cpuMs: null };
        return lost.how === "stuck"
          ? { ...base, status: "time_limit", message: "the program stopped answering past its time limit (run alone in a process of its own)" }
          : { ...base, status: "memory_limit", message: "the program ended the JavaScript runtime's process (V8 could not grow a table within the memory limit; run alone in a process of its own)" };
      },
    );
  }

  async close(): Promise<void> {
    this.pool.close();
  }
}

/** The js backend in a process of its own; null (and why) where isolated-vm is not installed. */
export async function openJsProcess(): Promise<{ sandbox: JsProcessSandbox | null; note: string }> {
  const here = await openJs();
  if (!here.sandbox) return { sandbox: null, note: here.note };
  return { sandbox: new JsProcessSandbox(), note: `${here.note}, in a process of their own` };
}
