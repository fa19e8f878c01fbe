/**
 * Scores items: shape check (from openapi.yaml), verifier lookup and declaration checks
 * (registry), then `verify` under a hard deadline. Every path ends in a RewardResult; nothing
 * throws.
 */
import type { Logger } from "pino";
import type { RewardItem, RewardResult, Status, Outcome } from "./types.js";
import { InvalidItemError, MachineryError } from "./types.js";
import type { AnyVerifier, PartItem, VerifyContext, VerifyItem } from "./verifier.js";
import type { Services } from "./services.js";
import type { Registry } from "./registry.js";
import { check } from "./contract.js";
import { fieldOf } from "./schema.js";
import { cpuPressure, type CpuPressure } from "./pressure.js";
import { Cancel, Deadlines, type AbortLike, type Due } from "./deadlines.js";

export interface ScorerOptions {
  registry: Registry;
  services: Services;
  log: Logger;
  /** Default per-item deadline, ms. */
  deadlineMs: number;
  /** Cap on any requested deadline, ms. */
  maxDeadlineMs: number;
  /** Items of one batch scored at once. */
  batchConcurrency: number;
  /** Deepest nesting of parts (ctx.scorePart); default 3. */
  maxPartDepth?: number;
}

export interface ScoreOptions {
  /** Deadline for items that do not set their own, ms. */
  deadlineMs?: number;
  /** Aborts outstanding items (client went away): an AbortSignal, or the lighter Cancel. */
  signal?: AbortLike;
}

const now = () => performance.now();
/** Longest a batch scores before the event loop takes a turn, ms (see scoreBatch). */
const BATCH_SLICE_MS = 8;

/** The shared pools whose backlog admission checks: the sandbox's slots, the SQL engines' processes and connections. */
export type SharedPool = "sandbox" | "sql";
const POOL_BIT = { sandbox: 1, sql: 2 } as const;

/** Waits for a promise with the item's deadline clock stopped (VerifyContext.unclocked). */
type Unclocked = <T>(wait: Promise<T>, counted?: (v: T) => number) => Promise<T>;

export class Scorer {
  private readonly observers: ((r: RewardResult) => void)[] = [];
  /** Every item in flight, on one timer (no timer per item). Read by ItemContext. */
  readonly deadlines = new Deadlines();

  constructor(readonly opts: ScorerOptions) {}

  /** Calls `fn` once per finished item (metrics). */
  observe(fn: (r: RewardResult) => void): void {
    this.observers.push(fn);
  }

  /** Scores one raw (unvalidated) item. Never rejects. */
  score(raw: unknown, o: ScoreOptions = {}): Promise<RewardResult> {
    const r = this.scoreChecked(raw, o, now(), 0);
    return r instanceof Promise ? r.then(this.report) : Promise.resolve(this.report(r));
  }

  /** Tells the observers of a finished item; returns it. */
  private readonly report = (r: RewardResult): RewardResult => {
    for (const fn of this.observers) fn(r);
    return r;
  };

  /**
   * Scores raw items concurrently (up to batchConcurrency), results in input order. Never
   * rejects. min(batchConcurrency, items) runners take the next item in turn: no promise or
   * queue entry per item waiting, and one listener on the caller's signal for the whole batch.
   */
  async scoreBatch(items: unknown[], o: ScoreOptions = {}): Promise<RewardResult[]> {
    const n = items.length;
    const results = new Array<RewardResult>(n);
    if (n === 0) return results;
    const { signal, release } = fanOut(o.signal);
    // An item waiting for its turn is work its pools will get: admission counts it.
    const pooled = items.map((it) => this.poolsOf(it));
    for (const m of pooled) this.countWaiting(m, 1);
    // Bounded slices: items that finish at once (exact, regex...) chain as microtasks, and a
    // batch or a job's chunk of thousands would hold the event loop from start to end; the loop
    // takes a turn whenever the batch has run BATCH_SLICE_MS since the last one.
    let since = now();
    let next = 0;
    const inner: ScoreOptions = { deadlineMs: o.deadlineMs, signal };
    const runner = async (): Promise<void> => {
      while (next < n) {
        const i = next++;
        this.countWaiting(pooled[i]!, -1);
        // Every runner resumes in the same turn: the first one back opens a new slice, and the
        // rest wait for another turn once that slice is spent.
        // One clock read an item: the slice check's is the item's start.
        let t = now();
        while (t - since > BATCH_SLICE_MS) {
          const spent = since;
          await new Promise<void>((resolve) => setImmediate(resolve));
          t = now();
          if (since === spent) since = t;
        }
        const r = this.scoreChecked(items[i], inner, t, 0);
        results[i] = this.report(r instanceof Promise ? await r : r);
      }
    };
    try {
      const runners: Promise<void>[] = [];
      for (let k = Math.min(this.opts.batchConcurrency, n); k > 0; k--) runners.push(runner());
      await Promise.all(runners);
      return results;
    } finally {
      release();
      // Items never started (a runner cannot fail, but be sure) stop counting.
      for (let i = next; i < n; i++) this.countWaiting(pooled[i]!, -1);
    }
  }

