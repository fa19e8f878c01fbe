/**
 * Schema items read in child processes (parse-child.ts), each one query at a time with a budget
 * of CPU time from when it is sent (LOAD_WALL_FACTOR times it on the wall clock, as a net): past it the process is killed (the parser is synchronous and
 * cannot be interrupted) and its slot gets a new one. A query that kills the process (V8 aborts
 * on some texts) fails alone. The budget is far above a real query's cost (Spider's and BIRD's
 * longest golds take under 10 ms), so a busy machine does not change which queries pass.
 *
 * Several processes (`size`, the SQL service's ASSAY_SQL_WORKERS, started as the queue needs
 * them), first come first served; a query whose item has ended (its signal aborted: the client
 * went away, or its deadline passed) leaves the queue without running, and a query never gets
 * more than what is left of its item's deadline when it starts. The queue's backlog is in a
 * ledger (`load()`) that the SQL service adds to its admission, so a flood of queries that each
 * run the parser to its budget is refused at the door (429) like a flood of slow SQL, rather
 * than making everyone's wait grow without end.
 */
import { fork, type ChildProcess } from "node:child_process";
import type { Engine } from "../../src/sql/types.js";
import { siblingModule } from "../../src/core/sibling.js";
import { Ledger, type Ticket } from "../../sandbox/load.js";
import { hardWallMs, schedstat } from "../../sandbox/meter.js";
import { MachineryError } from "../../src/core/types.js";
import type { SandboxLoad } from "../../sandbox/types.js";

/** node-sql-parser is a PEG parser: ~13 µs a character, so longer text is not parsed (linking 0). */
export const MAX_PARSE_CHARS = 2_000;
/** A query's parse time: CPU ms of its process from when it gets the query (wall ms where /proc cannot say). */
export const PARSE_BUDGET_MS = 250;
/** How long a new process may take to load the parser before the failure is ours (null). */
const START_MS = 30_000;

/**
 * The items, or why the query has none (a reward of 0 for schema linking, not an error);
 * `stopped`: the parser was stopped (budget, item's deadline, process death) or the query never
 * ran (its item ended), so the verdict says nothing lasting about the text.
 */
export type Parsed = { items: Set<string> } | { unreadable: string; stopped?: true };

/** The item a query is read for: its signal (an ended item's query is dropped) and deadline (epoch ms, read when it starts). */
export interface ParseFor {
  signal?: AbortSignal;
  readonly deadline?: number;
}

type Job = { sql: string; engine: Engine; resolve: (r: Parsed) => void; reject: (e: Error) => void; for?: ParseFor; ticket: Ticket; onAbort?: () => void };
type Running = Job & { id: number; slot: Slot; child: ChildProcess; timer: NodeJS.Timeout; timedOut: boolean; loaded: boolean; budgetMs: number };
type Slot = { child: ChildProcess | null; ready: boolean; running: Running | null; startTimer?: NodeJS.Timeout; onExit?: () => void };

function childFile(): string {
  return siblingModule(import.meta.url, "parse-child", "SQL parse process");
}

export class ParseProcess {
  private readonly slots: Slot[];
  private readonly queue: Job[] = [];
  private nextId = 0;
  private readonly ledger: Ledger;
  /** Processes killed for a query past the budget, processes that died on a query, queries dropped because their item ended (tests). */
  killed = 0;
  died = 0;
  dropped = 0;

  constructor(readonly budgetMs = PARSE_BUDGET_MS, size = 1) {
    const n = Math.max(1, Math.floor(size));
    this.slots = Array.from({ length: n }, () => ({ child: null, ready: false, running: null }));
    this.ledger = new Ledger(n);
  }

  /** The schema items of `sql`; rejects only when a process cannot be started. */
  items(sql: string, engine: Engine, item?: ParseFor): Promise<Parsed> {
    return new Promise((resolve, reject) => {
      if (item?.signal?.aborted) {
        this.dropped++;
        return resolve({ unreadable: "not parsed: the item had ended", stopped: true });
      }
      const job: Job = { sql, engine, resolve, reject, for: item, ticket: this.ledger.enter(this.budgetMs) };
      const signal = item?.signal;
      if (signal) {
        job.onAbort = () => {
          const i = this.queue.indexOf(job);
          if (i < 0) return; // running, or done: the budget bounds it
          this.queue.splice(i, 1);
          this.drop(job);
          this.pump();
        };
        signal.addEventListener("abort", job.onAbort, { once: true });
      }
      this.queue.push(job);
      this.pump();
    });
  }

  /** The backlog for admission (the SQL service's load). */
  load(): SandboxLoad {
    return this.ledger.load();
  }

  /** Processes the pool may run at once. */
  get size(): number {
    return this.slots.length;
  }

  /** The id of the first slot's process, while one runs (tests). */
  get pid(): number | undefined {
    return this.slots[0].child?.pid;
  }

  close(): void {
    for (const s of this.slots) {
      s.child?.kill("SIGKILL");
      s.child = null;
    }
  }

  private finish(job: Job, r: Parsed, ran: boolean): void {
    if (job.onAbort) job.for?.signal?.removeEventListener("abort", job.onAbort);
    job.ticket.end(ran);
    job.resolve(r);
  }

  private drop(job: Job): void {
    this.dropped++;
    this.finish(job, { unreadable: "not parsed: the item had ended", stopped: true }, false);
  }

