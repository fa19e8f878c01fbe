/**
 * length: reward shaping by completion length, over characters (Unicode code points) or tokens.
 *
 * mode "dapo": DAPO's soft overlong punishment (Yu et al., "DAPO: An Open-Source LLM
 * Reinforcement Learning System at Scale", arXiv:2503.14476, eq. 13):
 *     0                          if |y| <= L_max - L_cache
 *     ((L_max - L_cache) - |y|) / L_cache   if L_max - L_cache < |y| <= L_max
 *     -1                         if L_max < |y|
 * times penalty_factor (verl's `overlong_buffer.penalty_factor`; verl computes
 * min(-(|y| - (L_max - L_cache)) / L_cache * factor, 0), the same inside L_max).
 * mode "band": 1 when min <= |y| <= max, else 0.
 *
 * Tokens come from gpt-tokenizer (pure JS; the BPE ranks ship in the package, nothing is
 * downloaded). Counting stops once it passes the largest length that changes the reward.
 * Special-token text the completion writes (`<|endoftext|>`, `<|im_start|>`) is counted as the
 * ordinary text it is (tiktoken's `disallowed_special=()`), never an error: the library's default
 * throws on it, which made the part null and let an optional length penalty drop out.
 */
import { Type, type Static } from "@sinclair/typebox";
import { InvalidItemError, MachineryError } from "../../src/core/types.js";
import { defineVerifier } from "../../src/core/verifier.js";
import { afterThink } from "../../src/core/completion.js";
import { slices } from "../../src/core/slices.js";

export const TOKENIZERS = ["o200k_base", "cl100k_base", "p50k_base", "r50k_base"] as const;
type Tokenizer = (typeof TOKENIZERS)[number];

type Counter = (s: string) => number;
type EncodeOptions = { disallowedSpecial?: Set<string> };
/** No special token is recognised or refused: `<|endoftext|>` is encoded as ordinary text. */
const ORDINARY: EncodeOptions = Object.freeze({ disallowedSpecial: new Set<string>() });
const loaded = new Map<Tokenizer, Promise<Counter>>();
function counter(name: Tokenizer): Promise<Counter> {
  let p = loaded.get(name);
  if (!p) {
    // One literal import per encoding so bundlers and tsc see each; nothing is fetched.
    const imports: Record<Tokenizer, () => Promise<{ countTokens: (s: string, o?: EncodeOptions) => number }>> = {
      o200k_base: () => import("gpt-tokenizer/encoding/o200k_base"),
      cl100k_base: () => import("gpt-tokenizer/encoding/cl100k_base"),
      p50k_base: () => import("gpt-tokenizer/encoding/p50k_base"),
      r50k_base: () => import("gpt-tokenizer/encoding/r50k_base"),
    };
    p = imports[name]().then((m) => (s: string) => m.countTokens(s, ORDINARY));
    p.catch(() => loaded.delete(name));
    loaded.set(name, p);
  }
  return p;
}

/** Longest piece handed to the BPE at once: its cost grows faster than linearly in a piece. */
const PIECE = 256;

/** How long countTokensUpTo counts before it lets the event loop run, ms. */
const SLICE_MS = 8;

/**
 * Tokens in `s`, counting piece by piece and stopping once past `limit` (the reward no longer
 * changes). Pieces end before a space between two letters, where the tokenizer's pre-split cuts
 * too, so counts are exact unless PIECE/2 characters hold no such space (then a piece boundary
 * may split a token: the count can differ by one per boundary). It lets the event loop run every
 * SLICE_MS and stops when `signal` aborts (the item's deadline): the BPE costs ~3.5 µs a
 * character, so a megabyte of completion is seconds of work, which must not hold every other
 * request (it held /healthz 2.6 s).
 */
export async function countTokensUpTo(count: Counter, s: string, limit: number, signal?: AbortSignal): Promise<{ n: number; exact: boolean }> {
  let n = 0;
  const slice = slices(SLICE_MS);
  for (let i = 0; i < s.length; ) {
    const j = pieceEnd(s, i);
    n += count(s.slice(i, j));
    i = j;
    if (n > limit) return { n, exact: i >= s.length };
    const turn = slice.pause();
    if (turn) {
      await turn;
      signal?.throwIfAborted();
    }
  }
  return { n, exact: true };
}

/** Where the piece that starts at `i` ends: at most PIECE characters, before a word's space where there is one, never inside a surrogate pair. */
function pieceEnd(s: string, i: number): number {
  let j = Math.min(s.length, i + PIECE);
  if (j < s.length) {
    let k = j;
    while (k > i + PIECE / 2 && !wordStart(s, k)) k--;
    if (k > i + PIECE / 2) j = k;
    else if (isLowSurrogate(s.charCodeAt(j))) j--;
  }
  return j;
}

