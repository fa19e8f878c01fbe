/**
 * math: does the completion's final answer equal the reference? Extraction, normalisation,
 * parsing (compute-engine for LaTeX, mathjs for ASCII) and comparison by the reference's type
 * run in a pool of worker threads, items sent in chunks; an item past its deadline has its worker
 * killed and ends as status error, reward null. The deadline counts the item's own time in its
 * worker: its wait for a free worker, or behind other items of its chunk, is not counted
 * (ctx.unclocked).
 */
import { Type } from "@sinclair/typebox";
import { InvalidItemError, MachineryError, type Outcome } from "../../src/core/types.js";
import { defineVerifier, type VerifierInitContext, type VerifyContext, type VerifyItem } from "../../src/core/verifier.js";
import type { Services } from "../../src/core/services.js";
import { MathOptionsSchema, type MathOptions } from "./options.js";
import { DeadlineExceeded, MathPool, READY_TIMEOUT_MS } from "./pool.js";
import type { TaskResult } from "./worker.js";
import { quickGrade, type Graded } from "./answer.js";
import { appeal, appealable } from "./appeal.js";

let pool: MathPool | null = null;
let starting: Promise<MathPool> | null = null;

async function getPool(services: Services): Promise<MathPool> {
  if (pool) return pool;
  starting ??= Promise.resolve().then(() => (pool = new MathPool(services.workers, { testHooks: services.config.math.testHooks, warmupMs: services.config.math.warmupMs })));
  return starting;
}

/** Thread ids of the running pool (tests: a replaced worker gets a new id). */
export function mathPoolStats() {
  return pool?.stats ?? null;
}

const Answer = Type.String({ minLength: 1, maxLength: 65_536 });

export const math = defineVerifier({
  name: "math",
  description: "The final answer (boxed, 'answer is', last formula, last number) equals the reference mathematically.",
  reference: Type.Union([Answer, Type.Array(Answer, { minItems: 1, maxItems: 64 })]),
  options: MathOptionsSchema,
  async init(ctx: VerifierInitContext) {
    const p = await getPool(ctx.services);
    // Generous: on a loaded machine a cold thread can take tens of seconds, and the server's
    // /readyz waits on this (a timeout here would read as "failed" rather than "still warming").
    await p.ready(READY_TIMEOUT_MS);
    ctx.log.info({ threads: p.threads }, "math worker pool started");
  },
  async close() {
    const p = pool;
    pool = null;
    starting = null;
    await p?.close();
  },
  async verify(item, ctx) {
    // A short completion with a plain-number answer against plain-number references is
    // graded here, in ~20 µs, bounded by its length cap; everything else goes to a worker.
    const quick = quickGrade(item.response, item.reference, item.options);
    if (quick) return maybeAppeal(item, quick, ctx);
    const p = pool ?? (await getPool(ctx.services));
    // The item's clock stops while it waits (for a worker, behind other items of its chunk, for a
    // replacement worker still loading): the wait is the pool's, not the item's. Its budget is
    // what is left of the deadline now, held by the pool's watchdog to the item's own time in its
    // worker, which is charged to the clock when the result comes back.
    const left = Math.max(1, ctx.deadline - Date.now());
    const job = p.submit({ response: item.response, reference: item.reference, options: item.options, prompt: item.prompt }, left);
    // The worker is killed only at the item's budget, whether or not anyone still waits for it.
    // A request that goes away earlier leaves the item to be graded (it takes milliseconds, and
    // one that went away while queued keeps the budget it had then): killing its worker would
    // cost a ~1 s restart per thread, which a disconnecting client could repeat at will. Nor is
    // the wait raced against ctx.signal here: the scorer already answers an item whose deadline
    // passes or whose caller goes away without waiting for verify (runVerifier's Stopper), and
    // reading ctx.signal makes an AbortController and a listener per item, ~7% of the main
    // thread's time under a math batch (issue 38).
    job.done.catch(() => {}); // also settled below, or abandoned when the scorer stopped waiting
    const done = ctx.unclocked ? ctx.unclocked(job.done, (d) => d.ownMs) : job.done;
    let r: TaskResult;
    try {
      r = (await done).result;
    } catch (err) {
      if (err instanceof DeadlineExceeded) throw new MachineryError(`deadline of ${err.budgetMs} ms exceeded; math worker terminated`, { deadline_ms: err.budgetMs, worker: "terminated" });
      throw new MachineryError(`math worker failed: ${(err as Error).message}`);
    }
    if ("invalid" in r) throw new InvalidItemError(r.invalid, r.field);
    return maybeAppeal(item, r, ctx);
  },
});

/** The rules' verdict, or the judge's on appeal when the item (or ASSAY_MATH_APPEAL) asks and the rejection qualifies. */
function maybeAppeal(item: VerifyItem<string | string[], MathOptions>, r: Graded, ctx: VerifyContext): Promise<Outcome> | Outcome {
  const on = item.options.appeal ?? ctx.services.config.math.appeal;
  if (!on || !appealable(r)) return r as Outcome;
  return appeal(item, r as Outcome, ctx);
}

export default math;
