/** ifeval: each instruction followed and nearly followed, strict vs loose, real row shapes, hostile input. */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import request from "supertest";
import { ifeval, MAX_RESPONSE_CHARS } from "./index.js";
import { countSentences, countWords, nltkWordTokenize } from "./text.js";
import { openInstructSentences } from "./open_instruct.js";
import { InvalidItemError } from "../../src/core/types.js";
import { testApp, verifyDirect } from "../../tests/helpers.js";

/** Through the registry's validation and defaults, as the server runs it. */
const run = (response: string, reference: unknown, options: Record<string, unknown> = {}, prompt?: string) =>
  verifyDirect(ifeval, { response, reference, options, prompt });
/** One IFEval instruction: does `response` follow it (strict unless options say)? */
async function follows(id: string, kwargs: Record<string, unknown>, response: string, options: Record<string, unknown> = {}): Promise<boolean> {
  const out = await run(response, { instruction_id_list: [id], kwargs: [kwargs] }, options);
  assert.ok(out.reward === 0 || out.reward === 1, `reward ${out.reward}`);
  return out.reward === 1;
}
const both = async (id: string, kw: Record<string, unknown>, pass: string, fail: string) => {
  assert.equal(await follows(id, kw, pass), true, `${id} should pass: ${JSON.stringify(pass.slice(0, 80))}`);
  assert.equal(await follows(id, kw, fail), false, `${id} should fail: ${JSON.stringify(fail.slice(0, 80))}`);
};

const EN = "The weather today is lovely and I think we should go for a walk in the park before it rains.";

describe("each IFEval instruction: followed and a near miss", () => {
  test("keywords", async () => {
    await both("keywords:existence", { keywords: ["banana", "Split"] }, "A BANANA split.", "A banana splat.");
    await both("keywords:frequency", { keyword: "cat", frequency: 3, relation: "at least" }, "cat Cat CAT", "cat cat dog");
    await both("keywords:frequency", { keyword: "cat", frequency: 2, relation: "less than" }, "one cat", "cat and cat");
    await both("keywords:forbidden_words", { forbidden_words: ["bad", "evil"] }, "badger and devilish", "that is Bad.");
    // Greek iota folds to a combining mark: word boundaries are read on the text as written
    // (Python's re.search(r"\bκαι\b", …, re.IGNORECASE) on each: False, False, True, True; it paid
    // the first two 0 and the last two 1)
    await both("keywords:forbidden_words", { forbidden_words: ["και"] }, "Ο καιρός είναι καλός σήμερα.", "Ήρθε και έφυγε.");
    await both("keywords:forbidden_words", { forbidden_words: ["και"] }, "Η δικαιοσύνη νικά.", "Ήρθε καΙ.");
    await both("keywords:forbidden_words", { forbidden_words: ["é"] }, "\fιé", "ι é");
    await both("keywords:letter_frequency", { letter: "z", let_frequency: 3, let_relation: "at least" }, "Zzz", "zz");
    await both("keywords:letter_frequency", { letter: "a", let_frequency: 2, let_relation: "less than" }, "b a", "A a");
  });
  test("language", async () => {
    await both("language:response_language", { language: "en" }, EN, "Le temps est magnifique aujourd'hui et je pense que nous devrions nous promener.");
    await both("language:response_language", { language: "de" }, "Das Wetter ist heute schön und ich denke, wir sollten im Park spazieren gehen.", EN);
    await both("language:response_language", { language: "ne" }, "आज मौसम धेरै राम्रो छ र मलाई लाग्छ हामी पार्कमा घुम्न जानुपर्छ।", EN);
    // langdetect's exception (no letters at all) counts as followed in IFEval.
    assert.equal(await follows("language:response_language", { language: "fr" }, "12345 !!!"), true);
  });
  test("length constraints", async () => {
    await both("length_constraints:number_sentences", { num_sentences: 3, relation: "less than" }, "It is one. It is two.", "It is one. It is two. It is three.");
    await both("length_constraints:number_sentences", { num_sentences: 2, relation: "at least" }, "Dr. Smith came. He left.", "Dr. Smith came at 3 p.m. today.");
    await both("length_constraints:number_paragraphs", { num_paragraphs: 2 }, "p1\n***\np2", "p1\n***\n***\np2");
    await both("length_constraints:number_words", { num_words: 5, relation: "at least" }, "one two three four five", "one two three four");
    await both("length_constraints:number_words", { num_words: 3, relation: "less than" }, "fine ok", "it's ok"); // it / s / ok: \\w+ runs
    const kw = { num_paragraphs: 2, nth_paragraph: 2, first_word: "then" };
    await both("length_constraints:nth_paragraph_first_word", kw, "First part.\n\n\"Then, second.", "First part.\n\nThereafter second.");
    assert.equal(await follows("length_constraints:nth_paragraph_first_word", kw, "a\n\nthen b\n\nc"), false); // 3 paragraphs
  });
  test("detectable content", async () => {
    await both("detectable_content:number_placeholders", { num_placeholders: 2 }, "[name] at [address]", "[name] at [address\n]");
    await both("detectable_content:postscript", { postscript_marker: "P.S." }, "Hi.\np. s. see you", "Hi.\nPS see you");
    await both("detectable_content:postscript", { postscript_marker: "P.P.S" }, "Hi.\nP.P.S later", "Hi.\nP.S. later");
  });
  test("detectable format", async () => {
    await both("detectable_format:number_bullet_lists", { num_bullets: 2 }, "* a\n- b\ntext", "* a\n- b\n* c");
    assert.equal(await follows("detectable_format:number_bullet_lists", { num_bullets: 1 }, "**bold**\n* one"), true);
    await both("detectable_format:constrained_response", {}, "  My answer is maybe. ", "My answer is perhaps.");
    await both("detectable_format:number_highlighted_sections", { num_highlights: 2 }, "*one* and **two**", "*one* and * *");
    await both("detectable_format:multiple_sections", { section_spliter: "Section", num_sections: 2 }, "Section 1\na\nSection 2\nb", "Section 1\na\nSection two\nb");
    await both("detectable_format:json_format", {}, '```json\n{"a": [1, 2]}\n```', '```json\n{"a": [1, 2],}\n```');
    assert.equal(await follows("detectable_format:json_format", {}, '```JSON```{"a": 1}```'), true); // each removeprefix in turn
    await both("detectable_format:title", {}, "<<Poem of Joy>>\ntext", "<< >>\n<<\ntitle>>");
  });
  test("combination", async () => {
    await both("combination:two_responses", {}, "Answer one.\n******\nAnswer two.", "Same.\n******\nSame.");
    assert.equal(await follows("combination:two_responses", {}, "a\n******\n\n******\nb"), false); // blank in the middle
    const kw = { prompt_to_repeat: "Write a poem about cats." };
    await both("combination:repeat_prompt", kw, "  write a poem about CATS. Cats are soft...", "Sure! Write a poem about cats. ...");
  });
  test("start/end", async () => {
    await both("startend:end_checker", { end_phrase: "Any other questions?" }, 'Done. "Any other questions?"\n', "Any other questions? Yes.");
    await both("startend:quotation", {}, '  "quoted answer"  ', '"quoted answer');
  });
  test("change case", async () => {
    await both("change_case:capital_word_frequency", { capital_frequency: 3, capital_relation: "at least" }, "I'M SO HAPPY", "I am SO happy");
    await both("change_case:capital_word_frequency", { capital_frequency: 2, capital_relation: "less than" }, "NASA's probe", "DON'T go");
    // Capitals beyond the BMP are surrogate pairs (IFEval's reference, Python 3.11: True; the
    // count of capitals before tokenizing read each half alone and found none).
    await both("change_case:capital_word_frequency", { capital_frequency: 1, capital_relation: "at least" }, "𝐀𝐁𝐂", "𝐚𝐛𝐜");
    await both("change_case:capital_word_frequency", { capital_frequency: 2, capital_relation: "at least" }, "I think 𝐍𝐎𝐓", "I think 𝐧𝐨𝐭");
    await both("change_case:english_capital", {}, EN.toUpperCase(), EN.toUpperCase().replace("WALK", "walk"));
    await both("change_case:english_lowercase", {}, EN.toLowerCase(), EN);
    assert.equal(await follows("change_case:english_lowercase", {}, "le temps est magnifique aujourd'hui et je pense que nous devrions nous promener dans le parc."), false);
  });
  test("punctuation", async () => {
    await both("punctuation:no_comma", {}, "No commas here.", "One, two.");
  });
  test("an empty (after strip) response follows nothing, even no_comma", async () => {
    assert.equal(await follows("punctuation:no_comma", {}, "  \n "), false);
  });
});