  /**
   * Bit 1: the item, or a part of it (combine, calibrated), uses the sandbox (runs programs
   * there); bit 2: the SQL engines. One registry lookup per item (and per part).
   */
  private poolsOf(item: unknown, depth = 0): number {
    if (!item || typeof item !== "object") return 0;
    const { verifier: name, reference } = item as { verifier?: unknown; reference?: unknown };
    const v = typeof name === "string" ? this.opts.registry.verifierOf(name) : undefined;
    if (!v) return 0;
    let mask = (v.usesSandbox ? 1 : 0) | (v.usesSql ? 2 : 0);
    if (mask === 3 || !v.partsOf || depth >= (this.opts.maxPartDepth ?? 3)) return mask;
    for (const p of v.partsOf(reference)) if ((mask |= this.poolsOf(p, depth + 1)) === 3) break;
    return mask;
  }

  private countWaiting(mask: number, by: 1 | -1): void {
    if (mask & 1) this.waitingItems.sandbox += by;
    if (mask & 2) this.waitingItems.sql += by;
  }

  /** Items of accepted batches that use each pool and have not started (ASSAY_BATCH_CONCURRENCY). */
  private readonly waitingItems: Record<SharedPool, number> = { sandbox: 0, sql: 0 };

  /** Whether the item, or a part of it (combine, calibrated), uses the pool. */
  private uses(item: unknown, pool: SharedPool): boolean {
    return (this.poolsOf(item) & POOL_BIT[pool]) !== 0;
  }

  /**
   * Shape, verifier and declarations; then the verifier under its deadline. An item refused
   * before its verifier runs comes back at once, not as a promise.
   */
  private scoreChecked(raw: unknown, o: ScoreOptions, t0: number, depth: number, capMs = this.opts.maxDeadlineMs, parentUnclocked?: Unclocked, parentAsked = false): RewardResult | Promise<RewardResult> {
    const shapeError = check("RewardItem", raw);
    const asObj = (raw && typeof raw === "object" ? raw : {}) as Partial<RewardItem>;
    const id = validId(asObj.id);
    const name = typeof asObj.verifier === "string" ? asObj.verifier : "";
    if (shapeError) return finish(t0, id, name, "invalid", null, `item ${shapeError}`, { field: fieldOf(shapeError) });
    const raw_ = raw as RewardItem;
    const resolved = this.opts.registry.resolve(raw_);
    if ("invalid" in resolved) return finish(t0, id, name, "invalid", null, resolved.invalid, { field: resolved.field });
    // A deadline the caller set is kept (the verifier shrinks its limits to fit); the server's
    // default grows to what the item's own limits need, so they, not the deadline, end it.
    const asked = raw_.deadline_ms ?? o.deadlineMs;
    const deadlineMs = Math.min(this.deadlineOf(resolved, asked), capMs);
    // The result names the verifier as the item called it: `custom:<name>@<version>`, `preset:<name>`
    // say which one scored, where the namespace verifier's own name ("custom") would not.
    const called = resolved.item.verifier;
    return this.runVerifier(resolved.verifier, resolved.item, deadlineMs, o.signal, depth, parentUnclocked, t0, id, called, parentAsked || asked !== undefined);
  }

