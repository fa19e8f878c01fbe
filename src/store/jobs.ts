/**
 * Batch jobs in the store: a job row (status, running counts), its items as uploaded, and one
 * result per item. A result's primary key is (job, index) and it is written with INSERT OR
 * IGNORE, so an item scored twice (after a crash, or a chunk a dead worker had started) lands
 * once; the counts move only for rows that landed. Everything here is synchronous SQLite.
 */
import type { DB } from "./db.js";
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

export class JobStore {
  private readonly q;

  constructor(private readonly db: DB) {
    this.q = {
      create: db.prepare("INSERT INTO job (id, status, options, created_at) VALUES (?, 'uploading', ?, ?)"),
      addItem: db.prepare("INSERT INTO job_item (job_id, idx, item, grp) VALUES (?, ?, ?, ?)"),
      seal: db.prepare("UPDATE job SET status = 'queued', total = ? WHERE id = ? AND status = 'uploading'"),
      get: db.prepare<[string], JobRow>("SELECT * FROM job WHERE id = ?"),
      list: db.prepare<[number], JobRow>("SELECT * FROM job WHERE status NOT IN ('uploading', 'deleting') ORDER BY rowid DESC LIMIT ?"),
      unfinished: db.prepare<[], JobRow>("SELECT * FROM job WHERE status IN ('queued', 'running') ORDER BY rowid"),
      uploading: db.prepare<[], { id: string }>("SELECT id FROM job WHERE status IN ('uploading', 'deleting')"),
      markDeleting: db.prepare("UPDATE job SET status = 'deleting' WHERE id = ? AND status != 'deleting'"),
      start: db.prepare("UPDATE job SET status = 'running', started_at = coalesce(started_at, ?), run_started_ms = ?, run_start_done = done WHERE id = ? AND status IN ('queued', 'running')"),
      pending: db.prepare<[string, number, number], PendingItem>(
        `SELECT i.idx, i.item FROM job_item i
         WHERE i.job_id = ? AND i.idx >= ?
           AND NOT EXISTS (SELECT 1 FROM job_result r WHERE r.job_id = i.job_id AND r.idx = i.idx)
         ORDER BY i.idx LIMIT ?`,
      ),
      items: db.prepare<[string, number, number], PendingItem>("SELECT idx, item FROM job_item WHERE job_id = ? AND idx >= ? AND idx < ? ORDER BY idx"),
      doneIn: db.prepare<[string, number, number], { n: number }>("SELECT count(*) AS n FROM job_result WHERE job_id = ? AND idx >= ? AND idx < ?"),
      putResult: db.prepare("INSERT OR IGNORE INTO job_result (job_id, idx, status, reward, elapsed_ms, result) VALUES (?, ?, ?, ?, ?, ?)"),
      bump: db.prepare(
        `UPDATE job SET done = done + ?, n_ok = n_ok + ?, n_error = n_error + ?, n_invalid = n_invalid + ?, reward_sum = reward_sum + ?
         WHERE id = ?`,
      ),
      finishIfDone: db.prepare("UPDATE job SET status = 'done', finished_at = ? WHERE id = ? AND status IN ('queued', 'running') AND done >= total"),
      finish: db.prepare("UPDATE job SET status = ?, error = ?, finished_at = ? WHERE id = ? AND status IN ('uploading', 'queued', 'running')"),
      results: db.prepare<[string, number, number], ResultRow>("SELECT idx, result FROM job_result WHERE job_id = ? AND idx >= ? ORDER BY idx LIMIT ?"),
      del: [db.prepare("DELETE FROM job_result WHERE job_id = ?"), db.prepare("DELETE FROM job_item WHERE job_id = ?"), db.prepare("DELETE FROM job WHERE id = ?")],
      delSlice: [
        db.prepare("DELETE FROM job_result WHERE job_id = ? AND idx IN (SELECT idx FROM job_result WHERE job_id = ? LIMIT ?)"),
        db.prepare("DELETE FROM job_item WHERE job_id = ? AND idx IN (SELECT idx FROM job_item WHERE job_id = ? LIMIT ?)"),
      ],
      expired: db.prepare<[string, number], { id: string }>(
        "SELECT id FROM job WHERE status IN ('done', 'failed', 'cancelled') AND finished_at IS NOT NULL AND finished_at < ? ORDER BY finished_at LIMIT ?",
      ),
      histogram: db.prepare<[string], { b: number; n: number }>(
        `SELECT CASE WHEN reward < 0 THEN -1 WHEN reward > 1 THEN 10 WHEN reward = 1 THEN 9 ELSE CAST(reward * 10 AS INTEGER) END AS b, count(*) AS n
         FROM job_result WHERE job_id = ? AND status = 'ok' GROUP BY b ORDER BY b`,
      ),
      slowest: db.prepare<[string, number], ResultRow>("SELECT idx, result FROM job_result WHERE job_id = ? ORDER BY elapsed_ms DESC LIMIT ?"),
      groups: db.prepare<[number, string], { grp: string; n: number; scored: number; passed: number; reward_sum: number; first: number }>(
        `SELECT i.grp AS grp, count(*) AS n, count(r.reward) AS scored, sum(CASE WHEN r.status = 'ok' AND r.reward >= ? THEN 1 ELSE 0 END) AS passed,
                coalesce(sum(r.reward), 0) AS reward_sum, min(i.idx) AS first
         FROM job_item i LEFT JOIN job_result r ON r.job_id = i.job_id AND r.idx = i.idx
         WHERE i.job_id = ? AND i.grp IS NOT NULL GROUP BY i.grp ORDER BY first`,
      ),
    };
  }

