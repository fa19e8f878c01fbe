"""The client spreads load over several Assay servers itself (issue 33): health-aware round robin,
a batch that fails on one replica sent whole to another, all inside the caller's deadline.

Live tests: two real servers (`node dist/src/cli/main.js serve`) on loopback, one SIGKILLed while a
training-like loop sends batches; every batch is answered, in order, each item once. Scripted
tests (the fake server) pin the rules: a 503 or a dropped connection moves the request to the
other replica at once and cools the bad one down; with every replica down the call fails when
its deadline says, not later.
"""
from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from typing import List

import pytest

from assay_client import AssayClient, AssayError, AsyncAssayClient
from assay_client.client import RetryPolicy

from conftest import MAIN, ROOT, _wait_healthy, free_port


class _SlowBackoff(RetryPolicy):
    """Every backoff is 30 s: a test finishing well before that never waited on one."""

    def delay(self, attempt, retry_after=None):
        return 30.0


def _spawn() -> "tuple[subprocess.Popen, str]":
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "ASSAY_API_KEYS"}
    env.update({"ASSAY_PORT": str(port), "ASSAY_HOST": "127.0.0.1", "ASSAY_LOG_LEVEL": "warn",
                "ASSAY_SANDBOX": "none", "ASSAY_WORKERS": "1", "ASSAY_DATA_DIR": ":memory:"})
    proc = subprocess.Popen(["node", str(MAIN), "serve"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=sys.stderr)
    return proc, f"http://127.0.0.1:{port}"


@pytest.fixture
def two_servers():
    if not MAIN.exists():
        subprocess.run(["npm", "run", "build"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    procs = []
    try:
        a = _spawn()
        procs.append(a[0])
        b = _spawn()
        procs.append(b[0])
        # Generous: a loaded 2-core machine has taken over a minute to start one.
        _wait_healthy(a[1], a[0], timeout=240)
        _wait_healthy(b[1], b[0], timeout=240)
        yield a, b
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()


def _batches_served(url: str) -> int:
    """POST /reward/batch requests this server answered 200 (its /metrics)."""
    with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
        text = r.read().decode()
    return sum(int(float(m.group(1))) for m in re.finditer(
        r'^assay_http_requests_total\{[^}]*route="/reward/batch"[^}]*status="200"[^}]*\} (\S+)$', text, re.M))


def _items(k: int, start: int) -> List[dict]:
    return [{"id": f"i{start + j}", "verifier": "exact", "response": str((start + j) % 3), "reference": "0"}
            for j in range(k)]


def _check(sent: List[dict], results: List[dict]) -> None:
    assert [r["id"] for r in results] == [s["id"] for s in sent], "every item once, in order"
    for s, r in zip(sent, results):
        assert r["reward"] == (1 if s["response"] == "0" else 0), r


def test_round_robin_spreads_batches_over_both_servers(two_servers):
    (_, a), (_, b) = two_servers
    client = AssayClient([a, b], chunk_size=50, concurrency=2)
    sent = _items(1000, 0)
    _check(sent, client.score_batch(sent))
    na, nb = _batches_served(a), _batches_served(b)
    assert na + nb == 20
    assert na >= 5 and nb >= 5, f"round robin: {na} and {nb} of 20 chunks"
    # The same from a comma-separated URL (ASSAY_URL=...,...), and pickled (Ray) with it.
    import pickle
    c2 = pickle.loads(pickle.dumps(AssayClient(f"{a},{b}")))
    assert c2.urls == [a, b]


def test_a_replica_killed_mid_run_loses_no_batch(two_servers):
    (_, a), (proc_b, b) = two_servers
    client = AssayClient([a, b], chunk_size=100, concurrency=4, deadline=60,
                         retry=RetryPolicy(max_retries=6, backoff=0.05, max_backoff=0.5))
    answered = []
    errors = []
    stop = threading.Event()

    def trainer():
        n = 0
        try:
            while not stop.is_set():
                sent = _items(400, n)
                n += 400
                _check(sent, client.score_batch(sent))
                answered.append(len(sent))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def wait_for(n: int, why: str) -> None:
        # Counted in batches answered, not seconds: a loaded 2-core machine is slow by any clock.
        until = time.monotonic() + 120
        while sum(answered) < n and not errors:
            assert time.monotonic() < until, why
            time.sleep(0.05)

    t = threading.Thread(target=trainer)
    t.start()
    wait_for(800, "two batches answered before the kill")
    before = sum(answered)
    proc_b.send_signal(signal.SIGKILL)  # with batches in flight: the trainer never pauses
    proc_b.wait()
    killed_at = time.monotonic()
    wait_for(before + 1200, "three more batches answered after it")
    stop.set()
    t.join(60)
    assert not t.is_alive()
    assert not errors, errors
    assert before > 0, "batches were answered before the kill"
    assert sum(answered) > before, "and after it, by the surviving replica"
    assert b in client._replicas.down() or time.monotonic() - killed_at > 1.0
    # After the kill only a is answering, and the client keeps sending there without a failed try first.
    sent = _items(200, 10**6)
    t0 = time.monotonic()
    _check(sent, client.score_batch(sent))
    assert time.monotonic() - t0 < 30


def test_async_client_survives_a_killed_replica(two_servers):
    (_, a), (proc_b, b) = two_servers
    client = AsyncAssayClient([a, b], chunk_size=50, concurrency=4, deadline=60,
                              retry=RetryPolicy(max_retries=6, backoff=0.05, max_backoff=0.5))

    async def run():
        sent = _items(400, 0)
        _check(sent, await client.score_batch(sent))
        proc_b.send_signal(signal.SIGKILL)
        proc_b.wait()
        for k in range(3):
            sent = _items(400, (k + 1) * 1000)
            _check(sent, await client.score_batch(sent))

    asyncio.run(run())
    client.close()


def test_a_503_or_dropped_connection_goes_to_the_other_replica_at_once(fake_assay):
    bad = fake_assay([(503, {}, b'{"error": "draining"}'), (0, {}, None), (503, {}, b'{"error": "draining"}')])
    good = fake_assay()
    # Every backoff is 30 s: a retry that waited for one would take that; moving to the other replica does not.
    client = AssayClient([bad.url, good.url], retry=_SlowBackoff(max_retries=5))
    t0 = time.monotonic()
    for k in range(3):
        results = client.score_batch([{"id": k, "verifier": "exact", "response": "ab", "reference": "x"}])
        assert results[0]["reward"] == 2.0
    assert time.monotonic() - t0 < 15.0, "no backoff wait while another replica is healthy"
    assert bad.url in client._replicas.down(), "the failing replica cools down"
    assert len(good.requests) == 3


def test_every_replica_down_fails_within_the_deadline():
    dead = [f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}"]
    client = AssayClient(dead, retry=RetryPolicy(max_retries=100, backoff=0.2, max_backoff=0.5))
    t0 = time.monotonic()
    with pytest.raises(AssayError, match="deadline"):
        client.score_batch([{"verifier": "exact", "response": "a", "reference": "a"}], deadline=1.5)
    assert time.monotonic() - t0 < 10.0, "the deadline (1.5 s) ends the retries, not max_retries (100)"


def test_async_assay_spreads_and_fails_over(fake_assay):
    pytest.importorskip("aiohttp")
    from assay_client.aio import AsyncAssay

    bad = fake_assay([(0, {}, None)] * 3)
    good = fake_assay()

    async def run():
        async with AsyncAssay([bad.url, good.url], retry=_SlowBackoff(max_retries=5)) as c:
            t0 = time.monotonic()
            rewards = await c.reward_batch([{"verifier": "exact", "response": "abc", "reference": "x"}] * 3, deadline=30)
            assert rewards == [3.0] * 3
            assert time.monotonic() - t0 < 15.0, "no backoff wait while another replica is healthy"

    asyncio.run(run())


# ---- a keep-alive connection the server closed while it sat idle -----------------------------------
class _IdleClosingServer:
    """Answers every POST /reward/batch like the fake, over HTTP/1.1 keep-alive, and closes a
    connection that has been idle `idle` seconds (Node's keepAliveTimeout, 65 s on Assay, scaled
    down) without telling the client: the next request on it meets a closed socket."""

    def __init__(self, idle: float):
        import json
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from conftest import reply_json

        srv = self
        self.requests = 0

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = idle  # the socket's read timeout: handle_one_request ends the connection

            def log_message(self, *a):
                pass

            def log_error(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                srv.requests += 1
                reply_json(self, 200, json.dumps({"results": [{"id": it.get("id"), "reward": 1.0, "status": "ok"}
                                                             for it in body["items"]]}).encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("make", [lambda url, **kw: AssayClient(url, **kw),
                                  lambda url, **kw: AsyncAssayClient(url, **kw)], ids=["sync", "async"])
def test_a_keep_alive_connection_closed_while_idle_is_not_a_replica_failure(make):
    srv = _IdleClosingServer(idle=0.2)
    try:
        # No retries and a 30 s backoff: only a fresh connection at once can answer the second call.
        client = make(srv.url, retry=_SlowBackoff(max_retries=0))

        def call():
            out = client.reward_batch([{"id": 0, "verifier": "exact", "response": "a"}])
            return asyncio.run(out) if asyncio.iscoroutine(out) else out

        assert call() == [1.0]
        time.sleep(0.6)  # the server has closed the idle connection by now
        t0 = time.monotonic()
        assert call() == [1.0]
        assert time.monotonic() - t0 < 5
        assert client._replicas.down() == [] and srv.requests == 2
    finally:
        srv.close()


def test_a_connection_idle_past_idle_reuse_s_is_replaced_before_the_request(monkeypatch):
    from assay_client import client as client_mod

    srv = _IdleClosingServer(idle=0.2)
    exchanges = []
    real = client_mod._Transport._exchange
    monkeypatch.setattr(client_mod._Transport, "_exchange", lambda self, conn, *a: exchanges.append(conn) or real(self, conn, *a))
    monkeypatch.setattr(client_mod, "IDLE_REUSE_S", 0.1)
    try:
        client = AssayClient(srv.url, retry=_SlowBackoff(max_retries=0))
        assert client.reward_batch([{"id": 0, "verifier": "exact", "response": "a"}]) == [1.0]
        time.sleep(0.6)
        assert client.reward_batch([{"id": 0, "verifier": "exact", "response": "a"}]) == [1.0]
        # one exchange per call, the second on a new connection: no stale try was needed
        assert len(exchanges) == 2 and exchanges[0] is not exchanges[1]
    finally:
        srv.close()
