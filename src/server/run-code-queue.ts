/**
 * `/run_code`'s own queue in front of the sandbox: requests take a turn (one per sandbox slot,
 * per language) in order of expected work, so a correct program is not left behind endless loops
 * until its caller gives up.
 *
 * verl sends every test case of a program as its own request with the same code and another
 * stdin (sandbox_fusion/utils.py, check_correctness). Once a program has run into its time limit,
 * its other cases are expected to as well: they wait behind programs not known to, which finish
 * in milliseconds. Among equals the earliest first arrival goes first, and a retry of a request
 * (verl resends the same bytes after a 504) keeps the place of its first arrival. A waiter gives
 * up at its `startBy` (the caller's budget, see sandboxfusion.ts) or when its client goes.
 *
 * Memory is bounded: both tables are LRU maps of at most MAX_KEYS entries, keyed by a hash of the
 * code (and of the whole request), computed once per request in linear time over a body the
 * server has already capped (ASSAY_MAX_BODY).
 */
import { createHash } from "node:crypto";

const MAX_KEYS = 8192;
/** How long a first arrival is remembered for a retry (verl's three tries take under 3 budgets). */
const FIRST_SEEN_MS = 30 * 60_000;

export type Turn = { end(hitLimit: boolean): void };

interface Waiter {
  codeKey: string;
  first: number;
  seq: number;
  /** Gives the waiter its turn. */
  grant: () => void;
}

class Lru<V> {
  private readonly m = new Map<string, V>();
  get(k: string): V | undefined {
    const v = this.m.get(k);
    if (v !== undefined) {
      this.m.delete(k);
      this.m.set(k, v);
    }
    return v;
  }
  set(k: string, v: V): void {
    this.m.delete(k);
    this.m.set(k, v);
    if (this.m.size > MAX_KEYS) this.m.delete(this.m.keys().next().value!);
  }
}

/** One language's turns. */
class Lane {
  running = 0;
  readonly waiting: Waiter[] = [];
}

export class RunCodeQueue {
  private readonly lanes = new Map<string, Lane>();
  /** Code hash -> whether its last run ran into its time limit. */
  private readonly hitLimit = new Lru<boolean>();
  /** Request hash -> epoch ms of its first arrival. */
  private readonly firstSeen = new Lru<number>();
  private seq = 0;

  /** The keys of a request: its program (language + code) and the whole request. */
  static keys(language: string, code: string, rest: string): { code: string; request: string } {
    const c = createHash("sha1").update(language).update("\0").update(code).digest("base64");
    const r = createHash("sha1").update(c).update("\0").update(rest).digest("base64");
    return { code: c, request: r };
  }

  /** Whether this program's last run ran into its time limit (it then waits behind others). */
  expectsLimit(codeKey: string): boolean {
    return this.hitLimit.get(codeKey) === true;
  }

  /** Waiting and running turns of a language (tests, metrics). */
  stats(language: string): { running: number; waiting: number } {
    const l = this.lanes.get(language);
    return { running: l?.running ?? 0, waiting: l?.waiting.length ?? 0 };
  }

  /**
   * A turn to run, or null when `startBy` passes (or `signal` aborts) first. `slots`: how many
   * of this language run at once (the sandbox's slots for it).
   */
  take(language: string, slots: number, keys: { code: string; request: string }, startBy: number, signal?: AbortSignal, now = Date.now()): Promise<Turn | null> {
    let lane = this.lanes.get(language);
    if (!lane) this.lanes.set(language, (lane = new Lane()));
    let first = this.firstSeen.get(keys.request);
    if (first === undefined || now - first > FIRST_SEEN_MS) this.firstSeen.set(keys.request, (first = now));
    const turn = (): Turn => {
      let over = false;
      return {
        end: (hit) => {
          if (over) return;
          over = true;
          this.hitLimit.set(keys.code, hit);
          lane.running--;
          this.next(lane, slots);
        },
      };
    };
    if (lane.running < Math.max(1, slots) && lane.waiting.length === 0) {
      lane.running++;
      return Promise.resolve(turn());
    }
    if (startBy <= now || signal?.aborted) return Promise.resolve(null);
    return new Promise((resolve) => {
      const w: Waiter = {
        codeKey: keys.code,
        first,
        seq: this.seq++,
        grant: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", leave);
          lane.running++;
          resolve(turn());
        },
      };
      const leave = () => {
        const i = lane.waiting.indexOf(w);
        if (i < 0) return;
        lane.waiting.splice(i, 1);
        clearTimeout(timer);
        signal?.removeEventListener("abort", leave);
        resolve(null);
      };
      const timer = setTimeout(leave, Math.max(0, startBy - Date.now()));
      signal?.addEventListener("abort", leave, { once: true });
      lane.waiting.push(w);
    });
  }

  /**
   * Hands free turns to the best waiters: a program not known to run into its limit first (read
   * now, so what was learnt while it waited counts), then the earliest first arrival.
   */
  private next(lane: Lane, slots: number): void {
    while (lane.running < Math.max(1, slots) && lane.waiting.length) {
      let best = 0;
      let bestSlow = this.expectsLimit(lane.waiting[0]!.codeKey);
      for (let i = 1; i < lane.waiting.length; i++) {
        const a = lane.waiting[i]!, b = lane.waiting[best]!;
        const slow = this.expectsLimit(a.codeKey);
        if (slow !== bestSlow ? !slow : a.first !== b.first ? a.first < b.first : a.seq < b.seq) {
          best = i;
          bestSlow = slow;
        }
      }
      lane.waiting.splice(best, 1)[0]!.grant();
    }
  }
}
