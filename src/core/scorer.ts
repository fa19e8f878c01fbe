/**
 * Scores items: shape check (from openapi.yaml), verifier lookup and declaration checks
 * (registry), then `verify` under a hard deadline. Every path ends in a RewardResult; nothing
 * throws.
 */
import type { Logger } from "pino";
import pLimit from "p-limit";
import { setMaxListeners } from "node:events";
import type { RewardItem, RewardResult, Status, Outcome } from "./types.js";
import { InvalidItemError, MachineryError } from "./types.js";
import type { AnyVerifier, PartItem, VerifyItem } from "./verifier.js";
import type { Services } from "./services.js";
import type { Registry } from "./registry.js";
import { check } from "./contract.js";
import { fieldOf } from "./schema.js";
import { cpuPressure, type CpuPressure } from "./pressure.js";

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
  /** Aborts outstanding items (client went away). */
  signal?: AbortSignal;
}

const now = () => performance.now();
/** Longest a batch scores before the event loop takes a turn, ms (see scoreBatch). */
const BATCH_SLICE_MS = 8;

/** The shared pools whose backlog admission checks: the sandbox's slots, the SQL engines' processes and connections. */
export type SharedPool = "sandbox" | "sql";
const POOLS: readonly SharedPool[] = ["sandbox", "sql"];
const USES = { sandbox: "usesSandbox", sql: "usesSql" } as const;

/** Waits for a promise with the item's deadline clock stopped (VerifyContext.unclocked). */
type Unclocked = <T>(wait: Promise<T>, counted?: (v: T) => number) => Promise<T>;

export class Scorer {
  private readonly observers: ((r: RewardResult) => void)[] = [];

  constructor(readonly opts: ScorerOptions) {}

  /** Calls `fn` once per finished item (metrics). */
  observe(fn: (r: RewardResult) => void): void {
    this.observers.push(fn);
  }

  /** Scores one raw (unvalidated) item. Never rejects. */
  async score(raw: unknown, o: ScoreOptions = {}): Promise<RewardResult> {
    const t0 = now();
    const result = await this.scoreChecked(raw, o, t0, 0);
    for (const fn of this.observers) fn(result);
    return result;
  }

  /** Scores raw items concurrently (up to batchConcurrency), results in input order. Never rejects. */
  async scoreBatch(items: unknown[], o: ScoreOptions = {}): Promise<RewardResult[]> {
    const limit = pLimit(this.opts.batchConcurrency);
    const { signal, release } = fanOut(o.signal);
    // Bounded slices: items that finish at once (exact, regex...) chain as microtasks, and a
    // batch or a job's chunk of thousands would hold the event loop from start to end; the loop
    // takes a turn whenever the batch has run BATCH_SLICE_MS since the last one.
    let since = now();
    try {
      const inner = { ...o, signal };
      return await Promise.all(items.map((it) => {
        // An item waiting here for its turn is work its pools will get: admission counts it.
        const pools = POOLS.filter((p) => this.uses(it, p));
        for (const p of pools) this.waitingItems[p]++;
        return limit(async () => {
          for (const p of pools) this.waitingItems[p]--;
          // Every item that waited resumes in the same turn: the first one back opens a new
          // slice, and the rest wait for another turn once that slice is spent.
          while (now() - since > BATCH_SLICE_MS) {
            const spent = since;
            await new Promise<void>((resolve) => setImmediate(resolve));
            if (since === spent) since = now();
          }
          return this.score(it, inner);
        });
      }));
    } finally {
      release();
    }
  }

  /** Items of accepted batches that use each pool and have not started (ASSAY_BATCH_CONCURRENCY). */
  private readonly waitingItems: Record<SharedPool, number> = { sandbox: 0, sql: 0 };

  /** Whether the item, or a part of it (combine, calibrated), uses the pool (runs programs in the sandbox, queries on the SQL engines). */
  private uses(item: unknown, pool: SharedPool, depth = 0): boolean {
    if (!item || typeof item !== "object") return false;
    const { verifier: name, reference } = item as { verifier?: unknown; reference?: unknown };
    const v = typeof name === "string" ? this.opts.registry.verifierOf(name) : undefined;
    if (!v) return false;
    if (v[USES[pool]]) return true;
    if (!v.partsOf || depth >= (this.opts.maxPartDepth ?? 3)) return false;
    return v.partsOf(reference).some((p) => this.uses(p, pool, depth + 1));
  }

