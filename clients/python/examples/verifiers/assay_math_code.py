"""A verifiers environment scored by Assay: math rows by the `math` verifier, code rows by `code`
(run in Assay's sandbox), one rubric for both (each row names its verifier in `info`).

    vf-install assay-math-code -p clients/python/examples/verifiers   # or copy this file
    vf-eval assay-math-code -a '{"assay_url": "http://127.0.0.1:8787"}'

prime-rl trains on it like any other environment (`environment.id = "assay-math-code"`).
`dataset`: any datasets.Dataset with `question`, `answer` and `info` ({"verifier": ...}) columns;
without one, the few rows below.
"""
from __future__ import annotations

from typing import Any, Optional

from assay_client.verifiers_env import assay_rubric

SYSTEM_PROMPT = ("Think step by step. For a math question, end with the answer in \\boxed{}. For a "
                 "programming task, answer with one ```python code block that reads stdin and prints the result.")

ROWS = [
    {"question": "What is 17 * 23?", "answer": "391", "info": {"verifier": "math"}},
    {"question": "Natalia sold clips to 48 friends in April, and half as many in May. How many in all?",
     "answer": "72", "info": {"verifier": "math"}},
    {"question": "Read an integer n and print n squared.",
     "answer": {"inputs": ["3\n", "12\n"], "outputs": ["9\n", "144\n"]}, "info": {"verifier": "code"}},
    {"question": "Read a line and print it reversed.",
     "answer": {"inputs": ["abc\n", "racecar\n"], "outputs": ["cba\n", "racecar\n"]}, "info": {"verifier": "code"}},
]


def load_environment(dataset: Any = None, assay_url: Optional[str] = None, api_key: Optional[str] = None,
                     system_prompt: str = SYSTEM_PROMPT, **kwargs: Any) -> Any:
    import verifiers as vf
    from datasets import Dataset

    if dataset is None:
        # Arrow needs one type per column: the code rows' answers travel as JSON strings, which
        # Assay's code verifier reads as its reference.
        import json

        dataset = Dataset.from_list([{**r, "answer": r["answer"] if isinstance(r["answer"], str) else json.dumps(r["answer"])}
                                     for r in ROWS])
    rubric = assay_rubric(assay_url=assay_url, api_key=api_key)
    return vf.SingleTurnEnv(dataset=dataset, system_prompt=system_prompt, rubric=rubric, **kwargs)
