/**
 * One child process that answers requests over IPC, each matched to its answer by id, for code
 * that can take its process down with it (isolated-vm's isolates: V8 aborts the process an
 * isolate lives in when a hash table cannot grow within the heap limit). The child sends
 * `{ready: true}` once loaded, then `{id, ...answer}` for each `{id, ...request}`.
 *
 * A request whose process dies, or that is not answered within its own `stuckMs` (the process is
 * then killed: V8 may be stuck), rejects with ChildLost, saying which; so do the requests beside
 * it. A process with nothing to do does not keep the server (or a test) alive.
 */
import { fork, type ChildProcess } from "node:child_process";
import pLimit from "p-limit";

/** How long a new process may take to load before the failure is ours. */
const START_MS = 30_000;

/** The request's process ended under it (exited: it died; stuck: it stopped answering and was killed). */
export class ChildLost extends Error {
  constructor(
    readonly how: "exited" | "stuck",
    what: string,
  ) {
    super(`${what} ${how === "exited" ? "died" : "stopped answering"}`);
  }
}

type Pending = { resolve: (a: Record<string, unknown>) => void; reject: (e: Error) => void; timer: NodeJS.Timeout };

export class ChildHost {
  readonly child: ChildProcess;
  private readonly ready: Promise<void>;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private lost: ChildLost | null = null;
  private readonly onExit = () => this.child.kill("SIGKILL");

  /**
   * `file` is the child's module; `what` names the process in errors ("the JavaScript process");
   * `onGone` is told when it exits.
   */
  constructor(
    file: string,
    private readonly what: string,
    onGone: (h: ChildHost) => void = () => {},
    args: string[] = [],
  ) {
    this.child = fork(file, args, { execArgv: process.execArgv, stdio: ["ignore", "ignore", "ignore", "ipc"] });
    process.once("exit", this.onExit);
    let started!: () => void;
    let failed!: (e: Error) => void;
    this.ready = new Promise<void>((res, rej) => ((started = res), (failed = rej)));
    this.ready.catch(() => {});
    const startTimer = setTimeout(() => this.child.kill("SIGKILL"), START_MS);
    this.child.on("message", (m: { ready?: true; id?: number }) => {
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
      p.resolve(m as Record<string, unknown>);
      this.idle();
    });
    this.child.on("exit", () => {
      clearTimeout(startTimer);
      process.removeListener("exit", this.onExit);
      failed(new Error(`${what} exited before it was ready`));
      const lost = (this.lost ??= new ChildLost("exited", what));
      for (const p of this.pending.values()) {
        clearTimeout(p.timer);
        p.reject(lost);
      }
      this.pending.clear();
      onGone(this);
    });
    this.child.on("error", () => {}); // 'exit' follows
  }

  get alive(): boolean {
    return this.lost === null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Sends `request` and resolves with the child's answer; rejects with ChildLost, or when the process never started. */
  async ask(request: Record<string, unknown>, stuckMs: number): Promise<Record<string, unknown>> {
    await this.ready;
    if (!this.alive) throw this.lost ?? new ChildLost("exited", this.what);
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.kill("stuck"), stuckMs);
      this.pending.set(id, { resolve, reject, timer });
      this.child.ref();
      (this.child.channel as { ref?: () => void } | undefined)?.ref?.();
      this.child.send({ ...request, id });
    });
  }

  kill(how: "exited" | "stuck" = "exited"): void {
    this.lost ??= new ChildLost(how, this.what);
    this.child.kill("SIGKILL");
  }

  private idle(): void {
    if (this.pending.size) return;
    this.child.unref();
    (this.child.channel as { unref?: () => void } | undefined)?.unref?.();
  }
}

/** Requests tried again alone at once, each in a process of its own (a process is ~40 MB and a start). */
const ALONE_AT_ONCE = 2;

/**
 * One process shared by every request, and a process of its own for each request whose shared
 * process ended under it: the requests that were in a process that died are each tried again
 * alone (ALONE_AT_ONCE at a time), and the one that ends its own process too is the one that
 * did it. For the js backend's programs and the custom verifiers' items.
 */
export class ChildPool {
  private current: ChildHost | null = null;
  private readonly aloneLimit = pLimit(ALONE_AT_ONCE);
  /** Shared processes lost, and requests that lost a process of their own (tests). */
  lostShared = 0;
  blamed = 0;

  constructor(
    private readonly file: string,
    private readonly what: string,
    private readonly args: string[] = [],
  ) {}

  /**
   * `ask` in the shared process, and when that process ends under it, again alone. `failed`
   * answers an error that is no lost process (ours: the process never started); `blame`, the
   * request that ended its own process too.
   */
  async run<T>(ask: (h: ChildHost) => Promise<T>, failed: (e: Error) => T, blame: (lost: ChildLost) => T): Promise<T> {
    try {
      return await ask(this.shared());
    } catch (e) {
      if (!(e instanceof ChildLost)) return failed(e as Error);
    }
    return this.aloneLimit(async () => {
      const own = new ChildHost(this.file, this.what, () => {}, this.args);
      try {
        return await ask(own);
      } catch (e) {
        if (!(e instanceof ChildLost)) return failed(e as Error);
        this.blamed++;
        return blame(e);
      } finally {
        own.kill();
      }
    });
  }

  /** The shared process, started when there is none (or it died). */
  shared(): ChildHost {
    if (this.current?.alive) return this.current;
    const h = new ChildHost(this.file, this.what, (gone) => {
      if (this.current === gone) this.current = null;
      this.lostShared++;
    }, this.args);
    this.current = h;
    return h;
  }

  close(): void {
    this.current?.kill();
    this.current = null;
  }
}