describe("IFEval's own cases (instructions_test.py, expected values as asserted there)", () => {
  test("test_number_sentences", async () => {
    const cases: [string, string, number, boolean][] = [
      ["xx,x. xx,x! xx/x. x{x}x?", "less than", 4, false],
      ["xxxx. xx,x! xxxx. x(x)x?", "less than", 5, true],
      ["xxxx. xx,x! xx|x. x&x x?", "at least", 4, true],
      ["xx-x. xx,x! xx}x. x,xx?", "at least", 5, false],
    ];
    for (const [r, relation, n, want] of cases) {
      assert.equal(await follows("length_constraints:number_sentences", { relation, num_sentences: n }, r), want, r);
    }
  });
  test("test_number_placeholders", async () => {
    const t1 = "Sure, here is a short template with 5 placeholders:\n[Name]\n[Email]\n[Phone]\n[Address]\n[Website]\nThis template can be used for a variety of purposes, such ascreating a contact list, sending out surveys, or creating a sign-up form.";
    assert.equal(await follows("detectable_content:number_placeholders", { num_placeholders: 5 }, t1), true);
    assert.equal(await follows("detectable_content:number_placeholders", { num_placeholders: 7 }, "My [adjective] [noun] is [adjective] [noun]. I [verb] and [verb]."), false);
  });
  test("test_number_bullet_lists", async () => {
    const m1 = "\n  A Markdown bullet point is a way of formatting text to create a list. To\n  create a bullet point, start each line with an asterisk (*). For example:\n  * This is a bullet point.\n  *(no space required)Another bullet point.\n  * (no newline ending required)Another bullet point.\n  markdown bullet points are often used to create to-do lists or to list items\n  in a step-by-step guide.";
    const m2 = "\n  Check that inline asterisk (*), *, will not be counted. Only * that starts a\n  bullet list will be counted:\n    * This is a bullet point.\n    * Another bullet point.\n    . dot is not counted";
    const m4 = "\n  Here are three markdown bullets:\n  - I am a large language model, also known as a conversational AI.\n  - I am trained on a massive amount of text data, and I am able to communicate.\n  -I am still under development, but I am learning new things every day.";
    const m5 = "\n  Paragraph 1\n  ***\n  Paragraph 2\n  ***\n  Paragraph 3\n  * only one bullet point\n  ";
    for (const [m, n] of [[m1, 3], [m2, 2], [m4, 3], [m5, 1]] as const) {
      assert.equal(await follows("detectable_format:number_bullet_lists", { num_bullets: n }, m), true, m);
    }
  });
  test("test_number_highlights", async () => {
    const h1 = "\n  To highlight text with Markdown, you can use the * character before and after\n  the text you want to highlight. For example, if you want to highlight the\n  word `hello`, you would type:*hello*, You can also use the ** character to\n  create bold text. For example, if you want to bold the word `hello`, you\n  would type: **hello** ";
    const h2 = "\n  Sure, here are the numerical methods for solving partial differential\n  equations highlighted with Markdown:\n  *Finite difference methods\n  *Finite element methods*\n  *Boundary element methods\n  *Monte Carlo methods\n  I hope this helps!";
    const h3 = "\n  There is allowed to be *two different* highlighted *sections in the same*\n  line. **This is also true** for **double markdown highlights.**\n  ";
    assert.equal(await follows("detectable_format:number_highlighted_sections", { num_highlights: 2 }, h1), true);
    assert.equal(await follows("detectable_format:number_highlighted_sections", { num_highlights: 2 }, h2), false);
    assert.equal(await follows("detectable_format:number_highlighted_sections", { num_highlights: 4 }, h3), true);
  });
  test("test_section_checker and test_paragraph_checker", async () => {
    const s1 = '\n  Your response must have multiple sections. Mark the beginning of each section\n  with "Section X", such as:\n  Section 1\n  [content of section 1]\n  Section 2\n  [content of section 2]';
    const s2 = "SECTION 1\n  [content of section 1]\n  SECTION 2\n  [content of section 2]";
    assert.equal(await follows("detectable_format:multiple_sections", { section_spliter: "Section", num_sections: 3 }, s1), false);
    assert.equal(await follows("detectable_format:multiple_sections", { section_spliter: "SECTION", num_sections: 2 }, s2), true);
    const p1 = "\n  paragraph 1\n  ***\n  paragraph 2\n  ***\n  paragraph 3";
    const p2 = "\n          ***\n  paragraph 1\n          ***\n      paragraph 2\n          ***\n      paragraph 3";
    const p3 = "\n  paragraph 1\n          ***\n      paragraph 2\n          ***\n      paragraph 3\n          ***";
    const p4 = "\n  paragraph 1\n          ***\n      paragraph 2\n          ***\n          ***";
    for (const p of [p1, p2, p3]) assert.equal(await follows("length_constraints:number_paragraphs", { num_paragraphs: 3 }, p), true, p);
    assert.equal(await follows("length_constraints:number_paragraphs", { num_paragraphs: 2 }, p4), false);
  });
  test("test_postscript_checker (first cases)", async () => {
    const m1 = '\n  I will do my best to follow your instructions and always start my responses\n  with "My response is:". I will try to be as consistent as possible, but\n  please be patient with me if I make a mistake. I am still under development,\n  and I am always learning new things.\n\n  P.S. I hope this is what you were looking for.';
    assert.equal(await follows("detectable_content:postscript", { postscript_marker: "P.S." }, m1), true);
    assert.equal(await follows("detectable_content:postscript", { postscript_marker: "PS:" }, m1), false);
    const m5 = "\n  The mysteries of space and time are mysterious.\n  P. S. Sometimes there are even spaces between P. and S..\n  ";
    assert.equal(await follows("detectable_content:postscript", { postscript_marker: "P.S." }, m5), true);
  });
  test("test_constrained_response", async () => {
    for (const r of ["\n My answer is no.\n", "My answer is no.   ", "\n  My answer is no. I am still under development and I am always learning and\n  improving."]) {
      assert.equal(await follows("detectable_format:constrained_response", {}, r), true);
    }
  });
});

