# Run once (python3 -m venv v && v/bin/pip install nltk==3.10.3 && v/bin/python verifiers/ifeval/tokenizer_cases.py > verifiers/ifeval/tokenizer-cases.json);
# ifeval.test.ts compares nltkWordTokenize with these. nltk is Apache-2.0.
# Expected tokens for the word-tokenizer rule tests: NLTKWordTokenizer().tokenize(text.rstrip())
# (nltk 3.10.3), which is nltk.word_tokenize for texts with no clitic or "wanna" before a period.
import json
from nltk.tokenize.destructive import NLTKWordTokenizer
T = NLTKWordTokenizer()
texts = [
    "CANNOT GIMME GONNA GOTTA LEMME WANNA go",
    "CaNNoT say 'TIS or 'TWAS, D'YE see MORE'N that",
    "'tiſ odd: ſo is 'TWAſ",
    "plain prose with no quotes at all and NO brackets",
    'He said "HELLO" (TWICE) [OK] {NO} <YES> -- then `TICK` and ``BACK``',
    "«QUOTE» “CURLY” ‘SINGLE’ „LOW“ — EM–DASH ... SO; @HOME #1 $5 50% A&B",
    "IT'S THE CAT'S; WE'LL, THEY'RE, YOU'VE, I'D, ISN'T it",
    "WAIT: 3:30, 1,000 ITEMS, DONE*",
    "A 'QUOTED' WORD and O'NEIL's 'ROCK' n' ROLL'",
    "LEMME go",
    "GoTTa run",
    "gimme ONE",
    "d'ye ken",
    "MORE'N enough",
    "WANNA go",
    "gonna be",
    "Cannot",
]
print(json.dumps([[t, T.tokenize(t.rstrip())] for t in texts], ensure_ascii=False, indent=1))
