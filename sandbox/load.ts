/**
 * The backlog of one slot queue (a docker pool, the bwrap slots; also the SQL service's SQLite
 * processes and PostgreSQL connections, src/sql), for admission: how long a run
 * sent now would wait for a slot. Each run is entered with its own limit (wall + compile); its
 * expected length is that limit, or the recent typical run length when that is shorter (most
 * programs end long before their limit; a queue of 60 one-second-limit runs that each take 40 ms
 * is not a minute of work). The wait is the work ahead (queued runs' expected lengths, plus what
 * running runs have left of theirs) spread over the slots, and 0 while a slot is free.
 */
import type { SandboxLoad } from "./types.js";

/** Weight of each finished run in the typical run length (an exponential moving average). */
const ALPHA = 0.1;

export interface Ticket {
  /** The run got its slot. */
  start(): void;
  /**
   * The run is over (`ran`: it started, so its length tells the typical one); idempotent.
   * `tookMs`: how long it ran, where the caller measured it (a run answered in a batch with others
   * whose start was never seen here).
   */
  end(ran?: boolean, tookMs?: number): void;
}

export class Ledger {
  private readonly queued = new Set<{ limitMs: number }>();
  private readonly running = new Set<{ limitMs: number; at: number }>();
  private typicalMs: number | null = null;

  constructor(readonly slots: number) {}

  private expect(limitMs: number): number {
    return this.typicalMs === null ? limitMs : Math.min(limitMs, this.typicalMs);
  }

  /** Enters a run that is about to ask for a slot, with its limit (ms). */
  enter(limitMs: number): Ticket {
    const q = { limitMs };
    this.queued.add(q);
    let r: { limitMs: number; at: number } | null = null;
    let over = false;
    return {
      start: () => {
        if (over || r) return;
        this.queued.delete(q);
        r = { limitMs, at: performance.now() };
        this.running.add(r);
      },
      end: (ran = true, tookMs?: number) => {
        if (over) return;
        over = true;
        this.queued.delete(q);
        if (r) this.running.delete(r);
        if (ran && (r || tookMs !== undefined)) {
          const ms = tookMs ?? performance.now() - r!.at;
          this.typicalMs = this.typicalMs === null ? ms : this.typicalMs + ALPHA * (ms - this.typicalMs);
        }
      },
    };
  }

  load(): SandboxLoad {
    const running = this.running.size;
    const queued = this.queued.size;
    const typicalMs = Math.round(this.typicalMs ?? 0);
    if (running + queued < this.slots) return { slots: this.slots, running, queued, waitMs: 0, typicalMs };
    const now = performance.now();
    let work = 0;
    for (const q of this.queued) work += this.expect(q.limitMs);
    for (const r of this.running) work += Math.max(0, r.at + this.expect(r.limitMs) - now);
    return { slots: this.slots, running, queued, waitMs: Math.round(work / Math.max(1, this.slots)), typicalMs };
  }
}