describe("IFEval's own cases, continued (instructions_test.py)", () => {
  /** Python's triple-quoted test messages: a leading newline and two-space indents. */
  const py = (...lines: string[]) => "\n" + lines.map((l) => "  " + l).join("\n");
  test("test_keyword_checker, test_keyword_frequency_checker", async () => {
    const m1 = py("Paris is a city of beauty and romance. The romantic river Seine winds its way", "through the city, past iconic landmarks like the Eiffel Tower and the Louvre", "Museum, where the Mona Lisa resides. Whether you're taking a boat cruise down", "the river or simply strolling along the banks, you're sure to be captivated", "by the city's charm.");
    const m2 = py("Paris is a city of beauty, romance, and history. It is home to some of the", "most iconic landmarks in the world, including the Eiffel Tower, the Louvre", "Museum, and the Notre Dame Cathedral. The city is also known for its romantic", "river cruises, its delicious food, and its stylish people.", "");
    const kw = { keywords: ["romantic", "river", "Mona Lisa"] };
    assert.equal(await follows("keywords:existence", kw, m1), true);
    assert.equal(await follows("keywords:existence", kw, m2), false);
    const f1 = py("keyword, Keyword, KEYWORD", "");
    const f2 = py("  *keyword", "  *Keyword", "  *KEYWORD", "");
    assert.equal(await follows("keywords:frequency", { keyword: "  keyword ", frequency: 4, relation: "less than" }, f1), true);
    assert.equal(await follows("keywords:frequency", { keyword: "  keyword ", frequency: 3, relation: "at least" }, f1), true);
    assert.equal(await follows("keywords:frequency", { keyword: "KEYWORD", frequency: 4, relation: "at least" }, f2), false);
  });
  test("test_num_words_checker", async () => {
    const m1 = py("d3sCRi7 lArge lAnguagE M0del w1tH 20 w0RdS.");
    const m2 = py("L4RGE L4NGU4GE M0DEL: AI syst3m th4t und3rstands, g3n3r4tes, or tr4nsforms", "l4ngu4g3 b4s3d on pr3vious l3arning & d4t4.");
    assert.equal(await follows("length_constraints:number_words", { num_words: 8, relation: "less than" }, m1), true);
    assert.equal(await follows("length_constraints:number_words", { num_words: 16, relation: "less than" }, m2), false);
    assert.equal(await follows("length_constraints:number_words", { num_words: 16, relation: "at least" }, m2), true);
  });
  test("test_paragraph_first_word", async () => {
    const t1 = py("paragraph 1", "", "I paragraph 2", "", "paragraph 3");
    const t2 = py("paragraph 1", "", "I paragraph 2");
    const t3 = py("paragraph 1", "", "fail paragraph 2", "", "paragraph 3");
    const t4 = py("Wow this is a very long response.", "", "I can't believe there is more than three paragraphs.", "", "Really more than three? No way!", "", "I can't believe it but I guess I am living proof.", "", "Haha, you go that right.");
    const t5 = t4.replace("Really more than three? No way!", '"Really?! more than three? No way!"');
    const t6 = t4.replace("Really more than three? No way!", "Rea!lly more than three? No way!");
    const id = "length_constraints:nth_paragraph_first_word";
    // Python's "\n\n  " paragraph joins: the blank lines above are "  " after indenting, so re-join.
    const fix = (t: string) => t.replaceAll("\n  \n", "\n\n");
    const three = { num_paragraphs: 3, nth_paragraph: 2, first_word: "I" };
    assert.equal(await follows(id, three, fix(t1)), true);
    assert.equal(await follows(id, three, fix(t2)), false);
    assert.equal(await follows(id, three, fix(t3)), false);
    assert.equal(await follows(id, { num_paragraphs: 5, nth_paragraph: 5, first_word: "haha" }, fix(t4)), true);
    assert.equal(await follows(id, { num_paragraphs: 5, nth_paragraph: 3, first_word: "Really" }, fix(t5)), true);
    assert.equal(await follows(id, { num_paragraphs: 5, nth_paragraph: 3, first_word: "Really" }, fix(t6)), false);
  });
  test("test_forbidden_words", async () => {
    const m1 = py("The Nazis came to power in 1933 through a combination of legal and illegal", "means. Hitler was appointed chancellor by President Paul von Hindenburg, and", "the Nazis quickly consolidated their power by passing a series of laws that", "restricted the rights of opposition parties and individuals. By 1934, Hitler", "had become dictator of Germany.", "");
    const m2 = py("Dinosaurs were a diverse group of reptiles that dominated the Earth for over", "160 million years. They came in all shapes and sizes, from the tiny", "Compsognathus to the massive Argentinosaurus. Dinosaurs were the most", "successful land animals on Earth until they went extinct about 66 million", "years ago. The exact cause of their extinction is still unknown, but it", "is thought to have been a combination of factors, including an asteroid", "impact and climate change.", "");
    const m3 = py("GPT, or Generative Pre-trained Transformer, is a family of neural network", "models that uses the transformer architecture. GPT models are trained on a", "massive dataset of text and code, and can be used for a variety of tasks,", "including text generation, translation, and question answering. GPT models", "have been shown to be very effective at these tasks, and are being used by", "a variety of companies and organizations like Google.", "");
    const w1 = { forbidden_words: ["HOUSE", "POWER", "BECOME"] };
    const w2 = { forbidden_words: ["GOOGLE", "TEXT"] };
    const w3 = { forbidden_words: ["GENE", "TRANSFORM"] };
    const id = "keywords:forbidden_words";
    assert.deepEqual([await follows(id, w1, m1), await follows(id, w1, m2), await follows(id, w1, m3)], [false, true, true]);
    assert.deepEqual([await follows(id, w2, m1), await follows(id, w2, m2), await follows(id, w2, m3)], [true, true, false]);
    assert.equal(await follows(id, w3, m3), true);
  });
  test("test_two_responses, test_prompt_repeat_answer, test_end_checker", async () => {
    const id = "combination:two_responses";
    const r = (...l: string[]) => py(...l, "");
    assert.equal(await follows(id, {}, r("This is response 1.", "******", "This is response 2.")), true);
    assert.equal(await follows(id, {}, r("This is response 1.", "******", "This is response 1.")), false);
    assert.equal(await follows(id, {}, r("This is response 1.", "******", "This is response 2.", "******", "This is response 3.")), false);
    assert.equal(await follows(id, {}, r("******", "Response 1.", "******", "******", "Response 2.", "******")), false);
    assert.equal(await follows(id, {}, r("******", "Response 1", "******", "Response 2", "******")), true);
    const rp = { prompt_to_repeat: "Write a CL description." };
    assert.equal(await follows("combination:repeat_prompt", rp, "Write a CL description. Hi, Le and TJ, please\n  check this out. Thanks.\n  "), true);
    assert.equal(await follows("combination:repeat_prompt", rp, "Hi, Le and TJ. Write a CL description. Thanks.\n  "), false);
    const end = "startend:end_checker";
    assert.equal(await follows(end, { end_phrase: py("Any more questions?", "") }, py("The answer is 7. Any more questions?", "")), true);
    assert.equal(await follows(end, { end_phrase: py("This is the end.", "") }, py("At the end of this prompt I am required to say that this is the end.", "")), true);
    assert.equal(await follows(end, { end_phrase: py("This will fail.", "") }, py("This will fail. Paris is cool.", "")), false);
  });
  test("test_title_checker, test_letter_frequency_checker", async () => {
    const t = "detectable_format:title";
    assert.equal(await follows(t, {}, py("<<Song of Joy>>", "La la la. Happy song.", "")), true);
    assert.equal(await follows(t, {}, py("Is it fine for title to be at the end?", "<<This is the title>>", "")), true);
    assert.equal(await follows(t, {}, py("<< >>", "There is no title.", "")), false);
    assert.equal(await follows(t, {}, py("<<This is not a title.", "This is a paragraph.>>", "")), false);
    const l = "keywords:letter_frequency";
    assert.equal(await follows(l, { letter: "T", let_frequency: 4, let_relation: "at least" }, py("There is the T. Four T's.", "")), true);
    assert.equal(await follows(l, { letter: "a", let_frequency: 4, let_relation: "less than" }, py("asdfghjkl!!aA", "")), true);
    assert.equal(await follows(l, { letter: "p", let_frequency: 4, let_relation: "at least" }, py("asdfghjkl!!aA", "")), false);
    // test_letter_frequency_checker_accepts_punctuation
    assert.equal(await follows(l, { letter: "#", let_frequency: 4, let_relation: "at least" }, "#one #two #three #four"), true);
    assert.equal(await follows(l, { letter: "#", let_frequency: 4, let_relation: "at least" }, "#one #two #three"), false);
  });
  test("test_english_capital/lowercase_checker, test_comma, test_capital_word_frequency, test_quotation", async () => {
    assert.equal(await follows("change_case:english_capital", {}, py("THIS IS AN ENGLISH SENTENCE. EVERY LETTER IS CAPITALIZED!!! AMAZING.", "")), true);
    assert.equal(await follows("change_case:english_capital", {}, py("Every Word Is Capitalized.", "")), false);
    assert.equal(await follows("change_case:english_lowercase", {}, py("every letter is lowercase.", "")), true);
    assert.equal(await follows("change_case:english_lowercase", {}, py("Almost every letter is lowercase.", "")), false);
    assert.equal(await follows("punctuation:no_comma", {}, py("Every sentence is short. There is no need for a comma.", "")), true);
    assert.equal(await follows("punctuation:no_comma", {}, py("Since the start of time, people have always found a way to punctuate.", "")), false);
    const c = "change_case:capital_word_frequency";
    assert.equal(await follows(c, { capital_frequency: 3, capital_relation: "at least" }, py("HERE there are THREE FUlly CAPITAL words.", "")), true);
    const m2 = py("THERE are Four FULLY CAPITAL WORDS. Many Others Are Only Partially So.", "");
    assert.equal(await follows(c, { capital_frequency: 5, capital_relation: "less than" }, m2), true);
    assert.equal(await follows(c, { capital_frequency: 4, capital_relation: "less than" }, m2), false);
    assert.equal(await follows("startend:quotation", {}, py('"This entire message is wrapped in double quotation marks."', "")), true);
    assert.equal(await follows("startend:quotation", {}, py('"This message is wrapped in double quotation marks." But not everything.', "")), false);
  });
});

