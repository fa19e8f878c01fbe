/**
 * Batch jobs in the store: a job row (status, running counts), its items as uploaded, and one
 * result per item. A result's primary key is (job, index) and it is written with ON CONFLICT
 * DO NOTHING, so an item scored twice (after a crash, or a chunk a dead worker had started) lands
 * once; the counts move only for rows that landed. The same on both backends (sql.ts); on a shared
 * one (PostgreSQL) a job is also held by the replica scoring it (`claim`), for a lease it renews.
 */
import type { Sql } from "./sql.js";
import type { RewardResult } from "../core/types.js";

/** `uploading` and `deleting` are invisible outside this file's callers (never listed, got or run). */
export type JobStatus = "uploading" | "queued" | "running" | "done" | "failed" | "cancelled" | "deleting";
export const FINISHED: readonly JobStatus[] = ["done", "failed", "cancelled"];

export interface JobRow {
  id: string;
  status: JobStatus;
  total: number;
  done: number;
  n_ok: number;
  n_error: number;
  n_invalid: number;
  reward_sum: number;
  options: string;
  error: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  run_started_ms: number | null;
  run_start_done: number;
}

export interface PendingItem {
  idx: number;
  item: string;
}

export interface ResultRow {
  idx: number;
  result: string;
}

export class JobNotFound extends Error {
  constructor(readonly id: string) {
    super(`no job ${JSON.stringify(id)}`);
    this.name = "JobNotFound";
  }
}

const iso = () => new Date().toISOString();

/** How long an upload may take on a shared store before another replica's start deletes it as cut off, ms. */
export const STALE_UPLOAD_MS = 6 * 3_600_000;
/**
 * Per group of a job: its label, items, scored items, items with reward >= the threshold (the
 * first parameter), reward sum, first index; the job id is the second parameter. Read through
 * `groups` (the first groups, labels cut) and `groupTally` (counts only).
 */
const PER_GROUP = `SELECT i.grp AS grp, count(*) AS n, count(r.reward) AS scored,
         sum(CASE WHEN r.status = 'ok' AND r.reward >= ? THEN 1 ELSE 0 END) AS passed, coalesce(sum(r.reward), 0) AS reward_sum, min(i.idx) AS first
       FROM job_item i LEFT JOIN job_result r ON r.job_id = i.job_id AND r.idx = i.idx
       WHERE i.job_id = ? AND i.grp IS NOT NULL GROUP BY i.grp`;
/** Rows (results, then items) deleted per transaction when a job is deleted. */
export const DELETE_SLICE = 5_000;

