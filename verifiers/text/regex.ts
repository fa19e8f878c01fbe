/**
 * regex: the reference is a pattern the answer must match. Patterns run on RE2 semantics
 * (re2js): matching time is linear in the input, so a hostile completion cannot make a
 * pattern backtrack for ever. Compiled patterns are cached.
 */
import { RE2JS } from "re2js";
import { Type } from "@sinclair/typebox";
import { InvalidItemError, type Outcome } from "../../src/core/types.js";
import { defineVerifier } from "../../src/core/verifier.js";
import { afterThink } from "../../src/core/completion.js";
import { slices } from "../../src/core/slices.js";

/**
 * The longest answer matched (after strip_think and trim). RE2 is linear, but re2js is a JavaScript
 * port: a case-insensitive pattern scans about 3 MB/s on the 2-core test machine, so 1 MiB against
 * one pattern held the event loop 0.33 s and against 64 patterns far more. A longer answer earns 0
 * with a reason (as the overlap and iou verifiers' max_response_chars); the loop turns between
 * patterns.
 */
export const REGEX_MAX_CHARS = 65_536;

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

const Pattern = Type.String({ minLength: 1, maxLength: 4096 });

export const regex = defineVerifier({
  name: "regex",
  description: "The answer matches the reference pattern (RE2 syntax: linear time, no backreferences).",
  reference: Type.Union([Pattern, Type.Array(Pattern, { minItems: 1, maxItems: 64 })]),
  options: Type.Object(
    {
      mode: Type.Union([Type.Literal("search"), Type.Literal("full")], { default: "search", description: "search: matches somewhere; full: matches the whole answer" }),
      case_insensitive: Type.Boolean({ default: false }),
      strip_think: Type.Boolean({ default: true, description: "ignore everything up to the last </think>" }),
      trim: Type.Boolean({ default: true, description: "trim surrounding whitespace from the answer before a full match" }),
      max_response_chars: Type.Integer({
        default: 32_768, minimum: 1, maximum: REGEX_MAX_CHARS,
        description: "a longer answer (after strip_think and trim) is not matched: reward 0 (bounds the work per item)",
      }),
    },
    { additionalProperties: false },
  ),
  verify(item) {
    const o = item.options;
    let text = o.strip_think ? afterThink(item.response) : item.response;
    if (o.trim) text = text.trim();
    const patterns = Array.isArray(item.reference) ? item.reference : [item.reference];
    if (text.length > o.max_response_chars) {
      return { reward: 0, reason: `answer longer than max_response_chars (${text.length} > ${o.max_response_chars})`, details: { chars: text.length } };
    }
    // A short answer is matched at once (the Outcome returned as it is); a long one a pattern at a time, the event loop turning between.
    if (text.length > 4096) return matchSliced(text, patterns, o);
    for (const p of patterns) {
      const hit = matchOne(text, p, o);
      if (hit) return hit;
    }
    return none(patterns.length, o.mode);
  },
});

type MatchOptions = { case_insensitive: boolean; mode: "search" | "full" };

function none(n: number, mode: string): Outcome {
  return { reward: 0, reason: `matches none of ${n} pattern(s)`, details: { mode } };
}

async function matchSliced(text: string, patterns: string[], o: MatchOptions): Promise<Outcome> {
  const slice = slices(20);
  for (const p of patterns) {
    await slice.pause();
    const hit = matchOne(text, p, o);
    if (hit) return hit;
  }
  return none(patterns.length, o.mode);
}

function matchOne(text: string, p: string, o: MatchOptions): Outcome | null {
  let re: RE2JS;
  try {
    re = compile(p, o.case_insensitive);
  } catch (e) {
    // The reference is the dataset's fault, not the model's: the item is malformed.
    throw new InvalidItemError(`reference pattern ${JSON.stringify(p)} is not valid RE2 syntax: ${(e as Error).message}`);
  }
  const m = re.matcher(text);
  const hit = o.mode === "full" ? m.matches() : m.find();
  return hit ? { reward: 1, reason: `matches ${JSON.stringify(p)}`, details: { pattern: p, match: m.group(0)?.slice(0, 512) ?? null } } : null;
}
