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
import pLimit from "p-limit";
import type { RunOutcome, RunRequest, Sandbox } from "../types.js";
import { limitsOf, sandboxError } from "../job.js";
import { siblingModule } from "../../src/core/sibling.js";
import { ChildHost, ChildLost } from "../../src/core/child-host.js";
import { openJs } from "./index.js";

/** Past a run's wall limit (and the in-process backend's own grace), how long its answer is awaited before its process counts as stuck. */
const STUCK_MS = 5_000;

/** Programs run again alone at once, each in a process of its own (a process is ~40 MB and a start). */
const ALONE_AT_ONCE = 2;

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
  private shared: ChildHost | null = null;
  private readonly file = siblingModule(import.meta.url, "child", "the js backend's process");
  /** Shared processes lost with programs in them, and programs that lost a process of their own (tests). */
  lostShared = 0;
  blamed = 0;
  private readonly alone = pLimit(ALONE_AT_ONCE);

  async run(req: RunRequest): Promise<RunOutcome> {
    const t0 = performance.now();
    const sent: Sent = { language: req.language, code: req.code, files: req.files, stdin: req.stdin, limits: req.limits, compileWallMs: req.compileWallMs };
    try {
      return await runIn(this.host(), sent);
    } catch (e) {
      if (!(e instanceof ChildLost)) return sandboxError(`the js backend failed: ${(e as Error).message}`, performance.now() - t0);
    }
    // Its process ended under it, perhaps for another program: run it again alone.
    return this.alone(() => this.runAlone(sent, t0));
  }

  private async runAlone(sent: Sent, t0: number): Promise<RunOutcome> {
    const alone = new ChildHost(this.file, WHAT);
    try {
      return await runIn(alone, sent);
    } catch (e) {
      if (!(e instanceof ChildLost)) return sandboxError(`the js backend failed: ${(e as Error).message}`, performance.now() - t0);
      this.blamed++;
      const base = { exitCode: null, signal: null, stdout: "", stderr: "", truncated: false, wallMs: performance.now() - t0, cpuMs: null };
      return e.how === "stuck"
        ? { ...base, status: "time_limit", message: "the program stopped answering past its time limit (run alone in a process of its own)" }
        : { ...base, status: "memory_limit", message: "the program ended the JavaScript runtime's process (V8 could not grow a table within the memory limit; run alone in a process of its own)" };
    } finally {
      alone.kill();
    }
  }

  private host(): ChildHost {
    if (this.shared?.alive) return this.shared;
    const h = new ChildHost(this.file, WHAT, (gone) => {
      if (this.shared === gone) this.shared = null;
      this.lostShared++;
    });
    this.shared = h;
    return h;
  }

  async close(): Promise<void> {
    this.shared?.kill();
    this.shared = null;
  }
}

/** The js backend in a process of its own; null (and why) where isolated-vm is not installed. */
export async function openJsProcess(): Promise<{ sandbox: JsProcessSandbox | null; note: string }> {
  const here = await openJs();
  if (!here.sandbox) return { sandbox: null, note: here.note };
  return { sandbox: new JsProcessSandbox(), note: `${here.note}, in a process of their own` };
}
