/**
 * math: does the completion's final answer equal the reference? Extraction, normalisation,
 * parsing (compute-engine for LaTeX, mathjs for ASCII) and comparison by the reference's type
 * run in a piscina worker pool; an item past its deadline has its worker killed and ends as
 * status error, reward null.
 */
import { MachineryError, type Verifier, type VerifierInitContext } from "../../src/core/types.js";
import type { MathOptions } from "./grade.js";
import { MathPool, workersFromEnv } from "./pool.js";

let pool: MathPool | null = null;
let starting: Promise<MathPool> | null = null;

async function getPool(threads?: number): Promise<MathPool> {
  if (pool) return pool;
  starting ??= Promise.resolve().then(() => (pool = new MathPool(threads ?? workersFromEnv())));
  return starting;
}

const SOURCES = ["boxed", "phrase", "latex", "plain"];

export const math: Verifier<string | string[], MathOptions> = {
  name: "math",
  description: "The final answer (boxed, 'answer is', last formula, last number) equals the reference mathematically.",
  referenceSchema: {
    oneOf: [
      { type: "string", minLength: 1, maxLength: 65_536 },
      { type: "array", items: { type: "string", minLength: 1, maxLength: 65_536 }, minItems: 1, maxItems: 64 },
    ],
  },
  optionsSchema: {
    additionalProperties: false,
    properties: {
      precision: { type: "integer", minimum: 0, maximum: 15, description: "decimal places for decimal answers; unset compares exactly" },
      extract: { type: "array", items: { enum: SOURCES }, minItems: 1, uniqueItems: true, description: "where to look for the answer, in order" },
      strip_think: { type: "boolean", default: true },
      allow_set_relation: { type: "boolean", default: false, description: "a reference interval also accepts an inequality" },
      seed: { type: "integer", minimum: 0, maximum: 4294967295, description: "seed of the numeric test's random points" },
    },
  },
  async init(ctx: VerifierInitContext) {
    const p = await getPool();
    ctx.log.info({ threads: p.threads }, "math worker pool started");
  },
  async close() {
    const p = pool;
    pool = null;
    starting = null;
    await p?.close();
  },
  async verify(item, ctx) {
    if (!item.response.trim()) return { reward: 0, reason: "no answer found", details: { extracted: null } };
    const p = await getPool();
    const signal = ctx.signal;
    try {
      return await p.run({ response: item.response, reference: item.reference ?? "", options: item.options ?? {} }, signal);
    } catch (err) {
      if (signal.aborted) {
        const why = signal.reason instanceof Error ? signal.reason.message : "aborted";
        throw new MachineryError(`math worker stopped: ${why}`, { worker: "terminated" });
      }
      throw new MachineryError(`math worker failed: ${(err as Error).message}`);
    }
  },
};

export default math;
