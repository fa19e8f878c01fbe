"""Items/s of the Python client's ways to score 4,096 items, measured in the same run:

  batch      one 4,096-item POST /reward/batch (AsyncAssay.score_batch, chunk_size 4096): the ceiling
  micro      4,096 concurrent `await AsyncAssay.reward(item)`, coalesced by the micro-batcher
  threads    4,096 threads, each calling the blocking AssayClient.reward(item) once

Rounds alternate the cases (batch, micro, threads, batch, ...); the table is each case's median.
Starts its own server (node dist/src/cli/main.js serve, ASSAY_SANDBOX=none, ASSAY_WORKERS=1) on
a free loopback port unless --url is given. Run from the repository root after `npm run build`:

    python3 bench/async_client.py [--items 4096] [--rounds 3] [--verifier math|exact] [--json out.json]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "clients" / "python"))

from assay_client import AssayClient, AssayError  # noqa: E402
from assay_client.aio import AsyncAssay  # noqa: E402


def items(n: int, verifier: str):
    if verifier == "exact":
        return [{"verifier": "exact", "response": f"answer {i}", "reference": f"answer {i if i % 2 else i + 1}"} for i in range(n)]
    return [{"verifier": "math", "response": f"so the answer is \\boxed{{{i}/2}}", "reference": f"{i / 2}" if i % 2 else "0.25"}
            for i in range(n)]


def start_server():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "ASSAY_PORT": str(port), "ASSAY_HOST": "127.0.0.1", "ASSAY_LOG_LEVEL": "warn",
           "ASSAY_SANDBOX": "none", "ASSAY_WORKERS": "1"}
    proc = subprocess.Popen(["node", str(ROOT / "dist" / "src" / "cli" / "main.js"), "serve"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/readyz", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit(f"the server at {url} was not ready within 120 s")


async def run_batch(url, its):
    async with AsyncAssay(url, chunk_size=len(its), timeout=600) as a:
        t0 = time.perf_counter()
        out = await a.reward_batch(its)
        return time.perf_counter() - t0, out, dict(a.requests)


async def run_micro(url, its):
    async with AsyncAssay(url, timeout=600) as a:
        t0 = time.perf_counter()
        out = await asyncio.gather(*(a.reward(it) for it in its))
        return time.perf_counter() - t0, list(out), dict(a.requests)


def run_threads(url, its):
    client = AssayClient(url, timeout=600)
    out = [None] * len(its)

    def one(i):
        try:
            out[i] = client.reward(its[i])
        except AssayError as e:  # e.g. HTTP 408: the server timed out a request a starved thread sent too slowly
            out[i] = f"failed: {e}"

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(its))]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - t0, out, {"/reward": len(its)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url")
    ap.add_argument("--items", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--verifier", default="math", choices=["math", "exact"])
    ap.add_argument("--json")
    args = ap.parse_args()
    proc, url = (None, args.url) if args.url else start_server()
    try:
        its = items(args.items, args.verifier)
        want = asyncio.run(run_batch(url, its))[1]  # also warms the server
        assert set(want) >= {0, 1}, "the items should score both ways"
        cases = {"batch": lambda: asyncio.run(run_batch(url, its)),
                 "micro": lambda: asyncio.run(run_micro(url, its)),
                 "threads": lambda: run_threads(url, its)}
        rates = {k: [] for k in cases}
        requests, failures = {}, {}
        for r in range(args.rounds):
            for name, fn in cases.items():
                secs, out, reqs = fn()
                failed = [o for o in out if isinstance(o, str)]
                assert [o for o in out if not isinstance(o, str)] == [w for w, o in zip(want, out) if not isinstance(o, str)], \
                    f"{name} scored differently from one batch"
                rates[name].append((len(its) - len(failed)) / secs)  # items scored per second
                requests[name] = reqs
                failures[name] = failures.get(name, 0) + len(failed)
                print(f"round {r + 1} {name:8s} {len(its) / secs:9.0f} items/s  {secs:6.2f} s  requests {reqs}"
                      + (f"  FAILED {len(failed)}: {failed[0]}" if failed else ""), flush=True)
        base = statistics.median(rates["batch"])
        print(f"\n| case | items/s (median of {args.rounds}) | vs one batch | HTTP requests | failed calls (all rounds) |")
        print("| --- | --- | --- | --- | --- |")
        for name in cases:
            m = statistics.median(rates[name])
            print(f"| {name} | {m:.0f} | {m / base:.2f}x | {sum(requests[name].values())} | {failures.get(name, 0)} |")
        if args.json:
            Path(args.json).write_text(json.dumps({"items": len(its), "verifier": args.verifier, "rates": rates,
                                                   "requests": requests, "failures": failures}, indent=2))
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=20)


if __name__ == "__main__":
    main()