function queries(pg: boolean) {
  const order = pg ? "seq" : "rowid";
  return {
    create: "INSERT INTO job (id, status, options, created_at) VALUES (?, 'uploading', ?, ?)",
    addItem: "INSERT INTO job_item (job_id, idx, item, grp) VALUES (?, ?, ?, ?)",
    addItemsPg: "INSERT INTO job_item (job_id, idx, item, grp) SELECT ?::text, * FROM unnest(?::int[], ?::text[], ?::text[])",
    seal: "UPDATE job SET status = 'queued', total = ? WHERE id = ? AND status = 'uploading'",
    get: "SELECT * FROM job WHERE id = ?",
    // PostgreSQL: the row stays locked until the results are in, so a cancel (finish) on another
    // replica either commits first (and the results are dropped) or waits for them
    getForResults: pg ? "SELECT * FROM job WHERE id = ? FOR UPDATE" : "SELECT * FROM job WHERE id = ?",
    list: `SELECT * FROM job WHERE status NOT IN ('uploading', 'deleting') ORDER BY ${order} DESC LIMIT ?`,
    unfinished: `SELECT * FROM job WHERE status IN ('queued', 'running') ORDER BY ${order}`,
    uploading: "SELECT id FROM job WHERE status = 'deleting' OR (status = 'uploading' AND created_at < ?)",
    markDeleting: "UPDATE job SET status = 'deleting' WHERE id = ? AND status != 'deleting'",
    start: "UPDATE job SET status = 'running', started_at = coalesce(started_at, ?), run_started_ms = ?, run_start_done = done WHERE id = ? AND status IN ('queued', 'running')",
    claim: "UPDATE job SET owner = ?, lease_until = ? WHERE id = ? AND status IN ('queued', 'running') AND (owner IS NULL OR owner = ? OR lease_until < ?)",
    release: "UPDATE job SET owner = NULL, lease_until = NULL WHERE id = ? AND owner = ?",
    pending: `SELECT i.idx, i.item FROM job_item i
         WHERE i.job_id = ? AND i.idx >= ?
           AND NOT EXISTS (SELECT 1 FROM job_result r WHERE r.job_id = i.job_id AND r.idx = i.idx)
         ORDER BY i.idx LIMIT ?`,
    items: "SELECT idx, item FROM job_item WHERE job_id = ? AND idx >= ? AND idx < ? ORDER BY idx",
    doneIn: "SELECT count(*) AS n FROM job_result WHERE job_id = ? AND idx >= ? AND idx < ?",
    putResult: "INSERT INTO job_result (job_id, idx, status, reward, elapsed_ms, result) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
    putResultsPg: `INSERT INTO job_result (job_id, idx, status, reward, elapsed_ms, result)
         SELECT ?::text, * FROM unnest(?::int[], ?::text[], ?::float8[], ?::float8[], ?::text[]) ON CONFLICT DO NOTHING RETURNING status, reward`,
    bump: `UPDATE job SET done = done + ?, n_ok = n_ok + ?, n_error = n_error + ?, n_invalid = n_invalid + ?, reward_sum = reward_sum + ?
         WHERE id = ?`,
    finishIfDone: "UPDATE job SET status = 'done', finished_at = ? WHERE id = ? AND status IN ('queued', 'running') AND done >= total",
    finish: "UPDATE job SET status = ?, error = ?, finished_at = ? WHERE id = ? AND status IN ('uploading', 'queued', 'running')",
    results: "SELECT idx, result FROM job_result WHERE job_id = ? AND idx >= ? ORDER BY idx LIMIT ?",
    del: ["DELETE FROM job_result WHERE job_id = ?", "DELETE FROM job_item WHERE job_id = ?", "DELETE FROM job WHERE id = ?"],
    delSlice: [
      "DELETE FROM job_result WHERE job_id = ? AND idx IN (SELECT idx FROM job_result WHERE job_id = ? LIMIT ?)",
      "DELETE FROM job_item WHERE job_id = ? AND idx IN (SELECT idx FROM job_item WHERE job_id = ? LIMIT ?)",
    ],
    expired: "SELECT id FROM job WHERE status IN ('done', 'failed', 'cancelled') AND finished_at IS NOT NULL AND finished_at < ? ORDER BY finished_at LIMIT ?",
    // PostgreSQL's cast to integer rounds; SQLite's truncates (the bin is the truncation)
    histogram: `SELECT CASE WHEN reward < 0 THEN -1 WHEN reward > 1 THEN 10 WHEN reward = 1 THEN 9 ELSE ${pg ? "CAST(trunc(reward * 10) AS INTEGER)" : "CAST(reward * 10 AS INTEGER)"} END AS b, count(*) AS n
         FROM job_result WHERE job_id = ? AND status = 'ok' GROUP BY b ORDER BY b`,
    slowest: "SELECT idx, result FROM job_result WHERE job_id = ? ORDER BY elapsed_ms DESC LIMIT ?",
    groups: `SELECT substr(grp, 1, ?) AS grp, n, scored, passed, reward_sum, first FROM (${PER_GROUP}) g ORDER BY first LIMIT ?`,
    groupTally: `SELECT scored, passed, count(*) AS groups, max(n) AS max_n FROM (${PER_GROUP}) g GROUP BY scored, passed`,
  };
}

export class JobStore {
  private readonly q;
  private readonly pg: boolean;

  constructor(private readonly db: Sql) {
    this.pg = db.dialect === "postgres";
    this.q = queries(this.pg);
  }

  /** Whether other replicas share this store (then jobs are claimed, and followed by polling). */
  get shared(): boolean {
    return this.db.shared;
  }

  /**
   * A new job in status `uploading` (invisible to runners and lists) until `seal`. Items go in
   * with `addItems` in slices, each its own transaction, so an upload never holds the database.
   */
  async create(id: string, options: unknown): Promise<void> {
    await this.db.run(this.q.create, [id, JSON.stringify(options), iso()]);
  }

