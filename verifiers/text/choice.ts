/**
 * choice: multiple-choice letter extraction. Finds the option the completion commits to
 * ("The answer is (B)", "\boxed{B}", "<answer>B</answer>", "**B**", a final line "B.") and
 * compares it with the reference letter. A completion that commits to several options earns
 * nothing; one that only mentions an option ("Option A is wrong because …") commits to nothing.
 */
import { Type } from "@sinclair/typebox";
import { defineVerifier } from "../../src/core/verifier.js";
import { afterThink, boxedSpans } from "../../src/core/completion.js";
import { asList } from "./normalize.js";
import { lastAnswerTag } from "./exact.js";

type Found = { letters: string[]; via: string } | null;

/**
 * A commitment: a keyword, then "is" / ":" / "=" / "would be" … ("the answer is", "Answer:",
 * "the correct option is", "Option: "), then an optional "option"/"choice" and an optional hedge
 * ("I think it is"). A bare "option"/"choice"/"answer" is a mention, not a commitment: "Option B
 * is wrong", "the other options", "this answer is a consequence". What follows is read by
 * `lettersAt`. Every quantifier stops at a different character class (the window has no two
 * adjacent whitespace characters), so a match attempt is linear in what it consumes.
 */
const COMMITMENT = new RegExp(
  String.raw`\b(?:final\s+answer|(?:correct|right|best)\s+(?:answer|option|choice)|answer|option|choice)\b[*_]*\s*` +
    String.raw`(?:(?:is|would\s+be|should\s+be|must\s+be|will\s+be)\b(?:\s+(?:therefore|thus|clearly|likely|probably|definitely|indeed|most\s+likely)\b)?|[:=\-–—])` +
    String.raw`[\s:*_]*(?:(?:option|choice)\b[\s:*_]*)?` +
    String.raw`(?:I(?:\s+(?:think|believe|guess|suspect|feel|would\s+say)|['’]d\s+say)\s+(?:that\s+)?(?:(?:it|this)\s+(?:is|must\s+be|should\s+be|would\s+be)\s+)?(?:(?:option|choice)\s+)?)?`,
  "gi",
);
/** A mention of an option with no commitment: read only when it ends the text ("… so option B."). */
const MENTION = /\b(?:option|choice)\b/gi;
/** What may follow an option that ends the text. */
const CLOSING = /[\s.!*_)\]}$]*$/y;
/** A negation just before a mention: "C, not option B." */
const NEGATED = /\b(?:not|nor|than|except|without|instead\s+of)\s*[*_]*\s*$/i;
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