  /** Shape, verifier and declarations; then the verifier under its deadline. */
  private async scoreChecked(raw: unknown, o: ScoreOptions, t0: number, depth: number, capMs = this.opts.maxDeadlineMs, parentUnclocked?: Unclocked): Promise<RewardResult> {
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
    const deadlineMs = Math.min(this.deadlineOf(resolved, raw_.deadline_ms ?? o.deadlineMs), capMs);
    // The result names the verifier as the item called it: `custom:<name>@<version>`, `preset:<name>`
    // say which one scored, where the namespace verifier's own name ("custom") would not.
    const called = resolved.item.verifier;
    try {
      const outcome = await this.runVerifier(resolved.verifier, resolved.item, deadlineMs, o.signal, depth, parentUnclocked);
      return fromOutcome(t0, id, called, outcome, this.opts.log);
    } catch (err) {
      return fromError(t0, id, called, err, this.opts.log);
    }
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

  /** Runs init (once) and verify, racing both against the deadline and the caller's signal. */
  private async runVerifier(verifier: AnyVerifier, item: VerifyItem, deadlineMs: number, outer: AbortSignal | undefined, depth: number, parentUnclocked?: Unclocked): Promise<Outcome> {
    const stop = new Stopper(deadlineMs, outer);
    const { log, services, registry } = this.opts;
    // A part's wait for a slot stops its parent's clock too (a preset with a code part).
    const unclocked: Unclocked = parentUnclocked
      ? (wait, counted) => parentUnclocked(stop.unclocked(wait, counted), counted)
      : (wait, counted) => stop.unclocked(wait, counted);
    const scorePart = (part: PartItem) => this.scorePart(part, stop.deadline, stop.signal(), depth + 1, unclocked);
    try {
      if (outer?.aborted) throw new MachineryError("request aborted before scoring");
      const init = registry.ensureInit(verifier, { log, services });
      // A cold start (the math workers loading, a pool filling) is the server's, not the item's:
      // its clock stops meanwhile.
      if (init) await Promise.race([stop.unclocked(init), stop.stopped]);
      return await Promise.race([
        verifier.verify(item, { get deadline() { return stop.deadline; }, get signal() { return stop.signal(); }, log, services, scorePart, unclocked }),
        stop.stopped,
      ]);
    } finally {
      stop.dispose();
    }
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
    if (!items.some((it) => this.uses(it, pool))) return 0;
    const { services } = this.opts;
    const load = pool === "sandbox" ? services.sandbox.current?.()?.load?.() : services.sql.current?.()?.load();
    if (!load) return 0;
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
  private async scorePart(part: PartItem, parentDeadline: number, signal: AbortSignal, depth: number, parentUnclocked: Unclocked): Promise<RewardResult> {
    const t0 = now();
    const max = this.opts.maxPartDepth ?? 3;
    const name = typeof part?.verifier === "string" ? part.verifier : "";
    if (depth > max) {
      return finish(t0, undefined, name, "invalid", null, `parts nest deeper than ${max} levels (ASSAY_COMPOSE_MAX_DEPTH); a preset or combination may include itself`, { field: "reference" });
    }
    const left = Math.max(1, parentDeadline - Date.now());
    return this.scoreChecked(part, { signal }, t0, depth, left, parentUnclocked);
  }
}

/**
 * An item's deadline and the caller's abort, as one rejecting promise. The AbortSignal handed to
 * the verifier is made only when the verifier reads it: creating one costs more than a whole
 * text verification, and most verifiers never look.
 */
class Stopper {
  readonly stopped: Promise<never>;
  private controller?: AbortController;
  private reason?: Error;
  private fail!: (e: Error) => void;
  private timer?: NodeJS.Timeout;
  /** Epoch ms the deadline falls at while the clock runs; while paused, `left` holds what remains. */
  private due: number;
  private left = 0;
  private waits = 0;
  /** Epoch ms up to which counted time has been charged (overlapping waits' own time counts once). */
  private chargedUntil = 0;
  private done = false;
  private readonly onOuterAbort = () => this.stop(new MachineryError("request aborted by the client"));

  constructor(private readonly deadlineMs: number, private readonly outer?: AbortSignal) {
    // Rejected only while a race is listening: the timer and listener go in dispose().
    this.stopped = new Promise<never>((_, reject) => (this.fail = reject));
    this.due = Date.now() + deadlineMs;
    this.arm();
    outer?.addEventListener("abort", this.onOuterAbort, { once: true });
  }

  private arm(): void {
    this.timer = setTimeout(() => this.stop(new MachineryError(`deadline of ${this.deadlineMs} ms exceeded`, { deadline_ms: this.deadlineMs })), Math.max(0, this.due - Date.now()));
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
      clearTimeout(this.timer);
      this.left = Math.max(0, this.due - Date.now());
    }
    const resume = (ownMs: number) => {
      if (ownMs > 0) {
        const end = Date.now();
        const charge = Math.max(0, end - Math.max(end - ownMs, this.chargedUntil));
        this.chargedUntil = Math.max(this.chargedUntil, end);
        this.left = Math.max(0, this.left - charge);
        // The item's own work alone outlasted its deadline: it ends now, before its result is used.
        if (charge > 0 && this.left === 0) this.stop(new MachineryError(`deadline of ${this.deadlineMs} ms exceeded`, { deadline_ms: this.deadlineMs }));
      }
      if (--this.waits === 0 && !this.reason && !this.done) {
        this.due = Date.now() + this.left;
        this.arm();
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
    if (this.reason) return;
    this.reason = err;
    this.controller?.abort(err);
    this.fail(err);
  }

  dispose(): void {
    this.done = true;
    clearTimeout(this.timer);
    this.outer?.removeEventListener("abort", this.onOuterAbort);
  }
}

/** One listener on the request's signal for a whole batch, fanned out to its items. */
function fanOut(outer?: AbortSignal): { signal?: AbortSignal; release: () => void } {
  if (!outer) return { release: () => {} };
  const ac = new AbortController();
  setMaxListeners(0, ac.signal);
  const onAbort = () => ac.abort(outer.reason);
  if (outer.aborted) onAbort();
  else outer.addEventListener("abort", onAbort, { once: true });
  return { signal: ac.signal, release: () => outer.removeEventListener("abort", onAbort) };
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

function validId(id: unknown): string | number | null | undefined {
  return typeof id === "string" || typeof id === "number" || id === null ? id : undefined;
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
