"""Runs the two reference evaluators, unmodified, on pairs.json and writes references.json.

    python3 run_references.py TEST_SUITE_DIR BIRD_SRC_DIR

TEST_SUITE_DIR holds exec_eval.py and parse.py of taoyds/test-suite-sql-eval; BIRD_SRC_DIR holds
evaluation.py of AlibabaResearch/DAMO-ConvAI (bird/llm/src). README.md gives the commits and the
full command. Both run on Python's own sqlite3 (its SQLite reads double-quoted literals, as the
benchmarks' authors' did). Each database is built from its .sql script into a folder of its own,
because eval_exec_match runs the pair on every *.sqlite file in the database's folder.
"""
import importlib
import json
import os
import random
import sqlite3
import sys
import tempfile
import types

ts_dir, bird_dir = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))

# evaluation.py imports func_timeout at the top (for its own multiprocessing driver, which is not
# run here); the package is not installable offline, so a module that calls the function with no
# time limit stands in for it. execute_model (unmodified) then catches errors as BIRD does.
shim = types.ModuleType("func_timeout")
class FunctionTimedOut(Exception):
    pass
shim.FunctionTimedOut = FunctionTimedOut
shim.func_timeout = lambda timeout, func, args=(), kwargs=None: func(*args, **(kwargs or {}))
sys.modules["func_timeout"] = shim

sys.path[:0] = [ts_dir, bird_dir]
exec_eval = importlib.import_module("exec_eval")
evaluation = importlib.import_module("evaluation")

pairs = json.load(open(os.path.join(here, "pairs.json")))
root = tempfile.mkdtemp()
dbs = {}
for db in sorted({p["db"] for p in pairs}):
    os.makedirs(os.path.join(root, db))
    path = os.path.join(root, db, db + ".sqlite")
    con = sqlite3.connect(path)
    con.executescript(open(os.path.join(here, db + ".sql")).read())
    con.commit()
    con.close()
    dbs[db] = path

def test_suite(p, keep_distinct):
    random.seed(0)  # get_constraint_permutation samples rows
    try:
        return exec_eval.eval_exec_match(dbs[p["db"]], p["pred"], p["gold"], plug_value=False, keep_distinct=keep_distinct, progress_bar_for_each_datapoint=False)
    except AssertionError as e:  # the gold failed on the database
        return "gold error: %s" % e

out = {}
for i, p in enumerate(pairs):
    out[p["id"]] = {
        "test_suite": test_suite(p, True),
        "test_suite_strip_distinct": test_suite(p, False),
        "bird": evaluation.execute_model(p["pred"], p["gold"], dbs[p["db"]], i, 30.0)["res"],
    }
    print(p["id"], out[p["id"]], flush=True)

with open(os.path.join(here, "references.json"), "w") as f:
    json.dump({"sqlite_version": sqlite3.sqlite_version, "python": sys.version.split()[0], "verdicts": out}, f, indent=1)
    f.write("\n")