  /** An item's deadline: the one asked for, else the server's default grown to the item's own limits; capped by ASSAY_MAX_DEADLINE_MS. */
  private deadlineOf(resolved: { verifier: AnyVerifier; item: VerifyItem }, asked: number | undefined): number {
    return Math.min(asked ?? Math.max(this.opts.deadlineMs, budgetOf(resolved.verifier, resolved.item)), this.opts.maxDeadlineMs);
  }

  /**
   * The most time `items` may take to score once they run, ms, for admission to weigh against
   * how long a caller waits for its answer: the longest deadline one of them gets, once per
   * round of ASSAY_BATCH_CONCURRENCY. Malformed items count nothing (they are not run). Linear.
   */
  ownMs(items: readonly unknown[], deadlineMs?: number): number {
    let most = 0;
    for (const raw of items) {
      if (check("RewardItem", raw)) continue;
      const resolved = this.opts.registry.resolve(raw as RewardItem);
      if ("invalid" in resolved) continue;
      most = Math.max(most, this.deadlineOf(resolved, (raw as RewardItem).deadline_ms ?? deadlineMs));
    }
    return most * Math.ceil(items.length / Math.max(1, this.opts.batchConcurrency));
  }

  /**
   * Runs init (once) and verify, against the deadline and the caller's signal, to the item's
   * result: the first of verify settling, the deadline passing or the caller aborting decides.
   * A verify that answers at once (a plain Outcome, not a promise: a short `exact` answer) is
   * scored at once: no promise, and its deadline never enters the timer's set (nothing can
   * pass while it runs without a turn of the event loop). Never rejects.
   */
  private runVerifier(
    verifier: AnyVerifier,
    item: VerifyItem,
    deadlineMs: number,
    outer: AbortLike | undefined,
    depth: number,
    parentUnclocked: Unclocked | undefined,
    t0: number,
    id: RewardItem["id"],
    called: string,
    asked: boolean,
  ): RewardResult | Promise<RewardResult> {
    const { log, services, registry } = this.opts;
    if (outer?.aborted) return fromError(t0, id, called, new MachineryError("request aborted before scoring"), log);
    // The Stopper (the deadline on the scorer's clock, the caller's abort) is made only when
    // something needs it: verify reads ctx.deadline / signal / unclocked / scorePart, init must
    // be waited for, or verify returns a promise. A verify that answers at once needs none.
    const ctx = new ItemContext(this, deadlineMs, Date.now() + deadlineMs, outer, depth, parentUnclocked, asked);
    let running: Outcome | Promise<Outcome>;
    try {
      const init = registry.ensureInit(verifier, { log, services });
      // A cold start (the math workers loading, a pool filling) is the server's, not the
      // item's: its clock stops meanwhile.
      running = init ? ctx.stop.unclocked(init).then(() => (ctx.stop.ended ? never : verifier.verify(item, ctx))) : verifier.verify(item, ctx);
    } catch (err) {
      ctx.made?.dispose();
      return fromError(t0, id, called, err, log); // a verify that throws before it returns
    }
    if (!isThenable(running)) {
      ctx.made?.dispose();
      return toResult(t0, id, called, running, log);
    }
    const stop = ctx.stop;
    const pending = running;
    return new Promise<RewardResult>((resolve) => {
      stop.onStop = (e) => resolve(fromError(t0, id, called, e, log));
      stop.arm();
      pending.then(
        (v) => {
          stop.dispose();
          resolve(toResult(t0, id, called, v, log));
        },
        (e) => {
          stop.dispose();
          resolve(fromError(t0, id, called, e, log));
        },
      );
    });
  }

  /**
   * ctx.scorePart for the item `stop` times (ItemContext). A deadline the caller asked for
   * bounds the parts: each gets what is left of it. Otherwise each part gets the deadline it
   * would get alone (the server's default grown to its own limits: a code part's tests), and
   * the parent's clock stops while its parts run, so that a code part inside `combine` or
   * `calibrated` is not cut to what is left of the parent's default and scored 0 where the same
   * item alone scores 1.
   */
  scorePartOf(part: PartItem, stop: Stopper, depth: number, unclocked: Unclocked, asked: boolean): Promise<RewardResult> {
    if (asked) return this.scorePart(part, stop.deadline, stop.signal(), depth + 1, unclocked, true);
    return unclocked(this.scorePart(part, Date.now() + this.opts.maxDeadlineMs, stop.signal(), depth + 1, unclocked, false));
  }

