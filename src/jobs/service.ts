/**
 * Batch scoring jobs: submit a dataset, watch it progress, read results in input order (while it
 * runs, too), cancel it, and lose nothing when the server is killed: items and results live in
 * the store (src/store/jobs.ts), and a restarted server goes on with the items that have no
 * result yet. Without Redis this process scores its jobs itself, one chunk at a time; with
 * ASSAY_REDIS_URL the chunks go onto a BullMQ queue for any number of workers (queue.ts).
 */
import { EventEmitter } from "node:events";
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Logger } from "pino";
import type { Queue, Worker } from "bullmq";
import type { Config } from "../core/config.js";
import type { Scorer } from "../core/scorer.js";
import type { RewardResult } from "../core/types.js";
import { FINISHED, type JobRow, type JobStore, type Store } from "../store/index.js";
import { chunkId as chunkName, groupOf, lineText, scoreChunk, tooDeep } from "./chunk.js";
import { summarize, type JobOptions } from "./summary.js";
import type { ChunkData, ChunkReturn } from "./queue.js";

/** A request the service refuses, with the HTTP status that says why (the routes map it). */
export class JobRequestError extends Error {
  constructor(readonly status: 400 | 404 | 409 | 413, message: string, readonly field?: string) {
    super(message);
    this.name = "JobRequestError";
  }
}

/** Items written to the store per transaction while an upload streams in. */
const UPLOAD_SLICE = 2000;
/** The result line of an item a cancelled or failed job never scored: our stop, not the item's doing, so null. */
function unscored(job: JobRow): string {
  const why = job.status === "failed" ? `the job failed before this item was scored (${job.error ?? "no reason recorded"})` : "the job was cancelled before this item was scored";
  return JSON.stringify({ id: null, verifier: "", reward: null, status: "error", reason: `not scored: ${why}`, details: {}, elapsed_ms: 0 } satisfies RewardResult);
}

/** Whether `p` settled (either way) within `ms`; false when it is still pending then (it goes on). */
function settlesWithin(p: Promise<unknown> | undefined, ms: number): Promise<boolean> {
  let t: NodeJS.Timeout | undefined;
  return Promise.race([Promise.resolve(p).then(() => true, () => true), new Promise<boolean>((r) => (t = setTimeout(r, ms, false)))]).finally(() => clearTimeout(t));
}

/** How often finished jobs are checked against ASSAY_JOB_RETENTION_DAYS, ms. */
const SWEEP_MS = 3_600_000;
/** ... and at most this many characters of items, so one transaction stays short whatever the item sizes. */
const UPLOAD_SLICE_CHARS = 256 * 1024;
/** How often the Redis coordinator looks for finished chunks while jobs run, ms. */
const POLL_MS = 100;
/** A results stream on a shared store looks for other replicas' progress this often, ms. */
const SHARED_POLL_MS = 200;
/** A replica with no job of its own looks for unclaimed ones (new, or a dead replica's) this often, ms. */
const SHARED_IDLE_MS = 500;
/** How long a shutdown waits for Redis before it drops the connections. */
const CLOSE_WAIT_MS = 3_000;
/** How long a submit on Redis waits for its chunks to be queued before it answers. */
const ENQUEUE_WAIT_MS = 5_000;
/** Runs of one job that may end in an error without any result landing before it is failed for good (a store that blinked, SQLite busy past its timeout, a PostgreSQL reset). */
const RUN_ATTEMPTS = 5;
/** A running job on Redis with no progress for this long has its missing chunks queued again, ms. */
const REQUEUE_MS = 10_000;
/** Finished chunks gather looks at per pass (pages of 100), from where the last pass stopped. */
const GATHER_SCAN = 500;
/** How long a chunk's job that this server's store does not know is remembered as not ours, ms. */
const NOT_OURS_MS = 10_000;

export type JobView = Awaited<ReturnType<JobService["view"]>>;

