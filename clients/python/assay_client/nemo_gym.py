"""A NeMo-Gym resources server that forwards to Assay: the small program NeMo-Gym starts itself.

NeMo-Gym (NVIDIA-NeMo/Gym, checked at commit 07d6b0d, after v0.5.0) does not connect to a URL: a
resources server is a Python program its launcher starts (nemo_gym/cli/env.py, `RunHelper.start`:
in `resources_servers/<type>/` it runs `NEMO_GYM_CONFIG_DICT=<the whole config as YAML>
NEMO_GYM_CONFIG_PATH=<instance name> python <entrypoint>`), which reads its `host` and `port`
from that config (nemo_gym/server_utils.py `BaseServer.load_config_from_global_config`,
nemo_gym/global_config.py `get_first_server_config_dict`: three levels down from the instance
name). Its agents then call it by host and port only, so an API key cannot ride in a `/k/<key>`
prefix. This program is that server: it serves the paths NeMo-Gym calls and forwards each to
Assay with the key from the environment (`ASSAY_API_KEY`, sent as a Bearer token) at `ASSAY_URL`
(one URL, or several replicas comma-separated, as the rest of the client reads it: round robin
over the healthy ones, a rollout's session calls kept on the replica that seeded it).

Paths (nemo_gym/base_resources_server.py `SimpleResourcesServer.setup_webserver`,
nemo_gym/server_utils.py `BaseServer.setup_liveness`):

- `POST /seed_session`, `/verify`, `/aggregate_metrics`, `/close_session`: forwarded to Assay as is;
  Assay's status and body come back unchanged (a 400 names what to fix in the dataset), except
  that a 429 or 503 (Assay busy) is retried here, after its Retry-After, for as long as
  FORWARD_TIMEOUT_S allows: NeMo-Gym retries only dropped connections (nemo_gym/server_utils.py
  `request`) and its agents turn any error status into a failed rollout (`raise_for_status`).
- The same under `/ng-rollout/<id>/...`: with observability on, NeMo-Gym's ServerClient puts that
  prefix on every call to a resources server (nemo_gym/server_utils.py `ServerClient.request`);
  NeMo-Gym's own servers strip it (nemo_gym/rollout_correlation.py `RolloutContextMiddleware`,
  whose pattern is copied below), and so does this one.
- `POST /stateful_python_code_exec` (`{"code": ...}`): a rollout's Python tool call, run in the
  Assay session bound to the `assay_session` cookie that `/seed_session` set; the proxy passes the
  request's `Cookie` to Assay and Assay's `Set-Cookie` back, so NeMo-Gym's agent, which keeps the
  seed's cookies for the rollout's later calls, reaches one interpreter.
- `GET /`: liveness, what the launcher polls while it waits for its servers.
- `GET /reverify_mode`: `"stateless"`: Assay's verdict is a function of the request alone.

Use it from a directory NeMo-Gym finds, `resources_servers/assay/app.py`:

    from assay_client.nemo_gym import main
    main()

or run `python -m assay_client.nemo_gym` with the same two environment variables.
"""
from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from collections import OrderedDict
from typing import Any, Mapping, Optional, Tuple

from .client import UNHEALTHY_STATUSES, _Replicas, _urls

#: nemo_gym/global_config.py: NEMO_GYM_CONFIG_DICT_ENV_VAR_NAME, NEMO_GYM_CONFIG_PATH_ENV_VAR_NAME.
CONFIG_DICT_ENV = "NEMO_GYM_CONFIG_DICT"
CONFIG_PATH_ENV = "NEMO_GYM_CONFIG_PATH"

#: The routes NeMo-Gym's agents and rollout collection POST to a resources server.
FORWARDED = frozenset({"/seed_session", "/verify", "/aggregate_metrics", "/close_session", "/stateful_python_code_exec"})

# nemo_gym/config_types.py ROLLOUT_PATH_PREFIX and nemo_gym/rollout_correlation.py
# ROLLOUT_ID_PATTERN / RolloutContextMiddleware._PREFIX (Apache-2.0, NVIDIA CORPORATION & AFFILIATES).
_ROLLOUT_PREFIX = re.compile(r"^/ng-rollout/(?P<rollout_id>[A-Za-z0-9][A-Za-z0-9._-]*)(?P<rest>/.*)$")

