"""Writes punkt-nltk-cases.json: hand-written texts and the sentences NLTK's sent_tokenize gives them
with the *trained English model* (what IFEval's count_sentences uses), and with the parameters
Assay ships (punkt-pd/english, trained on public-domain text by punkt_train.py).

The trained English model is not in this repository (its licence is unclarified upstream, see
README.md). To regenerate, get it as NLTK users do, then point NLTK_DATA at it:

    python3 -m venv /tmp/v && /tmp/v/bin/pip install nltk==3.10.3
    /tmp/v/bin/python -c 'import nltk; nltk.download("punkt_tab", download_dir="/tmp/nltk_data")'
    NLTK_DATA=/tmp/nltk_data /tmp/v/bin/python verifiers/ifeval/punkt_nltk_cases.py > verifiers/ifeval/punkt-nltk-cases.json

(This file was produced from punkt.zip's PY3/english.pickle converted with nltk's own
save_punkt_params; the result equals punkt_tab/english: same sizes, ortho_context.tab byte-identical.)
"""
import hashlib
import json
import os
import sys

import nltk
from nltk.data import find
from nltk.tokenize import sent_tokenize
from nltk.tokenize.punkt import PunktSentenceTokenizer, load_punkt_params

HERE = os.path.dirname(os.path.abspath(__file__))

ABBREVS = ["e.g.", "i.e.", "etc.", "vs.", "Dr.", "Mr.", "Mrs.", "Ms.", "Prof.", "St.", "Inc.", "Ltd.", "Co.", "Corp.",
           "Jr.", "Sr.", "U.S.", "U.K.", "U.N.", "a.m.", "p.m.", "Ph.D.", "Jan.", "Feb.", "Aug.", "Sept.", "Oct.",
           "Dec.", "Mon.", "Wed.", "Sat.", "Sun.", "Mass.", "Miss.", "Wash.", "Calif.", "Fig.", "No.", "Vol.",
           "approx.", "cf.", "al.", "Gen.", "Sen.", "Ave.", "Mt.", "ok.", "yr."]
FOLLOWERS = ["he left", "He left", "Smith arrived", "the end came", "The end came", "1999 was good"]

