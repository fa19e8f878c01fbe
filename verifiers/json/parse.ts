/**
 * Reading JSON out of model text without letting the text stall the server.
 *
 * Everything here is a single left-to-right scan (no regex over model text): the size is capped
 * before any work, and the nesting depth is measured before `JSON.parse`, so the recursive
 * comparisons that follow never meet a structure deeper than `maxDepth`.
 */
import { parse as parseLossless, isInteger, isSafeNumber } from "lossless-json";
import { jsonDepth } from "../../src/core/json-depth.js";
import { pairedFences } from "../../src/core/completion.js";
import { hasLongDigitRun } from "../../src/core/digit-run.js";

export interface JsonLimits {
  /** Longest text (UTF-16 units) that is parsed at all. */
  maxChars: number;
  /** Deepest nesting of arrays/objects accepted. */
  maxDepth: number;
  /**
   * Parse option: integers beyond 2^53 become BigInt, exact, instead of rounded doubles. Only
   * for a caller whose other side is exact too (a reference it parses itself, not one that came
   * as a JavaScript number).
   */
  exactIntegers?: boolean;
}

export const DEFAULT_LIMITS: JsonLimits = { maxChars: 1_000_000, maxDepth: 64 };

export type Parsed = { ok: true; value: unknown; start: number; end: number } | { ok: false; reason: string };

const OPEN_BRACE = 123, CLOSE_BRACE = 125, OPEN_BRACKET = 91, CLOSE_BRACKET = 93, QUOTE = 34, BACKSLASH = 92;

/**
 * Longest integer literal read as a BigInt (BigInt's decimal parsing is superlinear); a longer
 * one is read as a double (Infinity past 1e308), as JSON.parse reads it.
 */
const MAX_BIGINT_DIGITS = 400;

const exactNumber = (s: string): number | bigint =>
  s.length <= MAX_BIGINT_DIGITS + 1 && isInteger(s) && !isSafeNumber(s) ? BigInt(s) : Number(s);

/**
 * `JSON.parse`, or with `exactIntegers` and a long digit run in the text, lossless-json (linear,
 * a later duplicate key wins as with JSON.parse) with integers beyond 2^53 as BigInt.
 */
function parseValue(text: string, limits: JsonLimits): unknown {
  if (!limits.exactIntegers || !hasLongDigitRun(text)) return JSON.parse(text);
  return parseLossless(text, null, { parseNumber: exactNumber, onDuplicateKey: ({ newValue }) => newValue });
}

/**
 * From `start` (a `{` or `[`), the index just past the bracket that closes it, skipping strings;
 * -1 when it never closes or nests deeper than `maxDepth` (reported through `tooDeep`).
 */
export function matchingClose(text: string, start: number, maxDepth: number, tooDeep: { hit: boolean }): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) { tooDeep.hit = true; return -1; }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (--depth === 0) return i + 1;
    }
  }
  return -1;
}

/** `JSON.parse` of a whole text, after the size and depth checks. */
export function parseJsonText(text: string, limits: JsonLimits = DEFAULT_LIMITS): Parsed {
  if (text.length > limits.maxChars) return { ok: false, reason: `JSON text longer than ${limits.maxChars} characters` };
  if (jsonDepth(text, limits.maxDepth) > limits.maxDepth) return { ok: false, reason: `JSON nested deeper than ${limits.maxDepth}` };
  try {
    return { ok: true, value: parseValue(text, limits), start: 0, end: text.length };
  } catch (e) {
    return { ok: false, reason: `not valid JSON: ${(e as Error).message.slice(0, 120)}` };
  }
}

/**
 * The bodies of the ```json (or bare ```) fences whose body starts like a JSON object or array
 * (with `primitives`, like any JSON value), in text order.
 */
export function fencedJson(text: string, primitives = false): { body: string; start: number }[] {
  const found: { body: string; start: number }[] = [];
  for (const f of pairedFences(text)) {
    if (f.lang !== "" && f.lang !== "json" && f.lang !== "jsonc" && f.lang !== "json5") continue;
    const body = f.body.trim();
    if (body.startsWith("{") || body.startsWith("[") || (primitives && startsLikePrimitive(body))) found.push({ body, start: f.bodyStart + f.body.indexOf(body[0]) });
  }
  return found;
}

/** Whether `s` begins the way a JSON string, number, boolean or null does. */
function startsLikePrimitive(s: string): boolean {
  const c = s.charCodeAt(0);
  return c === QUOTE || c === 45 /* - */ || (c >= 48 && c <= 57) || c === 116 /* t */ || c === 102 /* f */ || c === 110 /* n */;
}

