"""Regenerates parity-cases.json: responses written for every IFEval instruction family (empty,
huge, markdown corners, non-Latin scripts, outlines, Unicode spacing and casing), each with the
strict verdict of the reference checker: `response.strip() and check_following(response)`, as
evaluation_lib.test_instruction_following_strict computes it.

The checkers are the IFEval classes as open-instruct ships them in open_instruct/IFEvalG/
(allenai/open-instruct @ e6c3044aa6201c8bfa4573c1b03142af599e730d, Apache-2.0; their
`check_following` bodies are the same as google-research instruction_following_eval's, see the
README), imported from a checkout, nothing copied here. Run once (Python 3.11.7, nltk 3.10.3,
absl-py, immutabledict; langdetect @ 5071871742170034557c0e6ec8d6e410f3d9652f on PYTHONPATH):

    git --git-dir=<open-instruct mirror> archive e6c3044aa6201c8bfa4573c1b03142af599e730d open_instruct | tar -x -C /tmp/oic
    PYTHONPATH=/tmp/langdetect python verifiers/ifeval/parity_cases.py /tmp/oic > verifiers/ifeval/parity-cases.json

NLTK's trained Punkt model is not on this machine: count_sentences and word_tokenize get an
untrained PunktSentenceTokenizer. Rows of `length_constraints:number_sentences` and the
language-detecting ids are marked `known` (sentence splitting and language identification are
replaced by other work); word_tokenize rows avoid abbreviations, so any Punkt model splits alike.
"""
import json
import sys

sys.path.insert(0, sys.argv[1])

import nltk  # noqa: E402
from nltk.tokenize.punkt import PunktSentenceTokenizer  # noqa: E402

_untrained = PunktSentenceTokenizer()
nltk.tokenize.sent_tokenize = lambda text, language="english": _untrained.tokenize(text)

# nltk 3.10.3 (the only one on the local index) compiles RegexpTokenizer patterns with the `regex`
# engine, whose \w also takes combining marks (count_words("नमस्ते दुनिया") is 2, with `re` 5).
# IFEval's published results, and this verifier, follow nltk <= 3.9, which compiled with `re`:
# that one line of nltk 3.9.1's regexp.py is restored here.
import re  # noqa: E402

from nltk.tokenize.regexp import RegexpTokenizer  # noqa: E402


def _check_regexp_nltk_3_9(self):
    if self._regexp is None:
        self._regexp = re.compile(self._pattern, self._flags)


RegexpTokenizer._check_regexp = _check_regexp_nltk_3_9

from langdetect import DetectorFactory  # noqa: E402

DetectorFactory.seed = 0

from open_instruct.IFEvalG import instructions_util  # noqa: E402

instructions_util._get_sentence_tokenizer = lambda: _untrained  # count_sentences
from open_instruct.IFEvalG import instructions_registry  # noqa: E402

KNOWN = {"length_constraints:number_sentences", "language:response_language", "change_case:english_capital",
         "change_case:english_lowercase"}

