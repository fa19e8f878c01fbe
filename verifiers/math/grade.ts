/**
 * grade(): extraction, normalisation, parsing and comparison of one item. Pure and synchronous;
 * the verifier runs it in a worker thread under a deadline.
 */
import { parseValue, checkCaps, TooComplex, LIMITS, type Value } from "./parse.js";
import { compare, type Method } from "./compare.js";
import { findAnswer, normalizeAnswer, referenceAnswer, type Graded, type MathOptions } from "./answer.js";

export type { Graded, MathOptions } from "./answer.js";
export { referenceAnswer } from "./answer.js";

function parseAnswer(answer: string, latex: boolean): { value: Value; normalized: string } {
  if (answer.length > 4 * LIMITS.length) throw new TooComplex(`answer longer than ${LIMITS.length} characters`);
  const normalized = normalizeAnswer(answer, latex);
  checkCaps(normalized);
  return { value: parseValue(normalized, { plain: !latex }), normalized };
}

export function grade(response: string, reference: string | string[], o: MathOptions = {}): Graded {
  const found = findAnswer(response, o);
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
