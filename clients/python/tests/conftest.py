"""Fixtures: a live Assay server (the real build, on a free loopback port) and a scripted fake one."""
from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Iterator, List, Optional, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[3]
MAIN = ROOT / "dist" / "src" / "cli" / "main.js"



def reply_json(handler, status: int, data: bytes, headers: dict | None = None) -> None:
    """A fake server's JSON answer: status, content type and length, `headers`, the body."""
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for k, v in (headers or {}).items():
        handler.send_header(k, v)
    handler.end_headers()
    handler.wfile.write(data)

def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"assay serve exited with {proc.returncode} before answering /healthz")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"assay serve did not answer {url}/healthz within {timeout}s")


@contextlib.contextmanager
def serve_assay(**settings: str) -> Iterator[str]:
    """Runs `node dist/src/cli/main.js serve` (built first if needed) on a free loopback port with
    these ASSAY_* settings over the defaults below; yields its URL and stops it afterwards."""
    if not MAIN.exists():
        subprocess.run(["npm", "run", "build"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    port = free_port()
    # Keys only where a test asks for them (settings), never from the caller's environment.
    env = {k: v for k, v in os.environ.items() if k != "ASSAY_API_KEYS"}
    env.update({"ASSAY_PORT": str(port), "ASSAY_HOST": "127.0.0.1", "ASSAY_LOG_LEVEL": "warn",
                "ASSAY_SANDBOX": "none", "ASSAY_WORKERS": "1", **settings})
    proc = subprocess.Popen(["node", str(MAIN), "serve"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=sys.stderr)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def assay_url() -> Iterator[str]:
    """Starts the real server once for the session and stops it at the end."""
    with serve_assay() as url:
        yield url


def need(module: str):
    """Imports an optional test dependency: skips without it on a laptop, fails under CI=true,
    where scripts/setup-python.sh has installed it and its absence is a broken install."""
    if os.environ.get("CI") == "true":
        import importlib

        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"{module} is not installed (bash scripts/setup-python.sh)")


def need_docker() -> None:
    """Skips without a Docker engine on a laptop; fails under CI=true, where .ci/run starts one."""
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but no Docker engine answers")
        pytest.skip("no Docker engine here")


# ---- a scripted fake server -------------------------------------------------------------------

Reply = Tuple[int, dict, Optional[bytes]]  # status, headers, body; status 0 = drop the connection


#: The largest integer id the server accepts: JavaScript holds integers exactly up to 2**53 - 1.
MAX_SAFE_ID = 2 ** 53 - 1


def _fake_result(it: dict) -> dict:
    """What the fake answers for one item: reward = len(response), null when `"null": true`; an id
    the server's schema refuses (not a string or an integer, or an integer beyond +-MAX_SAFE_ID)
    answers status "invalid" with details.field "id" and no id, as the server does."""
    i = it.get("id")
    if i is not None and (isinstance(i, bool) or not isinstance(i, (str, int)) or
                          (isinstance(i, int) and abs(i) > MAX_SAFE_ID)):
        return {"verifier": it.get("verifier"), "reward": None, "status": "invalid",
                "reason": "items[].id must be a string or an integer within +-(2^53-1)",
                "details": {"field": "id"}, "elapsed_ms": 0.0}
    return {"id": i, "verifier": it.get("verifier"),
            "reward": None if it.get("null") else float(len(it.get("response", ""))),
            "status": "error" if it.get("null") else "ok", "reason": "fake",
            "details": {}, "elapsed_ms": 0.1}


class FakeAssay:
    """Answers POST /reward/batch from a script: each request takes the next planned reply, or,
    once the script is spent, echoes every item with reward = len(response) (and null when the
    item says `"null": true`). Records each request and how many were in flight at once.
    `max_body` (bytes): a larger request body is answered 413, as the server's ASSAY_MAX_BODY."""

    def __init__(self, script: Optional[List[Reply]] = None, delay: float = 0.0, max_body: Optional[int] = None):
        self.script = list(script or [])
        self.delay = delay
        self.max_body = max_body
        self.requests: List[dict] = []
        self.lock = threading.Lock()
        self.inflight = 0
        self.max_inflight = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                self._reply(200, {}, json.dumps({"status": "ok"}).encode())

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if fake.max_body is not None and length > fake.max_body:
                    with fake.lock:
                        fake.requests.append({"path": self.path, "body": None, "headers": dict(self.headers),
                                              "at": time.monotonic(), "status": 413, "length": length})
                    self._reply(413, {}, json.dumps({"error": f"request body is over the limit of {fake.max_body} bytes"}).encode())
                    return
                body = json.loads(raw or b"{}")
                with fake.lock:
                    fake.requests.append({"path": self.path, "body": body, "headers": dict(self.headers),
                                          "at": time.monotonic(), "status": None, "length": length})
                    planned = fake.script.pop(0) if fake.script else None
                    fake.inflight += 1
                    fake.max_inflight = max(fake.max_inflight, fake.inflight)
                try:
                    if fake.delay:
                        time.sleep(fake.delay)
                    if planned is not None:
                        status, headers, data = planned
                        if status == 0:
                            self.close_connection = True
                            self.connection.shutdown(socket.SHUT_RDWR)
                            return
                        self._reply(status, headers, data or b"")
                        return
                    items = body.get("items", [body])
                    results = [_fake_result(it) for it in items]
                    out = {"results": results} if "items" in body else results[0]
                    self._reply(200, {}, json.dumps(out).encode())
                finally:
                    with fake.lock:
                        fake.inflight -= 1

            def _reply(self, status: int, headers: dict, data: bytes):
                reply_json(self, status, data, headers)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_assay() -> Callable[..., FakeAssay]:
    made: List[FakeAssay] = []

    def make(script: Optional[List[Reply]] = None, delay: float = 0.0, max_body: Optional[int] = None) -> FakeAssay:
        f = FakeAssay(script, delay, max_body)
        made.append(f)
        return f

    yield make
    for f in made:
        f.close()