  /** The host's CPU pressure, for admission (replaceable in tests). */
  hostPressure: () => CpuPressure | null = cpuPressure;

  /** Whether any of `items` (or a part of one) runs programs in the sandbox. */
  anyUsesSandbox(items: readonly unknown[]): boolean {
    return items.some((it) => this.uses(it, "sandbox"));
  }

  /**
   * How long work sent now would wait for a slot of `pool` (ms), if any of `items` names a
   * verifier that uses it (directly or in a part); 0 otherwise, or while the pool has not been
   * started: the pool's own backlog, plus one typical run for each of its items in an accepted
   * batch not yet started. The HTTP layer refuses a request past the pool's bound
   * (ASSAY_SANDBOX_MAX_WAIT_MS, ASSAY_SQL_MAX_WAIT_MS) with 429 (admission), so new work never
   * queues behind a backlog longer than that.
   */
  waitMs(items: readonly unknown[], pool: SharedPool): number {
    const { services } = this.opts;
    const load = pool === "sandbox" ? services.sandbox.current?.()?.load?.() : services.sql.current?.()?.load();
    if (!load || !items.some((it) => this.uses(it, pool))) return 0;
    const ahead = this.waitingItems[pool] * load.typicalMs;
    return load.waitMs + (ahead && Math.round(ahead / Math.max(1, load.slots)));
  }

  /** waitMs(items, "sandbox"). */
  sandboxWaitMs(items: readonly unknown[]): number {
    return this.waitMs(items, "sandbox");
  }

  /**
   * One part of a composed item: the same checks and outcome rules as a top-level item, under
   * what is left of the parent's deadline and its signal; not reported to observers (metrics
   * count items, not parts). Never rejects.
   */
  private scorePart(part: PartItem, parentDeadline: number, signal: AbortSignal, depth: number, parentUnclocked: Unclocked, asked: boolean): Promise<RewardResult> {
    const t0 = now();
    const max = this.opts.maxPartDepth ?? 3;
    const name = typeof part?.verifier === "string" ? part.verifier : "";
    if (depth > max) {
      return Promise.resolve(finish(t0, undefined, name, "invalid", null, `parts nest deeper than ${max} levels (ASSAY_COMPOSE_MAX_DEPTH); a preset or combination may include itself`, { field: "reference" }));
    }
    const left = Math.max(1, parentDeadline - Date.now());
    return Promise.resolve(this.scoreChecked(part, { signal }, t0, depth, left, parentUnclocked, asked));
  }
}

/** A promise that never settles: what an item whose deadline passed during init waits on. */
const never = new Promise<never>(() => {});

/**
 * An item's deadline and the caller's abort: `onStop` is called once with the reason when either
 * comes first. The deadline sits in the scorer's Deadlines (one timer for all items); the
 * AbortSignal handed to the verifier is made only when the verifier reads it: creating one costs
 * more than a whole text verification, and most verifiers never look.
 */
class Stopper implements Due {
  /** Called once, with the reason, when the deadline passes or the caller aborts first. */
  onStop?: (e: Error) => void;
  private controller?: AbortController;
  private reason?: Error;
  /** Epoch ms the deadline falls at while the clock runs; while paused, `left` holds what remains. */
  due: number;
  private left = 0;
  private waits = 0;
  /** Epoch ms up to which counted time has been charged (overlapping waits' own time counts once). */
  private chargedUntil = 0;
  private done = false;
  /** Watched by the clock (arm): until then a wait's end does not put it there. */
  private armed = false;
  private onOuterAbort?: () => void;

  /** `due`: epoch ms the deadline falls at (the item's start plus `deadlineMs`). */
  constructor(private readonly deadlineMs: number, due: number, private readonly clock: Deadlines, private readonly outer?: AbortLike) {
    this.due = due;
  }

