/**
 * Multiple choice: when the reference is one option letter, a completion may commit to a letter
 * in prose ("the correct choice is (B)", "Answer: option C") rather than in a box.
 */

/** A normalised reference that is one option letter: `B`, `(B)`. */
const LETTER = /^\(?([A-J])\)?$/;

export function choiceLetter(normalized: string): string | null {
  return LETTER.exec(normalized.trim())?.[1] ?? null;
}

/** A normalised answer that names an option and then its value: `(C) 12`. */
const LABELLED = /^\(([A-J])\)\s*(\S[\s\S]*)$/;

/**
 * The option and the value of an answer written as AMC solutions box it, `\textbf{(C)}\ 12`
 * (`(C) 12` once normalised); null for any other answer. Such an answer is neither the letter
 * alone nor the value alone: read as one expression it is the product `C * 12`.
 */
export function optionLabel(normalized: string): { letter: string; value: string } | null {
  const m = LABELLED.exec(normalized.trim());
  if (!m) return null;
  const value = m[2].trim();
  // not a list of options: `(A), (B)`, `(C) or (D)`, `(C) D`
  if (NOT_A_VALUE.test(value) || ANOTHER_OPTION.test(value) || choiceLetter(value) !== null) return null;
  return { letter: m[1], value };
}
const NOT_A_VALUE = /^(?:[,;/&]|(?:or|and)(?![a-z]))/i;
const ANOTHER_OPTION = /\([A-J]\)/;

/** The option letter an answer names: the letter alone (`B`, `(B)`) or a labelled value's (`(B) 12`). */
export function namedLetter(normalized: string): string | null {
  return choiceLetter(normalized) ?? optionLabel(normalized)?.letter ?? null;
}

/** Only the end of a completion is read for a letter (the regex below stays linear on it). */
const TAIL = 4096;

const COMMIT = /\b(?:[Aa]nswer|[Cc]hoice|[Oo]ption)\s{0,3}(?:is|would be|should be|:)?\s{0,3}(?:[Oo]ption|[Cc]hoice)?\s{0,3}:?\s{0,3}\**\s{0,3}(?:\\text\{\s{0,3})?\(?([A-J])\)?(?![A-Za-z0-9])/g;
/** Another option letter after the committed one in the same sentence: a list of options. */
const ANOTHER = /(?:,|\bor\b|\band\b|\/)\s{0,3}(?:[Oo]ption\s{1,3})?\(?[A-J]\)?(?![A-Za-z0-9])/;

/**
 * The option letter the completion's last "answer/choice/option is X" commits to; null when
 * there is none, or when that sentence names other letters too ("the answer is (A) or (B)").
 */
export function letterInProse(text: string): string | null {
  const s = text.length > TAIL ? text.slice(-TAIL) : text;
  let last: RegExpExecArray | null = null;
  COMMIT.lastIndex = 0;
  for (let m = COMMIT.exec(s); m; m = COMMIT.exec(s)) last = m;
  if (!last) return null;
  const after = s.slice(last.index + last[0].length, last.index + last[0].length + 200).split(/[.\n]/)[0];
  return ANOTHER.test(after) ? null : last[1];
}
