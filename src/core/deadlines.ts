/**
 * Deadlines for many items on one timer, and a light cancellation signal.
 *
 * A `setTimeout` per item, an `AbortController` per request and a listener per item on it were
 * a third of the CPU a batch of quick items cost (issue 38): timers, event targets and the
 * garbage they leave. Here every item in flight sits in one set with its due time, and one timer
 * is armed for the earliest; an item that finishes leaves the set and costs no timer at all.
 */

/** Something with a due time (epoch ms) that is told when it has passed. */
export interface Due {
  /** Epoch ms at which `expire` is called; read when added and whenever the timer fires. */
  readonly due: number;
  expire(): void;
}

/** One timer for every `Due` added: armed for the earliest, re-armed when it fires. */
export class Deadlines {
  private readonly live = new Set<Due>();
  private timer: NodeJS.Timeout | undefined;
  /** Epoch ms the timer is armed for (Infinity: not armed). */
  private armedFor = Infinity;

  /** Whether the timer keeps the process alive (only while something is watched). */
  private held = false;

  /** Watches `d` until `delete(d)`; `d.expire()` is called once its due time has passed. */
  add(d: Due): void {
    this.live.add(d);
    if (d.due < this.armedFor) this.arm(d.due);
    else if (!this.held) {
      this.timer!.ref();
      this.held = true;
    }
  }

  /**
   * Stops watching `d`. The timer stays armed when nothing is left (quick items come and go many
   * times a millisecond: clearing and arming again would be a timer per item after all), but no
   * longer keeps the process alive; it fires once, finds nothing due, and is not re-armed.
   */
  delete(d: Due): void {
    this.live.delete(d);
    if (this.live.size === 0 && this.held) {
      this.timer!.unref();
      this.held = false;
    }
  }

  /** Items watched now (tests). */
  get size(): number {
    return this.live.size;
  }

  private arm(at: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.armedFor = at;
    this.timer = setTimeout(this.fire, Math.max(0, at - Date.now()));
    this.held = true;
    if (this.live.size === 0) {
      this.timer.unref();
      this.held = false;
    }
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.armedFor = Infinity;
    this.held = false;
    const t = Date.now();
    let next = Infinity;
    const expired: Due[] = [];
    for (const d of this.live) {
      if (d.due <= t) expired.push(d);
      else if (d.due < next) next = d.due;
    }
    for (const d of expired) this.live.delete(d);
    if (next < Infinity) this.arm(next);
    if (expired.length > 1) expired.sort((x, y) => x.due - y.due); // a late timer: earliest first
    for (const d of expired) d.expire();
  };
}

/** The part of AbortSignal the scorer reads: `Cancel` and AbortSignal both are one. */
export interface AbortLike {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/**
 * An abort signal without EventTarget: a flag, a reason and a set of listeners. What the HTTP
 * layer hands the scorer for "the client went away" on every request, where an AbortController
 * cost more than scoring a text item. `abort()` calls each listener once.
 */
export class Cancel implements AbortLike {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Set<() => void> | undefined;

  addEventListener(_type: "abort", listener: () => void): void {
    (this.listeners ??= new Set()).add(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    this.listeners?.delete(listener);
  }

  abort(reason: unknown = new Error("aborted")): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const ls = this.listeners;
    this.listeners = undefined;
    if (ls) for (const l of ls) l();
  }
}
