"""/run_code under verl's own SandboxFusion client (clients/python/tests/verl_sandbox_fusion.py: verl
v0.7.0's sandbox_fusion/utils.py, copied whole): LOOPS endless loops and CORRECT correct programs sent
at once, one check_correctness each, behind verl's sandbox_fusion.max_concurrent semaphore, to a
live server (docker sandbox, ASSAY_SANDBOX_POOL=POOL) on loopback. Prints verl's result per kind
(True / -3 time limit / -1 api_error with its cause) and the wall time, for each max_concurrent.
Bounded: one request per program, verl's three tries; the server stops at the end.

Usage: python bench/verl_sandbox_load.py [--loops 64] [--correct 64] [--pool 4] [--timeout 3]
       [--max-concurrent 64,8]
"""
from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients" / "python" / "tests"))
logging.disable(logging.CRITICAL)  # verl's client logs every 504 and error

from conftest import serve_assay  # noqa: E402
from test_verl_sandbox_load import run_mix, tally  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--loops", type=int, default=64)
p.add_argument("--correct", type=int, default=64)
p.add_argument("--pool", type=int, default=4)
p.add_argument("--timeout", type=int, default=3, help="verl's sandbox_fusion timeout (compile and run), s; verl's default is 10")
p.add_argument("--max-concurrent", default="64,8")
a = p.parse_args()

with serve_assay(ASSAY_SANDBOX="docker", ASSAY_SANDBOX_POOL=str(a.pool)) as url:
    run_mix(url, 0, 4, a.timeout)  # warm the python-sci pool
    for mc in [int(x) for x in a.max_concurrent.split(",")]:
        t0 = time.monotonic()
        out = run_mix(url, a.loops, a.correct, a.timeout, max_concurrent=mc)
        wall = time.monotonic() - t0
        t = tally(out)
        wrong = sum(n for (kind, r), n in t.items() if kind == "correct" and r is not True)
        print(f"pool {a.pool}, timeout {a.timeout} s, {a.loops} loops + {a.correct} correct, max_concurrent {mc}: "
              f"{wall:.0f} s; correct True {t.get(('correct', True), 0)}/{a.correct} (not True: {wrong}); "
              f"loops " + ", ".join(f"{r}: {n}" for (kind, r), n in sorted(t.items(), key=str) if kind == "loop"), flush=True)
