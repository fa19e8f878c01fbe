/**
 * grade(): extraction, normalisation, parsing and comparison of one item. Pure and synchronous;
 * the verifier runs it in a worker thread under a deadline.
 */
import { parseValue, checkCaps, isolated, functionNames, EngineBudget, TooComplex, LIMITS, type Value } from "./parse.js";
import { promptHints } from "./prompt.js";
import { compare, type Method } from "./compare.js";
import { letterInProse, namedLetter, optionLabel } from "./choice.js";
import { afterThink } from "../../src/core/completion.js";
import { InvalidItemError } from "../../src/core/types.js";
import { findAnswer, normalizeAnswer, referenceAnswer, type Graded } from "./answer.js";

import { resolveOptions, type MathOptions } from "./options.js";

export type { Graded } from "./answer.js";
export type { MathOptions } from "./options.js";
export { referenceAnswer } from "./answer.js";

/**
 * A normalised answer; its parse is made on first use (identical strings need none). One past
 * the caps (checkCaps) is still compared as a string, and never parsed: `tooComplex` says why.
 */
class Answer {
  private parsed: Value | undefined;
  private parsedWith = "";
  readonly normalized: string;
  readonly tooComplex: TooComplex | null = null;
  constructor(answer: string, readonly latex: boolean, decimalComma = false) {
    if (answer.length > 4 * LIMITS.length) throw new TooComplex(`answer longer than ${LIMITS.length} characters`);
    this.normalized = normalizeAnswer(answer, latex, decimalComma);
    try {
      checkCaps(this.normalized);
    } catch (e) {
      if (!(e instanceof TooComplex)) throw e;
      this.tooComplex = e;
    }
  }
  /** The parse, with the letters this item reads as functions (see functionNames); made once. */
  value(functions: string): Value {
    if (this.tooComplex) throw this.tooComplex;
    if (this.parsed === undefined || this.parsedWith !== functions) {
      this.parsed = parseValue(this.normalized, { plain: !this.latex, functions });
      this.parsedWith = functions;
    }
    return this.parsed;
  }
}

/**
 * Grades one item. The result is a function of the item alone: compute-engine works in a scope
 * of the item's own (see isolated()), and a budget the engine runs out of ends the item as a
 * machinery outcome (reward null), never as a 0 that an idle machine would have made a 1.
 */
export function grade(response: string, reference: string | string[], given: Partial<MathOptions> = {}, prompt?: string): Graded {
  const o = resolveOptions(given);
  try {
    return isolated(() => gradeItem(response, reference, o, prompt));
  } catch (e) {
    if (e instanceof EngineBudget) return { reward: null, reason: `machinery: ${e.message}`, details: { extracted: null, why: e.message } };
    throw e;
  }
}

