/** json: a structured answer checked against a JSON Schema and the expected value. See README.md. */
import { Type } from "@sinclair/typebox";
import { RE2JS } from "re2js";
import type { ValidateFunction } from "ajv";
import { defineVerifier } from "../../src/core/verifier.js";
import { InvalidItemError } from "../../src/core/types.js";
import { afterThink } from "../../src/core/completion.js";
import { describeErrors, newAjv } from "../../src/core/schema.js";
import { extractJson } from "./parse.js";
import { Comparer, CompareBudgetExceeded, EXACT } from "./compare.js";

/** ECMAScript's `\s` (JSON Schema patterns are ECMA-262 regexes), in RE2's syntax. */
const ECMA_SPACE = "\\t\\n\\x{000b}\\f\\r \\x{00a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}";

/**
 * A JSON Schema pattern (ECMA-262) with the classes whose meaning differs in RE2 spelled out:
 * `\s` and `\S` (RE2's are ASCII: `^\S+$` passed "a\u00a0b") and `.` (RE2's excludes only
 * `\n`: `^.+$` passed "a\rb" and "a\u2028b"). `\S` inside a class is left as RE2 reads it. One
 * pass over the pattern.
 */
export function ecmaClasses(p: string): string {
  let out = "";
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === "\\" && i + 1 < p.length) {
      const n = p[++i];
      if (n === "s") out += inClass ? ECMA_SPACE : `[${ECMA_SPACE}]`;
      else if (n === "S" && !inClass) out += `[^${ECMA_SPACE}]`;
      else out += c + n;
    } else if (inClass) {
      if (c === "]") inClass = false;
      out += c;
    } else if (c === "[") {
      inClass = true;
      out += c;
      if (p[i + 1] === "^") out += p[++i];
    } else out += c === "." ? "[^\\n\\r\\x{2028}\\x{2029}]" : c;
  }
  return out;
}

/**
 * Schema `pattern`s run on model text, so they run on RE2 (linear time) instead of JavaScript's
 * backtracking RegExp: a pattern like ^(a+)+$ cannot stall the server.
 */
const re2Engine = Object.assign(
  (pattern: string) => {
    const re = RE2JS.compile(ecmaClasses(pattern));
    // Ajv caches compiled patterns under toString(): each must be distinct.
    return { test: (s: string) => re.matcher(s).find(), toString: () => `re2:${pattern}` };
  },
  { code: 'require("re2js")' },
);
const ajv = newAjv({ regExp: re2Engine });
// Ajv checks `uniqueItems` on objects and arrays by comparing every pair (deep-equal): 60,000
// small arrays took 17 s on the event loop. The same keyword, in one pass: each item's exact key
// (keys sorted; JSON's equality, so 1 and 1.0 agree) in a Set.
ajv.removeKeyword("uniqueItems");
ajv.addKeyword({ keyword: "uniqueItems", type: "array", schemaType: "boolean", errors: false, validate: (unique: boolean, data: unknown[]) => !unique || allDistinct(data) });

/** No two items of `xs` are equal as JSON values: each item's exact key (the comparison's, keys sorted) in a Set. Linear in their size. */
export function allDistinct(xs: unknown[]): boolean {
  const exact = new Comparer(EXACT);
  const seen = new Set<string>();
  for (const x of xs) {
    const k = exact.key(x);
    if (k === null) continue; // not a JSON value (JSON.parse makes none): equal to nothing
    if (seen.has(k)) return false;
    seen.add(k);
  }
  return true;
}
const validators = new Map<string, ValidateFunction>();
const VALIDATORS_MAX = 256;

function validatorFor(schema: object): ValidateFunction {
  const key = JSON.stringify(schema);
  let v = validators.get(key);
  if (!v) {
    try {
      v = ajv.compile(schema);
    } catch (e) {
      throw new InvalidItemError(`reference schema does not compile: ${(e as Error).message}`);
    }
    if (validators.size >= VALIDATORS_MAX) validators.delete(validators.keys().next().value!);
    validators.set(key, v);
  }
  return v;
}

export const json = defineVerifier({
  name: "json",
  description: "Structured answer: the completion's JSON checked by an optional JSON Schema and compared field by field with the expected value.",
  reference: Type.Object(
    {
      expected: Type.Optional(Type.Unknown({ description: "the expected JSON value" })),
      schema: Type.Optional(Type.Object({}, { additionalProperties: true, description: "a JSON Schema (draft 2020-12) the answer must satisfy" })),
    },
    { additionalProperties: false, minProperties: 1 },
  ),
  options: Type.Object(
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
  ),
  verify(item) {
    const o = item.options;
    const ref = item.reference;
    const validate = ref.schema ? validatorFor(ref.schema) : null;
    const text = o.strip_think ? afterThink(item.response) : item.response;
    if (text.length > o.max_chars) return { reward: 0, reason: `completion longer than max_chars (${text.length})`, details: {} };
    const parsed = extractJson(text, { maxChars: o.max_chars, maxDepth: o.max_depth });
    if (!parsed.ok) return { reward: 0, reason: `no JSON answer: ${parsed.reason}`, details: { parsed: false } };
    const details: Record<string, unknown> = { parsed: true };
    if (validate) {
      const ok = validate(parsed.value);
      details.schema_valid = ok;
      if (!ok) return { reward: 0, reason: `answer violates the schema: ${describeErrors(validate.errors)}`, details };
    }
    if (!("expected" in ref)) return { reward: 1, reason: "answer satisfies the schema", details };
    let credit;
    try {
      credit = new Comparer(o).compare(ref.expected as never, parsed.value);
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
  },
});

export default [json];