  async addItems(id: string, from: number, items: { item: string; group: string | null }[]): Promise<void> {
    if (this.pg) {
      await this.db.run(this.q.addItemsPg, [id, items.map((_, i) => from + i), items.map((it) => it.item), items.map((it) => it.group)]);
      return;
    }
    await this.db.tx(async (t) => {
      for (let i = 0; i < items.length; i++) await t.run(this.q.addItem, [id, from + i, items[i].item, items[i].group]);
    });
  }

  async seal(id: string, total: number): Promise<void> {
    await this.db.run(this.q.seal, [total, id]);
  }

  /** Drops a job and everything of it (a failed upload). */
  async delete(id: string): Promise<void> {
    await this.db.tx(async (t) => {
      for (const q of this.q.del) await t.run(q, [id]);
    });
  }

  /**
   * Deletes up to `rows` of the job's results and items, each slice its own short transaction, so
   * deleting a million-item job never holds the database (or the event loop) long; the job row
   * goes last, with the final slice. Returns true once everything of it is gone. A job row whose
   * status is `deleting` is invisible (get, list, runners), so a delete cut off by a stop is
   * finished on the next start (dropUnsealed).
   */
  async deleteSome(id: string, rows: number): Promise<boolean> {
    return this.db.tx(async (t) => {
      await t.run(this.q.markDeleting, [id]);
      let left = rows;
      for (const q of this.q.delSlice) {
        if (left <= 0) return false;
        left -= await t.run(q, [id, id, left]);
      }
      if (left <= 0) return false;
      await t.run(this.q.del[2], [id]);
      return true;
    });
  }

  /** Finished jobs whose finished_at is before `before` (ISO time), oldest first, at most `limit`. */
  async expired(before: string, limit: number): Promise<string[]> {
    return (await this.db.all<{ id: string }>(this.q.expired, [before, limit])).map((r) => r.id);
  }

  /**
   * Uploads that a crash cut off (their client never got an id), and deletes it cut off. On a
   * shared store another replica may be uploading right now: only uploads older than
   * STALE_UPLOAD_MS count as cut off there.
   */
  async dropUnsealed(): Promise<number> {
    const before = this.shared ? new Date(Date.now() - STALE_UPLOAD_MS).toISOString() : "9999";
    const ids = await this.db.all<{ id: string }>(this.q.uploading, [before]);
    for (const { id } of ids) await this.deleteSliced(id);
    return ids.length;
  }

  /**
   * Deletes a job whole, in slices of DELETE_SLICE rows (deleteSome), yielding to the event loop
   * between them: one transaction over a million rows held the database, and on SQLite the
   * event loop, for seconds.
   */
  async deleteSliced(id: string): Promise<void> {
    while (!(await this.deleteSome(id, DELETE_SLICE))) await new Promise((r) => setImmediate(r));
  }

  async get(id: string): Promise<JobRow> {
    const row = await this.find(id);
    if (!row || row.status === "uploading" || row.status === "deleting") throw new JobNotFound(id);
    return row;
  }

  async find(id: string): Promise<JobRow | undefined> {
    return this.db.get<JobRow>(this.q.get, [id]);
  }

  async list(limit = 100): Promise<JobRow[]> {
    return this.db.all<JobRow>(this.q.list, [limit]);
  }

  /** Queued and running jobs, oldest first: what a (re)started server has to finish. */
  async unfinished(): Promise<JobRow[]> {
    return this.db.all<JobRow>(this.q.unfinished);
  }

  /** Marks a run of the job starting now (its rate is measured from here). False if it is finished. */
  async start(id: string): Promise<boolean> {
    return (await this.db.run(this.q.start, [iso(), Date.now(), id])) > 0;
  }

  /**
   * Takes (or renews) the hold on an unfinished job for `leaseMs`: true when no other replica
   * holds it, or its holder's lease ran out (it died). Always true on an unshared store (one
   * process: the job is this one's).
   */
  async claim(id: string, owner: string, leaseMs: number): Promise<boolean> {
    if (!this.shared) return true;
    const now = Date.now();
    return (await this.db.run(this.q.claim, [owner, now + leaseMs, id, owner, now])) > 0;
  }

  /** Gives up the hold (a replica stopping), so another takes the job at once. */
  async release(id: string, owner: string): Promise<void> {
    if (this.shared) await this.db.run(this.q.release, [id, owner]);
  }