export class JobService {
  private readonly jobs: JobStore;
  private readonly events = new EventEmitter();
  private scorer?: Scorer;
  private closed = false;
  private loop?: Promise<void>;
  /** Ends the loop's current pause (pause); set only while it pauses. */
  private wake?: () => void;
  /** New work or a stop arrived while the loop was not pausing (mid-query): its next pause is skipped. */
  private nudged = false;
  private current?: { id: string; abort: AbortController };
  /** Per job: runs that ended in an error in a row, and its `done` count at the last one. */
  private readonly runErrors = new Map<string, { n: number; done: number }>();
  private queue?: Queue<ChunkData, ChunkReturn>;
  private worker?: Worker<ChunkData, ChunkReturn>;
  private readonly lastProgress = new Map<string, number>();
  private sweeper?: NodeJS.Timeout;
  /** Jobs deleted while a worker held one of their chunks: gather drops those chunks when they come back. */
  private readonly deleted = new Set<string>();
  /** Where gather's scan of each finished list goes on from (another server's chunks stay there). */
  private readonly scanFrom = { completed: 0, failed: 0 };
  /** Jobs of chunks in Redis that this server's store does not know, and until when that holds. */
  private readonly notOurs = new Map<string, number>();
  /** This process as the holder of a job it scores (a shared store's `owner`). */
  private readonly me = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

  constructor(private readonly config: Config, private readonly log: Logger, store: Store) {
    this.jobs = store.jobs;
    this.events.setMaxListeners(0);
  }

  /** Starts scoring (idempotent): resumes unfinished jobs, then takes new ones as they come. */
  start(scorer: Scorer): void {
    if (this.scorer || this.closed) return;
    this.scorer = scorer;
    this.loop = this.begin();
  }

  private async begin(): Promise<void> {
    const dropped = await this.jobs.dropUnsealed();
    if (dropped) this.log.warn({ dropped }, "jobs: dropped uploads that a stop cut off (their clients never got an id)");
    if (this.config.jobs.retentionDays > 0) {
      const sweep = () => void this.sweep().catch((err) => this.log.warn({ err }, "jobs: retention sweep failed"));
      sweep();
      this.sweeper = setInterval(sweep, SWEEP_MS);
      this.sweeper.unref();
    }
    const unfinished = await this.jobs.unfinished();
    if (unfinished.length) this.log.info({ jobs: unfinished.map((j) => j.id) }, "jobs: resuming unfinished jobs");
    await (this.config.jobs.redisUrl ? this.coordinate() : this.runLocal());
  }

  /**
   * Stores a job's items as they stream in and queues it. `source` yields JSONL lines (strings;
   * a blank one is an item, scored `invalid`, so result N is line N as `assay score` writes it;
   * blank lines at the end are none) or already-parsed items. Over ASSAY_JOB_MAX_ITEMS is a 413; an
   * empty dataset a 400. A failed upload leaves nothing behind.
   */
  async submit(source: AsyncIterable<string | unknown>, options: JobOptions): Promise<{ id: string; total: number }> {
    if (this.closed) throw new JobRequestError(409, "the server is shutting down; submit again in a moment");
    const id = randomUUID();
    const max = this.config.jobs.maxItems;
    await this.jobs.create(id, options);
    let n = 0;
    let slice: { item: string; group: string | null }[] = [];
    let sliceBytes = 0;
    let blanks = 0; // blank lines not yet stored: stored when an item follows, dropped at the end
    const add = async (text: string, group: string | null) => {
      if (++n > max) throw new JobRequestError(413, `job is over the limit of ${max} items; split the dataset (or raise ASSAY_JOB_MAX_ITEMS)`);
      slice.push({ item: text, group });
      sliceBytes += text.length;
      // Stored a slice at a time, each slice bounded in items and in size (one transaction each).
      if (slice.length >= UPLOAD_SLICE || sliceBytes >= UPLOAD_SLICE_CHARS) {
        const full = slice;
        slice = [];
        await this.jobs.addItems(id, n - full.length, full);
        sliceBytes = 0;
      }
    };
    try {
      for await (const entry of source) {
        let text: string;
        let parsed: unknown;
        if (typeof entry === "string") {
          text = lineText(entry);
          if (!text.trim()) {
            blanks++;
            continue;
          }
          try {
            // A line that does not parse, or nests too deep, is scored as an `invalid` result naming it.
            parsed = tooDeep(text, this.config.maxDepth) ? undefined : JSON.parse(text);
          } catch {
            parsed = undefined;
          }
        } else {
          parsed = entry;
          text = JSON.stringify(entry);
        }
        for (; blanks > 0; blanks--) await add("", null);
        await add(text, groupOf(parsed, options.group_by));
      }
      if (slice.length) await this.jobs.addItems(id, n - slice.length, slice);
      if (n === 0) throw new JobRequestError(400, "the dataset has no items; send one JSON item per line");
      await this.jobs.seal(id, n);
    } catch (err) {
      await this.jobs.deleteSliced(id).catch((e) => this.log.warn({ err: e, job: id }, "jobs: could not drop a failed upload"));
      throw err;
    }
    this.log.info({ job: id, total: n }, "job queued");
    if (this.queue) {
      // The job is queued in the store now: answering it with an error would have the client
      // submit it twice. Redis down or slow (a large job's chunks) holds the answer at most
      // ENQUEUE_WAIT_MS; the coordinating loop's next pass queues what this one did not.
      const queued = this.enqueue(await this.jobs.get(id)).catch((err) => this.log.warn({ err, job: id }, "jobs: could not queue the new job's chunks yet; the next pass will"));
      await settlesWithin(queued, ENQUEUE_WAIT_MS);
    }
    this.nudge();
    return { id, total: n };
  }

