"""Regenerates open-instruct-cases.json: rows in open-instruct's formats, scored by open-instruct's
own verifiers (ground_truth_utils.IFEvalVerifierOld for RLVR-IFeval `func_name` rows,
IFEvalVerifier for IFEvalG `instruction_id` rows, whose ground truth is a Python literal string).
Nothing of open-instruct is copied here: the script imports it from a checkout of

    allenai/open-instruct @ e6c3044aa6201c8bfa4573c1b03142af599e730d (Apache-2.0)

and stubs only the modules ground_truth_utils imports for other verifiers (judges, math, code).
Run once (pinned: Python 3.11.7, nltk 3.10.3, absl-py, immutabledict, langdetect from
github:Mimino666/langdetect @ 5071871742170034557c0e6ec8d6e410f3d9652f on PYTHONPATH):

    git --git-dir=<open-instruct mirror> archive e6c3044aa6201c8bfa4573c1b03142af599e730d open_instruct | tar -x -C /tmp/oic
    PYTHONPATH=/tmp/langdetect python verifiers/ifeval/open_instruct_cases.py /tmp/oic > verifiers/ifeval/open-instruct-cases.json

NLTK's trained Punkt model is not on this machine, so `nltk.sent_tokenize` (inside
`nltk.word_tokenize`) is given an untrained PunktSentenceTokenizer: the IFEvalG rows that
word-tokenize (count_unique, start_end, keyword_specific_position, counting_composition) use
texts whose only periods end sentences before a capital, where every Punkt model splits alike.
langdetect runs with DetectorFactory.seed = 0 on texts long enough to be unambiguous.
"""
import json
import sys
import types

sys.path.insert(0, sys.argv[1])