/**
 * Like `extractJson`, but a string, number, boolean or null can be the answer too, for callers
 * whose expected answer is one: the last of the last `maxCandidates` ```json (or bare ```)
 * fences whose whole body is one JSON value (any type), else the whole text when it is exactly
 * one JSON value (surrounding whitespace aside), else `extractJson`'s search for an object or
 * array. Free prose is never searched for a bare value ("I think 42, or maybe 7" gives none): a
 * number in prose is not a structured answer. Linear: each fence body and the whole text are
 * parsed at most once, after the same size and depth checks.
 */
export function extractJsonValue(text: string, limits: JsonLimits = DEFAULT_LIMITS, maxCandidates = 8): Parsed {
  if (text.length > limits.maxChars) return { ok: false, reason: `completion longer than ${limits.maxChars} characters` };
  const fenced = fencedJson(text, true);
  for (let k = fenced.length - 1; k >= 0 && k >= fenced.length - maxCandidates; k--) {
    const f = fenced[k];
    const p = parseJsonText(f.body, limits);
    if (p.ok) return { ...p, start: f.start, end: f.start + f.body.length };
  }
  const whole = text.trim();
  if (startsLikePrimitive(whole)) {
    const p = parseJsonText(whole, limits);
    if (p.ok) {
      const start = text.indexOf(whole[0]);
      return { ...p, start, end: start + whole.length };
    }
  }
  const p = extractJson(text, limits, maxCandidates);
  if (!p.ok && p.reason === NO_CONTAINER) return { ok: false, reason: "no JSON value in the completion (a bare string, number, boolean or null counts only as the whole completion or a ```json fence's whole body)" };
  return p;
}

const NO_CONTAINER = "no JSON object or array in the completion";

/**
 * The JSON value a completion gives: the last fenced ```json block whose body parses (of the
 * last `maxCandidates` such fences, tried from the last back), else the first `{`/`[` value in
 * the text that parses (text before and after it is ignored); the search goes on after a value
 * that closes but does not parse, never inside it.
 *
 * Cost: fences do not overlap, so parsing some of them once each is linear (the cap bounds the
 * constant: a failed JSON.parse costs microseconds). Outside fences, each opening's scan for its
 * closing bracket (`matchingClose`) is linear and may run to the end of the text when the
 * bracket never closes (`[0, 1)` in prose): at most `maxCandidates` of those, so hostile text
 * costs at most O(n·maxCandidates) in all; at most FAILED_SPANS spans that close but fail.
 */
/** Bracketed spans of prose that close but do not parse, passed over before the search gives up ("see [1], [2]" before the answer). */
const FAILED_SPANS = 64;

export function extractJson(text: string, limits: JsonLimits = DEFAULT_LIMITS, maxCandidates = 8): Parsed {
  if (text.length > limits.maxChars) return { ok: false, reason: `completion longer than ${limits.maxChars} characters` };
  const fenced = fencedJson(text);
  for (let k = fenced.length - 1; k >= 0 && k >= fenced.length - maxCandidates; k--) {
    const f = fenced[k];
    const p = parseJsonText(f.body, limits);
    if (p.ok) return { ...p, start: f.start, end: f.start + f.body.length };
  }
  let lastReason = NO_CONTAINER;
  // Openings that never close each cost a scan to the end: at most maxCandidates of them. Spans
  // that close but do not parse do not overlap (the search resumes after each), so together
  // they cost one pass; a failed parse throws, which costs microseconds: at most
  // FAILED_SPANS of them.
  let unclosed = 0;
  let failed = 0;
  for (let i = 0; i < text.length && unclosed < maxCandidates && failed < FAILED_SPANS; i++) {
    const c = text.charCodeAt(i);
    if (c !== OPEN_BRACE && c !== OPEN_BRACKET) continue;
    const tooDeep = { hit: false };
    const end = matchingClose(text, i, limits.maxDepth, tooDeep);
    if (tooDeep.hit) return { ok: false, reason: `JSON nested deeper than ${limits.maxDepth}` };
    // A bracket of prose that never closes ("x in [0, 1)") must not hide a value after it.
    if (end < 0) { unclosed++; lastReason = "JSON value never closes"; continue; }
    failed++;
    try {
      return { ok: true, value: parseValue(text.slice(i, end), limits), start: i, end };
    } catch (e) {
      lastReason = `not valid JSON: ${(e as Error).message.slice(0, 120)}`;
      // A span that closes but does not parse is passed over whole: what is nested in it is not
      // read instead. (`{"a": {TARGET}, "b": 1,}` scored TARGET, so a trailing comma was paid
      // where the same answer written validly scored 0.)
      i = end - 1;
    }
  }
  return { ok: false, reason: lastReason };
}
