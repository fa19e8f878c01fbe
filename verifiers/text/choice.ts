/**
 * choice: multiple-choice letter extraction. Finds the option the completion commits to
 * ("The answer is (B)", "\boxed{B}", "**B**", a final line "B.") and compares it with the
 * reference letter. A completion that commits to several options earns nothing.
 */
import { Type } from "@sinclair/typebox";
import { defineVerifier } from "../../src/core/verifier.js";
import { afterThink } from "../../src/core/completion.js";
import { asList } from "./normalize.js";
import { lastBoxed } from "../../src/core/completion.js";

type Found = { letters: string[]; via: string } | null;

// Patterns, most explicit first. Each captures the span that names the option(s).
const ANSWER_PHRASE =
  /(?:final\s+answer|correct\s+(?:answer|option|choice)|answer|option|choice)\s*(?:is|:|=|would\s+be|should\s+be)?\s*(?:option|choice)?\s*[:\s]*\**\s*([([]?[A-Za-z][)\].]?(?:\s*(?:,|and|or|&|\/)\s*[([]?[A-Za-z][)\].]?)*)(?![A-Za-z0-9])/gi;
const BOLD = /\*\*\s*\(?([A-Z])\)?[.:)]?\s*\*\*/g;
const LONE_LINE = /^[ >*_#-]*\(?([A-Z])\)?[.:)]?[ *_]*$/;

/**
 * The text the patterns read: its last TAIL characters (an answer is committed to at the end),
 * with every run of whitespace made one character ("\n" if it held a line break, else " ").
 * Then no two adjacent `\s*` in a pattern can split a run between them, and matching is linear
 * in the window: on raw text, "answer is" followed by 20,000 spaces took minutes.
 */
const TAIL = 16_384;
function window(text: string): string {
  const t = text.length > TAIL ? text.slice(-TAIL) : text;
  return t.replace(/\s+/g, (ws) => (ws.includes("\n") ? "\n" : " "));
}

function lettersIn(span: string, allowLower: boolean): string[] {
  const re = allowLower ? /(?<![A-Za-z])([A-Za-z])(?![A-Za-z])/g : /(?<![A-Za-z])([A-Z])(?![A-Za-z])/g;
  return [...new Set([...span.matchAll(re)].map((m) => m[1].toUpperCase()))];
}

function lastMatch(re: RegExp, text: string): RegExpExecArray | null {
  re.lastIndex = 0;
  let last: RegExpExecArray | null = null;
  for (let m = re.exec(text); m; m = re.exec(text)) last = m;
  return last;
}

export function extractChoice(response: string): Found {
  const text = afterThink(response);
  const boxed = lastBoxed(text);
  if (boxed !== null) {
    const inner = boxed.replace(/\\(?:text|textbf|mathrm|mathbf)\s*\{([^{}]*)\}/g, "$1").trim();
    // "\boxed{B}", "\boxed{(B)}", "\boxed{B. 42}": the option is the leading letter(s).
    const lead = /^\(?([A-Za-z])\)?(?:[.:)]|\s|$)/.exec(inner);
    const letters = lettersIn(inner.replace(/[.:)]\s.*$/s, ""), true);
    if (lead && letters.length <= 1) return { letters: [lead[1].toUpperCase()], via: "boxed" };
    if (letters.length > 1) return { letters, via: "boxed" };
  }
  const tail = window(text);
  const phrase = lastMatch(ANSWER_PHRASE, tail);
  if (phrase) {
    const span = phrase[1];
    // A bare lower-case letter after "answer is" is usually the article ("is a prime"): only
    // accept lower case when bracketed.
    const bracketed = /[([]/.test(span);
    const letters = lettersIn(span, bracketed);
    if (letters.length) return { letters, via: "answer phrase" };
  }
  const bold = lastMatch(BOLD, tail);
  if (bold) return { letters: [bold[1]], via: "bold" };
  const lines = tail.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = LONE_LINE.exec(lines[i]);
    if (line) return { letters: [line[1]], via: "final line" };
  }
  return null;
}

const Letter = Type.String({ pattern: "^\\s*\\(?[A-Za-z]\\)?\\s*$" });

export const choice = defineVerifier({
  name: "choice",
  description: "Multiple choice: extracts the option letter the completion commits to and compares it with the reference.",
  reference: Type.Union([Letter, Type.Array(Letter, { minItems: 1, maxItems: 26 })]),
  options: Type.Object(
    { num_choices: Type.Integer({ minimum: 2, maximum: 26, default: 26, description: "how many options (A, B, ...); letters past it are not options" }) },
    { additionalProperties: false },
  ),
  verify(item) {
    const refs = asList(item.reference).map((r) => r.replace(/[\s()]/g, "").toUpperCase());
    const n = item.options.num_choices;
    const found = extractChoice(item.response);
    if (!found) return { reward: 0, reason: "no answer found", details: { extracted: null } };
    const valid = found.letters.filter((l) => l.charCodeAt(0) - 65 < n);
    if (valid.length === 0) {
      return { reward: 0, reason: `extracted ${found.letters.join(",")} is not one of the ${n} options`, details: { extracted: found.letters, via: found.via } };
    }
    if (valid.length > 1) {
      return { reward: 0, reason: `several options given (${valid.join(", ")}); one is required`, details: { extracted: valid, via: found.via } };
    }
    const got = valid[0];
    const ok = refs.includes(got);
    return {
      reward: ok ? 1 : 0,
      reason: ok ? `chose ${got}, the correct option` : `chose ${got}; the correct option is ${refs.join(" or ")}`,
      details: { extracted: got, via: found.via },
    };
  },
});