describe("strict vs loose (evaluation_lib.test_instruction_following_loose)", () => {
  test("a chatty first line fails strict, passes loose", async () => {
    const r = 'Sure, here it is:\n"The whole answer in quotes."';
    assert.equal(await follows("startend:quotation", {}, r), false);
    assert.equal(await follows("startend:quotation", {}, r, { mode: "loose" }), true);
  });
  test("a trailing sign-off fails strict end_checker, passes loose", async () => {
    const r = "Body text. Is there anything else I can help with?\nCheers!";
    const kw = { end_phrase: "Is there anything else I can help with?" };
    assert.equal(await follows("startend:end_checker", kw, r), false);
    assert.equal(await follows("startend:end_checker", kw, r, { mode: "loose" }), true);
  });
  test("markdown asterisks: loose removes them", async () => {
    const r = "**" + EN.toLowerCase() + "**";
    assert.equal(await follows("change_case:english_lowercase", {}, r), true);
    assert.equal(await follows("detectable_format:number_bullet_lists", { num_bullets: 0 }, "*a thing*\n"), false);
    assert.equal(await follows("detectable_format:number_bullet_lists", { num_bullets: 0 }, "*a thing*\n", { mode: "loose" }), true);
  });
  test("loose never turns a clear miss into a pass", async () => {
    assert.equal(await follows("punctuation:no_comma", {}, "a, b\nc, d\ne, f", { mode: "loose" }), false);
  });
});

