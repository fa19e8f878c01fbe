/** exact: the (normalised) answer equals the reference, or one of a list of references. */
import type { Verifier } from "../../src/core/types.js";
import { afterThink } from "../../src/core/completion.js";
import { asList, lastBoxed, normalize } from "./normalize.js";

export interface ExactOptions {
  case_sensitive?: boolean;
  normalize_whitespace?: boolean;
  strip_punctuation?: boolean;
  /** Which part of the response is the answer. */
  extract?: "full" | "last_line" | "boxed" | "answer_tag";
  /** Ignore everything up to the last </think> (default true). */
  strip_think?: boolean;
}

const ANSWER_TAG = /<answer>([\s\S]*?)<\/answer>/g;

export function extractAnswer(response: string, o: ExactOptions): string | null {
  const text = o.strip_think === false ? response : afterThink(response);
  switch (o.extract ?? "full") {
    case "full":
      return text;
    case "last_line": {
      const lines = text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
      return lines.length ? lines[lines.length - 1] : null;
    }
    case "boxed":
      return lastBoxed(text);
    case "answer_tag": {
      let last: string | null = null;
      for (const m of text.matchAll(ANSWER_TAG)) last = m[1];
      return last;
    }
  }
}

export const exact: Verifier<string | string[], ExactOptions> = {
  name: "exact",
  description: "Normalised string equality with the reference (or any of a list of references).",
  referenceSchema: {
    oneOf: [
      { type: "string", maxLength: 1_048_576 },
      { type: "array", items: { type: "string", maxLength: 1_048_576 }, minItems: 1, maxItems: 1024 },
    ],
  },
  optionsSchema: {
    additionalProperties: false,
    properties: {
      case_sensitive: { type: "boolean", default: false },
      normalize_whitespace: { type: "boolean", default: true },
      strip_punctuation: { type: "boolean", default: false },
      extract: { enum: ["full", "last_line", "boxed", "answer_tag"], default: "full" },
      strip_think: { type: "boolean", default: true },
    },
  },
  async verify(item) {
    const o = item.options ?? {};
    const answer = extractAnswer(item.response, o);
    if (answer === null) {
      return { reward: 0, reason: `no answer found (extract=${o.extract})`, details: { extracted: null } };
    }
    const n = { caseSensitive: o.case_sensitive, whitespace: o.normalize_whitespace, stripPunctuation: o.strip_punctuation };
    const got = normalize(answer, n);
    const refs = asList(item.reference ?? "");
    const hit = refs.findIndex((r) => normalize(r, n) === got);
    return hit >= 0
      ? { reward: 1, reason: "matches the reference", details: { extracted: got, matched: refs[hit] } }
      : { reward: 0, reason: "does not match the reference", details: { extracted: got.slice(0, 512) } };
  },
};
