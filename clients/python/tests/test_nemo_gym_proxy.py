"""assay_client.nemo_gym, started the way NeMo-Gym's launcher starts a resources server, verifying
rollouts through it against a live Assay that requires an API key.

NeMo-Gym does not install from the local index, so the pieces of its code this test replays are
copied here (repository NVIDIA-NeMo/Gym, commit 07d6b0d, after tag v0.5.0; Apache License 2.0,
Copyright (c) NVIDIA CORPORATION & AFFILIATES, http://www.apache.org/licenses/LICENSE-2.0):

- nemo_gym/cli/env.py, `RunHelper.start`: the command it runs for each server instance, in
  `resources_servers/<type>/`, `{setup_env_command} && NEMO_GYM_CONFIG_DICT=<yaml>
  NEMO_GYM_CONFIG_PATH=<name> python <entrypoint>`, through nemo_gym/cli/setup_command.py
  `run_command` (bash, the server's directory first on PYTHONPATH). The venv setup step is
  replaced by `true` and `python` by this interpreter, which has the client installed.
- nemo_gym/server_utils.py `ServerClient.poll_for_status`: any HTTP answer at `/` is "success".
- nemo_gym/server_utils.py `ServerClient.request` (with `rollout_path_prefix`) and
  nemo_gym/rollout_correlation.py `maybe_rollout_id_from_run_body`: with observability on, each call
  to a resources server goes to `/ng-rollout/<id><path>`.
"""
from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import free_port, need, need_docker, serve_assay

yaml = need("yaml")

CLIENT_DIR = Path(__file__).resolve().parents[1]
KEY = "nemo-gym-test-key"
NAME = "assay_resources_server"

# --- copied from NeMo-Gym (see the module docstring) ------------------------------------------
OBSERVABILITY_ENABLED_KEY_NAME = "observability_enabled"
TASK_INDEX_KEY_NAME = "_ng_task_index"
ROLLOUT_INDEX_KEY_NAME = "_ng_rollout_index"
ATTEMPT_INDEX_KEY_NAME = "_ng_attempt_index"
ROLLOUT_ID_KEY_NAME = "_ng_rollout_id"
ROLLOUT_PATH_PREFIX = "ng-rollout"


def get_first_server_config_dict(global_config_dict, top_level_path):
    server_config_dict = global_config_dict[top_level_path]
    server_config_dict = list(server_config_dict.values())[0]
    server_config_dict = list(server_config_dict.values())[0]
    return server_config_dict


def rollout_path_prefix(rollout_id, *, token_capture=False):
    if not rollout_id:
        return ""
    capture_segment = "/training-token-capture" if token_capture else ""
    return f"/{ROLLOUT_PATH_PREFIX}/{rollout_id}{capture_segment}"


def maybe_rollout_id_from_run_body(body):
    explicit = body.get(ROLLOUT_ID_KEY_NAME)
    if explicit is not None:
        rollout_id = explicit
    else:
        task = body.get(TASK_INDEX_KEY_NAME)
        rollout = body.get(ROLLOUT_INDEX_KEY_NAME)
        if task is None or rollout is None:
            return None
        rollout_id = f"{task}-{rollout}"
    attempt = body.get(ATTEMPT_INDEX_KEY_NAME)
    if attempt is not None and int(attempt) > 0:
        rollout_id = f"{rollout_id}-a{int(attempt)}"
    return rollout_id


def request_url(global_config_dict, server_name, url_path, json_obj, rollout_id=None):
    """ServerClient.request's URL (the HTTP call itself is urllib's here, not aiohttp's)."""
    server_config_dict = get_first_server_config_dict(global_config_dict, server_name)
    base_url = f"http://{server_config_dict['host']}:{server_config_dict['port']}"
    observability_enabled = global_config_dict.get(OBSERVABILITY_ENABLED_KEY_NAME, False)
    server_entry = global_config_dict.get(server_name)
    if observability_enabled and server_entry is not None and "resources_servers" in server_entry:
        if url_path == "/verify":
            rollout_id = rollout_id or maybe_rollout_id_from_run_body(json_obj)
        if rollout_id is not None and not url_path.startswith(f"/{ROLLOUT_PATH_PREFIX}/"):
            url_path = f"{rollout_path_prefix(rollout_id)}{url_path}"
    return f"{base_url}{url_path}"
