"""Regenerates punkt-cases.json: sentence counts from NLTK's own PunktSentenceTokenizer, run with
the parameters punkt.ts uses by default (ENGLISH: punkt-pd/english with ENGLISH_ABBREVIATIONS), on seeded random texts built to exercise the algorithm
(abbreviations, initials, numbers, ellipses, ?!, quotes and brackets around breaks, new lines).

    python3 -m venv /tmp/v && /tmp/v/bin/pip install nltk==3.10.3
    npx tsx -e 'import("./verifiers/ifeval/punkt.ts").then(m => console.log(JSON.stringify({abbrev: m.ENGLISH_ABBREVIATIONS, dir: m.PUBLIC_DOMAIN_MODEL_DIR})))' > /tmp/params.json
    /tmp/v/bin/python verifiers/ifeval/punkt_cases.py /tmp/params.json [count=600] [seed] > verifiers/ifeval/punkt-cases.json
"""
import json
import os
import random
import sys

import nltk
from nltk.data import find
from nltk.tokenize.punkt import PunktSentenceTokenizer, load_punkt_params

params_in = json.load(open(sys.argv[1]))
# nltk opens data files only under its search path
nltk.data.path.append(os.path.dirname(params_in["dir"].rstrip("/")))
params = load_punkt_params(find(os.path.basename(params_in["dir"].rstrip("/")) + "/"))
params.abbrev_types = set(params_in["abbrev"])
tokenizer = PunktSentenceTokenizer(params)

rnd = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 20231107)
WORDS = ["the", "The", "he", "He", "she", "She", "it", "It", "then", "Then", "what", "What", "yes", "Yes", "no", "No",
         "cat", "Cat", "Paris", "Smith", "tom", "Tom", "economy", "grew", "one", "One", "two", "Two", "first", "First",
         "x", "a", "A", "I", "i", "walk", "however", "However", "élan", "Émile", "naïve"]
ABBR = ["Dr.", "dr.", "Mr.", "U.S.", "e.g.", "i.e.", "p.m.", "a.m.", "etc.", "Inc.", "vs.", "Jan.", "Ph.D.", "co-op.", "U.S.A."]
INIT = ["J.", "K.", "B.", "x.", "Z.", "é."]
NUM = ["3.", "1.", "2.", "12.", "3.5", "1,000.", "-4.", "2024."]
PUNCT = [".", "?", "!", "...", "?!", "!!", "..", ". . .", ",", ";", ":", "--", "-", "(", ")", "\"", "'", "\u201c", "\u201d",
         "\u2019", "[", "]", "*", "@", "&", "#", "»", "«"]
SEPS = [" ", " ", " ", " ", "", "", "\n", "\n\n", "  ", "\t", " \n "]


def piece():
    r = rnd.random()
    if r < 0.45:
        w = rnd.choice(WORDS)
        return w + "." if rnd.random() < 0.3 else w
    if r < 0.58:
        return rnd.choice(ABBR)
    if r < 0.65:
        return rnd.choice(INIT)
    if r < 0.72:
        return rnd.choice(NUM)
    return rnd.choice(PUNCT)


cases = []
fixed = ["Yes. I agree.", "One. Two. Three.", "1. First item\n2. Second item", "Dr. Smith arrived at 3 p.m. He was late.",
         "Wait... what?", "Wait... What?", "Really?! Yes.", 'He said "Stop." Then he left.', "I met Tom. He left.",
         "plan B. Then go.", "J. K. Rowling wrote it.", "The U.S. economy grew. It was 3.5 percent.",
         "e.g. this one. And that.", "(Hello there.) Next one.", "  ", "", "a", "end.", "x. y",
         "xx,x. xx,x! xx/x. x{x}x?", "xxxx. xx,x! xxxx. x(x)x?", "xxxx. xx,x! xx|x. x&x x?", "xx-x. xx,x! xx}x. x,xx?",
         "Very bad acting!!! I promise.", "\u201cQuoted.\u201d Next.", "See Fig. 3. It shows growth.", "Title\n\nBody text here. More text."]
for t in fixed:
    cases.append([t, len(tokenizer.tokenize(t))])
for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 600):
    n = rnd.randint(1, 30)
    text = ""
    for _ in range(n):
        text += piece() + rnd.choice(SEPS)
    if rnd.random() < 0.5:
        text = text.rstrip()
    cases.append([text, len(tokenizer.tokenize(text))])
sys.stdout.write('{"nltk": %s, "cases": [\n' % json.dumps(nltk.__version__))
sys.stdout.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in cases))
sys.stdout.write("\n]}\n")