  /**
   * The job as GET /jobs/:id shows it. The summary scans every result, so by default it comes
   * only once the job has finished (then it is kept); `summary: true` asks for it mid-run.
   * Throws JobRequestError(404).
   */
  async get(id: string, summary: boolean | "finished" = "finished") {
    const job = await this.row(id);
    return this.view(job, summary === true || (summary === "finished" && FINISHED.includes(job.status)));
  }

  async list(limit = 100) {
    return Promise.all((await this.jobs.list(limit)).map((j) => this.view(j, false)));
  }

  /** Cancels a queued or running job; a finished one is a 409. Returns its view. */
  async cancel(id: string) {
    const job = await this.row(id);
    if (!(await this.jobs.finish(id, "cancelled"))) {
      throw new JobRequestError(409, `job ${id} is ${(await this.jobs.get(id)).status} already; only a queued or running job can be cancelled`);
    }
    if (this.current?.id === id) this.current.abort.abort(new Error("job cancelled"));
    if (this.queue) {
      // Waiting chunks go now; one a worker holds finishes and is dropped when it comes back.
      for (let s = 0; s < job.total; s += this.config.jobs.chunk) await this.queue.remove(chunkName(id, s)).catch(() => 0);
    }
    this.events.emit(id);
    this.log.info({ job: id }, "job cancelled");
    return this.get(id);
  }

  /**
   * Deletes a job with its items and results; a queued or running one is cancelled first (its
   * waiting chunks leave Redis). Rows go in slices (JobStore.deleteSliced), yielding to the event loop
   * between them, so a million-item job does not hold the server. Throws JobRequestError(404).
   */
  async delete(id: string): Promise<void> {
    const job = await this.row(id);
    if (!FINISHED.includes(job.status)) await this.cancel(id).catch((err) => {
      if (!(err instanceof JobRequestError && err.status === 409)) throw err; // it finished meanwhile
    });
    this.summaries.delete(id);
    this.lastProgress.delete(id);
    if (this.queue) {
      // completed chunks not yet gathered would otherwise stay in Redis (gather skips unknown jobs);
      // one a worker holds is dropped by gather when it comes back
      if (this.deleted.size >= 10_000) this.deleted.delete(this.deleted.values().next().value!);
      this.deleted.add(id);
      for (let s = 0; s < job.total; s += this.config.jobs.chunk) await this.queue.remove(chunkName(id, s)).catch(() => 0);
    }
    await this.jobs.deleteSliced(id);
    this.events.emit(id);
    this.log.info({ job: id, total: job.total }, "job deleted");
  }

  /**
   * Deletes jobs that finished more than ASSAY_JOB_RETENTION_DAYS ago (0: none). Returns how many.
   */
  async sweep(now = Date.now()): Promise<number> {
    const days = this.config.jobs.retentionDays;
    if (!days) return 0;
    const before = new Date(now - days * 86_400_000).toISOString();
    let n = 0;
    for (;;) {
      const ids = await this.jobs.expired(before, 100);
      for (const id of ids) {
        if (this.closed) return n;
        await this.delete(id).then(() => n++, (err) => this.log.warn({ err, job: id }, "jobs: could not delete an expired job"));
      }
      if (ids.length < 100) break;
    }
    if (n) this.log.info({ deleted: n, days }, "jobs: deleted jobs past ASSAY_JOB_RETENTION_DAYS");
    return n;
  }