  /**
   * Starts watching the deadline and the caller's signal: called once verify has returned a
   * promise (a verify that answered at once never needs either). A wait already begun
   * (`unclocked`, during init or verify's first step) keeps the clock stopped until it ends.
   */
  arm(): void {
    if (this.ended) return;
    this.armed = true;
    if (this.waits === 0) this.clock.add(this);
    if (this.outer) {
      this.onOuterAbort = () => this.stop(new MachineryError("request aborted by the client"));
      this.outer.addEventListener("abort", this.onOuterAbort, { once: true });
    }
  }

  /** Deadlines: the due time has passed. */
  expire(): void {
    this.stop(new MachineryError(`deadline of ${this.deadlineMs} ms exceeded`, { deadline_ms: this.deadlineMs }));
  }

  /** Stopped (deadline or abort) or disposed. */
  get ended(): boolean {
    return this.done || this.reason !== undefined;
  }

  /** The deadline as it stands (epoch ms): later by every while the clock was stopped. */
  get deadline(): number {
    return this.waits > 0 ? Date.now() + this.left : this.due;
  }

  /**
   * Stops the clock while `wait` is pending (several waits may overlap). `counted`: how much of
   * the wait was the item's own work after all (a sandbox run's wall time less its wait for a
   * slot and for a CPU), charged when it resolves; the own time of overlapping waits (tests run
   * side by side) is charged once, as the union of the intervals ending at each resolution.
   */
  unclocked<T>(wait: Promise<T>, counted?: (v: T) => number): Promise<T> {
    if (this.reason || this.done) return wait;
    if (this.waits++ === 0) {
      this.clock.delete(this);
      this.left = Math.max(0, this.due - Date.now());
    }
    const resume = (ownMs: number) => {
      if (ownMs > 0) {
        const end = Date.now();
        // whole ms (rounded up): deadlines stay integers for whoever turns them into a timeout
        const charge = Math.ceil(Math.max(0, end - Math.max(end - ownMs, this.chargedUntil)));
        this.chargedUntil = Math.max(this.chargedUntil, end);
        this.left = Math.max(0, this.left - charge);
        // The item's own work alone outlasted its deadline: it ends now, before its result is used.
        if (charge > 0 && this.left === 0) this.expire();
      }
      if (--this.waits === 0 && !this.reason && !this.done) {
        this.due = Date.now() + this.left;
        if (this.armed) this.clock.add(this);
      }
    };
    return wait.then(
      (v) => {
        let own = 0;
        try {
          own = counted ? Number(counted(v)) || 0 : 0;
        } catch {
          /* nothing charged */
        }
        resume(own);
        return v;
      },
      (e) => {
        resume(0);
        throw e;
      },
    );
  }

  signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  private stop(err: Error): void {
    if (this.reason || this.done) return;
    this.reason = err;
    this.controller?.abort(err);
    this.release();
    this.onStop?.(err);
  }

  /** Verify settled: nothing may stop the item any more. */
  dispose(): void {
    if (this.done) return;
    this.done = true;
    this.release();
  }

  private release(): void {
    if (!this.armed) return;
    this.clock.delete(this);
    if (this.onOuterAbort) this.outer?.removeEventListener("abort", this.onOuterAbort);
  }
}

/**
 * What `verify` gets (VerifyContext), one object per item: the deadline and signal read from the
 * item's Stopper, which is made on first use (`stop`): most verifiers never read them and answer
 * at once, and a Stopper per item was ~2% of a 256-item batch (issue 38). `scorePart` and
 * `unclocked` are made on first use too (verifiers may take them off the context unbound:
 * `const { scorePart } = ctx`).
 */
class ItemContext implements VerifyContext {
  /** The Stopper, once made. */
  made?: Stopper;
  private part?: (part: PartItem) => Promise<RewardResult>;
  private wait?: Unclocked;

  /** `due`: epoch ms of the deadline, fixed when the item starts, whenever the Stopper is made. */
  constructor(
    private readonly scorer: Scorer,
    private readonly deadlineMs: number,
    private readonly due: number,
    private readonly outer: AbortLike | undefined,
    private readonly depth: number,
    private readonly parentUnclocked?: Unclocked,
    /** The caller asked for the deadline (it bounds the parts), rather than the server's default. */
    private readonly asked = false,
  ) {}

  get log(): Logger {
    return this.scorer.opts.log;
  }

  get services(): Services {
    return this.scorer.opts.services;
  }