/** A space between two letters: every OpenAI encoding's pre-split cuts before it. */
const LETTER = /\p{L}/u;
function wordStart(s: string, k: number): boolean {
  return s.charCodeAt(k) === 32 && LETTER.test(s[k - 1]) && LETTER.test(s[k + 1] ?? "");
}

const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** Code points, stopping past `limit`. */
export function countChars(s: string, limit: number): { n: number; exact: boolean } {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && isLowSurrogate(s.charCodeAt(i + 1))) i++;
    if (++n > limit) return { n, exact: i + 1 >= s.length };
  }
  return { n, exact: true };
}

/** DAPO's R_length(y), scaled by `factor`. */
export function dapoPenalty(len: number, maxLength: number, cacheLength: number, factor = 1): number {
  const expected = maxLength - cacheLength;
  if (len <= expected) return 0;
  if (len <= maxLength) return ((expected - len) / cacheLength) * factor;
  return -factor;
}

export const LengthOptions = Type.Object(
  {
    mode: Type.Union([Type.Literal("dapo"), Type.Literal("band")], { default: "dapo", description: "dapo: soft overlong punishment in [-penalty_factor, 0]; band: 1 inside [min, max], else 0" }),
    unit: Type.Union([Type.Literal("chars"), Type.Literal("tokens")], { default: "tokens", description: "count Unicode code points or tokens" }),
    tokenizer: Type.Union(TOKENIZERS.map((t) => Type.Literal(t)), { default: "o200k_base", description: "gpt-tokenizer encoding for unit tokens" }),
    max_length: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_048_576, description: "dapo: L_max" })),
    cache_length: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_048_576, description: "dapo: L_cache (verl: overlong_buffer.len)" })),
    penalty_factor: Type.Number({ default: 1, minimum: 0, maximum: 1000, description: "dapo: scale of the penalty (verl: overlong_buffer.penalty_factor)" }),
    min: Type.Integer({ default: 0, minimum: 0, description: "band: shortest length rewarded" }),
    max: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_048_576, description: "band: longest length rewarded" })),
    strip_think: Type.Boolean({ default: false, description: "measure only the text after the last </think> (none, when a <think> never closes)" }),
  },
  { additionalProperties: false },
);
type Opts = Static<typeof LengthOptions>;

/** The length that matters and the largest one worth counting to. */
function limits(o: Opts): number {
  if (o.mode === "dapo") {
    if (o.max_length === undefined || o.cache_length === undefined) throw new InvalidItemError("options: mode dapo needs max_length and cache_length", "options");
    if (o.cache_length > o.max_length) throw new InvalidItemError("options: cache_length must not exceed max_length", "options");
    return o.max_length;
  }
  if (o.max === undefined) throw new InvalidItemError("options: mode band needs max (and optionally min)", "options");
  if (o.min > o.max) throw new InvalidItemError("options: min must not exceed max", "options");
  return o.max;
}

export const length = defineVerifier({
  name: "length",
  description: "Length shaping: DAPO's soft overlong punishment or a plain length band, in characters or tokens.",
  reference: Type.Unknown({ description: "ignored" }),
  options: LengthOptions,
  async verify(item, ctx) {
    const o = item.options;
    const limit = limits(o);
    const text = o.strip_think ? afterThink(item.response) : item.response;
    let measured: { n: number; exact: boolean };
    if (o.unit === "chars") measured = countChars(text, limit);
    else {
      let count: Counter;
      try {
        count = await counter(o.tokenizer);
      } catch (e) {
        throw new MachineryError(`tokenizer ${o.tokenizer} failed to load: ${(e as Error).message}`);
      }
      measured = await countTokensUpTo(count, text, limit, ctx.signal);
    }
    const len = measured.n;
    const shown = measured.exact ? `${len}` : `more than ${limit}`;
    const details = { length: len, exact: measured.exact, unit: o.unit, ...(o.unit === "tokens" ? { tokenizer: o.tokenizer } : {}) };
    if (o.mode === "dapo") {
      const reward = dapoPenalty(len, o.max_length!, o.cache_length!, o.penalty_factor);
      const expected = o.max_length! - o.cache_length!;
      const why = len <= expected ? `within L_max - L_cache = ${expected}` : len <= o.max_length! ? `in the overlong buffer (${expected}, ${o.max_length}]` : `past L_max = ${o.max_length}`;
      return { reward, reason: `${shown} ${o.unit}: ${why}`, details: { ...details, penalty: reward } };
    }
    const inside = len >= o.min && len <= o.max!;
    return { reward: inside ? 1 : 0, reason: `${shown} ${o.unit}: ${inside ? "inside" : "outside"} [${o.min}, ${o.max}]`, details };
  },
});