  /**
   * Results as JSONL text, in input order, from index `from`: line N is item `from + N`. While
   * the job runs and `follow` is set, waits for the next results and ends when the job finishes.
   * A cancelled or failed job has a line for every item too: one it never scored is an `error`
   * with a null reward saying so (unscored), so that a client can write result N as line N and
   * resume a cut download at the number of lines it has.
   */
  async *results(id: string, from = 0, follow = true, signal?: AbortSignal): AsyncGenerator<string> {
    await this.row(id);
    let next = from;
    while (!signal?.aborted) {
      const job = await this.jobs.find(id);
      if (!job || job.status === "deleting") return; // deleted meanwhile
      const finished = FINISHED.includes(job.status);
      const rows = await this.jobs.results(id, next, 1000);
      let out: string[] = [];
      let gap: string | undefined;
      // A finished job's items that have no result, up to `to`: a line each, in slices of 1000.
      function* unscoredTo(to: number): Generator<string> {
        for (gap ??= unscored(job!); next < to; next++) {
          out.push(gap);
          if (out.length === 1000) {
            yield out.join("\n") + "\n";
            out = [];
          }
        }
      }
      for (const r of rows) {
        // While running, only the unbroken run from `next`: later ones may still be filled in before it.
        if (!finished && r.idx !== next) break;
        if (finished) yield* unscoredTo(r.idx);
        out.push(r.result);
        next = r.idx + 1;
      }
      const more = rows.length === 1000 && next === rows[rows.length - 1].idx + 1;
      if (finished && !more) yield* unscoredTo(job.total);
      if (out.length) yield out.join("\n") + "\n";
      if (more) continue;
      if (finished || next >= job.total || !follow) return;
      // another replica's progress fires no event here: a shared store is polled sooner
      await this.changed(id, this.jobs.shared ? SHARED_POLL_MS : 1000, signal);
    }
  }

  /** Resolves at the job's next progress, or after `ms`. */
  changed(id: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.events.off(id, done);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const t = setTimeout(done, ms);
      this.events.once(id, done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweeper);
    this.current?.abort.abort(new Error("server closing"));
    this.nudge();
    // With Redis unreachable every command waits for it (maxRetriesPerRequest: null), and so
    // would a shutdown: after CLOSE_WAIT_MS the connections are dropped, which fails those
    // commands and lets the loop end.
    // A local worker finishes the chunk it holds (up to its lease; past that another worker
    // takes the chunk anyway). BullMQ's close drops a connection that never came up; its
    // disconnect waits for it to.
    await settlesWithin(this.worker?.close(), Math.max(CLOSE_WAIT_MS, this.config.jobs.leaseMs));
    if (!(await settlesWithin(this.loop, CLOSE_WAIT_MS))) {
      await settlesWithin(this.queue?.close(), CLOSE_WAIT_MS);
      await settlesWithin(this.loop, CLOSE_WAIT_MS);
    }
    await settlesWithin(this.queue?.close(), CLOSE_WAIT_MS);
  }

  // ---------------------------------------------------------------- views

  private async row(id: string): Promise<JobRow> {
    const job = await this.jobs.find(id);
    if (!job || job.status === "uploading" || job.status === "deleting") throw new JobRequestError(404, `no job ${JSON.stringify(id.slice(0, 100))}; GET /jobs lists them`, "id");
    return job;
  }

  async view(job: JobRow, withSummary: boolean) {
    const running = job.status === "running" && job.run_started_ms !== null;
    const seconds = running ? (Date.now() - job.run_started_ms!) / 1000 : null;
    const rate = running && seconds! > 0 ? (job.done - job.run_start_done) / seconds! : null;
    const finishedRate =
      job.finished_at && job.started_at ? job.done / Math.max(1e-3, (Date.parse(job.finished_at) - Date.parse(job.started_at)) / 1000) : null;
    const left = job.total - job.done;
    return {
      id: job.id,
      status: job.status as Exclude<JobRow["status"], "uploading" | "deleting">,
      total: job.total,
      done: job.done,
      counts: { ok: job.n_ok, error: job.n_error, invalid: job.n_invalid },
      items_per_s: rate ?? finishedRate,
      eta_s: rate && rate > 0 ? left / rate : left === 0 ? 0 : null,
      mean_reward: job.n_ok ? job.reward_sum / job.n_ok : null,
      options: JSON.parse(job.options) as JobOptions,
      error: job.error,
      created_at: job.created_at,
      started_at: job.started_at,
      finished_at: job.finished_at,
      ...(withSummary ? { summary: await this.summaryOf(job) } : {}),
    };
  }

