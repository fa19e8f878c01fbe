"""Trains the Punkt parameters Assay ships (punkt-pd/english/) with NLTK's own PunktTrainer, as the
punkt models' README trains them (defaults, one text), on public-domain English: NLTK's
`state_union` (C-Span State of the Union addresses 1945-2006) and `inaugural` (US inaugural
addresses) corpora, both marked copyright="public domain" license="public domain" in nltk_data's
index.xml (works of US presidents in office: US government works).

    python3 -m venv /tmp/v && /tmp/v/bin/pip install nltk==3.10.3
    /tmp/v/bin/python -c 'import nltk; [nltk.download(c, download_dir="/tmp/nltk_data") for c in ("state_union", "inaugural")]'
    /tmp/v/bin/python verifiers/ifeval/punkt_train.py /tmp/nltk_data/corpora verifiers/ifeval/punkt-pd/english

Output is punkt_tab's format (what nltk.tokenize.punkt.load_punkt_params reads), lines sorted so a
rerun gives the same bytes.
"""
import glob
import os
import sys

from nltk.tokenize.punkt import PunktTrainer

corpora, out = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(os.path.join(corpora, "state_union", "*.txt"))) + sorted(glob.glob(os.path.join(corpora, "inaugural", "*.txt")))
if len(files) != 124:
    sys.exit(f"expected the 66 + 58 files of state_union and inaugural, found {len(files)}")
text = "\n\n".join(open(f, encoding="latin-1").read() for f in files)
trainer = PunktTrainer()
trainer.train(text, finalize=True)
p = trainer.get_params()
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "abbrev_types.txt"), "w", encoding="utf-8") as f:
    f.write("".join(t + "\n" for t in sorted(p.abbrev_types)))
with open(os.path.join(out, "collocations.tab"), "w", encoding="utf-8") as f:
    f.write("".join(f"{a}\t{b}\n" for a, b in sorted(p.collocations)))
with open(os.path.join(out, "sent_starters.txt"), "w", encoding="utf-8") as f:
    f.write("".join(t + "\n" for t in sorted(p.sent_starters)))
with open(os.path.join(out, "ortho_context.tab"), "w", encoding="utf-8") as f:
    f.write("".join(f"{t}\t{v}\n" for t, v in sorted(p.ortho_context.items())))
print(len(p.abbrev_types), len(p.collocations), len(p.sent_starters), len(p.ortho_context), file=sys.stderr)
