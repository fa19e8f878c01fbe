/**
 * SQLite queries off the event loop, in child processes (sqlite-worker.ts), each running one task
 * at a time. Queries go in batches: those enqueued in one turn of the event loop are sent to a
 * process in one message (up to MAX_BATCH, a fair share of the queue), and a process that is down
 * to its last task gets the next batch, so it does not idle while the server answers; each task
 * is answered on its own, in order, so the pool always knows which one is running. A task that
 * has run STEAL_MS of CPU time gives the ones sent behind it back to the queue
 * (the process is told to skip them), so a runaway at the head of a batch holds only itself.
 *
 * Why processes and not worker threads (piscina, as the math verifier uses): better-sqlite3
 * is synchronous and exposes no sqlite3_interrupt, and Worker.terminate() only stops JavaScript.
 * A thread inside a long SQLite step (`SELECT count(*)` over a 6-way cross join, an endless
 * recursive CTE) keeps running after terminate, burning a core and keeping the process alive,
 * as we measured. A process is stopped by SIGKILL whatever it is doing.
 *
 * A task's limit is the work it did: the CPU time its process spent on it (the process's main
 * thread, read from /proc/<pid>/schedstat while it runs; a task that starts after another one in
 * its batch is charged from the first reading after it starts, at most one poll late), so a
 * query that is only slow because the machine is busy is not cut off. A wall-clock safety net (`netMs`) stops a task that sleeps
 * (disk, page faults) without using CPU; it is not charged for the time the process waited for a
 * CPU (schedstat's run-queue wait). Where /proc cannot be read the limit is wall-clock time.
 *
 * A task's clock starts when its process starts it (the service runs the whole query under the
 * scorer's `ctx.unclocked`, and fixes its limit from what is left of the item's deadline then).
 * The backlog is recorded in a ledger (sandbox/load.ts, the sandbox's own) so admission can refuse
 * work that would wait too long.
 */
import { fork, type ChildProcess } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { siblingModule } from "../core/sibling.js";
import { Ledger, type Ticket } from "../../sandbox/load.js";
import { schedstat, SchedstatFile } from "../../sandbox/meter.js";
import type { SandboxLoad } from "../../sandbox/types.js";
import type { Answer, QueryTask, WorkerTask } from "./sqlite-worker.js";
import type { QueryOutcome, SchemaTable } from "./types.js";

function workerFile(): string {
  return siblingModule(import.meta.url, "sqlite-worker", "sqlite worker");
}

/** How often a running task's CPU time is read, ms. */
const POLL_MS = 20;

/** CPU time and run-queue wait of a process's main thread, ms; null where /proc cannot say. */
export function schedOf(pid: number | undefined): { cpuMs: number; waitMs: number } | null {
  const s = pid ? schedstat(pid) : null;
  return s && { cpuMs: s[0] / 1e6, waitMs: s[1] / 1e6 };
}

/** The same, from its schedstat file kept open (SchedstatFile: one pread a reading). */
function schedFrom(f: SchedstatFile): { cpuMs: number; waitMs: number } | null {
  const s = f.read();
  return s && { cpuMs: s[0] / 1e6, waitMs: s[1] / 1e6 };
}

export class TaskTimeout extends Error {
  /**
   * `started`: the task had a process (else it waited for one past its deadline). `by`: what
   * stopped it: its CPU time, the wall-clock safety net, or (not started) the queue deadline.
   */
  constructor(readonly started: boolean, readonly ms: number, readonly by: "cpu" | "wall" | "queue" = started ? "wall" : "queue") {
    super(
      !started ? `not started within ${Math.round(ms)} ms (all SQLite processes busy)`
      : by === "cpu" ? `stopped after ${Math.round(ms)} ms of CPU time`
      : `stopped after ${Math.round(ms)} ms`,
    );
    this.name = "TaskTimeout";
  }
}

/** The process died while running the task. */
export class ProcessExited extends Error {
  constructor() {
    super("the SQLite process exited");
    this.name = "ProcessExited";
  }
}