  private readonly summaries = new Map<string, Awaited<ReturnType<typeof summarize>>>();

  /**
   * A finished job's summary is computed once (a finished job's results never change, so the
   * copy cannot go stale on any replica); a running one's each time it is asked for.
   */
  private async summaryOf(job: JobRow) {
    if (!FINISHED.includes(job.status)) return summarize(this.jobs, job);
    let s = this.summaries.get(job.id);
    if (!s) {
      s = await summarize(this.jobs, job);
      if (this.summaries.size >= 256) this.summaries.delete(this.summaries.keys().next().value!);
      this.summaries.set(job.id, s);
    }
    return s;
  }

  private progressed(id: string): void {
    this.lastProgress.set(id, Date.now());
    this.events.emit(id);
  }

  /** Writes results; returns the job as it stands after (undefined once deleted). */
  private async write(id: string, results: { idx: number; result: RewardResult }[]): Promise<JobRow | undefined> {
    if (await this.jobs.putResults(id, results)) this.progressed(id);
    const job = await this.jobs.find(id);
    if (job && FINISHED.includes(job.status)) {
      this.lastProgress.delete(id);
      if (job.status === "done") this.log.info({ job: id, total: job.total }, "job done");
      this.events.emit(id);
    }
    return job;
  }

  // ---------------------------------------------------------------- one process

  /**
   * Scores unfinished jobs oldest first, a chunk at a time, yielding to the event loop between
   * chunks. On a shared store (replicas) a job is scored by the replica that claimed it; the
   * others look again every SHARED_IDLE_MS, so a job submitted elsewhere, or one whose replica
   * died (its lease, ASSAY_JOB_LEASE_MS, ran out), is taken up here.
   */
  private async runLocal(): Promise<void> {
    const lease = this.config.jobs.leaseMs;
    while (!this.closed) {
      let job: JobRow | undefined;
      try {
        for (const j of await this.jobs.unfinished()) {
          if (await this.jobs.claim(j.id, this.me, lease)) {
            job = j;
            break;
          }
        }
      } catch (err) {
        if (this.closed) return;
        this.log.warn({ err }, "jobs: cannot read the store; retrying");
        await this.pause(1000);
        continue;
      }
      if (!job) {
        // A shared store's new jobs may come from another replica: look again in a while.
        await this.pause(this.jobs.shared ? SHARED_IDLE_MS : null, true);
        continue;
      }
      try {
        await this.runJob(job);
        this.runErrors.delete(job.id);
      } catch (err) {
        if (this.closed) return;
        // A passing error (the store blinked) must not fail a job for good: it is run again,
        // from its first unscored item, unless RUN_ATTEMPTS runs in a row end so with no result
        // landing between them (an error that stays).
        const done = (await this.jobs.find(job.id).catch(() => undefined))?.done ?? -1;
        const last = this.runErrors.get(job.id);
        const n = last && last.done === done ? last.n + 1 : 1;
        if (n < RUN_ATTEMPTS) {
          this.runErrors.set(job.id, { n, done });
          this.log.warn({ err, job: job.id, attempt: n }, "jobs: a run of the job ended in an error; running it again");
          await this.jobs.release(job.id, this.me).catch(() => {});
          await this.pause(250 * 2 ** n);
          continue;
        }
        this.runErrors.delete(job.id);
        this.log.error({ err, job: job.id }, "job failed");
        await this.jobs.finish(job.id, "failed", `internal error: ${(err as Error).message}`).catch(() => {});
        this.events.emit(job.id);
      } finally {
        // a stopping replica lets go at once, so another goes on with the job without waiting out the lease
        await this.jobs.release(job.id, this.me).catch(() => {});
      }
    }
  }