  /** Items at or after `from` that have no result yet, in order. */
  async pending(id: string, from: number, limit: number): Promise<PendingItem[]> {
    return this.db.all<PendingItem>(this.q.pending, [id, from, limit]);
  }

  /** Items with index in [from, to), in order. */
  async items(id: string, from: number, to: number): Promise<PendingItem[]> {
    return this.db.all<PendingItem>(this.q.items, [id, from, to]);
  }

  /** How many of the items in [from, to) have a result. */
  async doneIn(id: string, from: number, to: number): Promise<number> {
    return (await this.db.get<{ n: number }>(this.q.doneIn, [id, from, to]))!.n;
  }

  /**
   * Writes results (first write of an index wins; later ones are ignored) and moves the counts
   * by what landed, in one transaction; marks the job done when every item has a result.
   * Returns how many landed. Results for a finished (cancelled) job are dropped.
   */
  async putResults(id: string, results: { idx: number; result: RewardResult }[]): Promise<number> {
    return this.db.tx(async (t) => {
      const job = await t.get<JobRow>(this.q.getForResults, [id]);
      if (!job || FINISHED.includes(job.status) || job.status === "deleting") return 0;
      let landed = 0, ok = 0, error = 0, invalid = 0, sum = 0;
      const count = (status: string, reward: number | null) => {
        landed++;
        if (status === "ok") {
          ok++;
          sum += reward ?? 0;
        } else if (status === "error") error++;
        else invalid++;
      };
      if (this.pg) {
        const rs = results.map((x) => x.result);
        const rows = await t.all<{ status: string; reward: number | null }>(this.q.putResultsPg, [
          id, results.map((x) => x.idx), rs.map((r) => r.status), rs.map((r) => r.reward), rs.map((r) => r.elapsed_ms), rs.map((r) => JSON.stringify(r)),
        ]);
        for (const r of rows) count(r.status, r.reward);
      } else {
        for (const { idx, result: r } of results) {
          if ((await t.run(this.q.putResult, [id, idx, r.status, r.reward, r.elapsed_ms, JSON.stringify(r)])) === 0) continue;
          count(r.status, r.reward);
        }
      }
      if (landed) {
        await t.run(this.q.bump, [landed, ok, error, invalid, sum, id]);
        await t.run(this.q.finishIfDone, [iso(), id]);
      }
      return landed;
    }, `job:${id}`);
  }

  /** Ends a job that has not finished (cancelled, failed). False if it had finished already. */
  async finish(id: string, status: "failed" | "cancelled", error: string | null = null): Promise<boolean> {
    return (await this.db.run(this.q.finish, [status, error, iso(), id])) > 0;
  }

  /** Up to `limit` results from index `from` on, in index order (there may be gaps while running). */
  async results(id: string, from: number, limit: number): Promise<ResultRow[]> {
    return this.db.all<ResultRow>(this.q.results, [id, from, limit]);
  }

  /** Scored rewards in ten bins of width 0.1 over [0, 1] (1 in the last), -1 below 0, 10 above 1. */
  async histogram(id: string): Promise<{ b: number; n: number }[]> {
    return this.db.all<{ b: number; n: number }>(this.q.histogram, [id]);
  }

  async slowest(id: string, n: number): Promise<ResultRow[]> {
    return this.db.all<ResultRow>(this.q.slowest, [id, n]);
  }

  /**
   * The first `limit` groups (first seen first): the group's first `labelChars` characters (a
   * prompt may be a megabyte, and only a label is shown), items, scored items, items with
   * reward >= threshold, reward sum.
   */
  async groups(id: string, threshold: number, limit: number, labelChars: number) {
    return this.db.all<{ grp: string; n: number; scored: number; passed: number; reward_sum: number; first: number }>(this.q.groups, [labelChars, threshold, id, limit]);
  }

  /**
   * Every group, tallied by (scored, passed): how many groups have that many scored items and
   * items with reward >= threshold, and the most items any of them has. What pass@k needs, in
   * rows that do not grow with the number of groups (a million distinct prompts were a million
   * rows, each holding its prompt).
   */
  async groupTally(id: string, threshold: number) {
    return this.db.all<{ scored: number; passed: number; groups: number; max_n: number }>(this.q.groupTally, [threshold, id]);
  }
}