export interface RunOptions {
  /**
   * The task's limit, ms of CPU time (wall time where /proc cannot be read); read when a process
   * takes the task, so a caller whose clock was stopped while it waited gets what is left then.
   */
  limitMs: number | (() => number);
  /** Wall-clock safety net once started, ms, not counting time waiting for a CPU; default 2 x limit + 1 s. */
  netMs?: number | (() => number);
  /** Epoch ms: a task still waiting for a process then is refused (TaskTimeout, not started). Unset: it waits. */
  startBy?: number;
  /** Aborts a task still waiting for a process. */
  signal?: AbortSignal;
  /** What the ledger expects the task to take at most, ms (admission); default the limit. */
  expectMs?: number;
  /**
   * Goes in the same message, to the same process, as the task queued just before it, where that
   * one is still queued when they are sent (the cold path's gold and model query: the model's
   * result is digested against the gold's kept there).
   */
  withPrevious?: boolean;
  /**
   * Goes, where it can, to the process this key hashes to (a gold query and the model queries
   * digested against it: the process that keeps the gold's rows), ahead of the queue's order;
   * to any process that would otherwise idle.
   */
  affinity?: string;
}

interface Job {
  task: WorkerTask;
  o: RunOptions;
  resolve(v: unknown): void;
  reject(e: Error): void;
  ticket: Ticket;
  /** Set while queued: fires at startBy. */
  queueTimer?: NodeJS.Timeout;
  /** Takes the job out of the queue when its startBy passes or its signal aborts. */
  refuse(): void;
  done: boolean;
  /** With withPrevious: the job queued just before it. */
  prev?: Job;
  /** RunOptions.affinity's hash. */
  aff?: number;
}

/** A job sent to a process: answered in order, the first unanswered one is running. */
interface Sent {
  id: number;
  job: Job;
  /**
   * Taken back (it waited behind a long head and went back to the queue): the process was told
   * to skip it, and whatever it answers for it is ignored.
   */
  stolen: boolean;
}

interface Slot {
  child: ChildProcess;
  ready: boolean;
  /**
   * Sent and not yet answered, in the order the process runs them. It answers a slice of them
   * at a time: the one running is the one its progress file names (the ones before it have run,
   * their answers are on the way), else [0].
   */
  sent: Sent[];
  /** The progress file (sqlite-worker.ts): the id of the task the process last started, a double. */
  progress: { path: string; fd: number };
  /** Its process's /proc schedstat, kept open: read at every task start and poll. */
  sched: SchedstatFile;
  /** The task the CPU time is charged to (base, headAt, limitMs, netMs are its). */
  runId: number;
  watch?: NodeJS.Timeout;
  /** When the running task started, performance.now(). */
  headAt: number;
  /** Its process's CPU and CPU wait when it started (null: read at the next poll). */
  base: { cpuMs: number; waitMs: number } | null;
  /** Its limit and wall-clock net, fixed when it started. */
  limitMs: number;
  netMs: number;
}

let seq = 0;
const value = (v: number | (() => number)) => (typeof v === "function" ? v() : v);

/**
 * Queries sent to a process in one message (issue 35: one IPC write per query cost the server's
 * event loop more than the query itself on Spider-sized databases).
 */
export const MAX_BATCH = 16;
/**
 * Queries sent behind a task that has run this long (ms of CPU time) go back to the queue, so another process can take them: a runaway at the head of a batch holds
 * only itself.
 */
export const STEAL_MS = 40;

/** Queued jobs looked at for affinity at each send (a bound on the pump's work). */
export const AFFINITY_SCAN = 256;

