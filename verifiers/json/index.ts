/** json: a structured answer checked against a JSON Schema and the expected value. See README.md. */
import { Type, type Static } from "@sinclair/typebox";
import type { ValidateFunction } from "ajv";
import { defineVerifier, type VerifyItem } from "../../src/core/verifier.js";
import { InvalidItemError, type Outcome } from "../../src/core/types.js";
import { afterThink } from "../../src/core/completion.js";
import { jsonDepth } from "../../src/core/json-depth.js";
import { describeErrors } from "../../src/core/schema.js";
import { extractJson, extractJsonValue, type Parsed } from "./parse.js";
import { Comparer, CompareBudgetExceeded } from "./compare.js";
import { mayRecurse, newJsonAjv } from "./ajv.js";
import { ValidatorThread, type Validated } from "./validate-pool.js";

export { ecmaClasses, allDistinct } from "./ajv.js";

const ajv = newJsonAjv();

/**
 * Longest a validation against a schema that may recurse (`mayRecurse`) may run, ms, in the
 * validation thread; past it the thread is terminated and the answer scores 0 with a reason.
 * Such a validation of a 32 KB answer that is not built to be slow takes a few ms; the margin is
 * for a loaded machine (wall time), where a valid answer must not be scored 0 for our load.
 */
export const VALIDATE_BUDGET_MS = 500;
let thread: ValidatorThread | null = null;
/** The validation thread (started on the first item that needs it). */
export function validatorThread(): ValidatorThread {
  return (thread ??= new ValidatorThread());
}

/** A compiled schema: its validator, its JSON text (the cache key), whether it may recurse, whether it admits a bare value. */
interface Compiled {
  validate: ValidateFunction;
  key: string;
  recursive: boolean;
  primitives: boolean;
}
const validators = new Map<string, Compiled>();
const VALIDATORS_MAX = 256;

function validatorFor(schema: object): Compiled {
  const key = JSON.stringify(schema);
  let v = validators.get(key);
  if (!v) {
    let validate;
    try {
      validate = ajv.compile(schema);
    } catch (e) {
      throw new InvalidItemError(`reference schema does not compile: ${(e as Error).message}`);
    }
    v = { validate, key, recursive: mayRecurse(schema), primitives: admitsPrimitive(schema) };
    if (validators.size >= VALIDATORS_MAX) validators.delete(validators.keys().next().value!);
    validators.set(key, v);
  }
  return v;
}

const PRIMITIVE_TYPES = new Set(["string", "number", "integer", "boolean", "null"]);
const isPrimitive = (v: unknown) => v === null || typeof v !== "object";

/**
 * Whether a schema says plainly that the answer may be a string, number, boolean or null: its
 * `type` names one, or its `const` or an `enum` value is one, at the top or in a top-level
 * `anyOf`/`oneOf` branch. (A schema with no `type` at all admits any value, but one written as
 * `{"required": [...]}` means an object: a bare `42` is not read for it.)
 */
function admitsPrimitive(schema: unknown, top = true): boolean {
  if (!schema || typeof schema !== "object") return false;
  const s = schema as Record<string, unknown>;
  const types = Array.isArray(s.type) ? s.type : [s.type];
  if (types.some((t) => typeof t === "string" && PRIMITIVE_TYPES.has(t))) return true;
  if ("const" in s && isPrimitive(s.const)) return true;
  if (Array.isArray(s.enum) && s.enum.some(isPrimitive)) return true;
  if (!top) return false;
  return [s.anyOf, s.oneOf].some((bs) => Array.isArray(bs) && bs.some((b) => admitsPrimitive(b, false)));
}

const REFERENCE = Type.Object(
  {
    expected: Type.Optional(Type.Unknown({ description: "the expected JSON value" })),
    schema: Type.Optional(Type.Object({}, { additionalProperties: true, description: "a JSON Schema (draft 2020-12) the answer must satisfy" })),
  },
  { additionalProperties: false, minProperties: 1 },
);
const OPTIONS = Type.Object(
  {
    partial_credit: Type.Boolean({ default: true, description: "reward = matched leaves / total; false: 1 only when everything matches" }),
    unordered_arrays: Type.Boolean({ default: false, description: "compare arrays as multisets (best pairing of elements)" }),
    abs_tol: Type.Number({ default: 0, minimum: 0, description: "numbers match within this absolute difference" }),
    rel_tol: Type.Number({ default: 0, minimum: 0, description: "... or within this fraction of the expected number" }),
    case_sensitive: Type.Boolean({ default: true }),
    trim_strings: Type.Boolean({ default: false }),
    extra: Type.Union([Type.Literal("ignore"), Type.Literal("penalize")], { default: "ignore", description: "object keys the expected value lacks (array elements beyond the expected length always count against the answer)" }),
    strip_think: Type.Boolean({ default: true }),
    max_chars: Type.Integer({ default: 32_768, minimum: 1, maximum: 1_048_576, description: "a longer completion scores 0" }),
    max_depth: Type.Integer({ default: 64, minimum: 1, maximum: 256, description: "deeper JSON scores 0" }),
    max_steps: Type.Integer({ default: 200_000, minimum: 1, maximum: 10_000_000, description: "comparison work budget; an answer that needs more scores 0, an expected value that needs more even against itself is an invalid item" }),
  },
  { additionalProperties: false },
);
type Item = VerifyItem<Static<typeof REFERENCE>, Static<typeof OPTIONS>>;

