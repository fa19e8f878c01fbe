/**
 * The light half of grading: finding and normalising answers, and the quick path for the
 * commonest item (a plain number against plain-number references), which costs less on the
 * event loop (~20 µs) than a round trip to a worker. It imports no parser, so the server's
 * main thread never loads compute-engine or mathjs.
 */
import { extractAnswer, mathSpans, type Extracted, type Source } from "./extract.js";
import { afterThink } from "../../src/core/completion.js";
import { normalizeLatex, PLAIN_NUMBER } from "./normalize.js";
import type { Method } from "./compare.js";
import * as R from "./rational.js";

import type { MathOptions } from "./options.js";
export type { MathOptions };

export interface Graded {
  /** null: our machinery could not decide (a compute-engine budget ran out); status error. */
  reward: number | null;
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

/**
 * The answer in a completion. The whole text is searched (extraction is linear): reading only
 * a tail could cut a `\boxed{` off its content and misread the answer.
 */
export function findAnswer(response: string, o: MathOptions): Extracted | null {
  const body = o.strip_think ? afterThink(response) : response;
  return extractAnswer(body, { priority: o.extract, stripThink: false });
}

/** An answer string from the reference: extracted when it is written like a completion. */
export function referenceAnswer(ref: string): { answer: string; latex: boolean } {
  const pieces = mathPieces(ref);
  if (pieces !== null) return { answer: pieces, latex: true };
  const found = extractAnswer(ref, { priority: ["boxed", "phrase", "latex"] });
  if (found) return found;
  const plain = extractAnswer(ref, { priority: ["plain"] });
  if (plain && plain.answer.trim() === ref.trim()) return plain;
  return { answer: ref, latex: !/^[\d\s.,+\-*/^()%]*$/.test(ref) };
}

/** Longest reference read piece by piece (references are data, but still capped). */
const PIECES_MAX = 4096;

/**
 * A reference written in several math pieces with nothing but connectors or bare math between
 * them (`8$,$4`, `$x=1$ or $x=2$`, `$1$, $2$`) is all of its pieces: the text with its `$`
 * delimiters dropped. Null when the reference has a box or an answer phrase, one piece or none,
 * or prose between its pieces ("$5$ apples"): the usual extraction reads those.
 */
function mathPieces(ref: string): string | null {
  if (ref.length > PIECES_MAX || /\\(?:boxed|fbox)|answer/i.test(ref)) return null;
  const spans = mathSpans(ref);
  if (spans.length === 0) return null;
  let out = "", outside = "", at = 0;
  for (const sp of spans) {
    outside += ref.slice(at, sp.start) + " ";
    out += ref.slice(at, sp.start) + " " + sp.body + " ";
    at = sp.end;
  }
  outside += ref.slice(at);
  out += ref.slice(at);
  // one piece with only punctuation around it is the usual case, read as usual
  if (spans.length === 1 && !/[^\s.,;:]/.test(outside)) return null;
  // between the pieces: connectors, punctuation and bare math only, no prose
  const between = outside.replace(/\\text\{\s*(?:and|or)\s*\}|\b(?:and|or)\b/gi, " ");
  if (/[a-zA-Z]{2,}/.test(between.replace(/\\[a-zA-Z]+/g, " "))) return null;
  return out.replace(/\s+/g, " ").trim();
}

/** `\\frac` written with a doubled backslash (JSON-escaped twice) reads as `\frac`. */
export function fixEscapes(s: string): string {
  return s.includes("\\begin") ? s : s.replace(/(?<!\\)\\\\(?=[a-zA-Z])/g, "\\");
}

export function normalizeAnswer(answer: string, latex: boolean, decimalComma = false): string {
  return normalizeLatex(fixEscapes(answer), !latex, decimalComma);
}

/** Longest completion graded on the event loop; longer ones always go to a worker. */
export const QUICK_MAX_LENGTH = 4096;

/**
 * What a reference cannot hold and still normalise to a plain number: a bracket, a relation, an
 * exponent other than a degree sign or a unit's square or cube, a lone letter (a variable; units
 * are words), a fraction, a root, a matrix, a function, a constant.
 */
const NOT_PLAIN = /[([=_|<>]|\^(?!\s*\{?\s*(?:\\circ|[23]))|(?<![a-zA-Z\\])[a-zA-Z](?![a-zA-Z])|\\(?:[dt]?frac|sqrt|begin|pi|infty|cup|cap|pm|mp|ln|log|sin|cos|tan|sec|csc|cot|exp|cdot|times|div|le|ge|leq|geq|ne|neq|in|subset|vec|overline|hat|alpha|beta|gamma|theta)(?![a-zA-Z])/;

/**
 * False where `ref` certainly does not normalise to a plain number, in one linear scan, before
 * quickGrade normalises it: a reference the quick path cannot grade (a formula, an interval, a
 * fraction) used to cost the event loop its normalisation (~9% of the main thread's time under
 * a batch of the hard mix) and then went to a worker anyway. Only a shortcut: an item it lets
 * through is still checked after normalisation, and one it stops gets the same result from the
 * worker.
 */
export function mayBePlainNumber(ref: string): boolean {
  return ref.length <= 64 && !NOT_PLAIN.test(ref);
}

/**
 * grade() for a completion whose answer is a plain number and references that are plain
 * numbers, with the same result grade() gives; null for anything else (the worker decides).
 */
export function quickGrade(response: string, reference: string | string[], o: MathOptions): Graded | null {
  if (response.length > QUICK_MAX_LENGTH) return null;
  const refs = Array.isArray(reference) ? reference : [reference];
  if (!refs.every(mayBePlainNumber)) return null;
  // references first: one that is not a plain number (or is empty: invalid) goes to the worker
  const golds = refs.map((r) => { const a = referenceAnswer(r); return normalizeAnswer(a.answer, a.latex, o.decimal_comma); });
  if (!golds.every((g) => g.length <= 1000 && PLAIN_NUMBER.test(g))) return null;
  const found = findAnswer(response, o);
  if (!found || !found.answer.trim()) return { reward: 0, reason: "no answer found", details: { extracted: null } };
  const normalized = normalizeAnswer(found.answer, found.latex, o.decimal_comma);
  if (normalized === "") return { reward: 0, reason: "no answer found", details: { extracted: found.answer.slice(0, 512), via: found.via } };
  if (normalized.length > 1000 || !PLAIN_NUMBER.test(normalized)) return null;
  const p = R.parseDecimal(normalized);
  if (!p) return null;
  const base = { extracted: found.answer.slice(0, 512), normalized, via: found.via };
  const decimalIn = (s: string) => s.includes(".") && !/^-?\d+\.0*$/.test(s);
  let firstWhy: string | undefined, firstRef: string | undefined;
  for (let i = 0; i < golds.length; i++) {
    const gold = golds[i];
    const details = { ...base, reference: gold };
    if (gold === normalized) return { reward: 1, reason: "matches the reference", details: { ...details, method: "string", matched: i } };
    const g = R.parseDecimal(gold);
    if (!g) return null;
    if (R.eq(g, p)) return { reward: 1, reason: "equals the reference (exact)", details: { ...details, method: "exact", matched: i } };
    if (R.roundedMatch(g, p, decimalIn(gold), decimalIn(gold) ? R.decimalPlaces(gold) : null, decimalIn(normalized), o.precision)) {
      return { reward: 1, reason: "equals the reference (numeric)", details: { ...details, method: "numeric", matched: i } };
    }
    if (firstWhy === undefined) { firstWhy = `${R.show(p)} ≠ ${R.show(g)}`; firstRef = gold; }
  }
  return {
    reward: 0,
    reason: `does not equal the reference: ${firstWhy}`,
    details: { ...base, reference: firstRef, method: "exact", why: firstWhy },
  };
}