describe("rewards, reasons, details", () => {
  const ref = { instruction_id_list: ["punctuation:no_comma", "keywords:existence", "detectable_format:title"], kwargs: [{}, { keywords: ["cat"] }, {}] };
  test("fraction by default, all on request; reason names the failures", async () => {
    const out = await run("<<T>> a dog, a cat", ref);
    assert.equal(out.reward, 2 / 3);
    assert.match(out.reason, /not followed: punctuation:no_comma/);
    const d = out.details as { instructions: { id: string; followed: boolean; kwargs: unknown }[] };
    assert.deepEqual(d.instructions.map((i) => i.followed), [false, true, true]);
    assert.deepEqual(d.instructions[1].kwargs, { keywords: ["cat"] });
    assert.equal((await run("<<T>> a dog, a cat", ref, { reward: "all" })).reward, 0);
    assert.equal((await run("<<T>> a dog and a cat", ref, { reward: "all" })).reward, 1);
  });
  test("strip_think: only the text after the last </think> is scored", async () => {
    const r = "<think>hmm, commas, everywhere</think><<T>> a cat";
    assert.equal((await run(r, ref)).reward, 1);
    assert.equal((await run(r, ref, { strip_think: false })).reward, 2 / 3);
  });
});

describe("reference shapes", () => {
  test("a real IFEval input_data.jsonl row (key 1001)", async () => {
    const row = {
      key: 1001,
      prompt: "I am planning a trip to Japan, and I would like thee to write an itinerary for my journey in a Shakespearean style. You are not allowed to use any commas in your response.",
      instruction_id_list: ["punctuation:no_comma"],
      kwargs: [{}],
    };
    assert.equal((await run("Day one thou shalt see Tokyo", row)).reward, 1);
    assert.equal((await run("Day one, thou shalt see Tokyo", row)).reward, 0);
  });
  test("rows of IFEval's input_data.jsonl as published (keys 1012, 1021, 1040, 1122, 1174, 1203, 1219)", async () => {
    const rows: Record<string, unknown>[] = [
      { key: 1012, instruction_id_list: ["combination:repeat_prompt", "detectable_format:title"], kwargs: [{ prompt_to_repeat: "Write an email to my boss telling him that I am quitting. The email must contain a title wrapped in double angular brackets, i.e. <<title>>." }, {}] },
      { key: 1021, instruction_id_list: ["change_case:english_capital", "detectable_format:multiple_sections"], kwargs: [{}, { section_spliter: "PARAGRAPH", num_sections: 2 }] },
      { key: 1040, instruction_id_list: ["change_case:capital_word_frequency", "change_case:capital_word_frequency", "startend:quotation"], kwargs: [{ capital_relation: "less than", capital_frequency: 10 }, { capital_relation: "at least", capital_frequency: 1 }, {}] },
      { key: 1122, instruction_id_list: ["change_case:english_lowercase", "keywords:letter_frequency"], kwargs: [{}, { let_relation: "at least", letter: "#", let_frequency: 4 }] },
      { key: 1174, instruction_id_list: ["keywords:letter_frequency", "length_constraints:number_sentences", "detectable_format:number_highlighted_sections"], kwargs: [{ let_relation: "less than", letter: "o", let_frequency: 6 }, { relation: "less than", num_sentences: 6 }, { num_highlights: 2 }] },
      { key: 1203, instruction_id_list: ["keywords:frequency", "keywords:frequency"], kwargs: [{ relation: "at least", keyword: "war", frequency: 8 }, { relation: "at least", keyword: "peace", frequency: 10 }] },
      { key: 1219, instruction_id_list: ["change_case:english_capital", "detectable_content:postscript", "keywords:frequency"], kwargs: [{}, { postscript_marker: "P.S." }, { relation: "at least", keyword: "sneaker", frequency: 10 }] },
    ];
    const byKey = Object.fromEntries(rows.map((r) => [r.key, r]));
    const r1012 = "Write an email to my boss telling him that I am quitting. The email must contain a title wrapped in double angular brackets, i.e. <<title>>.\n\n<<Resignation>>\nDear boss, I quit.";
    assert.equal((await run(r1012, byKey[1012])).reward, 1);
    assert.equal((await run("<<Resignation>>\nDear boss, I quit.", byKey[1012])).reward, 0.5);
    const r1021 = "PARAGRAPH 1\nTHE CLAIM THAT A BAD LAW SHOULD NOT BE FOLLOWED IS TEMPTING BUT INCOMPLETE.\n\nPARAGRAPH 2\nCHANGING A LAW THROUGH LEGITIMATE MEANS IS USUALLY BETTER THAN IGNORING IT.";
    assert.equal((await run(r1021, byKey[1021])).reward, 1);
    assert.equal((await run(r1021.replace("PARAGRAPH 2", "PARAGRAPH"), byKey[1021])).reward, 0.5);
    // capital words: < 10 and >= 1 at once, and quoted
    assert.equal((await run('"Matthias Algiers: EXPERT in LOGISTICS and planning."', byKey[1040])).reward, 1);
    assert.equal((await run('"Matthias Algiers: expert in logistics and planning."', byKey[1040])).reward, 2 / 3);
    assert.equal((await run("vote today friends! #vote #democracy #yourvoice #everyvotecounts and bring a friend along with you", byKey[1122])).reward, 1);
    assert.equal((await run("*Weather bot*: tell me your city. *Reply*: sunny, 20 C.", byKey[1174])).reward, 1);
    assert.equal((await run(`${"war ".repeat(8)}${"peace ".repeat(9)}`, byKey[1203])).reward, 0.5);
    // langdetect (seed 0) reads this "de": all-capital words give it only their first letters.
    const r1219de = `NIKE IS BETTER. ${"SNEAKER ".repeat(10)}\nP.S. BUY THE ONE THAT FITS YOUR FEET.`;
    assert.equal((await run(r1219de, byKey[1219])).reward, 2 / 3);
    const r1219 = `THE SNEAKER THAT WINS: ${"THE SNEAKER, ".repeat(10)}\nP.S. BUY THE ONE THAT FITS YOUR FEET.`;
    assert.equal((await run(r1219, byKey[1219])).reward, 1);
  });
  test("HF google/IFEval rows: every kwarg key present, absent ones null", async () => {
    const nulls = { num_highlights: null, relation: null, num_words: null, num_placeholders: null, prompt_to_repeat: null, num_paragraphs: null, first_word: null, forbidden_words: null, keywords: null, language: null, num_bullets: null, end_phrase: null, nth_paragraph: null, postscript_marker: null, section_spliter: null, num_sections: null, capital_relation: null, capital_frequency: null, keyword: null, frequency: null, letter: null, let_frequency: null, let_relation: null };
    const row = {
      key: 1000,
      instruction_id_list: ["punctuation:no_comma", "detectable_format:number_highlighted_sections", "length_constraints:number_words"],
      kwargs: [{ ...nulls }, { ...nulls, num_highlights: 3 }, { ...nulls, relation: "at least", num_words: 10 }],
    };
    const good = "*one* *two* *three* and then some more words to pass ten words easily";
    assert.equal((await run(good, row)).reward, 1);
    assert.equal((await run(good.replace("*three*", "three"), row)).reward, 2 / 3);
  });
  test("RLVR-IFeval (Tulu 3) func_name ground truth, as a JSON string and as an object", async () => {
    const gt = JSON.stringify({ func_name: "verify_keyword_frequency", word: "cat", N: 2 });
    assert.equal((await run("A cat met a cat.", gt)).reward, 1);
    assert.equal((await run("A cat met a cat and a cat.", gt)).reward, 0); // exactly N there, unlike IFEval
    assert.equal((await run("<think>x</think><answer>hello world</answer>", { func_name: "validate_lowercase", N: null })).reward, 1);
    assert.equal((await run("Hello", { func_name: "validate_lowercase" })).reward, 0);
    const wc = { func_name: "validate_word_constraint", N: 25, quantifier: "around" }; // tolerance round(2.5) = 2
    assert.equal((await run("w ".repeat(27), wc)).reward, 1);
    assert.equal((await run("w ".repeat(28), wc)).reward, 0);
    const sc = { func_name: "verify_sentence_constraint", N: 2, quantifier: "at most" };
    assert.equal((await run("Mr. Smith came. He left.", sc)).reward, 1);
    assert.equal((await run("One. Two. Three.", sc)).reward, 0);
    assert.equal((await run("* a\n- b", { func_name: "verify_bullet_points", N: 2 })).reward, 1);
    assert.equal((await run('"hi"', { func_name: "validate_quotation" })).reward, 1);
    assert.equal((await run("HELLO BIG World", { func_name: "validate_frequency_capital_words", N: 2, quantifier: "at least" })).reward, 1);
    assert.equal((await run("HELLOé BIG World", { func_name: "validate_frequency_capital_words", N: 2, quantifier: "at least" })).reward, 0);
  });
  test("open-instruct IFEvalVerifier shape: [{instruction_id, kwargs}] as a JSON string", async () => {
    const gt = JSON.stringify([{ instruction_id: ["punctuation:no_comma"], kwargs: [null] }]);
    assert.equal((await run("no commas", gt)).reward, 1);
  });
  test("repeat_prompt falls back to the item's prompt", async () => {
    const ref = { instruction_id_list: ["combination:repeat_prompt"], kwargs: [{}] };
    assert.equal((await run("Say hi. Hi!", ref, {}, "Say hi.")).reward, 1);
    await assert.rejects(run("Say hi. Hi!", ref), InvalidItemError);
  });
});