export const json = defineVerifier({
  name: "json",
  description: "Structured answer: the completion's JSON checked by an optional JSON Schema and compared field by field with the expected value.",
  reference: REFERENCE,
  options: OPTIONS,
  async close() {
    const t = thread;
    thread = null;
    await t?.close();
  },
  verify(item, ctx): Outcome | Promise<Outcome> {
    const o = item.options;
    const ref = item.reference;
    const compiled = ref.schema ? validatorFor(ref.schema) : null;
    const text = o.strip_think ? afterThink(item.response) : item.response;
    if (text.length > o.max_chars) return { reward: 0, reason: `completion longer than max_chars (${text.length})`, details: {} };
    const limits = { maxChars: o.max_chars, maxDepth: o.max_depth };
    // A bare string/number/boolean/null is read only when it can be the answer (see README).
    const primitives = "expected" in ref ? isPrimitive(ref.expected) : (compiled?.primitives ?? false);
    const parsed = primitives ? extractJsonValue(text, limits) : extractJson(text, limits);
    if (!parsed.ok) return { reward: 0, reason: `no JSON answer: ${parsed.reason}`, details: { parsed: false } };
    const details: Record<string, unknown> = { parsed: true };
    if (!compiled) return compare(item, details, parsed.value);
    if (!compiled.recursive) {
      const ok = compiled.validate(parsed.value);
      return validated(item, details, parsed.value, ok ? { kind: "valid" } : { kind: "invalid", reason: describeErrors(compiled.validate.errors) });
    }
    // A schema that may recurse can cost 2^depth to validate (a recursive oneOf tries every
    // branch at every level), in Ajv code that cannot be interrupted: it runs in a thread, with
    // a budget. The wait behind other items there is not this item's time.
    const job = validatorThread().validate(compiled.key, parsed.value, VALIDATE_BUDGET_MS, ctx.signal);
    const done = ctx.unclocked ? ctx.unclocked(job, (v: Validated) => v.ownMs) : job;
    return done.then((v) => validated(item, details, parsed.value, v.verdict, text, parsed));
  },
});

/** The outcome once the schema has spoken. */
function validated(item: Item, details: Record<string, unknown>, value: unknown, verdict: Validated["verdict"], text?: string, parsed?: Parsed): Outcome {
  details.schema_valid = verdict.kind === "valid";
  if (verdict.kind === "invalid") return { reward: 0, reason: `answer violates the schema: ${verdict.reason}`, details };
  if (verdict.kind === "slow" || verdict.kind === "memory") {
    const depth = text && parsed?.ok ? jsonDepth(text.slice(parsed.start, parsed.end), item.options.max_depth) : 0;
    const what = verdict.kind === "slow" ? `took over ${verdict.budgetMs} ms` : "ran out of memory";
    details.schema_valid = false;
    return { reward: 0, reason: `validating this answer against the schema ${what} (it nests ${depth} levels under a recursive schema); not validated, scored 0`, details };
  }
  return compare(item, details, value);
}

/** Reward 1 for a valid answer to a schema-only reference, else the comparison with the expected value. */
function compare(item: Item, details: Record<string, unknown>, value: unknown): Outcome {
  const o = item.options;
  const ref = item.reference;
  if (!("expected" in ref)) return { reward: 1, reason: "answer satisfies the schema", details };
  let credit;
  try {
    credit = new Comparer(o).compare(ref.expected as never, value);
  } catch (e) {
    if (!(e instanceof CompareBudgetExceeded)) throw e;
    // Whose fault: if even the exact answer (the expected value itself) cannot be compared
    // within max_steps, the item is too large for its options; otherwise the answer is.
    try {
      new Comparer(o).compare(ref.expected as never, ref.expected);
    } catch (self) {
      if (!(self instanceof CompareBudgetExceeded)) throw self;
      throw new InvalidItemError(`the expected value is too large to compare within max_steps (${o.max_steps}), even with an exact answer: ${self.message}`);
    }
    return { reward: 0, reason: `answer too costly to compare with the expected value: ${e.message}`, details };
  }
  const fraction = credit.total ? credit.matched / credit.total : 0;
  const reward = o.partial_credit ? fraction : fraction === 1 ? 1 : 0;
  return {
    reward,
    reason: `${credit.matched} of ${credit.total} field(s) match${o.partial_credit ? "" : " (all-or-nothing)"}`,
    details: { ...details, matched: credit.matched, total: credit.total },
  };
}

export default [json];
