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
import { fork, type ChildProcess } from "node:child_process";
import pLimit from "p-limit";
import type { RunOutcome, RunRequest, Sandbox } from "../types.js";
import { limitsOf, sandboxError } from "../job.js";
import { siblingModule } from "../../src/core/sibling.js";
import { openJs } from "./index.js";

/** How long a new process may take to load isolated-vm before the failure is ours. */
const START_MS = 30_000;
/** Past a run's wall limit (and the in-process backend's own grace), how long its answer is awaited before its process counts as stuck. */
const STUCK_MS = 5_000;

/** Programs run again alone at once, each in a process of its own (a process is ~40 MB and a start). */
const ALONE_AT_ONCE = 2;

/** What crosses to the process: the request's data (no signal, no callbacks). */
type Sent = Pick<RunRequest, "language" | "code" | "files" | "stdin" | "limits" | "compileWallMs">;
type Reply = { ready?: true; note?: string; id?: number; outcome?: RunOutcome; error?: string };

/** The run's process ended under it (exited: it died; stuck: it stopped answering and was killed). */
class Lost extends Error {
  constructor(readonly how: "exited" | "stuck") {
    super(`the JavaScript process ${how === "exited" ? "died" : "stopped answering"}`);
  }
}

type Pending = { resolve: (o: RunOutcome) => void; reject: (e: Error) => void; timer: NodeJS.Timeout };

/** One child process and the runs it holds. */
class Host {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private lost: Lost | null = null;
  private readonly onExit = () => this.child.kill("SIGKILL");

  constructor(file: string, private readonly onGone: (h: Host) => void) {
    this.child = fork(file, [], { execArgv: process.execArgv, stdio: ["ignore", "ignore", "ignore", "ipc"] });
    process.once("exit", this.onExit);
    let started!: () => void;
    let failed!: (e: Error) => void;
    this.ready = new Promise<void>((res, rej) => ((started = res), (failed = rej)));
    this.ready.catch(() => {});
    const startTimer = setTimeout(() => this.child.kill("SIGKILL"), START_MS);
    this.child.on("message", (m: Reply) => {
      if (m.ready) {
        clearTimeout(startTimer);
        started();
        this.idle();
        return;
      }
      const p = m.id === undefined ? undefined : this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id!);
      clearTimeout(p.timer);
      p.resolve(m.outcome ?? sandboxError(`the JavaScript process could not run the program: ${m.error ?? "no answer"}`, 0));
      this.idle();
    });
    this.child.on("exit", () => {
      clearTimeout(startTimer);
      process.removeListener("exit", this.onExit);
      failed(new Error("the JavaScript process exited before it was ready"));
      const lost = this.lost ?? new Lost("exited");
      this.lost = lost;
      for (const p of this.pending.values()) {
        clearTimeout(p.timer);
        p.reject(lost);
      }
      this.pending.clear();
      this.onGone(this);
    });
    this.child.on("error", () => {}); // 'exit' follows
  }

  get alive(): boolean {
    return this.lost === null && this.child.exitCode === null && this.child.signalCode === null;
  }

  async run(sent: Sent): Promise<RunOutcome> {
    await this.ready;
    if (!this.alive) throw this.lost ?? new Lost("exited");
    const id = ++this.nextId;
    const limits = limitsOf(sent as RunRequest);
    return new Promise<RunOutcome>((resolve, reject) => {
      const timer = setTimeout(() => this.kill("stuck"), Math.min(limits.wallMs, limits.cpuMs) + 1000 + STUCK_MS);
      this.pending.set(id, { resolve, reject, timer });
      this.child.ref();
      (this.child.channel as { ref?: () => void } | undefined)?.ref?.();
      this.child.send({ id, req: sent });
    });
  }

  kill(how: "exited" | "stuck" = "exited"): void {
    this.lost ??= new Lost(how);
    this.child.kill("SIGKILL");
  }

  /** A process with nothing to do does not keep the server (or a test) alive. */
  private idle(): void {
    if (this.pending.size) return;
    this.child.unref();
    (this.child.channel as { unref?: () => void } | undefined)?.unref?.();
  }
}

export class JsProcessSandbox implements Sandbox {
  readonly name = "js";
  readonly languages = ["javascript"] as const;
  private shared: Host | null = null;
  private readonly file = siblingModule(import.meta.url, "child", "the js backend's process");
  /** Shared processes lost with programs in them, and programs that lost a process of their own (tests). */
  lostShared = 0;
  blamed = 0;
  private readonly alone = pLimit(ALONE_AT_ONCE);

  async run(req: RunRequest): Promise<RunOutcome> {
    const t0 = performance.now();
    const sent: Sent = { language: req.language, code: req.code, files: req.files, stdin: req.stdin, limits: req.limits, compileWallMs: req.compileWallMs };
    try {
      return await this.host().run(sent);
    } catch (e) {
      if (!(e instanceof Lost)) return sandboxError(`the js backend failed: ${(e as Error).message}`, performance.now() - t0);
    }
    // Its process ended under it, perhaps for another program: run it again alone.
    return this.alone(() => this.runAlone(sent, t0));
  }

  private async runAlone(sent: Sent, t0: number): Promise<RunOutcome> {
    const alone = new Host(this.file, () => {});
    try {
      return await alone.run(sent);
    } catch (e) {
      if (!(e instanceof Lost)) return sandboxError(`the js backend failed: ${(e as Error).message}`, performance.now() - t0);
      this.blamed++;
      const base = { exitCode: null, signal: null, stdout: "", stderr: "", truncated: false, wallMs: performance.now() - t0, cpuMs: null };
      return e.how === "stuck"
        ? { ...base, status: "time_limit", message: "the program stopped answering past its time limit (run alone in a process of its own)" }
        : { ...base, status: "memory_limit", message: "the program ended the JavaScript runtime's process (V8 could not grow a table within the memory limit; run alone in a process of its own)" };
    } finally {
      alone.kill();
    }
  }

  private host(): Host {
    if (this.shared?.alive) return this.shared;
    const h = new Host(this.file, (gone) => {
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