TEXTS = [
    # the words the issue names, as plain words
    "We love the sun. It is warm.", "I sat. Then I stood up.", "She will miss. He will not.", "The mass grew. It was huge.",
    "Look at the sun. The sky is clear.", "They sat. The teacher spoke.", "Do not miss. Aim well.", "It had mass. Energy too.",
    "Sun. Moon. Stars.", "Sat. Sun. Mon.", "Mass. Miss. Wash.", "He left on Sun. The 5th.",
    # initials and names
    "J.K. Rowling wrote it.", "J. K. Rowling wrote it.", "George W. Bush spoke. He left.", "Plan B. Then go.",
    "Vitamin C. It helps.", "Grade A. The best.", "H.G. Wells wrote books.", "E. B. White wrote it. It sold.",
    "T.S. Eliot. The poet.", "Call J. Smith. He knows.", "I met A. Lincoln. He was tall.", "Section B. The rules.",
    "Type O. Blood donors.", "Ask Dr. J. Doe. She helps.", "The letter X. It marks.", "Point A. Point B. Point C.",
    # outlines
    "I. Introduction\nA. Background\nB. Scope\nII. Methods\nA. Data\nB. Analysis\nIII. Results",
    "I. Intro A. One B. Two II. Body A. Three B. Four", "1. First item\n2. Second item\n3. Third item",
    "1. Mix. 2. Bake. 3. Serve.", "Step 1. Mix the flour. Step 2. Bake it.", "a. one\nb. two\nc. three",
    "A. Apples. B. Bananas. C. Cherries.", "i. first ii. second iii. third", "IV. Conclusion. V. Appendix.",
    "Part I. The start. Part II. The end.", "Chapter 3. The end.", "Section 2.1. Overview. Section 2.2. Details.",
    # numbers
    "It costs $3.50. Buy it.", "In 1999. The year ended.", "Version 2.0. Released today.", "No. 5 is good. No. 6 is not.",
    "It was 5 p.m. Then we ate.", "Pi is 3.14. Yes it is.", "The score was 3-2. We won.", "Page 10. Read it.",
    "We sold 1,000. Next year 2,000.", "Call 555-1234. Ask for Tom.", "It grew 5.5%. The rest fell.", "Room 101. The door.",
    "He was born in 1990. He is 34.", "Temperatures hit 40. Everyone stayed in.", "Item 3. item 4.", "2. the second",
    # quotes and brackets
    '"Stop." He left.', "'Go.' She ran.", "\u201cYes.\u201d No.", "(See above.) Next.", 'He said, "Hi." Then left.',
    '"Is it?" she asked. "Yes."', "[Note.] Done.", "He said (quietly.) Then stopped.", "\u2018Fine.\u2019 He nodded.",
    '"Wait!" "Why?" "Because."', "She wrote: \"The end.\" And it was.", "(1) First. (2) Second.",
    # ellipses, ?!
    "Wait... what?", "Wait... What?", "Well... I don't know.", "So . . . It ends.", "Hmm.. ok. Fine.", "And then...",
    "Really?! Yes.", "What? No! Why.", "Stop!!! Now.", "Is it? is it.", "Go! go! GO!", "Why?No.", "Ok.Next.",
    "...and so on. The end.", "Um... yes... no... Maybe.", "Wow!? Really.",
    # markdown-ish
    "**Note.** This is bold.", "- Item one.\n- Item two.", "# Title\nText here. More text.", "*Emphasis.* Then plain.",
    "> Quoted line. Another.", "Title: Overview. Body follows.", "## Step 1.\nDo this. Then that.",
    "Note: see Fig. 2. It shows the data.", "Use `x.y`. Then run it.", "Visit example.com. It is good.",
    "Email me at a.b@c.com. Thanks.", "The file is data.csv. Open it.", "P.S. Bring snacks.", "P.P.S. Also water.",
    # non-Latin and mixed
    "\u4f60\u597d\u3002\u6211\u5f88\u597d\u3002", "\u3053\u3093\u306b\u3061\u306f\u3002\u5143\u6c17\u3067\u3059\u304b\uff1f",
    "\u041f\u0440\u0438\u0432\u0435\u0442. \u041a\u0430\u043a \u0434\u0435\u043b\u0430? \u0425\u043e\u0440\u043e\u0448\u043e.",
    "\u0393\u03b5\u03b9\u03b1. \u03a4\u03b9 \u03ba\u03ac\u03bd\u03b5\u03b9\u03c2;", "\u0645\u0631\u062d\u0628\u0627. \u0643\u064a\u0641 \u062d\u0627\u0644\u0643\u061f",
    "\u0928\u092e\u0938\u094d\u0924\u0947\u0964 \u0920\u0940\u0915 \u0939\u0948\u0964", "Bonjour. \u00c7a va? Oui.",
    "\u00c9cole. \u00c9t\u00e9. \u00e9t\u00e9.", "Stra\u00dfe. \u00dcber alles.", "Hello. \u4f60\u597d. Bye.",
    "\u0414\u0440. \u0421\u043c\u0438\u0442. \u041e\u043d \u0443\u0448\u0451\u043b.", "Caf\u00e9. Na\u00efve. \u00c9lan.",
    # sentence starters and lower-case after periods
    "It rained. however, we went.", "It rained. However, we went.", "He ran. the dog followed.", "Done. and then more.",
    "The U.S. economy grew. It was 3.5 percent.", "The U.S. The country.", "She moved to the U.S. She likes it.",
    "He works at Acme Inc. The pay is good.", "He works at Acme Inc. in Ohio.", "Meet at 10 a.m. tomorrow.",
    "Meet at 10 a.m. Tomorrow is fine.", "He has a Ph.D. The thesis was long.", "Fruits, e.g. apples. Also pears.",
    "Many things, etc. The list goes on.", "Many things, etc. and more.", "Red vs. blue. Blue won.",
    "Call Mr. Smith. He waits.", "Mrs. Jones. Mr. Jones.", "St. Louis is big. It is in Mo.", "Mt. Everest. The peak.",
    "Smith et al. found it. The study.", "See p. 5. It shows.", "In Jan. we ski. In Feb. we rest.",
    "Jan. The month.", "Dec. 25 is near. Gifts.", "On Mon. The store.", "Gen. Lee. Sen. Byrd.", "Ave. Maria. Amen.",
    # whitespace and structure
    "Line one.\nLine two.\n\nLine three.", "  Leading space. Trailing space.  ", "Tab\tseparated.\tWords.",
    "No period at all", "", " ", ".", "..", "?", "a. b. c.", "A. B. C.", "x.", "End.\n", "One.Two.Three.",
    "First sentence.  Second sentence.", "Sentence one.\r\nSentence two.", "Hi.\u00a0There.", "Hi.\u2003There.",
    "A sentence -- with dashes. Another.", "Word--word. Next.", "The end.--The start.",
    "He said: yes. She said: no.", "Items: a; b; c. Done.", "Costs $5. Tax 10%. Total $5.50.",
]
for a in ABBREVS:
    for f in FOLLOWERS:
        TEXTS.append(f"We met {a} {f}.")
for a in ["Dr.", "e.g.", "etc.", "Mass.", "U.S.", "a.m.", "No.", "I.", "A.", "3."]:
    TEXTS.append(f"{a}\n{a} Next line.")
    TEXTS.append(f"The list ends with {a}")

if len(set(TEXTS)) != len(TEXTS):
    sys.exit("duplicate texts")

model_dir = str(find("tokenizers/punkt_tab/english/"))
digest = {}
for name in ["abbrev_types.txt", "collocations.tab", "sent_starters.txt", "ortho_context.tab"]:
    lines = sorted(open(os.path.join(model_dir, name), encoding="utf-8").read().splitlines())
    digest[name] = hashlib.sha256("\n".join(lines).encode()).hexdigest()

nltk.data.path.append(HERE)  # nltk opens data files only under its search path
ours = PunktSentenceTokenizer(load_punkt_params(find("punkt-pd/english/")))

cases = [{"text": t, "nltk": sent_tokenize(t), "pd": ours.tokenize(t)} for t in TEXTS]
out = {"nltk": nltk.__version__, "model": "punkt_tab/english (sorted-lines sha256)", "model_sha256": digest, "cases": cases}
sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=0) + "\n")
