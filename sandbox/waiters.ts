/**
 * The runs waiting for a sandbox slot (bwrap) or a warm container (one docker image's pool),
 * served earliest deadline first rather than in order of arrival.
 *
 * A waiter's deadline is its `startBy` (the caller gives up then: `/run_code` waits about its
 * compile timeout plus slack), or, without one (a `/reward` item, whose wait admission bounds),
 * the time it began waiting plus a horizon: ASSAY_SANDBOX_MAX_WAIT_MS, the backlog admission lets
 * a request wait behind. So a caller that gives up soon goes before one that can wait longer
 * (first come first served made a `/run_code` request that arrived behind a `/reward` backlog
 * wait past its start deadline and answer 504), and no waiter waits for ever behind later
 * arrivals: one with no `startBy` gets the earliest deadline once it has waited its horizon.
 * Equal deadlines go in order of arrival, so waiters alike (a batch's items) keep their order.
 * Each hand-over scans the waiters (linear; admission bounds the backlog).
 */
import { NotStartedError } from "./job.js";

/** A no-startBy waiter's horizon where none is configured (ASSAY_SANDBOX_MAX_WAIT_MS's default). */
export const DEFAULT_HORIZON_MS = 30_000;

interface Entry<T> {
  /** Epoch ms: it is served before any waiter with a later one. */
  deadline: number;
  /** Arrival order, for equal deadlines. */
  seq: number;
  resolve: (x: T) => void;
  reject: (e: Error) => void;
}

export interface WaitOptions {
  /** Epoch ms: past it the wait ends in NotStartedError(`late`). Also the waiter's deadline. */
  startBy?: number;
  /** Aborting it ends the wait with an Error ("aborted while waiting for a sandbox"). */
  signal?: AbortSignal;
  /** The NotStartedError's message when `startBy` passes. */
  late?: string;
  /** When the wait began (epoch ms; tests set it): a no-startBy waiter's deadline is this plus the horizon. */
  now?: number;
}

export class Waiters<T> {
  private readonly list: Entry<T>[] = [];
  private seq = 0;
  /** `horizonMs`: how far ahead a waiter without a startBy puts its deadline (0 or less: the default). */
  constructor(readonly horizonMs: number = DEFAULT_HORIZON_MS) {
    if (!(horizonMs > 0)) this.horizonMs = DEFAULT_HORIZON_MS;
  }

  get length(): number {
    return this.list.length;
  }

  /**
   * Waits to be handed a slot or container by `give`. Ends in NotStartedError at `startBy`, in
   * an Error when `signal` aborts, and in `rejectAll`'s error; each takes the waiter out.
   */
  wait(o: WaitOptions = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        o.signal?.removeEventListener("abort", onAbort);
      };
      const entry: Entry<T> = {
        deadline: o.startBy ?? (o.now ?? Date.now()) + this.horizonMs,
        seq: this.seq++,
        resolve: (x) => {
          done();
          resolve(x);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      };
      const onAbort = () => {
        if (this.remove(entry)) entry.reject(new Error("aborted while waiting for a sandbox"));
      };
      if (o.signal?.aborted) return reject(new Error("aborted while waiting for a sandbox"));
      this.list.push(entry);
      o.signal?.addEventListener("abort", onAbort, { once: true });
      if (o.startBy !== undefined) {
        timer = setTimeout(() => {
          if (this.remove(entry)) entry.reject(new NotStartedError(o.late ?? "nothing came free before the start deadline"));
        }, Math.max(0, o.startBy - Date.now()));
      }
    });
  }

  /** Hands `x` to the waiter with the earliest deadline (the first of those to arrive); false when none waits. */
  give(x: T): boolean {
    if (!this.list.length) return false;
    let best = 0;
    for (let i = 1; i < this.list.length; i++) {
      const a = this.list[i];
      const b = this.list[best];
      if (a.deadline < b.deadline || (a.deadline === b.deadline && a.seq < b.seq)) best = i;
    }
    const [w] = this.list.splice(best, 1);
    w.resolve(x);
    return true;
  }

  /** Ends every wait with `e` (the pool closed, or no container can start). */
  rejectAll(e: Error): void {
    for (const w of this.list.splice(0)) w.reject(e);
  }

  private remove(entry: Entry<T>): boolean {
    const i = this.list.indexOf(entry);
    if (i >= 0) this.list.splice(i, 1);
    return i >= 0;
  }
}
