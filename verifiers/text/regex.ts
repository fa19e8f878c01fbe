/**
 * regex: the reference is a pattern the answer must match. Patterns run on RE2 semantics
 * (re2js): matching time is linear in the input, so a hostile completion cannot make a
 * pattern backtrack for ever. Compiled patterns are cached.
 */
import { RE2JS } from "re2js";
import { InvalidItemError, type Verifier } from "../../src/core/types.js";
import { afterThink } from "../../src/core/completion.js";

export interface RegexOptions {
  /** "search": the pattern matches somewhere (default); "full": it matches the whole answer. */
  mode?: "search" | "full";
  case_insensitive?: boolean;
  /** Ignore everything up to the last </think> (default true). */
  strip_think?: boolean;
  /** Trim surrounding whitespace from the answer before a full match (default true). */
  trim?: boolean;
}

const cache = new Map<string, RE2JS>();
const CACHE_MAX = 1024;

function compile(pattern: string, ci: boolean): RE2JS {
  const key = (ci ? "i:" : "s:") + pattern;
  let re = cache.get(key);
  if (!re) {
    re = RE2JS.compile(pattern, ci ? RE2JS.CASE_INSENSITIVE | RE2JS.DOTALL : RE2JS.DOTALL);
    if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
    cache.set(key, re);
  }
  return re;
}

export const regex: Verifier<string | string[], RegexOptions> = {
  name: "regex",
  description: "The answer matches the reference pattern (RE2 syntax: linear time, no backreferences).",
  referenceSchema: {
    oneOf: [
      { type: "string", minLength: 1, maxLength: 4096 },
      { type: "array", items: { type: "string", minLength: 1, maxLength: 4096 }, minItems: 1, maxItems: 64 },
    ],
  },
  optionsSchema: {
    additionalProperties: false,
    properties: {
      mode: { enum: ["search", "full"], default: "search" },
      case_insensitive: { type: "boolean", default: false },
      strip_think: { type: "boolean", default: true },
      trim: { type: "boolean", default: true },
    },
  },
  async verify(item) {
    const o = item.options ?? {};
    let text = o.strip_think === false ? item.response : afterThink(item.response);
    if (o.trim !== false) text = text.trim();
    const patterns = Array.isArray(item.reference) ? item.reference : [item.reference as string];
    for (const p of patterns) {
      let re: RE2JS;
      try {
        re = compile(p, !!o.case_insensitive);
      } catch (e) {
        // The reference is the dataset's fault, not the model's: the item is malformed.
        throw new InvalidItemError(`reference pattern ${JSON.stringify(p)} is not valid RE2 syntax: ${(e as Error).message}`);
      }
      const m = re.matcher(text);
      const hit = o.mode === "full" ? m.matches() : m.find();
      if (hit) return { reward: 1, reason: `matches ${JSON.stringify(p)}`, details: { pattern: p, match: m.group(0)?.slice(0, 512) ?? null } };
    }
    return { reward: 0, reason: `matches none of ${patterns.length} pattern(s)`, details: { mode: o.mode ?? "search" } };
  },
};