  private spawn(slot: Slot): ChildProcess {
    // no pipes: an idle process must not keep the server (or a test) alive; see idle()
    const child = fork(childFile(), [], { execArgv: process.execArgv, stdio: ["ignore", "ignore", "ignore", "ipc"] });
    slot.child = child;
    slot.ready = false;
    const onExit = () => child.kill("SIGKILL");
    process.once("exit", onExit);
    slot.startTimer = setTimeout(() => child.kill("SIGKILL"), START_MS);
    child.on("message", (m: { ready?: true; id?: number; items?: string[] | null }) => {
      if (slot.child !== child) return;
      if (m.ready) {
        clearTimeout(slot.startTimer);
        slot.ready = true;
        this.pump();
        this.idle(slot);
        return;
      }
      const r = slot.running;
      if (!r || r.child !== child || m.id !== r.id) return;
      clearTimeout(r.timer);
      slot.running = null;
      this.finish(r, m.items ? { items: new Set(m.items) } : { unreadable: "query not readable by the SQL parser" }, true);
      this.pump();
      this.idle(slot);
    });
    child.on("exit", () => {
      clearTimeout(slot.startTimer);
      process.removeListener("exit", onExit);
      const wasReady = slot.ready;
      if (slot.child === child) {
        slot.child = null;
        slot.ready = false;
      }
      const r = slot.running;
      if (r && r.child === child) {
        clearTimeout(r.timer);
        slot.running = null;
        if (r.timedOut) this.killed++;
        else this.died++;
        if (r.loaded) {
          // stopped by the host's load before it had used its budget: no verdict on the query
          if (r.onAbort) r.for?.signal?.removeEventListener("abort", r.onAbort);
          r.ticket.end(true);
          r.reject(new MachineryError(`the SQL parser was kept off the CPU for ${hardWallMs(r.budgetMs)} ms (host overloaded)`));
        } else {
          this.finish(r, { unreadable: r.timedOut ? `the SQL parser ran past ${r.budgetMs} ms of CPU time on this query` : "the SQL parser's process died reading this query", stopped: true }, true);
        }
      } else if (!wasReady && !this.slots.some((s) => s.ready)) {
        // it never started, and no other process is up: our failure, for every query waiting
        for (const j of this.queue.splice(0)) {
          if (j.onAbort) j.for?.signal?.removeEventListener("abort", j.onAbort);
          j.ticket.end(false);
          j.reject(new Error("the SQL parse process exited before it was ready"));
        }
      }
      this.pump();
    });
    child.on("error", () => {}); // 'exit' follows
    return child;
  }

  /** A process with nothing to do does not keep the server (or a test) alive. */
  private idle(slot: Slot): void {
    const child = slot.child;
    if (!child || slot.running || this.queue.length) return;
    child.unref();
    (child.channel as { unref?: () => void } | undefined)?.unref?.();
  }

  private hold(child: ChildProcess): void {
    child.ref();
    (child.channel as { ref?: () => void } | undefined)?.ref?.();
  }

  /** The next query whose item has not ended (ended ones are dropped on the way). */
  private next(): Job | undefined {
    for (;;) {
      const job = this.queue.shift();
      if (!job || !job.for?.signal?.aborted) return job;
      this.drop(job);
    }
  }

  private pump(): void {
    let starting = 0;
    for (const slot of this.slots) {
      if (!this.queue.length) return;
      if (slot.running) continue;
      if (!slot.child) {
        // a process for each query nothing else is about to take
        if (this.queue.length <= starting) continue;
        this.hold(this.spawn(slot));
        starting++;
        continue;
      }
      if (!slot.ready) {
        starting++;
        continue;
      }
      this.dispatch(slot);
    }
  }

  /** Gives a ready, idle process the next query that still has an item to read it for. */
  private dispatch(slot: Slot): void {
    for (;;) {
      const job = this.next();
      if (!job) return;
      const left = job.for?.deadline !== undefined ? job.for.deadline - Date.now() : Infinity;
      if (left < 1) {
        // the item's time is spent (it ends with its deadline): nothing to read for it
        this.finish(job, { unreadable: "not parsed: the item's deadline had passed", stopped: true }, false);
        continue;
      }
      const budgetMs = Math.min(this.budgetMs, Math.floor(left));
      const child = slot.child!;
      this.hold(child);
      const id = ++this.nextId;
      // the budget is the parse's CPU time (its process's main thread, /proc schedstat), so a
      // query slowed only by a busy machine is not cut off; wall time bounds it at
      // LOAD_WALL_FACTOR times the budget, and where /proc cannot say the budget is wall time
      const t0 = performance.now();
      const cpu0 = child.pid ? schedstat(child.pid)?.[0] : undefined;
      const check = (): void => {
        const cpu = cpu0 !== undefined && child.pid ? schedstat(child.pid)?.[0] : undefined;
        const ownMs = cpu !== undefined ? (cpu - cpu0!) / 1e6 : Infinity;
        const wallMs = performance.now() - t0;
        if (ownMs < budgetMs && wallMs < hardWallMs(budgetMs)) {
          r.timer = setTimeout(check, Math.max(5, Math.min(budgetMs - ownMs, hardWallMs(budgetMs) - wallMs)));
          return;
        }
        r.timedOut = true;
        r.loaded = ownMs < budgetMs;
        child.kill("SIGKILL");
      };
      const r: Running = { ...job, id, slot, child, budgetMs, timedOut: false, loaded: false, timer: setTimeout(check, budgetMs) };
      slot.running = r;
      job.ticket.start();
      child.send({ id, sql: job.sql, engine: job.engine });
      return;
    }
  }
}