  /** The item's Stopper, made now if not yet. */
  get stop(): Stopper {
    return (this.made ??= new Stopper(this.deadlineMs, this.due, this.scorer.deadlines, this.outer));
  }

  get deadline(): number {
    return this.made ? this.made.deadline : this.due;
  }

  get signal(): AbortSignal {
    return this.stop.signal();
  }

  get unclocked(): Unclocked {
    if (!this.wait) {
      const { stop, parentUnclocked } = this;
      // A part's wait for a slot stops its parent's clock too (a preset with a code part).
      this.wait = parentUnclocked
        ? (wait, counted) => parentUnclocked(stop.unclocked(wait, counted), counted)
        : (wait, counted) => stop.unclocked(wait, counted);
    }
    return this.wait;
  }

  get scorePart(): (part: PartItem) => Promise<RewardResult> {
    return (this.part ??= (part) => this.scorer.scorePartOf(part, this.stop, this.depth, this.unclocked, this.asked));
  }
}

/**
 * One listener on the caller's signal for a whole batch, fanned out to its items through a
 * Cancel (a Set of listeners, no EventTarget).
 */
function fanOut(outer?: AbortLike): { signal?: AbortLike; release: () => void } {
  if (!outer) return { release: () => {} };
  const c = new Cancel();
  const onAbort = () => c.abort(outer.reason);
  if (outer.aborted) onAbort();
  else outer.addEventListener("abort", onAbort, { once: true });
  return { signal: c, release: () => outer.removeEventListener("abort", onAbort) };
}

function isThenable<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown } | null)?.then === "function";
}

/** The result of what verify returned: an Outcome, or (a verifier's bug) something that is not one. */
function toResult(t0: number, id: RewardItem["id"], name: string, outcome: Outcome, log: Logger): RewardResult {
  try {
    return fromOutcome(t0, id, name, outcome, log);
  } catch (err) {
    return fromError(t0, id, name, err, log); // not an Outcome at all
  }
}

function fromOutcome(t0: number, id: RewardItem["id"], name: string, outcome: Outcome, log: Logger): RewardResult {
  if (outcome.reward === null) return finish(t0, id, name, "error", null, outcome.reason, outcome.details);
  if (typeof outcome.reward !== "number" || !Number.isFinite(outcome.reward)) {
    log.error({ verifier: name, reward: outcome.reward }, "verifier returned a non-finite reward");
    return finish(t0, id, name, "error", null, `verifier ${name} returned a non-finite reward`);
  }
  return finish(t0, id, name, "ok", outcome.reward, outcome.reason, outcome.details);
}

function fromError(t0: number, id: RewardItem["id"], name: string, err: unknown, log: Logger): RewardResult {
  const e = err instanceof Error ? err : new Error(String(err));
  if (e instanceof InvalidItemError) return finish(t0, id, name, "invalid", null, e.message, { field: e.field });
  if (e instanceof MachineryError) return finish(t0, id, name, "error", null, e.message, e.details);
  log.error({ err: e, verifier: name }, "verifier threw");
  return finish(t0, id, name, "error", null, `internal error in verifier ${name}: ${e.message}`);
}

function budgetOf(verifier: AnyVerifier, item: VerifyItem): number {
  try {
    return verifier.budgetMs?.(item) ?? 0;
  } catch {
    return 0; // verify will meet the same problem and report it
  }
}

/** The id to echo: a string, null, or a number that is the integer it was sent as (beyond 2^53 it was rounded on parsing). */
function validId(id: unknown): string | number | null | undefined {
  return typeof id === "string" || id === null || (typeof id === "number" && (!Number.isInteger(id) || Number.isSafeInteger(id))) ? id : undefined;
}

function finish(
  t0: number,
  id: RewardItem["id"],
  verifier: string,
  status: Status,
  reward: number | null,
  reason: string,
  details: Record<string, unknown> = {},
): RewardResult {
  const r: RewardResult = id === undefined ? ({} as RewardResult) : ({ id } as RewardResult);
  r.verifier = verifier;
  r.reward = reward;
  r.status = status;
  r.reason = reason;
  r.details = details;
  r.elapsed_ms = Math.round((now() - t0) * 1000) / 1000;
  return r;
}