  /**
   * A new job in status `uploading` (invisible to runners and lists) until `seal`. Items go in
   * with `addItems` in slices, each its own transaction, so an upload never holds the database.
   */
  create(id: string, options: unknown): void {
    this.q.create.run(id, JSON.stringify(options), iso());
  }

  addItems(id: string, from: number, items: { item: string; group: string | null }[]): void {
    this.db.transaction(() => {
      items.forEach((it, i) => this.q.addItem.run(id, from + i, it.item, it.group));
    })();
  }

  seal(id: string, total: number): void {
    this.q.seal.run(total, id);
  }

  /** Drops a job and everything of it (a failed upload). */
  delete(id: string): void {
    this.db.transaction(() => {
      for (const q of this.q.del) q.run(id);
    })();
  }

  /**
   * Deletes up to `rows` of the job's results and items, each slice its own short transaction, so
   * deleting a million-item job never holds the database (or the event loop) long; the job row
   * goes last, with the final slice. Returns true once everything of it is gone. A job row whose
   * status is `deleting` is invisible (get, list, runners), so a delete cut off by a stop is
   * finished on the next start (dropUnsealed).
   */
  deleteSome(id: string, rows: number): boolean {
    return this.db.transaction(() => {
      this.q.markDeleting.run(id);
      let left = rows;
      for (const q of this.q.delSlice) {
        if (left <= 0) return false;
        left -= q.run(id, id, left).changes;
      }
      if (left <= 0) return false;
      this.q.del[2].run(id);
      return true;
    })();
  }

  /** Finished jobs whose finished_at is before `before` (ISO time), oldest first, at most `limit`. */
  expired(before: string, limit: number): string[] {
    return this.q.expired.all(before, limit).map((r) => r.id);
  }

  /** Uploads that a crash cut off (their client never got an id), and deletes it cut off. */
  dropUnsealed(): number {
    const ids = this.q.uploading.all();
    for (const { id } of ids) this.delete(id);
    return ids.length;
  }

  get(id: string): JobRow {
    const row = this.q.get.get(id);
    if (!row || row.status === "uploading" || row.status === "deleting") throw new JobNotFound(id);
    return row;
  }

  find(id: string): JobRow | undefined {
    return this.q.get.get(id);
  }

  list(limit = 100): JobRow[] {
    return this.q.list.all(limit);
  }

  /** Queued and running jobs, oldest first: what a (re)started server has to finish. */
  unfinished(): JobRow[] {
    return this.q.unfinished.all();
  }

  /** Marks a run of the job starting now (its rate is measured from here). False if it is finished. */
  start(id: string): boolean {
    return this.q.start.run(iso(), Date.now(), id).changes > 0;
  }

  /** Items at or after `from` that have no result yet, in order. */
  pending(id: string, from: number, limit: number): PendingItem[] {
    return this.q.pending.all(id, from, limit);
  }

  /** Items with index in [from, to), in order. */
  items(id: string, from: number, to: number): PendingItem[] {
    return this.q.items.all(id, from, to);
  }

  /** How many of the items in [from, to) have a result. */
  doneIn(id: string, from: number, to: number): number {
    return this.q.doneIn.get(id, from, to)!.n;
  }

  /**
   * Writes results (first write of an index wins; later ones are ignored) and moves the counts
   * by what landed, in one transaction; marks the job done when every item has a result.
   * Returns how many landed. Results for a finished (cancelled) job are dropped.
   */
  putResults(id: string, results: { idx: number; result: RewardResult }[]): number {
    return this.db.transaction(() => {
      const job = this.q.get.get(id);
      if (!job || FINISHED.includes(job.status) || job.status === "deleting") return 0;
      let landed = 0, ok = 0, error = 0, invalid = 0, sum = 0;
      for (const { idx, result: r } of results) {
        if (this.q.putResult.run(id, idx, r.status, r.reward, r.elapsed_ms, JSON.stringify(r)).changes === 0) continue;
        landed++;
        if (r.status === "ok") {
          ok++;
          sum += r.reward ?? 0;
        } else if (r.status === "error") error++;
        else invalid++;
      }
      if (landed) {
        this.q.bump.run(landed, ok, error, invalid, sum, id);
        this.q.finishIfDone.run(iso(), id);
      }
      return landed;
    })();
  }

  /** Ends a job that has not finished (cancelled, failed). False if it had finished already. */
  finish(id: string, status: "failed" | "cancelled", error: string | null = null): boolean {
    return this.q.finish.run(status, error, iso(), id).changes > 0;
  }

  /** Up to `limit` results from index `from` on, in index order (there may be gaps while running). */
  results(id: string, from: number, limit: number): ResultRow[] {
    return this.q.results.all(id, from, limit);
  }

  /** Scored rewards in ten bins of width 0.1 over [0, 1] (1 in the last), -1 below 0, 10 above 1. */
  histogram(id: string): { b: number; n: number }[] {
    return this.q.histogram.all(id);
  }

  slowest(id: string, n: number): ResultRow[] {
    return this.q.slowest.all(id, n);
  }

  /** Per group (first seen first): items, scored items, items with reward >= threshold, reward sum. */
  groups(id: string, threshold: number) {
    return this.q.groups.all(threshold, id);
  }
}