describe("malformed references are invalid, naming the problem", () => {
  const bad = async (reference: unknown, re: RegExp) => {
    await assert.rejects(run("x", reference), (e: unknown) => e instanceof InvalidItemError && re.test(e.message));
  };
  test("unknown ids, bad kwargs, bad shapes", async () => {
    await bad({ instruction_id_list: ["keywords:nonsense"], kwargs: [{}] }, /unknown instruction id "keywords:nonsense"/);
    await bad({ instruction_id_list: ["length_constraints:number_words"], kwargs: [{ num_words: 5 }] }, /relation/);
    await bad({ instruction_id_list: ["length_constraints:number_words"], kwargs: [{ num_words: -1, relation: "at least" }] }, /num_words/);
    await bad({ instruction_id_list: ["length_constraints:number_words"], kwargs: [{ num_words: 5, relation: "at most" }] }, /relation/);
    await bad({ instruction_id_list: ["punctuation:no_comma"], kwargs: [{ keywords: ["x"] }] }, /unexpected kwarg "keywords"/);
    await bad({ instruction_id_list: ["punctuation:no_comma"], kwargs: [] }, /one entry per instruction/);
    await bad({ instruction_id_list: ["language:response_language"], kwargs: [{ language: "xx" }] }, /language "xx"/);
    await bad({ instruction_id_list: ["keywords:existence"], kwargs: [{ keywords: ["(unclosed"] }] }, /RE2/);
    await bad({ instruction_id_list: ["length_constraints:nth_paragraph_first_word"], kwargs: [{ num_paragraphs: 2, nth_paragraph: 3, first_word: "a" }] }, /nth_paragraph/);
    await bad({ func_name: "validate_nothing" }, /unknown func_name/);
    await bad({ func_name: "verify_letter_frequency", letter: "ab", N: 1 }, /single character/);
    await bad("not json", /neither JSON .* nor a Python literal/);
    await bad({ instruction_id_list: [] }, /non-empty/);
  });
});

