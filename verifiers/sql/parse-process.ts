/**
 * Schema items read in a child process (parse-child.ts), one query at a time, each with a wall
 * budget from when it is sent: past it the process is killed (the parser is synchronous and
 * cannot be interrupted) and the next query gets a new one. A query that kills the process (V8
 * aborts on some texts) fails alone. The budget is far above a real query's cost (Spider's and
 * BIRD's longest golds take under 10 ms), so a busy machine does not change which queries pass.
 */
import { fork, type ChildProcess } from "node:child_process";
import type { Engine } from "../../src/sql/types.js";
import { siblingModule } from "../../src/core/sibling.js";

/** node-sql-parser is a PEG parser: ~13 µs a character, so longer text is not parsed (linking 0). */
export const MAX_PARSE_CHARS = 2_000;
/** A query's parse time, wall ms from when the process gets it. */
export const PARSE_BUDGET_MS = 250;
/** How long a new process may take to load the parser before the failure is ours (null). */
const START_MS = 30_000;

/** The items, or why the model's query has none (a reward of 0 for schema linking, not an error). */
export type Parsed = { items: Set<string> } | { unreadable: string };

type Job = { sql: string; engine: Engine; resolve: (r: Parsed) => void; reject: (e: Error) => void };
type Running = Job & { id: number; child: ChildProcess; timer: NodeJS.Timeout; timedOut: boolean };

function childFile(): string {
  return siblingModule(import.meta.url, "parse-child", "SQL parse process");
}

export class ParseProcess {
  private child: ChildProcess | null = null;
  private ready = false;
  private startTimer: NodeJS.Timeout | undefined;
  private readonly queue: Job[] = [];
  private running: Running | null = null;
  private nextId = 0;
  /** Processes killed for a query past the budget, and processes that died on a query (tests). */
  killed = 0;
  died = 0;
  private readonly onExit = () => this.child?.kill("SIGKILL");

  constructor(readonly budgetMs = PARSE_BUDGET_MS) {}

  /** The schema items of `sql`; rejects only when the process cannot be started. */
  items(sql: string, engine: Engine): Promise<Parsed> {
    return new Promise((resolve, reject) => {
      this.queue.push({ sql, engine, resolve, reject });
      this.pump();
    });
  }

  /** The process's id, while one runs (tests). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  close(): void {
    this.child?.kill("SIGKILL");
    this.child = null;
  }

  private spawn(): ChildProcess {
    // no pipes: an idle process must not keep the server (or a test) alive; see idle()
    const child = fork(childFile(), [], { execArgv: process.execArgv, stdio: ["ignore", "ignore", "ignore", "ipc"] });
    this.ready = false;
    process.once("exit", this.onExit);
    this.startTimer = setTimeout(() => child.kill("SIGKILL"), START_MS);
    child.on("message", (m: { ready?: true; id?: number; items?: string[] | null }) => {
      if (m.ready) {
        clearTimeout(this.startTimer);
        this.ready = true;
        this.pump();
        return;
      }
      const r = this.running;
      if (!r || r.child !== child || m.id !== r.id) return;
      clearTimeout(r.timer);
      this.running = null;
      r.resolve(m.items ? { items: new Set(m.items) } : { unreadable: "query not readable by the SQL parser" });
      this.idle(child);
      this.pump();
    });
    child.on("exit", () => {
      clearTimeout(this.startTimer);
      process.removeListener("exit", this.onExit);
      if (this.child === child) this.child = null;
      const r = this.running;
      if (r && r.child === child) {
        clearTimeout(r.timer);
        this.running = null;
        if (r.timedOut) this.killed++;
        else this.died++;
        r.resolve({ unreadable: r.timedOut ? `the SQL parser ran past ${this.budgetMs} ms on this query` : "the SQL parser's process died reading this query" });
      } else if (!this.ready) {
        // it never started: our failure, for every query waiting on it
        for (const j of this.queue.splice(0)) j.reject(new Error("the SQL parse process exited before it was ready"));
      }
      this.pump();
    });
    child.on("error", () => {}); // 'exit' follows
    return child;
  }

  /** A process with nothing to do does not keep the server (or a test) alive. */
  private idle(child: ChildProcess): void {
    if (this.queue.length) return;
    child.unref();
    (child.channel as { unref?: () => void } | undefined)?.unref?.();
  }

  private pump(): void {
    if (this.running || !this.queue.length) return;
    if (!this.child) this.child = this.spawn();
    const child = this.child;
    child.ref();
    (child.channel as { ref?: () => void } | undefined)?.ref?.();
    if (!this.ready) return;
    const job = this.queue.shift()!;
    const id = ++this.nextId;
    const r: Running = {
      ...job,
      id,
      child,
      timedOut: false,
      timer: setTimeout(() => {
        r.timedOut = true;
        child.kill("SIGKILL");
      }, this.budgetMs),
    };
    this.running = r;
    child.send({ id, sql: job.sql, engine: job.engine });
  }
}