  private async runJob(job: JobRow): Promise<void> {
    if (!(await this.jobs.start(job.id))) return;
    const options = JSON.parse(job.options) as JobOptions;
    const abort = new AbortController();
    this.current = { id: job.id, abort };
    const lease = this.config.jobs.leaseMs;
    // The hold is renewed while the job runs here; lost (this replica was taken for dead), this one stops.
    const renew = this.jobs.shared
      ? setInterval(() => {
          this.jobs.claim(job.id, this.me, lease).then(
            (held) => held || abort.abort(new Error("another replica took the job over")),
            (err) => this.log.warn({ err, job: job.id }, "jobs: could not renew the hold on a job"),
          );
        }, Math.max(50, Math.floor(lease / 3)))
      : undefined;
    try {
      let from = 0;
      for (;;) {
        if (this.closed || abort.signal.aborted) return;
        const chunk = await this.jobs.pending(job.id, from, this.config.jobs.chunk);
        if (!chunk.length) break;
        const results = await scoreChunk(this.scorer!, chunk, options, this.config.maxDepth, abort.signal);
        // Items cut short by a stop are not results: they are scored again on restart.
        if (this.closed || abort.signal.aborted) return;
        const now = await this.write(job.id, results);
        // cancelled or deleted meanwhile (on another replica: no abort reached this one)
        if (!now || now.status === "deleting" || FINISHED.includes(now.status)) return;
        from = chunk[chunk.length - 1].idx + 1;
        await new Promise((r) => setImmediate(r));
      }
      const after = await this.jobs.get(job.id);
      if (!FINISHED.includes(after.status)) {
        // Every item has a result, yet the counts disagree: say so rather than loop.
        await this.jobs.finish(job.id, "failed", `internal error: ${after.done} of ${after.total} results after the last chunk`);
        this.events.emit(job.id);
      }
    } finally {
      clearInterval(renew);
      this.current = undefined;
    }
  }

  // ---------------------------------------------------------------- Redis

  /** Queues every unfinished job's missing chunks, runs a worker here unless told not to, and gathers results. */
  private async coordinate(): Promise<void> {
    const { openQueue, startWorker } = await import("./queue.js");
    const { redisUrl, leaseMs, localWorker } = this.config.jobs;
    this.queue = openQueue(redisUrl);
    this.queue.on("error", (err) => this.log.warn({ err }, "jobs: redis error"));
    if (localWorker) this.worker = startWorker(this.scorer!, { url: redisUrl, leaseMs, maxDepth: this.config.maxDepth, log: this.log });
    let lastRequeue = 0;
    while (!this.closed) {
      try {
        const unfinished = await this.jobs.unfinished();
        if (Date.now() - lastRequeue > REQUEUE_MS) {
          lastRequeue = Date.now();
          for (const job of unfinished) {
            const last = this.lastProgress.get(job.id);
            if (last === undefined || Date.now() - last > REQUEUE_MS) await this.enqueue(job);
          }
        }
        const gathered = await this.gather();
        if (!gathered) await this.pause(unfinished.length ? POLL_MS : 1000);
      } catch (err) {
        if (this.closed) return;
        this.log.warn({ err }, "jobs: cannot reach redis; retrying");
        await this.pause(1000);
      }
    }
  }

  /** Wakes the loop: at once if it pauses, else its next pause is skipped (a wake is never lost). */
  private nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  /**
   * The loop's pause: `ms` (null: until woken) or until nudge(). Returns at once when closed or
   * nudged since the last pause: a submit or close that came while the loop awaited the store
   * would otherwise be missed, and a closed loop would wait out a timer that (`unref`) does not
   * keep the process alive, so close() never returned.
   */
  private pause(ms: number | null, unref = false): Promise<void> {
    if (this.closed || this.nudged) {
      this.nudged = false;
      return Promise.resolve();
    }
    return new Promise((r) => {
      const t = ms === null ? undefined : setTimeout(() => this.wake?.(), ms);
      if (unref) t?.unref();
      this.wake = () => {
        clearTimeout(t);
        this.wake = undefined;
        this.nudged = false;
        r();
      };
    });
  }

