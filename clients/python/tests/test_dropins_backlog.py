"""OpenRLHF's /get_reward and NeMo-Gym's /verify under a sandbox backlog of endless loops, each
through the trainer's own HTTP client code, replayed here.

A backlog that a reward server answers with an HTTP error is turned by these clients into a lost
sample, never into a later success: OpenRLHF retries any error five times one second apart (then
the sample has no reward, and its experience maker fails), NeMo-Gym retries nothing but dropped
connections (an error status fails the rollout). So Assay holds such a request in the sandbox's
queue for as long as the caller waits (see src/server/routes/openrlhf.ts and nemogym.ts), and
the proxy NeMo-Gym starts retries what Assay answers 429/503.

Copied code (each block below cites where it is from):

- OpenRLHF (repository OpenRLHF/OpenRLHF; Apache License 2.0, Copyright OpenRLHF contributors,
  http://www.apache.org/licenses/LICENSE-2.0):
  * tags v0.9.10 (6f58d41) and v0.11.0 (3c3be62), identical in both: openrlhf/utils/agent.py,
    `SingleTurnAgentExecutor._fetch_rewards_via_http` and its inner `_post_request` (aiohttp,
    `ClientTimeout(total=180)`, five tries, `asyncio.sleep(1)` after each failure, then
    RuntimeError, which `execute` logs, leaving the sample's reward None);
  * tag v0.9.0 (the last with the file): openrlhf/utils/remote_rm_utils.py, `request_api_wrapper`
    (requests, `timeout=180`, five tries, `time.sleep(1)`, then Exception).
- NeMo-Gym (repository NVIDIA-NeMo/Gym, commit 07d6b0d, after tag v0.5.0; Apache License 2.0,
  Copyright (c) NVIDIA CORPORATION & AFFILIATES, http://www.apache.org/licenses/LICENSE-2.0):
  nemo_gym/server_utils.py `set_global_aiohttp_client` (its `ClientTimeout()`: no timeout),
  `request` (retries only ServerDisconnectedError / ClientOSError, and, for `_internal=False`,
  other exceptions three times), `raise_for_status`, `get_response_json`; and
  responses_api_agents/simple_agent/app.py `SimpleAgent.run`'s verify step
  (`server_client.post(..., url_path="/verify", ...)`, `await raise_for_status(...)`).

Bounded: 32 requests per client on loopback, each client's own tries, and an overall timeout.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import threading
import time

import pytest

from conftest import free_port, need, need_docker, serve_assay

aiohttp = need("aiohttp")
requests = need("requests")

LOOP = "```python\nwhile True:\n    pass\n```"
ADD = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
PROMPT = "<|im_start|>user\nRead two integers, print their sum.<|im_end|>\n<|im_start|>assistant\n"
LOOPS, CORRECT = 24, 8
#: The loops' CPU limit. The backlog is past the admission bound whatever its length
#: (ASSAY_SANDBOX_MAX_WAIT_MS=0 below), so 1 s a loop tests the same as the default 4 s, in a
#: quarter of the time; the correct programs keep the default limit.
LOOP_OPTIONS = {"time_limit_ms": 1000}
#: Whole-test bound: 24 loops of a 1 s CPU limit over 4 slots are 6 rounds; a loaded 2-core machine
#: stretches each round (the sandbox counts the program's own time) to 3-5 s.
OVERALL_S = 300


def reference(i: int) -> dict:
    return {"inputs": [f"{i} 1\n"], "outputs": [f"{i + 1}\n"]}


# --- OpenRLHF, tags v0.9.10 and v0.11.0: openrlhf/utils/agent.py (see the module docstring) -----
class _Logger:
    def __init__(self):
        self.lines = []

    def info(self, msg):
        self.lines.append(msg)


logger = _Logger()


async def _post_request(url, data, try_max_times=5):
    timeout = aiohttp.ClientTimeout(total=180)  # from _fetch_rewards_via_http
    for _ in range(try_max_times):
        try:
            async with aiohttp.ClientSession(timeout=timeout) as session:
                async with session.post(url, json=data) as response:
                    response.raise_for_status()
                    return await response.json()
        except aiohttp.ClientError as e:
            logger.info(f"Request error, please check: {e}")
        except Exception as e:  # pragma: no cover - defensive
            logger.info(f"Unexpected error, please check: {e}")
        await asyncio.sleep(1)

    raise RuntimeError(
        f"Request error for {try_max_times} times, returning None. Please check the API server."
    )


# --- OpenRLHF, tag v0.9.0: openrlhf/utils/remote_rm_utils.py --------------------------------------
def request_api_wrapper(url, data, try_max_times=5):
    """Synchronous request API wrapper"""
    headers = {
        "Content-Type": "application/json",
    }
    for _ in range(try_max_times):
        try:
            response = requests.post(url=url, json=data, headers=headers, timeout=180)
            response.raise_for_status()  # Raise an HTTPError for bad responses
            response = response.json()
            return response
        except requests.RequestException as e:
            logger.info(f"Request error, please check: {e}")
        except Exception as e:
            logger.info(f"Unexpected error, please check: {e}")
        time.sleep(1)

    raise Exception(f"Request error for {try_max_times} times, returning None. Please check the API server.")


# --- NeMo-Gym, commit 07d6b0d: nemo_gym/server_utils.py ---------------------------------------------
MAX_NUM_TRIES = 3


async def nemo_gym_request(client, method, url, _internal=False, **kwargs):
    # Faster JSON dumps than the default aiohttp json (orjson there; json here)
    if kwargs.get("json"):
        kwargs["data"] = json.dumps(kwargs.pop("json"))
        kwargs.setdefault("headers", dict())
        kwargs["headers"]["Content-Type"] = "application/json"
    num_tries = 1
    while True:
        try:
            return await client.request(method=method, url=url, **kwargs)
        except aiohttp.ServerDisconnectedError:
            await asyncio.sleep(0.5)
        except aiohttp.ClientOSError:
            await asyncio.sleep(0.5)
        except Exception as e:
            if not _internal:
                if num_tries >= MAX_NUM_TRIES:
                    raise e
                num_tries += 1
            await asyncio.sleep(0.5)


async def raise_for_status(response):
    if not response.ok:
        content = await response.content.read()
        try:
            response.raise_for_status()
        except aiohttp.ClientResponseError as e:
            e.response_content = content
            raise e


async def get_response_json(response):
    return json.loads(await response.read())
# -------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pool4_url():
    need_docker()
    # ASSAY_SANDBOX_MAX_WAIT_MS=0: /reward refuses any code work that would wait for a slot, so
    # the backlog below is past the admission bound however its length is estimated (the estimate
    # learns run lengths: 24 loops after quick programs read short, after loops long).
    with serve_assay(ASSAY_SANDBOX="docker", ASSAY_SANDBOX_POOL="4", ASSAY_SANDBOX_MAX_WAIT_MS="0") as url:
        # A warm server, as in training: the pool started and one program scored.
        item = {"verifier": "code", "response": ADD, "reference": reference(1)}
        r = requests.post(url + "/reward", json=item, timeout=120).json()
        assert r["reward"] == 1, r
        yield url


async def settle(url: str, want: int, sent: list, timeout: float = 60.0) -> None:
    """Waits until `want` items are being scored (/metrics' assay_inflight_items) and their runs
    hold every slot with more queued: /reward then refuses a correct program (429), the
    admission that OpenRLHF's and NeMo-Gym's clients cannot get past. The correct programs are
    sent then, behind the backlog, as a later wave of rollouts is. Returns early once one of
    the `sent` requests has ended (a loop refused and given up on: the test's assertions say so)."""
    t0 = time.monotonic()
    text = ""
    async with aiohttp.ClientSession() as s:
        while time.monotonic() - t0 < timeout:
            if any(t.done() for t in sent):
                return
            async with s.get(url + "/metrics") as r:
                text = await r.text()
            m = re.search(r"^assay_inflight_items (\S+)$", text, re.M)
            if m and float(m.group(1)) >= want:
                item = {"verifier": "code", "response": ADD, "reference": reference(1)}
                async with s.post(url + "/reward", json=item) as r:
                    if r.status == 429:
                        assert "sandbox busy" in (await r.json())["error"]
                        return
                    text = await r.text()
            await asyncio.sleep(0.2)
    raise AssertionError(f"never {want} items in flight with /reward refused: {text[-1000:]}")


def test_openrlhf_clients_score_correct_programs_1_behind_a_backlog_of_endless_loops(pool4_url):
    """24 loops, then 8 correct programs while the loops hold and queue for every slot (pool 4),
    each one query per request as OpenRLHF's executor sends it: 4 through v0.9.10/v0.11.0's
    `_post_request`, 4 through v0.9.0's `request_api_wrapper`. Every correct program 1.0, every
    loop 0.0, and no reward is a null that Assay turned into 0 (extra_logs.assay_unscored)."""
    url = pool4_url + "/get_reward"

    def payload(response: str, i: int) -> dict:
        label = {"verifier": "code", "reference": reference(i)}
        label = json.dumps({**label, "options": LOOP_OPTIONS} if response == LOOP else label)
        return {"query": [PROMPT + response + "<|im_end|>"], "prompts": [PROMPT], "labels": [label]}

    async def main():
        loops = [asyncio.create_task(_post_request(url, payload(LOOP, i))) for i in range(LOOPS)]
        await settle(pool4_url, LOOPS, loops)
        t0 = time.monotonic()
        new = [asyncio.create_task(_post_request(url, payload(ADD, i))) for i in range(CORRECT // 2)]
        old = [asyncio.create_task(asyncio.to_thread(request_api_wrapper, url, payload(ADD, i)))
               for i in range(CORRECT // 2, CORRECT)]
        correct = await asyncio.gather(*new, *old, return_exceptions=True)
        waited = time.monotonic() - t0
        return correct, await asyncio.gather(*loops, return_exceptions=True), waited

    correct, loops, waited = asyncio.run(asyncio.wait_for(main(), OVERALL_S))
    print(f"correct programs answered {waited:.0f} s after arriving behind the loops; client log: {logger.lines[:3]}")
    lost = [r for r in correct + loops if isinstance(r, BaseException)]
    assert not lost, (lost[:2], logger.lines[:4])
    assert [r["rewards"] for r in correct] == [[1.0]] * CORRECT, [r.get("results") for r in correct]
    assert [r["rewards"] for r in loops] == [[0.0]] * LOOPS, [r.get("results") for r in loops][:2]
    assert all(r["extra_logs"]["assay_unscored"] == [0.0] for r in correct + loops)
    assert all(r["results"][0]["status"] == "ok" for r in correct + loops)


def row(response: str, i: int) -> dict:
    return {**({"options": LOOP_OPTIONS} if response == LOOP else {}),
        "responses_create_params": {"input": [{"role": "user", "content": "Read two integers, print their sum."}]},
        "response": {"id": f"resp_{i}", "object": "response", "output": [
            {"id": f"msg_{i}", "type": "message", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": response, "annotations": []}]}]},
        "verifier": "code", "reference": reference(i),
    }


def test_nemo_gyms_client_through_the_proxy_scores_correct_programs_1_behind_a_backlog(pool4_url):
    """The same load through the resources server NeMo-Gym starts (assay_client.nemo_gym) with
    NeMo-Gym's own client: no status but 200 may come back (it would fail the rollout), every
    correct program 1.0 and every loop 0.0, none masked."""
    from assay_client.nemo_gym import ResourcesServer

    proxy = ResourcesServer("127.0.0.1", free_port(), assay_url=pool4_url)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    verify = f"http://127.0.0.1:{proxy.server_address[1]}/verify"

    async def main():
        # set_global_aiohttp_client: no timeout at all (ClientTimeout()).
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout()) as client:
            async def rollout(response, i):
                res = await nemo_gym_request(client, "POST", verify, _internal=True, json=row(response, i))
                await raise_for_status(res)
                return await get_response_json(res)

            loops = [asyncio.create_task(rollout(LOOP, i)) for i in range(LOOPS)]
            await settle(pool4_url, LOOPS, loops)
            t0 = time.monotonic()
            correct = await asyncio.gather(*(rollout(ADD, i) for i in range(CORRECT)), return_exceptions=True)
            waited = time.monotonic() - t0
            return correct, await asyncio.gather(*loops, return_exceptions=True), waited

    try:
        correct, loops, waited = asyncio.run(asyncio.wait_for(main(), OVERALL_S))
    finally:
        proxy.shutdown()
        proxy.server_close()
    print(f"correct programs answered {waited:.0f} s after arriving behind the loops")
    failed = [r for r in correct + loops if isinstance(r, BaseException)]
    assert not failed, failed[:2]
    assert [r["reward"] for r in correct] == [1.0] * CORRECT, [r.get("assay") for r in correct]
    assert [r["reward"] for r in loops] == [0.0] * LOOPS, [r.get("assay") for r in loops][:2]
    assert not any(r.get("mask_sample") for r in correct + loops)