#: Seconds to wait for Assay's answer, retries of a busy answer included: longer than any
#: verifier's own limit (a code verifier's sandbox run can queue for minutes under load). Assay
#: holds a /verify behind a sandbox backlog for up to this long rather than refuse it
#: (src/server/routes/nemogym.ts NEMO_GYM_CALLER, checked equal by tests/dropins-nemogym.test.ts).
FORWARD_TIMEOUT_S = 900.0

#: Sessions whose replica the proxy remembers (ASSAY_URL naming several), the oldest dropped first.
MAX_SESSIONS = 100_000

#: Assay's answers that mean "busy, send it again later" (in-flight cap, admission).
RETRIED = frozenset({429, 503})


def retry_after_s(value: Optional[str]) -> float:
    """Seconds from a Retry-After header (delta-seconds; an HTTP date or nothing: 1 s), between
    0.5 and 30."""
    try:
        s = float(value) if value is not None else 1.0
    except ValueError:
        s = 1.0
    return min(max(s, 0.5), 30.0)


def strip_rollout_prefix(path: str) -> Tuple[str, Optional[str]]:
    """`/ng-rollout/<id>/verify` -> (`/verify`, `<id>`); any other path unchanged, with None."""
    m = _ROLLOUT_PREFIX.match(path)
    return (m.group("rest"), m.group("rollout_id")) if m else (path, None)


def server_config(config_yaml: str, instance: str) -> Mapping[str, Any]:
    """This instance's own config from NeMo-Gym's global config: `<instance>.<server kind>.<type>`
    (nemo_gym/global_config.py `get_first_server_config_dict`: the first key at each level)."""
    try:
        import yaml  # NeMo-Gym's own dependency (through omegaconf); `pip install pyyaml` otherwise
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise SystemExit("assay_client.nemo_gym reads NeMo-Gym's YAML config: pip install pyyaml") from e
    global_config = yaml.safe_load(config_yaml) or {}
    node: Any = global_config.get(instance) if isinstance(global_config, Mapping) else None
    if not isinstance(node, Mapping):
        raise SystemExit(f"{CONFIG_PATH_ENV}={instance!r} names no entry of NeMo-Gym's config; "
                         "start this program through NeMo-Gym's launcher, or set both variables")
    for _ in range(2):
        if not isinstance(node, Mapping) or not node:
            raise SystemExit(f"NeMo-Gym's config for {instance!r} should be "
                             f"{instance}: {{resources_servers: {{assay: {{entrypoint: app.py, host: ..., port: ...}}}}}}")
        node = next(iter(node.values()))
    if not isinstance(node, Mapping) or "host" not in node or "port" not in node:
        raise SystemExit(f"NeMo-Gym's config for {instance!r} has no host and port; give the server "
                         "instance `host` and `port` (NeMo-Gym fills them in when it starts its servers)")
    return node


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "ResourcesServer"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, body: bytes, content_type: str = "application/json",
              set_cookie: Optional[str] = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if set_cookie:
            self.send_header("Set-Cookie", set_cookie)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str) -> None:
        self._send(status, json.dumps({"detail": message}).encode())

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path, _ = strip_rollout_prefix(self.path.split("?", 1)[0])
        if path == "/":
            self._send(200, b'{"status":"ok"}')
        elif path == "/reverify_mode":
            self._send(200, b'"stateless"')
        else:
            self._error(404, f"GET {path} is not a resources-server route; this proxy serves GET / and /reverify_mode")

    def do_POST(self) -> None:  # noqa: N802
        path, _ = strip_rollout_prefix(self.path.split("?", 1)[0])
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self.close_connection = True
            self._error(411, "send the body with a Content-Length (NeMo-Gym's aiohttp client does); "
                             "chunked request bodies are not read here")
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b"{}"
        if path not in FORWARDED:
            self._error(404, f"POST {path} is not served: Assay answers {', '.join(sorted(FORWARDED))} "
                             "(a tool route of another environment's resources server has no Assay equivalent)")
            return
        status, reply, cookie = self.server.forward(path, body, self.headers.get("Cookie"))
        self._send(status, reply, set_cookie=cookie)