# ------------------------------------------------------------------------------------------------


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"},
                                 method="POST")
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def row(text, reference, task=0, rollout=0, verifier="exact"):
    return {
        "responses_create_params": {"input": [{"role": "user", "content": "Capital of France?"}]},
        "response": {"id": "resp_1", "object": "response", "output": [
            {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": text, "annotations": []}]}]},
        "verifier": verifier, "reference": reference,
        TASK_INDEX_KEY_NAME: task, ROLLOUT_INDEX_KEY_NAME: rollout,
    }


@pytest.fixture(scope="module")
def keyed_assay():
    with serve_assay(ASSAY_API_KEYS=KEY) as url:
        yield url


def launch(tmp_path, global_config_dict, env):
    """RunHelper.start for one server instance, replayed."""
    server_dir = tmp_path / "resources_servers" / "assay"
    server_dir.mkdir(parents=True)
    # The entrypoint the client README gives.
    (server_dir / "app.py").write_text("from assay_client.nemo_gym import main\n\nmain()\n")
    server_config_dict = get_first_server_config_dict(global_config_dict, NAME)
    escaped_config_dict_yaml_str = shlex.quote(yaml.safe_dump(global_config_dict, sort_keys=False))
    command = f"""true \\
    && NEMO_GYM_CONFIG_DICT={escaped_config_dict_yaml_str} \\
    NEMO_GYM_CONFIG_PATH={shlex.quote(NAME)} \\
    {shlex.quote(sys.executable)} {server_config_dict['entrypoint']}"""
    custom_env = {**os.environ, **env}
    custom_env["PYTHONPATH"] = ":".join([str(server_dir.absolute()), str(CLIENT_DIR)])
    return subprocess.Popen(command, executable="/bin/bash", shell=True, env=custom_env, cwd=server_dir,
                            start_new_session=True, stderr=subprocess.PIPE)


def wait_until_up(url, proc, timeout=60.0):
    """poll_for_status until "success" (any HTTP answer at /)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the proxy exited {proc.returncode}: {proc.stderr.read().decode()}")
        try:
            urllib.request.urlopen(url, timeout=5)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError("the proxy did not answer within 60 s")


def stop(proc):
    os.killpg(proc.pid, signal.SIGINT)  # NeMo-Gym's shutdown sends SIGINT
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_nemo_gyms_launcher_starts_the_proxy_and_rollouts_verify_through_it(tmp_path, keyed_assay):
    # Assay refuses a call without the key: the proxy is what adds it.
    assert post(keyed_assay + "/verify", row("Paris", "paris"))[0] == 401
    port = free_port()
    global_config_dict = {
        NAME: {"resources_servers": {"assay": {"entrypoint": "app.py", "host": "127.0.0.1", "port": port,
                                               "domain": "other"}}},
        OBSERVABILITY_ENABLED_KEY_NAME: True,
    }
    proc = launch(tmp_path, global_config_dict, {"ASSAY_URL": keyed_assay, "ASSAY_API_KEY": KEY})
    try:
        wait_until_up(f"http://127.0.0.1:{port}", proc)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as r:
            assert json.loads(r.read()) == {"status": "ok"}

        seed_url = request_url(global_config_dict, NAME, "/seed_session", {}, rollout_id="0-1")
        assert seed_url.endswith("/ng-rollout/0-1/seed_session")
        assert post(seed_url, {}) == (200, {})

        good = row("Paris", "paris", task=0, rollout=1)
        url = request_url(global_config_dict, NAME, "/verify", good)
        assert url == f"http://127.0.0.1:{port}/ng-rollout/0-1/verify"
        status, reply = post(url, good)
        assert status == 200 and reply["reward"] == 1.0 and reply[TASK_INDEX_KEY_NAME] == 0

        wrong = row("Lyon", "paris", task=1, rollout=0)
        status, wrong_reply = post(request_url(global_config_dict, NAME, "/verify", wrong), wrong)
        assert (status, wrong_reply["reward"]) == (200, 0.0)

        bad = row("Paris", {"not": "a reference"}, task=1, rollout=1)
        status, masked = post(request_url(global_config_dict, NAME, "/verify", bad), bad)
        assert (status, masked["mask_sample"], masked["instance_config"]["mask_sample"]) == (200, True, True)

        # Assay's 400 for an unknown verifier comes back unchanged, naming the fix.
        typo = row("Paris", "paris", verifier="exactt")
        status, err = post(request_url(global_config_dict, NAME, "/verify", typo), typo)
        assert status == 400 and "verifier" in json.dumps(err)

        status, metrics = post(request_url(global_config_dict, NAME, "/aggregate_metrics", {}, rollout_id="0-1"),
                               {"verify_responses": [reply, wrong_reply, masked]})
        assert status == 200 and metrics["agent_metrics"]["mean/reward"] == pytest.approx(0.5)
        assert metrics["agent_metrics"]["assay/masked"] == 1

        # Without observability the same calls arrive unprefixed.
        plain = {**global_config_dict, OBSERVABILITY_ENABLED_KEY_NAME: False}
        assert request_url(plain, NAME, "/verify", good) == f"http://127.0.0.1:{port}/verify"
        assert post(request_url(plain, NAME, "/verify", good), good)[1]["reward"] == 1.0
        status, closed = post(f"http://127.0.0.1:{port}/close_session", {"resources_session_id": "s-1"})
        assert (status, closed) == (200, {"resources_session_id": "s-1"})

        with urllib.request.urlopen(f"http://127.0.0.1:{port}/ng-rollout/0-1/reverify_mode", timeout=10) as r:
            assert json.loads(r.read()) == "stateless"
        status, err = post(f"http://127.0.0.1:{port}/get_weather", {})
        assert status == 404 and "/verify" in err["detail"]
        # A chunked body is refused with what to change, not read as empty.
        import http.client
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", "/verify", body=iter([json.dumps(good).encode()]),
                     headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
        resp = conn.getresponse()
        assert resp.status == 411 and "Content-Length" in json.loads(resp.read())["detail"]
        conn.close()
    finally:
        stop(proc)
    assert proc.returncode is not None


def post_with_cookie(url, body, cookie=None):
    """A POST that sends `cookie` and returns (status, json, Set-Cookie): NeMo-Gym's SimpleAgent
    (responses_api_agents/simple_agent/app.py, `run`) keeps the cookies /seed_session set and sends
    them back on the rollout's tool calls."""
    headers = {"Content-Type": "application/json"}
    if cookie:
        headers["Cookie"] = cookie
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read()), r.headers.get("Set-Cookie")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null"), None


def test_a_rollouts_python_tool_calls_reach_one_session_through_the_proxy(tmp_path):
    """/seed_session's cookie comes back through the proxy, and the rollout's
    /stateful_python_code_exec calls that send it run in one Python session on Assay."""
    need_docker()
    with serve_assay(ASSAY_API_KEYS=KEY, ASSAY_SANDBOX="auto", ASSAY_SESSION_WARM="0") as assay:
        port = free_port()
        global_config_dict = {NAME: {"resources_servers": {"assay": {"entrypoint": "app.py", "host": "127.0.0.1",
                                                                       "port": port}}},
                              OBSERVABILITY_ENABLED_KEY_NAME: True}
        proc = launch(tmp_path, global_config_dict, {"ASSAY_URL": assay, "ASSAY_API_KEY": KEY})
        try:
            wait_until_up(f"http://127.0.0.1:{port}", proc)
            base = f"http://127.0.0.1:{port}/ng-rollout/0-1"
            status, _, set_cookie = post_with_cookie(base + "/seed_session", {})
            assert status == 200 and set_cookie and set_cookie.startswith("assay_session=")
            cookie = set_cookie.split(";", 1)[0]
            status, first, _ = post_with_cookie(base + "/stateful_python_code_exec", {"code": "x = 41"}, cookie)
            assert (status, first["status"]) == (200, "ok"), first
            status, second, _ = post_with_cookie(base + "/stateful_python_code_exec", {"code": "x + 1"}, cookie)
            assert (status, second["status"], second["value"]) == (200, "ok", "42"), second
            assert second["session_id"] == first["session_id"]
            # Without the cookie there is no seeded session: Assay's 400 says what to send.
            status, err, _ = post_with_cookie(base + "/stateful_python_code_exec", {"code": "x"})
            assert status == 400 and "seed_session" in json.dumps(err)
            status, closed, _ = post_with_cookie(base + "/close_session", {"resources_session_id": "r-1"}, cookie)
            assert (status, closed) == (200, {"resources_session_id": "r-1"})
        finally:
            stop(proc)


def test_proxy_without_the_key_gets_assays_401(tmp_path, keyed_assay):
    port = free_port()
    global_config_dict = {NAME: {"resources_servers": {"assay": {"entrypoint": "app.py", "host": "127.0.0.1",
                                                                   "port": port}}}}
    proc = launch(tmp_path, global_config_dict, {"ASSAY_URL": keyed_assay, "ASSAY_API_KEY": ""})
    try:
        wait_until_up(f"http://127.0.0.1:{port}", proc)
        status, err = post(f"http://127.0.0.1:{port}/verify", row("Paris", "paris"))
        assert status == 401 and "API key" in json.dumps(err)
    finally:
        stop(proc)


def test_a_config_without_host_and_port_is_refused_with_what_to_add():
    from assay_client.nemo_gym import server_config, strip_rollout_prefix

    with pytest.raises(SystemExit, match="host and port"):
        server_config(yaml.safe_dump({NAME: {"resources_servers": {"assay": {"entrypoint": "app.py"}}}}), NAME)
    with pytest.raises(SystemExit, match="names no entry"):
        server_config(yaml.safe_dump({"other": {}}), NAME)
    assert strip_rollout_prefix("/ng-rollout/3-1-a2/verify") == ("/verify", "3-1-a2")
    assert strip_rollout_prefix("/ng-rollout/.x/verify") == ("/ng-rollout/.x/verify", None)
    assert strip_rollout_prefix("/verify") == ("/verify", None)


def test_concurrent_rollouts_over_nemo_gyms_aiohttp_client(tmp_path, keyed_assay):
    """NeMo-Gym's `request` (nemo_gym/server_utils.py) sends every call through one shared aiohttp
    ClientSession (keep-alive connections, `data=orjson.dumps(json)` with Content-Type
    application/json); rollouts run concurrently. 24 verifies at once through one proxy."""
    aiohttp = need("aiohttp")
    import asyncio

    port = free_port()
    global_config_dict = {
        NAME: {"resources_servers": {"assay": {"entrypoint": "app.py", "host": "127.0.0.1", "port": port}}},
        OBSERVABILITY_ENABLED_KEY_NAME: True,
    }
    proc = launch(tmp_path, global_config_dict, {"ASSAY_URL": keyed_assay, "ASSAY_API_KEY": KEY})
    rows = [row("Paris" if i % 3 else "Lyon", "paris", task=i // 4, rollout=i % 4) for i in range(24)]

    async def run():
        async with aiohttp.ClientSession() as session:
            async def one(body):
                url = request_url(global_config_dict, NAME, "/verify", body)
                async with session.request(method="POST", url=url, data=json.dumps(body).encode(),
                                           headers={"Content-Type": "application/json"}) as r:
                    return r.status, await r.json()
            return await asyncio.gather(*(one(b) for b in rows))

    try:
        wait_until_up(f"http://127.0.0.1:{port}", proc)
        replies = asyncio.run(run())
    finally:
        stop(proc)
    assert [s for s, _ in replies] == [200] * 24
    assert [r["reward"] for _, r in replies] == [1.0 if i % 3 else 0.0 for i in range(24)]
    assert [(r[TASK_INDEX_KEY_NAME], r[ROLLOUT_INDEX_KEY_NAME]) for _, r in replies] == [(i // 4, i % 4) for i in range(24)]


def serve_proxy(assay_url):
    from assay_client.nemo_gym import ResourcesServer

    proxy = ResourcesServer("127.0.0.1", 0, assay_url=assay_url, api_key="")
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    return proxy, f"http://127.0.0.1:{proxy.server_address[1]}"


def test_the_proxy_retries_assays_busy_answers_after_their_retry_after(fake_assay):
    """NeMo-Gym retries only dropped connections and fails the rollout on an error status, so the
    proxy itself sends a 429 or 503 again after its Retry-After; any other status comes back as is."""
    fake = fake_assay(script=[(429, {"Retry-After": "1"}, b'{"error": "sandbox busy"}'),
                              (503, {"Retry-After": "1"}, b'{"error": "warming up"}')])
    proxy, url = serve_proxy(fake.url)
    try:
        t0 = time.monotonic()
        status, reply = post(url + "/ng-rollout/0-1/verify", {"verifier": "exact", "response": "ab"})
        assert (status, reply["reward"]) == (200, 2.0)
        assert [r["path"] for r in fake.requests] == ["/verify"] * 3
        assert time.monotonic() - t0 >= 1.9  # it waited what each Retry-After said
        fake.script = [(400, {}, b'{"error": "unknown verifier"}')]
        assert post(url + "/verify", {"verifier": "x"}) == (400, {"error": "unknown verifier"})
        assert len(fake.requests) == 4
    finally:
        proxy.shutdown()
        proxy.server_close()


def test_the_proxy_passes_a_busy_answer_on_once_its_own_timeout_would_pass(fake_assay, monkeypatch):
    from assay_client import nemo_gym

    monkeypatch.setattr(nemo_gym, "FORWARD_TIMEOUT_S", 2.5)
    fake = fake_assay(script=[(429, {"Retry-After": "1"}, b'{"error": "sandbox busy"}')] * 20)
    proxy, url = serve_proxy(fake.url)
    try:
        t0 = time.monotonic()
        status, reply = post(url + "/verify", {"verifier": "exact", "response": "ab"})
        assert (status, reply) == (429, {"error": "sandbox busy"})
        assert 2 <= len(fake.requests) <= 3 and time.monotonic() - t0 < 5
    finally:
        proxy.shutdown()
        proxy.server_close()


# ---- ASSAY_URL naming several replicas, as the rest of the client reads it ----------------------
def test_the_proxy_spreads_over_the_replicas_a_comma_separated_assay_url_names(fake_assay, monkeypatch):
    from conftest import free_port

    a, b = fake_assay(), fake_assay()
    down = f"http://127.0.0.1:{free_port()}"  # nothing listens: its requests go to the others
    monkeypatch.setenv("ASSAY_URL", f"{a.url}, {down},{b.url}/")
    proxy, url = serve_proxy(None)
    try:
        got = [post(url + "/verify", {"verifier": "exact", "response": "ab"}) for _ in range(6)]
        assert got == [(200, got[0][1])] * 6 and got[0][1]["reward"] == 2.0
        assert len(a.requests) + len(b.requests) == 6 and a.requests and b.requests
    finally:
        proxy.shutdown()
        proxy.server_close()


def test_a_rollouts_session_calls_stay_on_the_replica_that_seeded_it(fake_assay, monkeypatch):
    def seeded(name):
        return [(200, {"Set-Cookie": f"assay_session={name}{k}; Path=/; HttpOnly"}, b"{}") for k in range(4)]

    a, b = fake_assay(script=seeded("a")), fake_assay(script=seeded("b"))
    monkeypatch.setenv("ASSAY_URL", f"{a.url},{b.url}")
    proxy, url = serve_proxy(None)
    try:
        cookies = [post_with_cookie(url + "/seed_session", {})[2] for _ in range(2)]
        assert all(c and c.startswith("assay_session=") for c in cookies)
        for cookie in cookies:
            before = (len(a.requests), len(b.requests))
            for _ in range(3):
                status, _, _ = post_with_cookie(url + "/stateful_python_code_exec", {"code": "1"}, cookie.split(";")[0])
                assert status == 200
            grew = (len(a.requests) - before[0], len(b.requests) - before[1])
            assert grew in ((3, 0), (0, 3)), grew
        # the two sessions were seeded on different replicas (round robin), each kept to its own
        assert [r["path"] for r in a.requests].count("/stateful_python_code_exec") == 3
        assert [r["path"] for r in b.requests].count("/stateful_python_code_exec") == 3
    finally:
        proxy.shutdown()
        proxy.server_close()