/** A LaTeX wrapper around a letter: `\text{`, `\textbf{`, `\mathrm{`, …, or the math delimiters `\(`, `\[`. */
const LATEX_OPEN = /\\(?:(?:text(?:bf|it|rm|sf)?|math(?:rm|bf|it|sf))\s*\{|[([])/y;
const LATEX_CLOSE = /\\[)\]]/y;
/** The word after a bare "I": a pronoun's verb ("I think", "I am") unless it is one of these. */
const AFTER_OPTION_I = new Set(["and", "or", "nor", "because", "since", "as", "which", "is", "was", "for", "with", "from", "given", "due", "so", "but", "then", "here", "being", "in", "on", "per"]);
const WORD = /[ \n]([A-Za-z]{1,24})/y;
const LETTER = /[A-Za-z]/;
const NOT_AFTER_LETTER = /[A-Za-z0-9]|['’][A-Za-z]/y;
/**
 * Between two letters of a list: "A, B", "A and B", "A or B", "A & B", "A/B", and the hedges
 * "A, or B", "A and/or B", "A (or B)", "A or maybe B", "A vs B", "A | B", `A \vee B`,
 * `A \text{ or } B`, and "or" between LaTeX spaces: `A\,or\,B`, `A\;or\;B`, `A\ or\ B`,
 * `A \quad or \quad B`, `A~or~B` (each of these paid its first letter).
 */
const SEPARATOR =
  /[ \n]?\(?(?:,(?:[ \n]?(?:and\/or|and|or)(?![A-Za-z]))?|&|\/|\||and\/or(?![A-Za-z])|and(?![A-Za-z])|or(?![A-Za-z])|vs\.?(?![A-Za-z])|versus(?![A-Za-z])|\\(?:vee|lor)(?![A-Za-z])|\\text\{[ \n]?(?:or|and)[ \n]?\}|(?:\\[,;:! ]|\\q?quad(?![A-Za-z])|~)[ \n]?(?:and\/or|and|or)(?![A-Za-z])[ \n]?(?:\\[,;:! ]|\\q?quad(?![A-Za-z])|~)?)(?:[ \n](?:maybe|possibly|perhaps|probably|also|even)(?![A-Za-z]))?/iy;

/**
 * One option letter at `t[i…]`, after whitespace and wrappers (`(B)`, `[B]`, `**B**`, `$B$`,
 * `\text{B}`, `\(B\)`), and where what closes it ends; null when none is there. A lower-case
 * letter counts only when bracketed, or when `lower` (inside `\boxed{}` or an answer tag): after
 * "answer is", "a" is usually the article. A bare "I" followed by a word ("I think", "I am") is
 * the pronoun; "I", "(I)", "**I**", "I." and "I because" are option I.
 */
function letterAt(t: string, i: number, lower: boolean): { letter: string; end: number } | null {
  let wrapped = false;
  let bracketed = false;
  let underscore = false;
  for (;;) {
    const c = t[i];
    if (c === " " || c === "\n") i++;
    else if (c === "*" || c === "$" || c === "{") (wrapped = true), i++;
    else if (c === "_") (wrapped = underscore = true), i++;
    else if (c === "(" || c === "[") (wrapped = bracketed = true), i++;
    else if (c === "\\") {
      LATEX_OPEN.lastIndex = i;
      const m = LATEX_OPEN.exec(t);
      if (!m) return null;
      wrapped = true;
      i += m[0].length;
    } else break;
  }
  const letter = t[i];
  if (letter === undefined || !LETTER.test(letter)) return null;
  NOT_AFTER_LETTER.lastIndex = i + 1;
  if (NOT_AFTER_LETTER.test(t)) return null; // a word, a number, "I'd"
  if (letter !== letter.toUpperCase() && !bracketed && !lower) return null;
  let j = i + 1;
  for (;;) {
    const c = t[j];
    if (c === ")" || c === "]" || c === "}" || c === "*" || c === "$" || (c === "_" && underscore)) j++;
    else if (c === "\\") {
      LATEX_CLOSE.lastIndex = j;
      if (!LATEX_CLOSE.test(t)) break;
      j += 2;
    } else break;
  }
  if (letter === "I" && !wrapped) {
    WORD.lastIndex = j;
    const w = WORD.exec(t);
    if (w && !AFTER_OPTION_I.has(w[1].toLowerCase())) return null;
  }
  return { letter: letter.toUpperCase(), end: j };
}

/**
 * The option letters at `t[i…]`: one, or a list ("A or B", "(A), (B) and (C)", "(A)(B)"); []
 * when none. In a box or answer tag's body (`body`), letters apart by spaces are a list too
 * (`<answer>A B C D</answer>`): the whole body is the answer.
 */
function lettersAt(t: string, i: number, lower: boolean, body = false): { letters: string[]; end: number } {
  const first = letterAt(t, i, lower);
  if (!first) return { letters: [], end: i };
  const letters = [first.letter];
  let end = first.end;
  while (t[end] !== ".") {
    SEPARATOR.lastIndex = end;
    const sep = SEPARATOR.exec(t);
    // no separator: a bracketed letter right after ("(A)(B)"), or in a body any letter after spaces
    const at = sep ? end + sep[0].length : t[end] === "(" || t[end] === "[" || body ? end : -1;
    if (at < 0) break;
    const next = letterAt(t, at, lower);
    if (!next) break;
    letters.push(next.letter);
    end = next.end;
  }
  return { letters: [...new Set(letters)], end };
}

/**
 * The option a `\boxed{…}` or `<answer>…</answer>` body names: "B", "(B)", "B. 42", "(C) 12",
 * "A, B"; null when it names none. Only its start is read (BODY_HEAD characters: a list of
 * options holds two within it), so a 1 MiB body costs a trim and a slice.
 */
const BODY_HEAD = 4096;
function bodyLetters(body: string): string[] | null {
  const { letters } = lettersAt(body.trimStart().slice(0, BODY_HEAD).replace(/\s+/g, " "), 0, true, true);
  return letters.length ? letters : null;
}

export function extractChoice(response: string): Found {
  const text = afterThink(response);
  // The last \boxed{} and the last <answer>…</answer>: the later one first.
  const spans: { start: number; body: string; via: string }[] = [];
  const boxes = boxedSpans(text);
  if (boxes.length) spans.push({ ...boxes[boxes.length - 1], via: "boxed" });
  const tag = lastAnswerTag(text);
  if (tag) spans.push({ ...tag, via: "answer tag" });
  spans.sort((a, b) => b.start - a.start);
  for (const s of spans) {
    const letters = bodyLetters(s.body);
    if (letters) return { letters, via: s.via };
  }
  const tail = window(text);
  // The last commitment that names a letter: a later one that names none ("this answer is a
  // consequence of …") does not hide it.
  const commitments = [...tail.matchAll(COMMITMENT)];
  for (let k = commitments.length - 1; k >= 0; k--) {
    const m = commitments[k]!;
    const { letters } = lettersAt(tail, m.index + m[0].length, false);
    if (letters.length) return { letters, via: "answer phrase" };
  }
  // "… so option B." with no commitment anywhere: an option that ends the text.
  let mention: RegExpExecArray | null = null;
  MENTION.lastIndex = 0;
  for (let m = MENTION.exec(tail); m; m = MENTION.exec(tail)) mention = m;
  if (mention && !NEGATED.test(tail.slice(Math.max(0, mention.index - 24), mention.index))) {
    const { letters, end } = lettersAt(tail, mention.index + mention[0].length, false);
    CLOSING.lastIndex = end;
    if (letters.length && CLOSING.test(tail)) return { letters, via: "option at the end" };
  }
  let bold: RegExpExecArray | null = null;
  BOLD.lastIndex = 0;
  for (let m = BOLD.exec(tail); m; m = BOLD.exec(tail)) bold = m;
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
