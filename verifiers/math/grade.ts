/**
 * grade(): extraction, normalisation, parsing and comparison of one item. Pure and synchronous;
 * the verifier runs it in a worker thread under a deadline.
 */
import { extractAnswer, afterThink, DEFAULT_PRIORITY, type Source } from "./extract.js";
import { normalizeLatex } from "./normalize.js";
import { parseValue, checkCaps, TooComplex, type Value } from "./parse.js";
import { compare, type Method } from "./compare.js";

export interface MathOptions {
  /** Decimal places to which decimal answers are compared; unset compares exactly. */
  precision?: number;
  /** Where to look for the answer, in order (default boxed, phrase, latex, plain). */
  extract?: Source[];
  /** Ignore everything before the last `</think>` (default true). */
  strip_think?: boolean;
  /** A reference interval (x ∈ [a, b]) also accepts an inequality (a ≤ x ≤ b) (default false). */
  allow_set_relation?: boolean;
  /** Seed for the random points of numeric tests (default 1). */
  seed?: number;
}

export interface Graded {
  reward: number;
  reason: string;
  details: {
    extracted: string | null;
    normalized?: string;
    reference?: string;
    method?: Method;
    via?: Source;
    matched?: number;
    why?: string;
  };
}

/** Only the tail of a very long completion is searched: answers come last. */
const MAX_SCAN = 200_000;

/** An answer string from the reference: extracted when it is written like a completion. */
export function referenceAnswer(ref: string): { answer: string; latex: boolean } {
  const found = extractAnswer(ref, { priority: ["boxed", "phrase", "latex"] });
  if (found) return found;
  const plain = extractAnswer(ref, { priority: ["plain"] });
  if (plain && plain.answer.trim() === ref.trim()) return plain;
  return { answer: ref, latex: !/^[\d\s.,+\-*/^()%]*$/.test(ref) };
}

function parseAnswer(answer: string, latex: boolean): { value: Value; normalized: string } {
  const normalized = normalizeLatex(fixEscapes(answer), !latex);
  checkCaps(normalized);
  return { value: parseValue(normalized, { plain: !latex }), normalized };
}

/** `\\frac` written with a doubled backslash (JSON-escaped twice) reads as `\frac`. */
function fixEscapes(s: string): string {
  return s.includes("\\begin") ? s : s.replace(/(?<!\\)\\\\(?=[a-zA-Z])/g, "\\");
}

export function grade(response: string, reference: string | string[], o: MathOptions = {}): Graded {
  const text = response.length > MAX_SCAN ? response.slice(-MAX_SCAN) : response;
  const body = o.strip_think === false ? text : afterThink(text);
  const found = extractAnswer(body, { priority: o.extract ?? DEFAULT_PRIORITY, stripThink: false });
  if (!found || !found.answer.trim()) return { reward: 0, reason: "no answer found", details: { extracted: null } };

  let pred: { value: Value; normalized: string };
  try {
    pred = parseAnswer(found.answer, found.latex);
  } catch (e) {
    if (e instanceof TooComplex) return { reward: 0, reason: `answer too complex: ${e.message}`, details: { extracted: found.answer.slice(0, 512), via: found.via, why: e.message } };
    throw e;
  }
  if (pred.normalized === "") return { reward: 0, reason: "no answer found", details: { extracted: found.answer.slice(0, 512), via: found.via } };

  const refs = Array.isArray(reference) ? reference : [reference];
  const opts = { precision: o.precision, seed: o.seed ?? 1, allowSetRelation: o.allow_set_relation ?? false };
  let firstWhy: string | undefined, firstMethod: Method | undefined, firstRef: string | undefined;
  for (let i = 0; i < refs.length; i++) {
    const ra = referenceAnswer(refs[i]);
    let gold: { value: Value; normalized: string };
    try {
      gold = parseAnswer(ra.answer, ra.latex);
    } catch (e) {
      if (e instanceof TooComplex) { firstWhy ??= `reference too complex: ${e.message}`; continue; }
      throw e;
    }
    const details = { extracted: found.answer.slice(0, 512), normalized: pred.normalized.slice(0, 512), reference: gold.normalized.slice(0, 512), via: found.via };
    if (gold.normalized === pred.normalized && gold.normalized !== "") {
      return { reward: 1, reason: "matches the reference", details: { ...details, method: "string", matched: i } };
    }
    const v = compare(gold.value, pred.value, opts);
    if (v.equal) return { reward: 1, reason: `equals the reference (${v.method})`, details: { ...details, method: v.method, matched: i } };
    if (firstWhy === undefined) { firstWhy = v.why; firstMethod = v.method; firstRef = gold.normalized.slice(0, 512); }
  }
  return {
    reward: 0,
    reason: `does not equal the reference${firstWhy ? `: ${firstWhy}` : ""}`,
    details: { extracted: found.answer.slice(0, 512), normalized: pred.normalized.slice(0, 512), reference: firstRef, via: found.via, method: firstMethod, why: firstWhy },
  };
}