function gradeItem(response: string, reference: string | string[], o: MathOptions, prompt: string | undefined): Graded {
  // The references first: one that is empty once extracted is the data's fault (status
  // invalid), whatever the completion says.
  const refs = Array.isArray(reference) ? reference : [reference];
  const golds = refs.map((r, i): Answer | TooComplex => {
    const ra = referenceAnswer(r);
    let gold: Answer;
    try {
      gold = new Answer(ra.answer, ra.latex, o.decimal_comma);
    } catch (e) {
      if (e instanceof TooComplex) return e;
      throw e;
    }
    if (gold.normalized.trim() === "") {
      throw new InvalidItemError(`reference${refs.length > 1 ? ` ${i}` : ""} ${JSON.stringify(r.slice(0, 80))} holds no answer once extracted and normalised`);
    }
    return gold;
  });

  let found = findAnswer(response, o);
  // a reference that names an option letter (`B`, `(B) 12`): a letter committed to in prose
  // counts, when the usual sources find no letter ("the correct choice is (B)")
  if (golds.every((g) => g instanceof Answer && namedLetter(g.normalized) !== null) && (!found || namedLetter(normalizeAnswer(found.answer, found.latex, o.decimal_comma)) === null)) {
    const letter = letterInProse(o.strip_think ? afterThink(response) : response);
    if (letter) found = { answer: letter, latex: false, via: "phrase" };
  }
  if (!found || !found.answer.trim()) return { reward: 0, reason: "no answer found", details: { extracted: null } };
  const extracted = found.answer.slice(0, 512);
  const tooComplex = (e: TooComplex): Graded => ({ reward: 0, reason: `answer too complex: ${e.message}`, details: { extracted, via: found.via, why: e.message } });

  let pred: Answer;
  try {
    pred = new Answer(found.answer, found.latex, o.decimal_comma);
  } catch (e) {
    if (e instanceof TooComplex) return tooComplex(e);
    throw e;
  }
  if (pred.normalized === "") return { reward: 0, reason: "no answer found", details: { extracted, via: found.via } };
  // an answer past the caps can only match a reference written the same way
  if (pred.tooComplex && !golds.some((g) => g instanceof Answer && g.normalized === pred.normalized)) return tooComplex(pred.tooComplex);

  const predOption = optionLabel(pred.normalized);
  const predLetter = predOption?.letter ?? namedLetter(pred.normalized);
  const hints = promptHints(prompt);
  // an inequality answers an interval reference with the option, or where the prompt asks for
  // a range of values (the bounds and their direction are still compared)
  const opts = { precision: o.precision, seed: o.seed, allowSetRelation: o.allow_set_relation || (hints?.range ?? false), prompt: hints };
  let firstWhy: string | undefined, firstMethod: Method | undefined, firstRef: string | undefined;
  for (let i = 0; i < refs.length; i++) {
    const gold = golds[i];
    if (gold instanceof TooComplex) { firstWhy ??= `reference too complex: ${gold.message}`; continue; }
    const details = { extracted, normalized: pred.normalized.slice(0, 512), reference: gold.normalized.slice(0, 512), via: found.via };
    if (gold.normalized === pred.normalized && gold.normalized !== "") {
      return { reward: 1, reason: "matches the reference", details: { ...details, method: "string", matched: i } };
    }
    if (pred.tooComplex) continue; // a later reference is the same string (checked above)
    // An option with its value (`\textbf{(C)}\ 12`) on either side: against a letter the
    // letters decide; against a value, the values; against another option with its value, both.
    let p = pred, g = gold;
    const goldOption = optionLabel(gold.normalized);
    if (predOption || goldOption) {
      const pl = predLetter, gl = goldOption?.letter ?? namedLetter(gold.normalized);
      if (pl !== null && gl !== null) {
        if (pl !== gl) {
          if (firstWhy === undefined) { firstWhy = `names option (${pl}), the reference (${gl})`; firstMethod = "string"; firstRef = gold.normalized.slice(0, 512); }
          continue;
        }
        if (!predOption || !goldOption) return { reward: 1, reason: `names the reference's option (${gl})`, details: { ...details, method: "string", matched: i } };
      }
      try {
        if (predOption) p = new Answer(predOption.value, pred.latex, o.decimal_comma);
        if (goldOption) g = new Answer(goldOption.value, gold.latex, o.decimal_comma);
      } catch (e) {
        if (e instanceof TooComplex) continue;
        throw e;
      }
      if (p.normalized === g.normalized) return { reward: 1, reason: "matches the reference's value", details: { ...details, method: "string", matched: i } };
      if (p.tooComplex || g.tooComplex) continue;
    }
    let predValue: Value, goldValue: Value;
    try {
      predValue = p.value(functionNames(p.normalized, g.normalized));
    } catch (e) {
      if (e instanceof TooComplex) return tooComplex(e);
      throw e;
    }
    try {
      goldValue = g.value(functionNames(p.normalized, g.normalized));
    } catch (e) {
      if (e instanceof TooComplex) { firstWhy ??= `reference too complex: ${e.message}`; continue; }
      throw e;
    }
    const v = compare(goldValue, predValue, opts);
    if (v.equal) return { reward: 1, reason: `equals the reference (${v.method}${v.note ? `: ${v.note}` : ""})`, details: { ...details, method: v.method, matched: i } };
    if (firstWhy === undefined) { firstWhy = v.why; firstMethod = v.method; firstRef = gold.normalized.slice(0, 512); }
  }
  return {
    reward: 0,
    reason: `does not equal the reference${firstWhy ? `: ${firstWhy}` : ""}`,
    details: { extracted, normalized: pred.normalized.slice(0, 512), reference: firstRef, via: found.via, method: firstMethod, why: firstWhy },
  };
}
