/**
 * What the item's prompt says about the shape of its answer, read once per item: whether it asks
 * for a range of values, for a percentage, for all solutions (order not meaningful), and the
 * words it names (labelled answers are put in the order the prompt names their labels). Model
 * text never reaches here: the prompt is the item's data. Still linear, and only its last
 * PROMPT_TAIL characters are read (the question stands at the end of a few-shot prompt).
 */
export interface PromptHints {
  /** "range", "interval", "for which values", "solve" with an inequality: an inequality may answer an interval. */
  range: boolean;
  /** "percent", "percentage", `%`: a percentage answer is read to the places it is written. */
  percent: boolean;
  /** "find all", "solutions", "roots": a list of values is unordered. */
  unordered: boolean;
  /** The prompt's text, lower case (for labels). */
  text: string;
}

export const PROMPT_TAIL = 8192;

const RANGE = /\b(?:range|interval|domain|solve the inequality|solution set|set of (?:all )?(?:real )?(?:values|numbers)|(?:for )?which (?:real )?values?|values? of [a-z] (?:for which|such that|satisfying))\b/;
/** "solve" beside an inequality sign: the answer is a set of values. */
const INEQUALITY = /[<>≤≥]|\\(?:le|ge|leq|geq|lt|gt)(?![a-z])/;
const PERCENT = /\bper\s?cent(?:age)?s?\b|%/;
const UNORDERED = /\bfind all\b|\ball (?:the )?(?:real |possible |integer |positive |complex )?(?:solutions|values|roots|pairs|numbers)\b|\bsolutions\b|\broots\b/;

export function promptHints(prompt: string | undefined): PromptHints | undefined {
  if (!prompt) return undefined;
  const text = prompt.slice(-PROMPT_TAIL).toLowerCase().replace(/\\%/g, "%");
  const range = RANGE.test(text) || (/\bsolve\b/.test(text) && INEQUALITY.test(text));
  return { range, percent: PERCENT.test(text), unordered: UNORDERED.test(text), text };
}

/**
 * Where the prompt first names `label` as a word, or -1: `smallest` in "the smallest and the
 * largest", `Ana` in "Ana, Ben and Cal". Labels of two letters or more only (a single letter is
 * in every prompt).
 */
export function labelPosition(h: PromptHints, label: string): number {
  const l = label.toLowerCase().trim();
  if (l.length < 2 || !/^[a-z][a-z ]*$/.test(l)) return -1;
  let at = h.text.indexOf(l);
  while (at >= 0) {
    const before = h.text[at - 1] ?? " ", after = h.text[at + l.length] ?? " ";
    if (!/[a-z]/.test(before) && !/[a-z]/.test(after)) return at;
    at = h.text.indexOf(l, at + 1);
  }
  return -1;
}