EN = "The weather today is lovely and I think we should go for a walk in the park before it rains."
HUGE = " ".join(["river"] * 3000 + ["stone"] * 3000)
TEXTS = [
    "", "   \n\t ", EN, EN.upper(), EN.lower(), HUGE, HUGE.upper(),
    "* one\n* two\n* three", "- a\n- b", "  * indented\n\t- tab", "\u3000* ideographic space\n\u00a0- nbsp", "**bold**\n*italic*\n* real",
    "*\nnext", "***\n* * *\n---", "1. first\n2. second", "• bullet\n• bullet",
    "I. Intro\nA. Point\nB. Point\nII. Body\nA. More", "Section 1\nText\nSection 2\nMore", "SECTION 1 a SECTION2 b section 3 c",
    "PARAGRAPH 1\nx\nPARAGRAPH 2\ny", "Section one\nSection 1", "Sección 1\nTexto\nSección 2\nMás",
    "<<Title>>\nbody", "<<>>", "<< >>", "<<a\nb>>", "<<<<nested>>>>", "<<标题>>\n正文",
    '{"a": 1}', '```json\n{"a": [1, 2]}\n```', '```JSON\n{"a": NaN}\n```', "[Infinity, -Infinity]", "[-NaN]", '{"a": 1,}', '"just a string"',
    "```\n[1, 2]\n```", "```Json{}```",
    "First paragraph.\n\nSecond paragraph.\n\nThird paragraph.", "One\n\n\n\nTwo", "\n\nLead\n\nTail\n\n", "Alpha\n***\nBeta\n***\nGamma",
    "Alpha *** Beta", "***Alpha***", "Alpha\n***\n\n***\nBeta",
    "[name] lives at [address] on [date]", "[a\nb] [c]", "[[x]]", "[]",
    "Body text.\nP.S. Remember me.", "Body\np.s. lower", "Body\nP.P.S twice", "Body\nP. P. S later", "P.S.", "Body\nPS no dots",
    "My answer is yes.", "my answer is yes.", "  My answer is maybe.  ", "My answer is no",
    "Response one\n******\nResponse two", "Same\n******\nSame", "A\n******\n\n******\nB", "******\nA\n******\nB\n******",
    '"Quoted whole."', '"', '""', "\u201cCurly\u201d", ' "padded" ',
    "Is there anything else I can help with?", '"Is there anything else I can help with?"', "Is there anything else I can help with? ",
    "Nº 5 IS HERE", "ΑΘΗΝΑ ΕΙΝΑΙ ΩΡΑΙΑ", "STRASSE UND ǅ", "İSTANBUL IS BIG", "istanbul is big", "ı dotless", "ſtone",
    "NASA AND ESA WORK TOGETHER ON BIG PROJECTS", "The USA, UK and EU met", "DON'T STOP", "OK OK OK OK",
    "Привет, как дела? Всё хорошо.", "这是一个测试。没有逗号", "これはテストです、はい", "مرحبا، كيف حالك", "नमस्ते दुनिया",
    "Wörter, Straße, Größe", "naïve café, résumé", "comma,less", "no commas here", "full\uff0cwidth comma",
    "Mr. Smith went to Washington. He met Dr. Jones at 3 p.m. today. They talked.", "e.g. this, i.e. that, etc. and so on.",
    "Wow! Really? Yes. No... Maybe.", "One. Two. Three. Four. Five. Six.", "J.K. Rowling wrote it. It sold.",
    "Cat cat CAT cAt", "concatenate the cat", "The river flows into the River", "riverbank and rivers", "İstanbul river",
    "banana split", "bad badger evil devilish", "BAD!", "the word 'bad' appears",
    "zzz buzz fizz", "ZzZz", "aaaaaaaaaa", "ééé e",
    "Write a story about a cat. Once upon a time...", "write a story about a cat. it was", "  Write a story about a cat.",
]
INSTR = [
    ("keywords:existence", {"keywords": ["river"]}), ("keywords:existence", {"keywords": ["cat", "the"]}),
    ("keywords:existence", {"keywords": ["istanbul"]}), ("keywords:existence", {"keywords": ["stone"]}),
    ("keywords:frequency", {"keyword": "cat", "frequency": 2, "relation": "at least"}),
    ("keywords:frequency", {"keyword": "river", "frequency": 2, "relation": "less than"}),
    ("keywords:frequency", {"keyword": "i", "frequency": 3, "relation": "at least"}),
    ("keywords:forbidden_words", {"forbidden_words": ["bad", "evil"]}), ("keywords:forbidden_words", {"forbidden_words": ["istanbul", "stone"]}),
    ("keywords:letter_frequency", {"letter": "z", "let_frequency": 3, "let_relation": "at least"}),
    ("keywords:letter_frequency", {"letter": "e", "let_frequency": 5, "let_relation": "less than"}),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 3}), ("length_constraints:number_paragraphs", {"num_paragraphs": 2}),
    ("length_constraints:number_words", {"num_words": 10, "relation": "at least"}),
    ("length_constraints:number_words", {"num_words": 5, "relation": "less than"}),
    ("length_constraints:nth_paragraph_first_word", {"num_paragraphs": 3, "nth_paragraph": 2, "first_word": "second"}),
    ("length_constraints:nth_paragraph_first_word", {"num_paragraphs": 2, "nth_paragraph": 1, "first_word": "lead"}),
    ("detectable_content:number_placeholders", {"num_placeholders": 2}), ("detectable_content:number_placeholders", {"num_placeholders": 1}),
    ("detectable_content:postscript", {"postscript_marker": "P.S."}), ("detectable_content:postscript", {"postscript_marker": "P.P.S"}),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}), ("detectable_format:number_bullet_lists", {"num_bullets": 3}),
    ("detectable_format:number_bullet_lists", {"num_bullets": 1}),
    ("detectable_format:constrained_response", {}),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 1}), ("detectable_format:number_highlighted_sections", {"num_highlights": 2}),
    ("detectable_format:multiple_sections", {"section_spliter": "Section", "num_sections": 2}),
    ("detectable_format:multiple_sections", {"section_spliter": "SECTION", "num_sections": 1}),
    ("detectable_format:multiple_sections", {"section_spliter": "PARAGRAPH", "num_sections": 2}),
    ("detectable_format:json_format", {}), ("detectable_format:title", {}),
    ("combination:two_responses", {}), ("combination:repeat_prompt", {"prompt_to_repeat": "Write a story about a cat."}),
    ("startend:end_checker", {"end_phrase": "Is there anything else I can help with?"}), ("startend:quotation", {}),
    ("change_case:capital_word_frequency", {"capital_frequency": 3, "capital_relation": "at least"}),
    ("change_case:capital_word_frequency", {"capital_frequency": 2, "capital_relation": "less than"}),
    ("punctuation:no_comma", {}),
    ("length_constraints:number_sentences", {"num_sentences": 3, "relation": "at least"}),
    ("language:response_language", {"language": "en"}), ("change_case:english_capital", {}), ("change_case:english_lowercase", {}),
]

# The two 30,000-character texts are stored as markers, expanded by the test the same way.
MARKERS = {HUGE: "$HUGE", HUGE.upper(): "$HUGE_UPPER"}
cases = []
for iid, kw in INSTR:
    for t in TEXTS:  # every text against every instruction
        inst = instructions_registry.INSTRUCTION_DICT[iid](iid)
        inst.build_description(**kw)
        followed = bool(t.strip() and inst.check_following(t))
        # english_*: the verdict rests on langdetect only when the case test passes first
        known = iid in KNOWN and not (iid == "change_case:english_capital" and not t.isupper()) \
            and not (iid == "change_case:english_lowercase" and not t.islower())
        cases.append({"id": iid, "kwargs": kw, "response": MARKERS.get(t, t), "followed": followed, **({"known": True} if known else {})})

json.dump({"open_instruct_commit": "e6c3044aa6201c8bfa4573c1b03142af599e730d", "cases": cases}, sys.stdout, ensure_ascii=False, indent=0)
print()
