/**
 * Scores items: shape check (from openapi.yaml), verifier lookup and schema checks (registry),
 * then `verify` under a hard deadline. Every path ends in a RewardResult; nothing throws.
 */
import type { Logger } from "pino";
import pLimit from "p-limit";
import { setMaxListeners } from "node:events";
import type { RewardItem, RewardResult, Services, Status } from "./types.js";
import { InvalidItemError, MachineryError } from "./types.js";
import type { Registry } from "./registry.js";
import { check } from "./contract.js";
import { fieldOf } from "./schema.js";

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
  /** Called once per finished item (metrics). */
  observe?: (result: RewardResult) => void;
}

export interface ScoreOptions {
  /** Deadline for items that do not set their own, ms. */
  deadlineMs?: number;
  /** Aborts outstanding items (client went away). */
  signal?: AbortSignal;
}

const now = () => performance.now();

export class Scorer {
  constructor(readonly opts: ScorerOptions) {}

  /** Scores one raw (unvalidated) item. Never rejects. */
  async score(raw: unknown, o: ScoreOptions = {}): Promise<RewardResult> {
    const t0 = now();
    const result = await this.scoreInner(raw, o, t0);
    this.opts.observe?.(result);
    return result;
  }

  /** Scores raw items concurrently (up to batchConcurrency), results in input order. Never rejects. */
  async scoreBatch(items: unknown[], o: ScoreOptions = {}): Promise<RewardResult[]> {
    const limit = pLimit(this.opts.batchConcurrency);
    // One listener on the request's signal for the whole batch, fanned out to the items.
    let inner: ScoreOptions = o;
    let onAbort: (() => void) | undefined;
    if (o.signal) {
      const ac = new AbortController();
      setMaxListeners(0, ac.signal);
      onAbort = () => ac.abort(o.signal!.reason);
      if (o.signal.aborted) onAbort();
      else o.signal.addEventListener("abort", onAbort, { once: true });
      inner = { ...o, signal: ac.signal };
    }
    try {
      return await Promise.all(items.map((it) => limit(() => this.score(it, inner))));
    } finally {
      if (onAbort) o.signal!.removeEventListener("abort", onAbort);
    }
  }

  private async scoreInner(raw: unknown, o: ScoreOptions, t0: number): Promise<RewardResult> {
    const shapeError = check("RewardItem", raw);
    const asObj = (raw && typeof raw === "object" ? raw : {}) as Partial<RewardItem>;
    const id = validId(asObj.id);
    const verifierName = typeof asObj.verifier === "string" ? asObj.verifier : "";
    if (shapeError) return finish(t0, id, verifierName, "invalid", null, `item ${shapeError}`, { field: fieldOf(shapeError) });
    const item = raw as RewardItem;

    const resolved = this.opts.registry.resolve(item);
    if ("invalid" in resolved) return finish(t0, id, verifierName, "invalid", null, resolved.invalid, { field: resolved.field });
    const { verifier } = resolved;

    const deadlineMs = Math.min(item.deadline_ms ?? o.deadlineMs ?? this.opts.deadlineMs, this.opts.maxDeadlineMs);
    // The item's abort signal is made only when a verifier reads ctx.signal: creating an
    // AbortSignal costs more than a whole text verification, and most verifiers never look.
    let controller: AbortController | undefined;
    let stopped: Error | undefined;
    let fail!: (e: Error) => void;
    const guard = new Promise<never>((_, reject) => (fail = reject));
    const stop = (err: Error) => {
      stopped = err;
      controller?.abort(err);
      fail(err);
    };
    const onOuterAbort = () => stop(new MachineryError("request aborted by the client"));
    const timer = setTimeout(
      () => stop(new MachineryError(`deadline of ${deadlineMs} ms exceeded`, { deadline_ms: deadlineMs })),
      deadlineMs,
    );
    o.signal?.addEventListener("abort", onOuterAbort, { once: true });
    const log = this.opts.log;
    try {
      if (o.signal?.aborted) throw new MachineryError("request aborted before scoring");
      const init = this.opts.registry.ensureInit(verifier, { log, services: this.opts.services });
      if (init) await Promise.race([init, guard]);
      const outcome = await Promise.race([
        verifier.verify(item, {
          deadline: Date.now() + deadlineMs,
          get signal() {
            if (!controller) {
              controller = new AbortController();
              if (stopped) controller.abort(stopped);
            }
            return controller.signal;
          },
          log,
          services: this.opts.services,
        }),
        guard,
      ]);
      if (outcome.reward === null) {
        return finish(t0, id, verifier.name, "error", null, outcome.reason, outcome.details);
      }
      if (typeof outcome.reward !== "number" || !Number.isFinite(outcome.reward)) {
        log.error({ verifier: verifier.name, reward: outcome.reward }, "verifier returned a non-finite reward");
        return finish(t0, id, verifier.name, "error", null, `verifier ${verifier.name} returned a non-finite reward`);
      }
      return finish(t0, id, verifier.name, "ok", outcome.reward, outcome.reason, outcome.details);
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      if (e instanceof InvalidItemError) return finish(t0, id, verifier.name, "invalid", null, e.message, { field: e.field });
      if (!(e instanceof MachineryError)) log.error({ err: e, verifier: verifier.name }, "verifier threw");
      const details = e instanceof MachineryError ? e.details : {};
      const reason = e instanceof MachineryError ? e.message : `internal error in verifier ${verifier.name}: ${e.message}`;
      return finish(t0, id, verifier.name, "error", null, reason, details);
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener("abort", onOuterAbort);
    }
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