  /** Puts a job's chunks that still miss results on the queue; chunks already there are kept (same id). */
  private async enqueue(job: JobRow): Promise<void> {
    if (job.status === "queued" || job.run_started_ms === null) await this.jobs.start(job.id);
    if (FINISHED.includes((await this.jobs.get(job.id)).status)) return;
    this.lastProgress.set(job.id, Date.now());
    const options = JSON.parse(job.options) as JobOptions;
    const size = this.config.jobs.chunk;
    let bulk: { name: string; data: ChunkData; opts: { jobId: string; removeOnComplete: false; removeOnFail: false } }[] = [];
    // A pass over a large job takes seconds. A cancel or delete meanwhile marks the job finished,
    // then removes the waiting chunks it finds; chunks this pass adds after that would be scored
    // for nothing. So each addition is followed by a look at the job: finished (or gone), what
    // was just added is removed and the pass ends.
    const flush = async (): Promise<boolean> => {
      await this.queue!.addBulk(bulk);
      const now = await this.jobs.find(job.id);
      if (now && (now.status === "queued" || now.status === "running")) {
        bulk = [];
        return true;
      }
      for (const b of bulk) await this.queue!.remove(b.opts.jobId).catch(() => 0);
      return false;
    };
    for (let start = 0; start < job.total; start += size) {
      const end = Math.min(job.total, start + size);
      if ((await this.jobs.doneIn(job.id, start, end)) === end - start) continue;
      const items = (await this.jobs.pending(job.id, start, end - start)).filter((i) => i.idx < end);
      bulk.push({ name: "chunk", data: { job: job.id, start, options, items }, opts: { jobId: chunkName(job.id, start), removeOnComplete: false, removeOnFail: false } });
      if (bulk.length >= 50 && !(await flush())) return;
    }
    if (bulk.length) await flush();
  }

  /**
   * Writes finished chunks of this server's jobs to the store, then removes them from Redis.
   * Chunks of jobs this server does not know (another server's, one gone for good) stay in the
   * lists, so each pass looks at GATHER_SCAN of them from where the last pass stopped, wrapping
   * at the end: however many such chunks sit at the front, every chunk is reached (a scan of the
   * first 100 alone left every later job running forever behind 100 of them).
   */
  private async gather(): Promise<number> {
    let n = 0;
    for (const state of ["completed", "failed"] as const) n += await this.gatherFrom(state);
    return n;
  }

  private async gatherFrom(state: "completed" | "failed"): Promise<number> {
    const q = this.queue!;
    let n = 0;
    let from = this.scanFrom[state];
    for (let seen = 0; seen < GATHER_SCAN; ) {
      const page = await q.getJobs([state], from, from + 99, true);
      if (!page.length) {
        from = 0; // wrap: the next pass starts at the front
        break;
      }
      seen += page.length;
      let kept = 0;
      for (const j of page) {
        if (j?.data && this.deleted.has(j.data.job)) {
          await j.remove().catch(() => {});
          continue;
        }
        if (!j?.data || !(await this.ours(j.data.job))) {
          kept++; // another server's chunk: it stays, and the next page starts after it
          continue;
        }
        if (state === "completed") await this.write(j.data.job, j.returnvalue?.results ?? []);
        else {
          const reason = `the chunk holding this item failed in every worker that took it: ${j.failedReason ?? "unknown"}`;
          this.log.error({ chunk: j.id, reason: j.failedReason }, "jobs: chunk failed");
          await this.write(
            j.data.job,
            j.data.items.map((it) => ({ idx: it.idx, result: { id: null, verifier: "", reward: null, status: "error", reason, details: {}, elapsed_ms: 0 } })),
          );
        }
        await j.remove().catch(() => {});
        n++;
      }
      from += kept; // what was removed moved the rest forward
      if (page.length < 100) {
        from = 0;
        break;
      }
    }
    this.scanFrom[state] = from;
    return n;
  }

  /** Whether this server's store knows the job (a miss is remembered for NOT_OURS_MS: one store query per job, not per chunk). */
  private async ours(job: string): Promise<boolean> {
    const until = this.notOurs.get(job);
    if (until !== undefined && until > Date.now()) return false;
    if (await this.jobs.find(job)) {
      this.notOurs.delete(job);
      return true;
    }
    this.notOurs.set(job, Date.now() + NOT_OURS_MS);
    if (this.notOurs.size > 10_000) this.notOurs.delete(this.notOurs.keys().next().value!);
    return false;
  }
}
