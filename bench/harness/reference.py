"""The benchmarks' own harnesses, run bare on this host, for bench/harness-agreement.ts.

    python3 bench/harness/reference.py humaneval|mbpp FILE.jsonl[.gz] [LIMIT]

Prints one JSON line per task: {"task_id", "passed", "result"}.
- humaneval: openai/human-eval's check_correctness (human_eval_execution.py, copied verbatim)
  on each task's canonical_solution, with the harness's default timeout of 3 s.
- mbpp: MBPP ships no harness; its paper's evaluation runs the code and then the task's
  test_setup_code and test_list asserts in one program. That program goes through the same
  check_correctness (its problem built so that the harness's own `check(entry_point)` line is a
  no-op after the asserts), so both benchmarks get the same guard, timeout and verdicts.
"""
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from human_eval_execution import check_correctness  # noqa: E402


def rows(path, limit):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        out = [json.loads(line) for line in f if line.strip()]
    return out[:limit] if limit else out


def humaneval(row):
    return check_correctness(row, row["canonical_solution"], 3.0)


def mbpp(row):
    tests = "\n".join([row.get("test_setup_code") or ""] + list(row["test_list"]))
    problem = {"task_id": row["task_id"], "prompt": "", "test": tests + "\ndef check(_):\n    pass\n", "entry_point": "None"}
    return check_correctness(problem, row["code"], 3.0)


def main():
    kind, path = sys.argv[1], sys.argv[2]
    limit = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    run = {"humaneval": humaneval, "mbpp": mbpp}[kind]
    for row in rows(path, limit):
        r = run(row)
        print(json.dumps({"task_id": row["task_id"], "passed": bool(r["passed"]), "result": r["result"]}), flush=True)


if __name__ == "__main__":
    main()
