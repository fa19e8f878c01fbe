/** exact: the (normalised) answer equals the reference, or one of a list of references. */
import { Type, type Static } from "@sinclair/typebox";
import { defineVerifier } from "../../src/core/verifier.js";
import type { Outcome } from "../../src/core/types.js";
import { afterThink } from "../../src/core/completion.js";
import { asList, isSpaceCode, MarkRunError, MAX_MARK_RUN, normalize, normalizeSliced, normalizeSlicedWithin, NORMALIZE_SLICE, type NormalizeOptions } from "./normalize.js";
import { lastBoxed } from "../../src/core/completion.js";

const Options = Type.Object(
  {
    case_sensitive: Type.Boolean({ default: false }),
    normalize_whitespace: Type.Boolean({ default: true, description: "collapse runs of whitespace and trim" }),
    strip_punctuation: Type.Boolean({ default: false, description: "drop a final period or other sentence punctuation, and quotes or brackets enclosing the answer; never a sign or symbol (-5 stays -5, 5% stays 5%)" }),
    extract: Type.Union([Type.Literal("full"), Type.Literal("last_line"), Type.Literal("boxed"), Type.Literal("answer_tag")], {
      default: "full",
      description: "which part of the response is the answer",
    }),
    strip_think: Type.Boolean({ default: true, description: "ignore everything up to the last </think>" }),
  },
  { additionalProperties: false },
);
export type ExactOptions = Static<typeof Options>;


export function extractAnswer(response: string, o: Pick<ExactOptions, "strip_think" | "extract">): string | null {
  const text = o.strip_think === false ? response : afterThink(response);
  switch (o.extract) {
    case "full":
      return text;
    case "last_line": {
      // The line holding the last non-whitespace character, trimmed: what splitting on /\r?\n/,
      // trimming each line and keeping the last non-empty one gave, found from the end (one
      // backward scan, where the split held the event loop 0.3-0.4 s on 1 Mi newlines).
      let end = text.length;
      while (end > 0 && isSpaceCode(text.charCodeAt(end - 1))) end--;
      if (end === 0) return null;
      return text.slice(text.lastIndexOf("\n", end - 1) + 1, end).trim();
    }
    case "boxed":
      return lastBoxed(text);
    case "answer_tag":
      return lastAnswerTag(text)?.body ?? null;
  }
}

/**
 * The last complete `<answer>…</answer>` of `text`: its body and where its `<answer>` starts, or
 * null. Found from the end: linear, where a lazy regex was quadratic on many unclosed <answer>
 * tags. `choice` reads the option letter from it too.
 */
export function lastAnswerTag(text: string): { start: number; body: string } | null {
  const close = text.lastIndexOf("</answer>");
  const open = close < 0 ? -1 : text.lastIndexOf("<answer>", close);
  return open < 0 ? null : { start: open, body: text.slice(open + "<answer>".length, close) };
}

export const exact = defineVerifier({
  name: "exact",
  description: "Normalised string equality with the reference (or any of a list of references).",
  reference: Type.Union([
    Type.String({ maxLength: 1_048_576 }),
    Type.Array(Type.String({ maxLength: 1_048_576 }), { minItems: 1, maxItems: 1024 }),
  ]),
  options: Options,
  // Not `async`: a short answer against short references is scored at once and the Outcome
  // returned as it is (the scorer then makes no promise and no deadline entry for the item);
  // a long one is normalised in slices (normalizeSliced), the event loop turning between.
  verify(item) {
    const o = item.options;
    const answer = extractAnswer(item.response, o);
    if (answer === null) {
      return { reward: 0, reason: `no answer found (extract=${o.extract})`, details: { extracted: null } };
    }
    const n = { caseSensitive: o.case_sensitive, whitespace: o.normalize_whitespace, stripPunctuation: o.strip_punctuation };
    const refs = asList(item.reference);
    let short = answer.length <= NORMALIZE_SLICE;
    for (let i = 0; i < refs.length && short; i++) short = refs[i]!.length <= NORMALIZE_SLICE;
    if (!short) return matchSliced(answer, refs, n).catch(markRun);
    let got: string;
    try {
      got = normalize(answer, n);
    } catch (e) {
      return markRun(e);
    }
    let hit = -1;
    for (let i = 0; i < refs.length && hit < 0; i++) if (normalizeOrNull(refs[i]!, n) === got) hit = i;
    return outcome(got, refs, hit);
  },
});

/**
 * An answer with a run of more than MAX_MARK_RUN combining characters is not normalised (NFKC is
 * quadratic in such a run) and earns 0; a reference with one matches nothing.
 */
function markRun(e: unknown): Outcome {
  if (!(e instanceof MarkRunError)) throw e;
  return { reward: 0, reason: `the answer holds a run of more than ${MAX_MARK_RUN} combining characters`, details: { extracted: null } };
}
function normalizeOrNull(s: string, n: NormalizeOptions): string | null {
  try {
    return normalize(s, n);
  } catch (e) {
    if (e instanceof MarkRunError) return null;
    throw e;
  }
}

/** exact's Outcome once the normalised answer `got` has been compared with each reference (`hit`: the first that matched, or -1). */
function outcome(got: string, refs: readonly string[], hit: number): Outcome {
  return hit >= 0
    ? { reward: 1, reason: "matches the reference", details: { extracted: got, matched: refs[hit] } }
    : { reward: 0, reason: "does not match the reference", details: { extracted: got.slice(0, 512) } };
}

/**
 * The comparison for long texts: each normalised a slice at a time (a 1 MiB completion keeps the
 * event loop turning). The references first: the answer's normalisation then stops as soon as it
 * is sure to be longer than every normalised reference (normalizeSlicedWithin), the same verdict.
 */
async function matchSliced(answer: string, refs: readonly string[], n: NormalizeOptions): Promise<Outcome> {
  const norm = (s: string) => (s.length <= NORMALIZE_SLICE ? normalize(s, n) : normalizeSliced(s, n));
  const normRefs: (string | null)[] = [];
  let longest = 0;
  for (const r of refs) {
    let t: string | null;
    try {
      t = await norm(r);
    } catch (e) {
      if (!(e instanceof MarkRunError)) throw e;
      t = null;
    }
    normRefs.push(t);
    if (t !== null) longest = Math.max(longest, t.length);
  }
  const got = await normalizeSlicedWithin(answer, n, longest);
  if (got === null) {
    return { reward: 0, reason: "does not match the reference", details: { extracted: normalize(answer.slice(0, 512), n).slice(0, 512), longer_than_references: true } };
  }
  return outcome(got, refs, normRefs.indexOf(got));
}