/** FNV-1a of a string's UTF-16 units: which process an affinity key goes to. */
export function affinityHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export class SqlitePool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  /** Whether a queued job may have an affinity (else the affinity pass is skipped). */
  private affine = false;
  private closed = false;
  private readonly file = workerFile();
  /** The processes' progress files. */
  private readonly dir = mkdtempSync(join(tmpdir(), "assay-sqlite-"));
  private spawned = 0;
  /** The backlog (queued and running tasks with their limits), for admission. */
  readonly ledger: Ledger;
  /** Processes killed because a task outlived its limit (tests and metrics). */
  killed = 0;
  completed = 0;
  /** Messages sent to the processes, and tasks taken back from behind a long one (tests and the benchmark). */
  messages = 0;
  stolen = 0;
  /** Answer messages received from the processes (each carries a slice's answers). */
  replies = 0;
  private readonly onExit = () => {
    for (const s of this.slots) s.child.kill("SIGKILL");
    rmSync(this.dir, { recursive: true, force: true });
  };

  constructor(readonly size: number) {
    for (let i = 0; i < Math.max(1, size); i++) this.slots.push(this.spawn());
    this.ledger = new Ledger(this.slots.length);
    process.once("exit", this.onExit); // never leave a runaway query behind
  }

  private spawn(): Slot {
    const path = join(this.dir, String(++this.spawned));
    writeFileSync(path, Buffer.alloc(8));
    const progress = { path, fd: openSync(path, "r") };
    const child = fork(this.file, [path], { execArgv: process.execArgv, serialization: "advanced", stdio: ["ignore", "ignore", "pipe", "ipc"] });
    child.stderr?.resume();
    const slot: Slot = { child, ready: false, sent: [], progress, sched: new SchedstatFile(child.pid ?? "-"), runId: 0, headAt: 0, base: null, limitMs: 0, netMs: 0 };
    child.on("message", (m: { ready?: true; answers?: Answer[] }) => {
      if (m.ready) {
        slot.ready = true;
        this.pump();
        return;
      }
      if (m.answers) this.replies++;
      for (const a of m.answers ?? []) {
        const head = slot.sent[0];
        if (!head || a.id !== head.id) continue; // answered in order: anything else is from a stopped task
        slot.sent.shift();
        if (head.stolen || head.job.done) continue;
        const job = head.job;
        this.completed++;
        // how long it ran, as the process measured it (a query's stepping), for admission's typical run
        const ms = "ok" in a && a.ok ? (a.value as { ms?: unknown } | null)?.ms : undefined;
        job.ticket.end(true, typeof ms === "number" ? ms : undefined);
        job.done = true;
        if ("skipped" in a) job.reject(new Error("the SQLite process skipped a task it was not told to skip"));
        else if (a.ok) job.resolve(a.value);
        else job.reject(new Error(a.error));
      }
      if (slot.sent[0]?.id !== slot.runId) this.startHead(slot, false);
      this.schedulePump();
    });
    child.on("exit", () => {
      clearInterval(slot.watch);
      slot.watch = undefined;
      // the one it was running when it died (the ones before it ran: their answers are lost, so
      // they run again), and the ones behind it, back to the queue
      const k = this.runningIndex(slot);
      const head = slot.sent[k];
      const others = [...slot.sent.slice(0, k), ...slot.sent.slice(k + 1)];
      slot.sent = [];
      closeSync(slot.progress.fd);
      rmSync(slot.progress.path, { force: true });
      slot.sched.close();
      if (head && !head.stolen && !head.job.done) {
        head.job.ticket.end();
        head.job.done = true;
        head.job.reject(new ProcessExited());
      }
      this.requeue(others);
      const i = this.slots.indexOf(slot);
      if (i >= 0 && !this.closed) {
        this.slots[i] = this.spawn();
      }
      this.pump();
    });
    child.on("error", () => {}); // 'exit' follows
    return slot;
  }

  /** Jobs sent behind a task and not run: back to the front of the queue, in order. */
  private requeue(entries: Sent[]): void {
    const jobs = entries.filter((e) => !e.stolen && !e.job.done).map((e) => e.job);
    for (const job of jobs) {
      if (job.o.startBy !== undefined) job.queueTimer = setTimeout(job.refuse, Math.max(0, job.o.startBy - Date.now()));
    }
    this.queue.unshift(...jobs);
  }

  /**
   * Where the task the process is running is in `sent`: the one its progress file names, where
   * that one is sent and not answered (the ones before it have run in the same slice), else 0.
   */
  private runningIndex(slot: Slot): number {
    if (slot.sent.length < 2) return 0;
    const buf = Buffer.allocUnsafe(8);
    try {
      if (readSync(slot.progress.fd, buf, 0, 8, 0) !== 8) return 0;
    } catch {
      return 0;
    }
    const id = buf.readDoubleLE(0);
    const k = slot.sent.findIndex((e) => e.id === id);
    return k < 0 ? 0 : k;
  }

  /** The slot's first unanswered task has started: fix its limit and charge from now. */
  private startHead(slot: Slot, readBase: boolean): void {
    this.startAt(slot, 0, readBase);
  }

  /** The slot's task sent[k] has started: fix its limit and charge it from now. */
  private startAt(slot: Slot, k: number, readBase: boolean): void {
    const head = slot.sent[k];
    if (!head) {
      clearInterval(slot.watch);
      slot.watch = undefined;
      slot.runId = 0;
      return;
    }
    slot.runId = head.id;
    slot.headAt = performance.now();
    // read now for the first task of a batch; for the ones after it at the next poll (at most
    // POLL_MS of its CPU uncounted), so a quick task costs no /proc read
    slot.base = readBase ? schedFrom(slot.sched) : null;
    const o = head.job.o;
    slot.limitMs = Math.max(1, value(o.limitMs));
    slot.netMs = o.netMs === undefined ? slot.limitMs * 2 + 1_000 : Math.max(slot.limitMs, value(o.netMs));
    if (!head.stolen) head.job.ticket.start();
    slot.watch ??= setInterval(() => this.poll(slot), POLL_MS);
  }

  private pumpAt: NodeJS.Immediate | null = null;
  /**
   * Sends at the end of this turn of the event loop: the queries items enqueue in one turn (a
   * batch's items resuming on the answers that arrived together) go in one message.
   */
  private schedulePump(): void {
    this.pumpAt ??= setImmediate(() => {
      this.pumpAt = null;
      this.pump();
    });
  }

  private pump(): void {
    if (!this.queue.length || this.closed) return;
    const share = Math.ceil(this.queue.length / this.slots.length);
    // the processes that take work now: an idle one takes a batch; a busy one the next batch
    // while its last task runs (so it does not idle while this loop answers), unless that task
    // has already run long
    const open = this.slots.map((slot) => {
      if (!slot.ready) return false;
      const busy = slot.sent.length;
      const head = slot.sent[0];
      return !(busy > 1 || (busy === 1 && (head.stolen || performance.now() - slot.headAt >= STEAL_MS / 2 || head.job.task.kind !== "query")));
    });
    const batches: Sent[][] = this.slots.map(() => []);
    // First each open process takes the queries that have affinity to it (a model query to the
    // process keeping its gold's rows), up to a full message; then every open one takes its
    // share from the head, whatever their affinity, so a query never waits for its process while
    // another idles (it runs its gold again there).
    if (this.affine) {
      let taken = false;
      const scan = Math.min(this.queue.length, AFFINITY_SCAN);
      for (let i = 0; i < scan; i++) {
        const job = this.queue[i];
        if (job.aff === undefined || job.task.kind !== "query") continue;
        const k = job.aff % this.slots.length;
        if (!open[k]) continue;
        const batch = batches[k];
        const last = batch[batch.length - 1];
        if (batch.length >= MAX_BATCH - this.slots[k].sent.length && !(last && job.prev === last.job)) continue;
        batch.push({ id: ++seq, job, stolen: false });
        clearTimeout(job.queueTimer);
        this.queue[i] = null as unknown as Job; // taken: removed below
        taken = true;
      }
      if (taken) {
        let w = 0;
        for (const job of this.queue) if (job) this.queue[w++] = job;
        this.queue.length = w;
      } else this.affine = this.queue.some((j) => j.aff !== undefined);
    }
    for (let k = 0; k < this.slots.length; k++) {
      const slot = this.slots[k];
      if (!open[k]) continue;
      const busy = slot.sent.length;
      const batch = batches[k];
      const first = batch.length;
      // its share from the head (at least one for a process that took nothing by affinity)
      const want = Math.max(first ? 0 : 1, Math.min(MAX_BATCH - busy, share) - first);
      // a job pinned to the one just taken goes with it, past `take`
      const pinned = () => batch.length > 0 && this.queue[0].prev === batch[batch.length - 1].job && this.queue[0].task.kind === "query";
      while (this.queue.length && (batch.length - first < want || pinned())) {
        const job = this.queue[0];
        // schema reads, checks and builds go alone, to an idle process
        if (job.task.kind !== "query" && (batch.length || busy)) break;
        this.queue.shift();
        clearTimeout(job.queueTimer);
        batch.push({ id: ++seq, job, stolen: false });
        if (job.task.kind !== "query") break;
      }
      if (!batch.length) continue;
      slot.sent.push(...batch);
      this.messages++;
      slot.child.send({ tasks: batch.map((e) => ({ id: e.id, task: e.job.task })) });
      if (!busy) this.startHead(slot, true);
    }
  }

  /**
   * Every POLL_MS while the process has work: stops the running task at its CPU limit, or at the
   * wall-clock net less the time spent waiting for a CPU; takes back the tasks behind one that
   * has run STEAL_MS.
   */
  private poll(slot: Slot): void {
    if (!slot.sent.length) return;
    // a later task of the slice has started since (the ones before it ran): charge it from now
    const k = this.runningIndex(slot);
    if (slot.sent[k].id !== slot.runId) {
      this.startAt(slot, k, true);
      return;
    }
    const wall = performance.now() - slot.headAt;
    const now = schedFrom(slot.sched);
    // a task started after another one in its batch is charged from its first poll (at most
    // POLL_MS of its CPU uncounted; its run-queue waits before it are not known, so this poll
    // neither stops it nor takes the tasks behind it back)
    if (slot.base === null && now) {
      slot.base = now;
      slot.headAt = performance.now();
      return;
    }
    const base = slot.base;
    // how long it has run: its CPU time (a loaded machine, or a server slow to read the answer,
    // does not make it long); wall-clock time where /proc cannot be read
    let ran = wall;
    if (!base || !now) {
      if (wall >= slot.limitMs) return this.stop(slot, k, wall, "wall");
    } else {
      const cpu = now.cpuMs - base.cpuMs;
      if (cpu >= slot.limitMs) return this.stop(slot, k, cpu, "cpu");
      if (wall - (now.waitMs - base.waitMs) >= slot.netMs) return this.stop(slot, k, wall, "wall");
      ran = cpu;
    }
    if (ran >= STEAL_MS && slot.sent.length > k + 1) {
      const back = slot.sent.slice(k + 1).filter((e) => !e.stolen);
      if (!back.length) return;
      this.requeue(back);
      for (const e of back) e.stolen = true;
      this.stolen += back.length;
      slot.child.send({ skip: back.map((e) => e.id) });
      this.pump();
    }
  }

  /**
   * Kills the slot's process: its running task (sent[k]) timed out; the tasks sent behind it go
   * back to the queue, and so do the ones before it (they ran, but their answers die with it).
   */
  private stop(slot: Slot, k: number, ms: number, by: "cpu" | "wall"): void {
    const head = slot.sent[k];
    const behind = [...slot.sent.slice(0, k), ...slot.sent.slice(k + 1)];
    clearInterval(slot.watch);
    slot.watch = undefined;
    slot.sent = [];
    slot.ready = false; // no new task for it: it is about to die
    this.killed++;
    if (!head.stolen && !head.job.done) {
      head.job.ticket.end();
      head.job.done = true;
      head.job.reject(new TaskTimeout(true, ms, by));
    }
    this.requeue(behind);
    slot.child.kill("SIGKILL"); // 'exit' respawns it
    this.pump();
  }

  /**
   * Runs a task under `o.limitMs` from the moment a process takes it; until then it waits in the
   * queue (until `o.startBy`, or its signal aborts). Rejects with TaskTimeout when either passes.
   */
  run<R>(task: WorkerTask, o: RunOptions): Promise<R> {
    if (this.closed) return Promise.reject(new Error("the SQLite pool is closed"));
    return new Promise<R>((resolve, reject) => {
      const expect = o.expectMs ?? (typeof o.limitMs === "number" ? o.limitMs : o.limitMs());
      const t0 = Date.now();
      const job: Job = {
        task,
        o,
        resolve: resolve as (v: unknown) => void,
        reject,
        ticket: this.ledger.enter(expect),
        done: false,
        refuse: () => {
          const i = this.queue.indexOf(job);
          if (i < 0) return;
          this.queue.splice(i, 1);
          clearTimeout(job.queueTimer);
          job.ticket.end(false);
          job.done = true;
          reject(new TaskTimeout(false, Date.now() - t0));
        },
      };
      if (o.startBy !== undefined) job.queueTimer = setTimeout(job.refuse, Math.max(0, o.startBy - t0));
      o.signal?.addEventListener("abort", job.refuse, { once: true });
      if (o.withPrevious) job.prev = this.queue[this.queue.length - 1];
      if (o.affinity !== undefined) (job.aff = affinityHash(o.affinity)), (this.affine = true);
      this.queue.push(job);
      this.schedulePump();
    });
  }

  query(t: QueryTask, o: RunOptions) {
    return this.run<QueryOutcome>(t, o);
  }
  /** `once`: the file is not kept open afterwards (an upload not yet registered). */
  schema(path: string, version: string, limitMs: number, once = false) {
    return this.run<SchemaTable[]>({ kind: "schema", path, version, once }, { limitMs, startBy: Date.now() + limitMs * 4 });
  }
  check(path: string, limitMs: number) {
    return this.run<{ ok: true } | { ok: false; error: string }>({ kind: "check", path }, { limitMs, startBy: Date.now() + limitMs * 4 });
  }
  build(path: string, script: string, maxBytes: number, limitMs: number) {
    return this.run<{ ok: true } | { ok: false; error: string; full?: boolean }>({ kind: "build", path, script, maxBytes }, { limitMs, startBy: Date.now() + limitMs * 4 });
  }

  /** The backlog as admission sees it (sandbox/load.ts). */
  load(): SandboxLoad {
    return this.ledger.load();
  }

  /** Resolves once every process has started and said so (start-up waits on it); rejects after `timeoutMs`. */
  async ready(timeoutMs = 120_000): Promise<void> {
    const t0 = Date.now();
    while (!this.closed && this.slots.some((s) => !s.ready)) {
      if (Date.now() - t0 > timeoutMs) throw new Error(`SQLite processes not started after ${timeoutMs / 1000} s`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  get stats() {
    return { pids: this.slots.map((s) => s.child.pid ?? 0), busy: this.slots.filter((s) => s.sent.length).length, queued: this.queue.length, completed: this.completed, killed: this.killed, messages: this.messages, stolen: this.stolen, replies: this.replies };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.pumpAt) clearImmediate(this.pumpAt);
    process.removeListener("exit", this.onExit);
    for (const job of this.queue.splice(0)) {
      clearTimeout(job.queueTimer);
      job.ticket.end(false);
      job.done = true;
      job.reject(new Error("the SQLite pool is closed"));
    }
    await Promise.all(
      this.slots.map(
        (s) =>
          new Promise<void>((res) => {
            clearInterval(s.watch);
            for (const e of s.sent.splice(0)) {
              if (e.stolen || e.job.done) continue;
              e.job.ticket.end(false);
              e.job.done = true;
              e.job.reject(new Error("the SQLite pool is closed"));
            }
            if (s.child.exitCode !== null || s.child.signalCode !== null) return res();
            s.child.once("exit", () => res());
            s.child.kill("SIGKILL");
          }),
      ),
    );
    rmSync(this.dir, { recursive: true, force: true });
  }
}
