/**
 * The IFEval bench mix (bench/ifeval.ts, bench/ifeval-ab.ts): IFEval-like responses (about 0.5-2.5 KB
 * of prose, some with bullets, highlights, sections, P.S., titles, JSON, quotes, ALL CAPS or lower
 * case) with 1-3 instructions each, drawn from all 25 instruction types with IFEval's kwargs.
 */
import { mulberry32 } from "../verifiers/math/compare.js";

const SENTENCES = [
  "The old lighthouse stood at the edge of the cliff, its lamp long since dark.",
  "Researchers have found that regular walks improve both mood and memory.",
  "In 1969, Apollo 11 carried three astronauts to the Moon and back.",
  "A good itinerary balances famous sights with quiet afternoons.",
  "Dr. Rivera explained the results at 3 p.m. to a packed room.",
  "Why do cats knock things off tables?",
  "The recipe calls for two cups of flour, one egg and a pinch of salt.",
  "Markets opened higher on Monday after a week of losses.",
  "She wrote the letter twice before she was happy with it!",
  "Each chapter ends with a short summary and a few questions.",
];
export type Item = { verifier: string; prompt?: string; response: string; reference: unknown; options?: Record<string, unknown> };

export function mix(n: number): Item[] {
  const rnd = mulberry32(11);
  const pick = <T>(a: T[]) => a[Math.floor(rnd() * a.length)];
  const prose = (k: number) => Array.from({ length: 2 * k }, () => pick(SENTENCES)).join(" ");
  const paragraphs = (p: number, k: number) => Array.from({ length: p }, () => prose(k)).join("\n\n");
  const kinds: (() => [string, string, Record<string, unknown>][] | [string, string, Record<string, unknown>])[] = [
    () => [paragraphs(3, 5), "keywords:existence", { keywords: ["lighthouse", "memory"] }],
    () => [paragraphs(3, 5), "keywords:frequency", { keyword: "the", frequency: 5, relation: "at least" }],
    () => [paragraphs(2, 6), "keywords:forbidden_words", { forbidden_words: ["moon", "flour"] }],
    () => [paragraphs(2, 6), "keywords:letter_frequency", { letter: "q", let_frequency: 2, let_relation: "less than" }],
    () => [paragraphs(2, 6), "language:response_language", { language: pick(["en", "fr"]) }],
    () => [paragraphs(2, 5), "length_constraints:number_sentences", { num_sentences: 12, relation: pick(["less than", "at least"]) }],
    () => [prose(4) + "\n***\n" + prose(4) + "\n***\n" + prose(3), "length_constraints:number_paragraphs", { num_paragraphs: 3 }],
    () => [paragraphs(3, 6), "length_constraints:number_words", { num_words: 200, relation: pick(["less than", "at least"]) }],
    () => [paragraphs(3, 4), "length_constraints:nth_paragraph_first_word", { num_paragraphs: 3, nth_paragraph: 2, first_word: "the" }],
    () => [`Dear [name],\n\n${prose(5)}\n\nBest,\n[sender] at [address]`, "detectable_content:number_placeholders", { num_placeholders: 3 }],
    () => [`${paragraphs(2, 5)}\n\nP.S. ${prose(1)}`, "detectable_content:postscript", { postscript_marker: pick(["P.S.", "P.P.S"]) }],
    () => [`${prose(2)}\n* ${prose(1)}\n* ${prose(1)}\n* ${prose(1)}\n${prose(2)}`, "detectable_format:number_bullet_lists", { num_bullets: pick([3, 4]) }],
    () => [`${prose(3)} My answer is yes.`, "detectable_format:constrained_response", {}],
    () => [`*${prose(1)}* ${prose(4)} **${prose(1)}** ${prose(3)}`, "detectable_format:number_highlighted_sections", { num_highlights: pick([2, 3]) }],
    () => [`Section 1\n${prose(4)}\nSection 2\n${prose(4)}`, "detectable_format:multiple_sections", { section_spliter: "Section", num_sections: pick([2, 3]) }],
    () => ["```json\n" + JSON.stringify({ summary: prose(3), points: [prose(1), prose(1)] }, null, 2) + "\n```", "detectable_format:json_format", {}],
    () => [`<<${prose(1).slice(0, 30)}>>\n\n${paragraphs(2, 5)}`, "detectable_format:title", {}],
    () => [`${prose(4)}\n******\n${prose(4)}`, "combination:two_responses", {}],
    () => [`Write a story about a lighthouse. ${paragraphs(2, 5)}`, "combination:repeat_prompt", { prompt_to_repeat: "Write a story about a lighthouse." }],
    () => [`${paragraphs(2, 5)} Is there anything else I can help with?`, "startend:end_checker", { end_phrase: "Is there anything else I can help with?" }],
    () => [`"${paragraphs(2, 5)}"`, "startend:quotation", {}],
    () => [paragraphs(2, 5).replace(/walks|Moon|FLOUR/g, (w) => w.toUpperCase()), "change_case:capital_word_frequency", { capital_frequency: 3, capital_relation: "less than" }],
    () => [paragraphs(2, 5).toUpperCase(), "change_case:english_capital", {}],
    () => [paragraphs(2, 5).toLowerCase(), "change_case:english_lowercase", {}],
    () => [paragraphs(2, 5).replaceAll(",", ""), "punctuation:no_comma", {}],
  ];
  const out: Item[] = [];
  for (let i = 0; i < n; i++) {
    const k = 1 + Math.floor(rnd() * 3);
    const parts = Array.from({ length: k }, () => pick(kinds)() as [string, string, Record<string, unknown>]);
    // One response per item (the first kind's); every instruction is checked against it.
    const ids = [...new Set(parts.map((p) => p[1]))];
    const kwargs = ids.map((id) => parts.find((p) => p[1] === id)![2]);
    out.push({ verifier: "ifeval", response: parts[0][0], reference: { instruction_id_list: ids, kwargs } });
  }
  return out;
}