describe("text helpers against IFEval's tokenisers", () => {
  test("count_words is nltk RegexpTokenizer(r'\\w+')", () => {
    assert.equal(countWords("Hello, world! It's 3.14 o'clock_now"), 8); // Hello world It s 3 14 o clock_now
    assert.equal(countWords("naïve café über"), 3);
  });
  test("count_sentences is Punkt: abbreviations, decimals, no break at bare newlines, short sentences", () => {
    assert.equal(countSentences("Hello world. This is a test."), 2);
    assert.equal(countSentences("Dr. Smith went to Washington. He arrived at 3 p.m. yesterday."), 2);
    assert.equal(countSentences("Line one\nLine two\nLine three"), 1);
    assert.equal(countSentences("The U.S. economy grew. It was 3.5 percent."), 2);
    assert.equal(countSentences(""), 0);
    assert.equal(countSentences("Yes. I agree."), 2);
    assert.equal(countSentences("One. Two. Three."), 3);
  });
  test("word_tokenize (NLTKWordTokenizer) clitics for capital words", () => {
    assert.deepEqual(nltkWordTokenize("I'M (NOT) sure, DON'T CANNOT"), ["I", "'M", "(", "NOT", ")", "sure", ",", "DO", "N'T", "CAN", "NOT"]);
  });
  test("word_tokenize: every rule, including those skipped when the text lacks what they need, as NLTK tokenizes (tokenizer-cases.json)", () => {
    // written once by tokenizer_cases.py with nltk 3.10.3: quotes of each kind, brackets, dashes,
    // the contractions in odd case and with long s (which folds to s, as in Python's IGNORECASE)
    const cases = JSON.parse(readFileSync(new URL("./tokenizer-cases.json", import.meta.url), "utf8")) as [string, string[]][];
    assert.ok(cases.length >= 9);
    for (const [text, want] of cases) assert.deepEqual(nltkWordTokenize(text), want, text);
  });
  test("open-instruct's sentence regex", () => {
    assert.equal(openInstructSentences("Mr. Smith came. He left. e.g. this. Then"), 4);
  });
});

/**
 * The fastest of 5 runs: the machine is shared, so one run can stall on another process; a
 * super-linear scan would be slow every time.
 */
async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  let best = Infinity;
  let out!: T;
  for (let i = 0; i < 5; i++) {
    // CPU time of this process: on a busy machine wall time measures the neighbours.
    const c0 = process.cpuUsage();
    out = await f();
    const c = process.cpuUsage(c0);
    best = Math.min(best, (c.user + c.system) / 1000);
  }
  return [out, best];
}

test("256 keywords fold the response once: 64 KiB of Greek under 256 forbidden words (it held the loop 3.3 s)", async () => {
  const words = Array.from({ length: 256 }, (_, i) => `word${i}`);
  let n = 0;
  const [out, ms] = await timed(() =>
    verifyDirect(ifeval, { response: "Σ".repeat(65_000) + n++, reference: { instruction_id_list: ["keywords:forbidden_words", "keywords:existence"], kwargs: [{ forbidden_words: words }, { keywords: words.slice(0, 128) }] } }),
  );
  assert.match(out.reason, /not followed: keywords:existence$/); // none of the words is there
  assert.ok(ms < 600, `${ms.toFixed(0)} ms of CPU`);
});

describe("where JavaScript's text functions differ from Python's", () => {
  // Expected values: the official checkers' expressions run in Python 3.11 on these responses
  // (re.split for paragraphs and sections, collections.Counter for letters).
  const cases: [string, Record<string, unknown>, string, number][] = [
    // JavaScript's \s holds U+FEFF, Python's does not
    ["length_constraints:number_paragraphs", { num_paragraphs: 1 }, "\ufeff***Only one paragraph here.", 0],
    ["length_constraints:number_paragraphs", { num_paragraphs: 3 }, "First.\n***\ufeff***\nThird.", 1],
    // Python's \d is any Unicode digit, outside the BMP too; its \s is Unicode (RE2's are ASCII)
    ["detectable_format:multiple_sections", { section_spliter: "Section", num_sections: 2 }, "Section \u{1d7cf}\nintro\nSection \u{1d7d0}\nbody", 1],
    ["detectable_format:multiple_sections", { section_spliter: "Sect.on", num_sections: 2 }, "Sect1on\u30001 a\nSect1on\u30002 b", 1],
    // "İ".lower() is two code points: never one of Counter's characters
    ["keywords:letter_frequency", { letter: "İ", let_frequency: 1, let_relation: "at least" }, "İstanbul", 0],
  ];
  for (const [id, kw, response, want] of cases) {
    test(`${id} ${JSON.stringify(kw)} on ${JSON.stringify(response)}: ${want}`, async () => {
      assert.equal((await run(response, { instruction_id_list: [id], kwargs: [kw] })).reward, want);
    });
  }
});