class ResourcesServer(ThreadingHTTPServer):
    """The proxy: one thread per request, each forwarding to Assay."""

    daemon_threads = True

    def __init__(self, host: str, port: int, assay_url: Optional[str] = None, api_key: Optional[str] = None,
                 verbose: bool = False):
        super().__init__((host, int(port)), _Handler)
        self.assay_urls = _urls(assay_url)
        self.assay_url = ",".join(self.assay_urls)
        self._replicas = _Replicas(self.assay_urls)
        self._sessions: "OrderedDict[str, int]" = OrderedDict()  # session cookie -> replica that seeded it
        self._sessions_lock = threading.Lock()
        self.api_key = api_key if api_key is not None else os.environ.get("ASSAY_API_KEY")
        self.verbose = verbose

    def forward(self, path: str, body: bytes, cookie: Optional[str] = None) -> Tuple[int, bytes, Optional[str]]:
        """Assay's status, body and Set-Cookie for one call. The cookie travels both ways: Assay's
        /seed_session sets the one that takes the rollout's later /stateful_python_code_exec calls
        to one Python session, and NeMo-Gym's agent sends it back on each call."""
        headers = {"Content-Type": "application/json"}
        if cookie:
            headers["Cookie"] = cookie
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        give_up = time.monotonic() + FORWARD_TIMEOUT_S
        pinned = self._session_replica(cookie)
        tried: list = []
        while True:
            i = pinned if pinned is not None else self._replicas.pick(tried)
            base = self.assay_urls[i]
            req = urllib.request.Request(base + path, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=max(1.0, give_up - time.monotonic())) as r:
                    self._replicas.ok(i)
                    set_cookie = r.headers.get("Set-Cookie")
                    self._remember_session(set_cookie, i, forget=cookie if path == "/close_session" else None)
                    return r.status, r.read(), set_cookie
            except urllib.error.HTTPError as e:
                reply = e.read()
                if e.code in UNHEALTHY_STATUSES:
                    self._replicas.failed(i)
                else:
                    self._replicas.ok(i)
                wait = retry_after_s(e.headers.get("Retry-After"))
                if e.code not in RETRIED or time.monotonic() + wait >= give_up:
                    return e.code, reply, None
                if self.verbose:
                    print(f"assay answered {e.code} to {path}; retrying in {wait:.1f} s", file=sys.stderr, flush=True)
                time.sleep(wait)
            except (urllib.error.URLError, OSError) as e:
                self._replicas.failed(i)
                tried.append(i)
                if pinned is None and len(tried) < len(self.assay_urls) and time.monotonic() < give_up:
                    continue  # another replica has not been tried: it takes the request at once
                reason = getattr(e, "reason", e)
                return 502, json.dumps({"detail": f"Assay at {base} did not answer ({reason}); "
                                                  "set ASSAY_URL to where Assay listens"}).encode(), None

    def _session_replica(self, cookie: Optional[str]) -> Optional[int]:
        """The replica that set one of the request's cookies (a rollout's Python session lives on
        the Assay that seeded it); None for a request without such a cookie, sent round robin."""
        if not cookie or len(self.assay_urls) < 2:
            return None
        with self._sessions_lock:
            for pair in cookie.split(";"):
                i = self._sessions.get(pair.strip())
                if i is not None:
                    return i
        return None

    def _remember_session(self, set_cookie: Optional[str], i: int, forget: Optional[str] = None) -> None:
        if len(self.assay_urls) < 2:
            return
        with self._sessions_lock:
            if forget:
                for pair in forget.split(";"):
                    self._sessions.pop(pair.strip(), None)
            if set_cookie:
                self._sessions[set_cookie.split(";", 1)[0].strip()] = i
                while len(self._sessions) > MAX_SESSIONS:
                    self._sessions.popitem(last=False)  # the oldest: its rollout is long over


def main(argv: Optional[list] = None) -> None:
    """Reads NeMo-Gym's config from the environment and serves until interrupted (NeMo-Gym stops
    its servers with SIGINT)."""
    config_yaml = os.environ.get(CONFIG_DICT_ENV)
    instance = os.environ.get(CONFIG_PATH_ENV)
    if not config_yaml or not instance:
        raise SystemExit(f"{CONFIG_DICT_ENV} and {CONFIG_PATH_ENV} are unset: NeMo-Gym's launcher sets them "
                         "when it starts a resources server; list this one in its config (see the client README)")
    cfg = server_config(config_yaml, instance)
    server = ResourcesServer(str(cfg["host"]), int(cfg["port"]))
    print(f"assay resources server {instance!r} on {cfg['host']}:{cfg['port']} -> {server.assay_url}",
          file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
