"""Regenerates parity-cases.json: responses written for every IFEval instruction family (empty,
huge, markdown corners, non-Latin scripts, outlines, Unicode spacing and casing), each with the
strict verdict of the reference checker: `response.strip() and check_following(response)`, as
evaluation_lib.test_instruction_following_strict computes it.

The checkers are the IFEval classes as open-instruct ships them in open_instruct/IFEvalG/
(allenai/open-instruct @ e6c3044aa6201c8bfa4573c1b03142af599e730d, Apache-2.0; their
`check_following` bodies are the same as google-research instruction_following_eval's, see the
README), imported from a checkout, nothing copied here. Run once (Python 3.11.7, nltk 3.10.3,
absl-py, immutabledict; langdetect @ 5071871742170034557c0e6ec8d6e410f3d9652f on PYTHONPATH) with
NLTK's trained English Punkt model (punkt_tab/english, what `nltk.download("punkt_tab")` puts
under NLTK_DATA; not in this repository, see README.md):

    git --git-dir=<open-instruct mirror> archive e6c3044aa6201c8bfa4573c1b03142af599e730d open_instruct | tar -x -C /tmp/oic
    git --git-dir=<langdetect mirror> archive 5071871742170034557c0e6ec8d6e410f3d9652f | tar -x -C /tmp/langdetect
    NLTK_DATA=/tmp/nltk_data PYTHONPATH=/tmp/langdetect python verifiers/ifeval/parity_cases.py /tmp/oic > verifiers/ifeval/parity-cases.json

count_sentences (instructions_util) loads `punkt/english.pickle`, which nltk 3.10 no longer
unpickles; it is pointed at the same parameters in punkt_tab form (nltk's PunktTokenizer, what
sent_tokenize and word_tokenize use). The model's four files are hashed into the output.

Language: verdicts are langdetect's with DetectorFactory.seed = 0 (the seed Assay's port uses).
IFEval sets no seed; each row whose verdict rests on langdetect is also scored with seeds 1..29 and
marked `"nondeterministic": true` when any of them gives another verdict (langdetect's own
nondeterminism: unseeded IFEval can give either).
"""
import json
import sys

sys.path.insert(0, sys.argv[1])

import hashlib  # noqa: E402

import nltk  # noqa: E402
from nltk.tokenize.punkt import PunktTokenizer  # noqa: E402

_trained = PunktTokenizer("english")  # nltk_data/tokenizers/punkt_tab/english
_model_dir = str(nltk.data.find("tokenizers/punkt_tab/english/"))
MODEL_SHA256 = {}  # as punkt_nltk_cases.py: sha256 of the file's lines, sorted, joined by "\n"
for name in ("abbrev_types.txt", "collocations.tab", "sent_starters.txt", "ortho_context.tab"):
    lines = sorted(open(f"{_model_dir}/{name}", encoding="utf-8").read().splitlines())
    MODEL_SHA256[name] = hashlib.sha256("\n".join(lines).encode()).hexdigest()

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

from open_instruct.IFEvalG import instructions_util  # noqa: E402

instructions_util._get_sentence_tokenizer = lambda: _trained  # count_sentences
from open_instruct.IFEvalG import instructions_registry  # noqa: E402

LANGUAGE = {"language:response_language", "change_case:english_capital", "change_case:english_lowercase"}

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
    # sentence counting: abbreviations, initials, outlines, ellipses, quotes, lists, markdown
    "Fruits, e.g. apples. Also pears. And plums.", "We met i.e. he left. Then she came.", "Bring pens, paper, etc. The test is at 9.",
    "It was 5 p.m. Then we ate. Later we slept.", "She moved to the U.S. She likes it. She stays.", "Dr. Who? Mr. Bean! Mrs. Doubtfire.",
    "J.K. Rowling wrote it. It sold. Many read it.", "E. B. White wrote it. It sold. People loved it.",
    "I. Intro\nA. One\nB. Two\nII. Body\nA. Three", "A. Apples. B. Bananas. C. Cherries.", "Hmm.. ok. Fine. Sure.",
    "Um... yes... no... Maybe. Fine.", "He said \"Stop.\" Then he left. We stayed.", "(First.) (Second.) (Third.)",
    "1. Eat.\n2. Sleep.\n3. Repeat.", "- Go home.\n- Rest.\n- Return.", "# Title\n\nBody one. Body two. Body three.",
    "We love the sun. It is warm. We sat. The mass grew.", "See Fig. 3. It shows growth. Vol. 2 too.", "Wait... What? Really?!",
    "Это первое. Это второе. Это третье.", "这是第一句。这是第二句。这是第三句。", "Version 3.5 is out. Get it now. Enjoy.",
    "The price is $4.99. That is cheap. Buy two.", "Call me at 555.1234. Or e-mail. Thanks.",
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
    ("length_constraints:number_sentences", {"num_sentences": 2, "relation": "less than"}),
    ("length_constraints:number_sentences", {"num_sentences": 4, "relation": "at least"}),
    ("length_constraints:number_sentences", {"num_sentences": 4, "relation": "less than"}),
    ("language:response_language", {"language": "en"}), ("change_case:english_capital", {}), ("change_case:english_lowercase", {}),
]

# The two 30,000-character texts are stored as markers, expanded by the test the same way.
MARKERS = {HUGE: "$HUGE", HUGE.upper(): "$HUGE_UPPER"}


def verdict(inst, t):
    return bool(t.strip() and inst.check_following(t))


cases = []
for iid, kw in INSTR:
    for t in TEXTS:  # every text against every instruction
        inst = instructions_registry.INSTRUCTION_DICT[iid](iid)
        inst.build_description(**kw)
        DetectorFactory.seed = 0
        followed = verdict(inst, t)
        row = {"id": iid, "kwargs": kw, "response": MARKERS.get(t, t), "followed": followed}
        if iid in LANGUAGE:
            for seed in range(1, 30):
                DetectorFactory.seed = seed
                if verdict(inst, t) != followed:
                    row["nondeterministic"] = True
                    break
        cases.append(row)

if len(set(TEXTS)) != len(TEXTS):
    sys.exit("duplicate texts")
json.dump({"open_instruct_commit": "e6c3044aa6201c8bfa4573c1b03142af599e730d", "nltk": nltk.__version__,
           "model": "punkt_tab/english (sorted-lines sha256)", "model_sha256": MODEL_SHA256, "cases": cases},
          sys.stdout, ensure_ascii=False, indent=0)
print()