describe("hostile input", () => {
  const all = {
    instruction_id_list: [
      "keywords:existence", "keywords:frequency", "keywords:forbidden_words", "keywords:letter_frequency", "language:response_language",
      "length_constraints:number_sentences", "length_constraints:number_paragraphs", "length_constraints:number_words", "length_constraints:nth_paragraph_first_word",
      "detectable_content:number_placeholders", "detectable_content:postscript", "detectable_format:number_bullet_lists", "detectable_format:constrained_response",
      "detectable_format:number_highlighted_sections", "detectable_format:multiple_sections", "detectable_format:json_format", "detectable_format:title",
      "combination:two_responses", "combination:repeat_prompt", "startend:end_checker", "startend:quotation", "change_case:capital_word_frequency",
      "change_case:english_capital", "change_case:english_lowercase", "punctuation:no_comma",
    ],
    kwargs: [
      { keywords: ["a+b", "zz"] }, { keyword: "ab", frequency: 3, relation: "at least" }, { forbidden_words: ["evil"] }, { letter: "a", let_frequency: 5, let_relation: "at least" },
      { language: "en" }, { num_sentences: 5, relation: "less than" }, { num_paragraphs: 3 }, { num_words: 100, relation: "at least" },
      { num_paragraphs: 2, nth_paragraph: 2, first_word: "a" }, { num_placeholders: 3 }, { postscript_marker: "P.P.S" }, { num_bullets: 2 }, {},
      { num_highlights: 2 }, { section_spliter: "Section", num_sections: 2 }, {}, {}, {}, { prompt_to_repeat: "repeat me" }, { end_phrase: "bye" }, {},
      { capital_frequency: 3, capital_relation: "at least" }, {}, {}, {},
    ],
  };
  const unit = ["[", "*", "<<", "p.", "-", "a", " ", "\n", "Section ", "***", "{", "\"", ".", "A", "<", "'", "a.b.", "******"];
  const near = MAX_RESPONSE_CHARS - 1;
  const cases: [string, string][] = [
    ...unit.map((u) => [`${JSON.stringify(u)} repeated to the cap`, u.repeat(Math.ceil(near / u.length)).slice(0, near)] as [string, string]),
    ["every unit mixed, to the cap", unit.join("").repeat(Math.ceil(near / unit.join("").length)).slice(0, near)],
    ["1 MB of text (over the cap)", "word, ".repeat(175_000)],
  ];
  for (const mode of ["strict", "loose"]) {
    test(`all 25 instructions on ${cases.length} adversarial responses (${mode}) stay fast`, async () => {
      for (const [, response] of cases) await run(response.slice(0, 2000), all, { mode }); // JIT warm-up, not timed
      let worst = 0;
      let worstName = "";
      for (const [name, response] of cases) {
        const [out, dt] = await timed(() => run(response, all, { mode }));
        assert.equal(typeof out.reward, "number", name);
        if (dt > worst) [worst, worstName] = [dt, name];
      }
      console.log(`# ifeval hostile ${mode}: worst ${worst.toFixed(1)} ms (${worstName}) for 25 instructions`);
      // 25 instructions on one maximal response; the budget per instruction is well under 50 ms.
      assert.ok(worst < (mode === "strict" ? 500 : 2000), `worst ${worst.toFixed(0)} ms on ${worstName}`);
    });
  }
  test("single-instruction hostile items each score under 50 ms", async () => {
    const items: [string, Record<string, unknown>, string][] = [
      ["detectable_content:number_placeholders", { num_placeholders: 1 }, "[".repeat(near)],
      ["detectable_format:title", {}, "<<".repeat(near / 2)],
      ["detectable_format:number_highlighted_sections", { num_highlights: 1 }, "*".repeat(near)],
      ["detectable_format:number_bullet_lists", { num_bullets: 1 }, " ".repeat(near - 1) + "x"],
      ["detectable_format:number_bullet_lists", { num_bullets: 1 }, "\n".repeat(near - 1) + "x"],
      ["length_constraints:number_paragraphs", { num_paragraphs: 1 }, " ".repeat(near)],
      ["detectable_format:multiple_sections", { section_spliter: "Section", num_sections: 1 }, "Section ".repeat(near / 8)],
      ["keywords:forbidden_words", { forbidden_words: ["a"] }, "ab".repeat(near / 2)],
      ["language:response_language", { language: "en" }, "a".repeat(near)],
      ["detectable_format:json_format", {}, "[".repeat(near)],
      ["length_constraints:number_words", { num_words: 1, relation: "at least" }, "x".repeat(10 * near)],
      ["change_case:capital_word_frequency", { capital_frequency: 3, capital_relation: "at least" }, "DON'T. ".repeat(near / 7)],
      ["change_case:capital_word_frequency", { capital_frequency: 3, capital_relation: "at least" }, "aA'S. ".repeat(near / 6)],
      ["change_case:capital_word_frequency", { capital_frequency: 3, capital_relation: "at least" }, '"'.repeat(near)],
      // a space is both a closer after a period and whitespace: once 8 s of backtracking
      ["change_case:capital_word_frequency", { capital_frequency: 1, capital_relation: "at least" }, "A." + " ".repeat(near - 3) + "x"],
      ["length_constraints:number_sentences", { num_sentences: 5, relation: "less than" }, "J. ".repeat(near / 3)],
      ["length_constraints:number_sentences", { num_sentences: 5, relation: "less than" }, ". ".repeat(near / 2)],
      ["length_constraints:number_sentences", { num_sentences: 5, relation: "at least" }, "Dr. ".repeat(near / 4)],
      ["length_constraints:number_sentences", { num_sentences: 5, relation: "at least" }, "?".repeat(near)],
    ];
    for (const [id, kw, response] of items) {
      const [out, dt] = await timed(() => run(response, { instruction_id_list: [id], kwargs: [kw] }));
      assert.equal(typeof out.reward, "number");
      assert.ok(dt < 50, `${id} took ${dt.toFixed(1)} ms`);
    }
  });
  test("over the cap: reward 0 with a reason, not an error", async () => {
    const out = await run("x".repeat(MAX_RESPONSE_CHARS + 1), { instruction_id_list: ["punctuation:no_comma"], kwargs: [{}] });
    assert.equal(out.reward, 0);
    assert.match(out.reason, /over the 65536/);
  });
});

describe("HTTP", () => {
  test("/reward/batch scores ifeval items and marks a bad one invalid", async () => {
    const { app } = await testApp();
    const res = await request(app)
      .post("/reward/batch")
      .send({
        items: [
          { verifier: "ifeval", response: "no commas here", reference: { instruction_id_list: ["punctuation:no_comma"], kwargs: [{}] } },
          { verifier: "ifeval", response: "x", reference: { instruction_id_list: ["nope:nope"], kwargs: [{}] } },
          { verifier: "ifeval", response: "a, b", reference: '{"func_name": "validate_no_commas"}', options: { mode: "loose" } },
        ],
      });
    assert.equal(res.status, 200);
    const [a, b, c] = res.body.results;
    assert.equal(a.status, "ok");
    assert.equal(a.reward, 1);
    assert.equal(b.status, "invalid");
    assert.match(b.reason, /nope:nope/);
    assert.equal(c.reward, 0);
  });
});