class _Stub(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name == "setup_logger":
            import logging

            return logging.getLogger
        return lambda *a, **k: None


for m in ["open_instruct.context_window_checker", "open_instruct.logger_utils", "open_instruct.judge_utils",
          "open_instruct.math_utils", "open_instruct.rubrics", "open_instruct.rubrics.prompts",
          "open_instruct.rubrics.run_utils", "open_instruct.utils"]:
    sys.modules[m] = _Stub(m)
sys.modules["open_instruct.judge_utils"].EXTRACTOR_MAP = {}
sys.modules["open_instruct.judge_utils"].JUDGE_PROMPT_MAP = {}
sys.modules["open_instruct.judge_utils"].PRICE_PER_MILLION_TOKENS = {}

import nltk  # noqa: E402
from nltk.tokenize.punkt import PunktSentenceTokenizer  # noqa: E402

_untrained = PunktSentenceTokenizer()
nltk.tokenize.sent_tokenize = lambda text, language="english": _untrained.tokenize(text)

from langdetect import DetectorFactory  # noqa: E402

DetectorFactory.seed = 0

from open_instruct import ground_truth_utils as gtu  # noqa: E402

old = gtu.IFEvalVerifierOld()
new = gtu.IFEvalVerifier()

HUGE = ("word " * 6000).strip()  # 30,000 characters
cases = []


def fn(name, response, **kw):
    """A func_name row as RLVR-IFeval stores it: a JSON string, None for absent arguments."""
    label = json.dumps({"func_name": name, **kw})
    try:
        score = old([], response, label).score
    except Exception as e:  # open-instruct raises: no reward exists; the row documents that
        score = f"raises {type(e).__name__}"
    cases.append({"format": "func_name", "reference": label, "response": response, "reward": score})


def ig(ids, kwargs, response):
    """An IFEvalG row as open-instruct stores it: str([{...}]), a Python literal."""
    label = str([{"instruction_id": ids, "kwargs": kwargs}])
    try:
        score = new([], response, label).score
    except Exception as e:
        score = f"raises {type(e).__name__}"
    cases.append({"format": "ifevalg", "reference": label, "response": response, "reward": score})


EMPTY = ["", "   ", "<think>all thought</think>", "<answer></answer>"]

# ---- RLVR-IFeval func_name rows ------------------------------------------------------------------
for r in ["The cat and the dog.", "CAT, Dog!", "catalogue", "", "Ünïcödé KATZE und Hund", "猫和狗", HUGE + " cat dog"]:
    fn("verify_keywords", r, keyword_list=["cat", "dog"])
fn("verify_keywords", "İstanbul", keyword_list=["i̇stanbul"])
fn("verify_keywords", "ISTANBUL", keyword_list=["istanbul"])
for r in ["A cat met a cat.", "cat cat cat", "Cat-cat", "concatenate cat", "", "CATS cat", "кот cat кот", "cat_cat cat"]:
    fn("verify_keyword_frequency", r, word="cat", N=2, quantifier=None)
fn("verify_keyword_frequency", "кот и кот", word="Кот", N=2)
fn("verify_keyword_frequency", "", word="cat", N=0)
for r in ["Nothing bad here.", "That was BAD.", "badger", "", "evil\u00a0twin", HUGE]:
    fn("validate_forbidden_words", r, forbidden_words=["bad", "evil"])
for r in ["hello world", "HELLO", "", "lll", "l" * 3000, "naïve ll"]:
    fn("verify_letter_frequency", r, letter="l", N=3)
fn("verify_letter_frequency", "", letter="x", N=0)
fn("verify_letter_frequency", "ab", letter="ab", N=1)
fn("validate_response_language", "The weather today is lovely and I think we should go for a walk in the park before it rains.", language="en")
fn("validate_response_language", "Le temps est magnifique aujourd'hui et je pense que nous devrions nous promener dans le parc.", language="en")
fn("validate_response_language", "Das Wetter ist heute schön und ich denke, wir sollten im Park spazieren gehen, bevor es regnet.", language="de")
for r in ["One\n* * *\nTwo", "One\n* * *\nTwo\n* * *\nThree", "* * *\nOne\n* * *\nTwo", "One\n  * * *  \nTwo", "One\r\n* * *\r\nTwo",
          "One * * * Two", "", "One\n* * *\n\n* * *\nTwo", "Один\n* * *\nДва", "One\n***\nTwo"]:
    fn("verify_paragraph_count", r, N=2)
fn("verify_paragraph_count", "", N=1)
fn("verify_paragraph_count", "just one", N=1)
for q in ["at least", "at most", "around", "exactly"]:
    for r in ["one two three four five", "one two three", "", "一 二 三 四 五 六", "w\u3000w\u3000w\u3000w\u3000w", ("w " * 11).strip()]:
        fn("validate_word_constraint", r, N=5, quantifier=q)
fn("validate_word_constraint", ("w " * 27).strip(), N=25, quantifier="around")
fn("validate_word_constraint", ("w " * 28).strip(), N=25, quantifier="around")
for q in ["at least", "at most", "around"]:
    for r in ["One. Two. Three.", "Mr. Smith came. He left.", "e.g. this. And that.", "Wow! Really? Yes.", "", "No end", "A.B. C. D.",
              "Hi.\nThere.", "Done.  Twice.", "Ends.\u00a0Next.", "It costs 3.5 dollars. Fine."]:
        fn("verify_sentence_constraint", r, N=3, quantifier=q)
for r in ["Alpha\n\nBeta\n\nGamma", "Alpha\n\nbeta\n\nGamma", "  Beta first\n\nAlpha\n\nGamma", "Alpha\n\n\n\nBeta", "", "Alpha\n\nBeta\n\nGamma\n\n"]:
    fn("validate_paragraphs", r, N=3, first_word="Beta", i=2)
fn("validate_paragraphs", "a\n\nb\n\nEnd", N=3, first_word="End", i=0)
for r in ["Body\nP.S. thanks", "Body\nP.S.", "P.S.   \n", "no marker", "", "Body P.S. x P.S.", "正文\nP.S. 谢谢"]:
    fn("verify_postscript", r, postscript_marker="P.S.")
for r in ["[a] [b] [c]", "[a] [b]", "[[a]] []", "[a\nb] [c] [d]", "", "[名字] [地址] [日期]"]:
    fn("validate_placeholders", r, N=3)
for r in ["* a\n* b", "- a\n- b", "* a\n- b\n* c", "  * a\n\t- b", "*bold*\n* b", "", "•  a\n• b", "* a\n\u2003* b", "*\n-"]:
    fn("verify_bullet_points", r, N=2)
for r in ["<<Title>>\nbody", "<<>>", "<<a\nb>>", "no title", "", "<<<<x>>>>", "<<标题>>"]:
    fn("validate_title", r)
for r in ["My answer is yes.", "I think B", "Apple", "", "maybe"]:
    fn("validate_choice", r, options=["My answer is yes.", "B", "A"])
for r in ["*one* *two*", "*one*", "**bold** *x*", "*a\nb* *c*", "", "**", "*é* *ü*"]:
    fn("validate_highlighted_sections", r, N=2)
for r in ["SECTION 1 a SECTION 2 b", "intro SECTION 1 a SECTION 2 b", "no sections", "", "SECTION 1 a", "Section 1 a Section 2 b",
          "SECTION 1SECTION 2", "SECTIONSECTION"]:
    fn("validate_sections", r, N=2, section_splitter="SECTION")
fn("validate_sections", "no sections at all", N=1, section_splitter="SECTION")
fn("validate_sections", "", N=0, section_splitter="SECTION")
for r in ['{"a": 1}', "[1, 2]", '{"a": NaN}', "[Infinity, -Infinity]", "[-NaN]", '{"a": 1,}', "", "```json\n{}\n```", '"str"', "nan",
          '{"a": "\\u00e9"}', " \n{\"a\": 1}\n ", "1 2"]:
    fn("validate_json_format", r)
for r in ["Write a poem. Here it is.", "write a poem. Here", "", " Write a poem."]:
    fn("validate_repeat_prompt", r, original_prompt="Write a poem.")
for r in ["A\n******\nB", "A\n******\nA", "A******B******C", "******", "A *******B", "", "A ****** "]:
    fn("validate_two_responses", r)
for r in ["HELLO WORLD", "Hello", "123 !!", "", "STRASSE", "ǅ", "ΑΒΓ"]:
    fn("validate_uppercase", r)
    fn("validate_lowercase", r.lower() if r != "Hello" else r)
fn("validate_lowercase", "straße")
for q in ["at least", "at most", "around"]:
    for r in ["HELLO BIG World", "HELLOé BIG World", "A B C D", "", "NASA's X-RAY", "ÉCOLE ABC", "ABC_DEF GHI", "A1 B2 C"]:
        fn("validate_frequency_capital_words", r, N=2, quantifier=q)
for r in ["Is there anything else?", "Is there anything else? ", "", "anything else?"]:
    fn("validate_end", r, end_phrase="anything else?")
for r in ['"quoted"', '"', '""', "'single'", "", '"a" b']:
    fn("validate_quotation", r)
for r in ["no commas", "one, two", "", "full\uff0cwidth", "<think>a, b</think>clean"]:
    fn("validate_no_commas", r)
for r in EMPTY:
    for name in ["validate_no_commas", "validate_lowercase", "validate_uppercase", "validate_json_format", "validate_title"]:
        fn(name, r)
    fn("verify_keyword_frequency", r, word="cat", N=0)
    fn("validate_placeholders", r, N=0)
    fn("validate_word_constraint", r, N=0, quantifier="at least")
fn("validate_no_commas", "<|assistant|><think>x, y</think><answer>z</answer>")
fn("validate_no_commas", "a, b</think>fine")
fn("validate_lowercase", HUGE)

# ---- IFEvalG rows (instruction_id, Python literal) ------------------------------------------------
G = ig
for r in ["The big cat sat. The big dog sat. The big cow sat.", "The big cat sat. The big dog sat.", "The red cat sat. The big dog sat.",
          "The big cat sat.\nThe big\ndog sat.", "", "The big cat is sat. The big dog sat."]:
    G(["copy:repeat_phrase"], [{"phrase": "The big fox sat", "small_n": 2}], r)
for r in ["Write a poem about cats.", "  WRITE A POEM ABOUT CATS.  ", "Write a poem about cats!", ""]:
    G(["copy:copy"], [{"prompt_to_repeat": "Write a poem about cats."}], r)
    G(["copy:copying_simple"], [{"prompt_to_repeat": "Write a poem about cats."}], r)
for r in ["Write a poem about cats.******Write a poem about cats.", "Write a poem about cats.******write a POEM about cats.******Write a poem about cats.",
          "Write a poem about cats.", "Write a poem about cats.\n******\nWrite a poem about cats."]:
    G(["copy:copying_multiple"], [{"prompt_to_repeat": "Write a poem about cats.", "N": 2}], r)
for r in ["poem about", "Poem About ", "a poem about", "poem"]:
    G(["new:copy_span_idx"], [{"prompt_to_repeat": "Write a poem about cats.", "n_start": 8, "n_end": 18}], r)
G(["new:copy_span_idx"], [{"prompt_to_repeat": "Пиши стихи о кошках.", "n_start": 5, "n_end": 10}], "стихи")
for r in ["This is one.-This is two.", "This is one. - This is two.", "One sentence only.", "Mr. Smith went.-He came.", "a-b", "Hello.-World!-Yes?"]:
    G(["detectable_format:sentence_hyphens"], [None], r)
for r in ["apple cat egg", "apple banana", "Apple Banana", "a", "cat dog egg", "zebra apple", "İz jam", "ab", "x y"]:
    G(["keywords:no_adjacent_consecutive"], [{}], r)
for r in ["[a] [b] [c]", "[a] b", "[a][b]", "[", "[ ]"]:
    G(["detectable_format:square_brackets"], [{}], r)
for r in ["one river here", "River and river", "no r-i-v-e-r", "RIVER", "riverbank", "İ river"]:
    G(["keywords:word_once"], [{"keyword": "river"}], r)
for rel in ["less than", "at least"]:
    for r in ["cat cat cat", "cat", "Cat CAT", "concatenate cat", "dog"]:
        G(["keywords:word_count_different_numbers"], [{"keyword": "cat", "frequency": 2, "relation": rel}], r)
for r in ["I love the sea", "seashore only", "the sea", "the sea is here", "THE SEA IS"]:
    G(["keywords:exclude_word_harder"], [{"keyword": "sea", "instruction": None}], r)
for r in ["One\n***\nTwo", "One *** Two *** Three", "***\nOne\n***\nTwo\n***", "One\n***\n\n***\nTwo", "One"]:
    G(["paragraphs:paragraphs"], [{}], r)
for r in ["One\n\nTwo", "One\n\nTwo\n\nThree", "\n\nOne\n\nTwo\n\n", "One\n\n\n\nTwo", "One\nTwo"]:
    G(["paragraphs:paragraphs2"], [{}], r)
for r in ["Yes it is. Yes indeed. Yes!", "Yes it is. No way.", "yes. YES.", "Yes Mr. Smith came. Yes.", "Yes... yes", "Yes 3.5 points. Yes."]:
    G(["first_word:first_word_sent"], [{"first_word": "yes"}], r)
G(["first_word:first_word_sent"], [{"first_word": ["Yes"]}], "Yes. Yes.")
for r in ["Hello there", "hello", " HELLO world", "Hi hello", "Hello, world"]:
    G(["first_word:first_word_answer"], [{"first_word": "hello"}], r)
for r in ["I like it end. You like it end!", "I like end. I like it.", "It ends with end... end.", "What? end", "end"]:
    G(["last_word:last_word_sent"], [{"last_word": "end"}], r)
for r in ["The very end", "the END.", "end!!!", "ending", "end it", "«end»"]:
    G(["last_word:last_word_answer"], [{"last_word": "end"}], r)
for r in ["<<I am>> <<at home>>", "<<I am>> at home", "<<I am>> <<at", "<<one>>", "<<I>> <<am>>", "<<I am>> <<at home>> <<x"]:
    G(["detectable_format:bigram_wrapping"], [{}], r)
for r in ["No dots here", "One dot.", "Ellipsis…", "3.5"]:
    G(["punctuation:punctuation_dot"], [{}], r)
for r in ["Calm", "Wow!", "¡Hola", "Really‼"]:
    G(["punctuation:punctuation_exclamation"], [{}], r)
for r in ["ALL CAPS HERE", "one two", "one two three", "ONE two", "é é é", "one_two three four"]:
    G(["count:lowercase_counting"], [{"N": 2}], r)
for rel in ["less than", "at least"]:
    for r in ["abc", "abcd", "ab 12 !!", "ééé", "ABCDE"]:
        G(["letters:letter_counting"], [{"N": 4, "relation": rel}], r)
for r in ["Zzz zz", "z", "ZZZ"]:
    G(["letters:letter_counting2"], [{"letter": "z", "let_frequency": 3, "let_relation": "at least"}], r)
for r in ["Cats purr. Dogs bark.\n***\nBirds sing. Fish swim.\n***\nCows moo. Bees buzz.",
          "Cats purr. Dogs bark.\n***\nBirds sing. Fish swim.",
          "Cats purr loudly. Dogs bark.\n***\nBirds sing. Fish swim.\n***\nCows moo. Bees buzz.",
          "***\nCats purr. Dogs bark.\n***\nBirds sing. Fish swim.\n***\nCows moo. Bees buzz."]:
    G(["count:counting_composition"], [{"n_sent": 2, "n_words": 3}], r)
for r in ["Every word here differs", "the cat and the dog", "The the", "One, two, three.", "Hi!"]:
    G(["count:count_unique"], [{}], r)
for r in ["apple banana banana", "Apple BANANA banana", "apple banana", "apple apple banana banana", "bananas banana apple"]:
    G(["count:count_increment_word"], [{"keyword1": "apple", "keyword2": "banana"}], r)
for r in ["A racecar went by", "level", "No such words", "I saw it", "été"]:
    G(["keywords:palindrome"], [{}], r)
for r in ["The cat sat. A dog ran fast today.", "The cat sat. A dog ran.", "The cat sat.", "The cat sat. dog fast today ran."]:
    G(["keywords:keyword_specific_position"], [{"keyword": "ran", "n": 2, "m": 3}], r)
for r in ["Hello there, hello", "Hello world", "Hi", "Well, well.", "Yes it is yes"]:
    G(["keywords:start_end"], [{}], r)
# shared ids, empty answers, thinking sections, several instructions at once
G(["punctuation:no_comma", "keywords:palindrome"], [{}, None], "wow no commas")
G(["punctuation:no_comma", "keywords:palindrome"], [{}, None], "<think>a, b</think>level, ok")
for r in EMPTY:
    G(["punctuation:no_comma"], [{}], r)
G(["keywords:existence"], [{"keywords": ["river"], "N": None}], "A River runs.")
G(["detectable_format:json_format"], [{}], '{"a": NaN}')

json.dump({"open_instruct_commit": "e6c3044aa6201c8bfa4573c1b03142af599e730d", "cases": cases}, sys.stdout, ensure_ascii=False, indent=0)
print()
