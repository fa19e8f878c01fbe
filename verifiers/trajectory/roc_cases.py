"""Regenerates roc-cases.json: rStar2-Agent's tool-error ratio for seeded random rollout texts,
computed by its own function, so the trajectory verifier's text format is checked against it:

    python3 verifiers/trajectory/roc_cases.py [count=300] [seed=7] > verifiers/trajectory/roc-cases.json

`error_ratio` below is copied verbatim from volcengine/verl @ c12e3cbce (tag-less recipe commit),
recipe/rstar2_agent/src/down_sample/roc.py, calc_error_ratio_penalty_weights (its inner function).
Copyright (c) Microsoft Corporation. Licensed under the MIT license.
"""
import json
import random
import re
import sys


def error_ratio(text, pattern=r"<tool_response>.*?</tool_response>"):
    matches = re.findall(pattern, text, re.DOTALL)
    error_count = len([match for match in matches if "error" in match.lower()])
    if len(matches) == 0:
        return 0.5, 0, 0
    else:
        return error_count / len(matches), error_count, len(matches)


PIECES = ["<tool_response>", "</tool_response>", "<tool_call>", "</tool_call>", "Error", "ERROR", "error:", "err", "or",
          "Traceback (most recent call last):\n  ValueError", "ok", "42", "\\boxed{7}", "\n", " ", "<answer>", "</answer>",
          "<tool_response>\n", "</tool_response>\n", "NameError: name 'x' is not defined", "résumé", "É", "tool_response", "<", ">"]

n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
rnd = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 7)
cases = []
for _ in range(n):
    text = "".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 40)))
    ratio, errors, count = error_ratio(text)
    cases.append([text, ratio, errors, count])
print(json.dumps({"source": "volcengine/verl@c12e3cbce recipe/rstar2_agent/src/down_sample/roc.py", "cases": cases}, ensure_ascii=False))
