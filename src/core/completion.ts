/** Small helpers over a model's completion that any verifier may use. */

/** The text after the last `</think>` (or `</tag>`): the answer part of a reasoning completion. */
export function afterThink(s: string, tag = "think"): string {
  const close = `</${tag}>`;
  const i = s.lastIndexOf(close);
  return i < 0 ? s : s.slice(i + close.length);
}
