"""AReaL's own code driving assay_client.areal, replayed from github:inclusionAI/AReaL at commit
4aef98d8d818af55b43621aaadba047ae10f4e77 (after v1.0.4). AReaL is Apache-2.0 licensed
(Copyright inclusionAI; http://www.apache.org/licenses/LICENSE-2.0); the pieces below are copied
from it, changed only where noted (its logger -> the standard library's):

- areal/api/reward_api.py, class AsyncRewardWrapper (whole; `_get_device_count_safely` with it).
- areal/workflow/rlvr.py, RLVRWorkflow._compute_rewards: the wrapper's call,
  `await self.async_reward_fn(prompt_str, completions_str, resp.input_tokens, resp.output_tokens, **task_data)`.
- areal/experimental/inference_service/controller/workflow.py, `_run_offline._run_one`: how an
  agent's `run(data, base_url=, http_client=, api_key=)` is awaited and its result read (a number,
  a dict of numbers, anything else or an exception rejects the trajectory with reward 0.0).
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import traceback
import weakref
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from assay_client import areal

logger = logging.getLogger("RewardAPI")


# ---- copied: areal/api/reward_api.py ------------------------------------------------------------
def _get_device_count_safely() -> int:
    gpu_types = ["nvidia", "davinci"]
    try:
        if os.path.exists("/dev"):
            for gpu_type in gpu_types:
                devices = [
                    f
                    for f in os.listdir("/dev")
                    if f.startswith(gpu_type) and f[len(gpu_type) :].isdigit()
                ]
                if devices:
                    return len(devices)
    except (OSError, ValueError) as e:
        logger.debug(f"Could not read device list from /dev, using fallback: {e}")
    return 8


class AsyncRewardWrapper:
    _executors = {}
    _instance_counts = {}
    _lock = threading.Lock()

    def __init__(
        self,
        reward_fn: Callable,
        timeout_seconds: float = 15,
        max_workers: int | None = None,
        max_retries: int = 3,
    ):
        self.reward_fn = reward_fn
        self.timeout_seconds = timeout_seconds
        if max_workers is None:
            cpu_count = os.cpu_count() or 1
            device_count = _get_device_count_safely()
            max_workers = max((cpu_count // device_count) // 2, 1)
        self.max_workers = max_workers
        self.max_retries = max_retries
        self._executor_key = max_workers

        with self._lock:
            if self._executor_key not in self._executors:
                self._executors[self._executor_key] = ProcessPoolExecutor(
                    max_workers=max_workers
                )
                self._instance_counts[self._executor_key] = 0
            self._instance_counts[self._executor_key] += 1

        weakref.finalize(self, AsyncRewardWrapper._cleanup_executor, max_workers)

    @classmethod
    def _cleanup_executor(cls, executor_key):
        with cls._lock:
            if executor_key in cls._instance_counts:
                cls._instance_counts[executor_key] -= 1
                if cls._instance_counts[executor_key] <= 0:
                    if executor_key in cls._executors:
                        executor = cls._executors.pop(executor_key)
                        executor.shutdown(wait=False, cancel_futures=True)
                    cls._instance_counts.pop(executor_key, None)

    @classmethod
    def _recreate_executor(cls, executor_key, max_workers):
        with cls._lock:
            if executor_key in cls._executors:
                old_executor = cls._executors[executor_key]
                try:
                    old_executor.shutdown(wait=False)
                except Exception as e:
                    logger.warning(f"Error shutting down broken executor: {e}")
                cls._executors[executor_key] = ProcessPoolExecutor(
                    max_workers=max_workers
                )
                return cls._executors[executor_key]
        return None

    async def __call__(self, *args, **kwargs) -> float:
        last_exception = None

        for attempt in range(self.max_retries + 1):
            with self._lock:
                executor = self._executors.get(self._executor_key)

            if executor is None:
                raise RuntimeError("ProcessPoolExecutor has been shut down")

            loop = asyncio.get_event_loop()
            try:
                future = loop.run_in_executor(
                    executor,
                    partial(self.reward_fn, *args, **kwargs),
                )
                reward = await asyncio.wait_for(
                    future,
                    timeout=self.timeout_seconds,
                )
                return reward
            except TimeoutError:
                last_exception = TimeoutError(
                    f"Reward computation timed out after {self.timeout_seconds}s"
                )
                if attempt < self.max_retries:
                    continue
                return 0
            except BrokenProcessPool as e:
                last_exception = e
                if attempt < self.max_retries:
                    new_executor = self._recreate_executor(
                        self._executor_key, self.max_workers
                    )
                    if new_executor is None:
                        break
                    continue
                else:
                    traceback.print_exc()
                    raise e
            except Exception as e:
                last_exception = e
                logger.error(f"Unexpected error in reward computation: {e}")
                if attempt < self.max_retries:
                    continue
                else:
                    traceback.print_exc()
                    raise e

        if last_exception:
            traceback.print_exc()
            raise last_exception
        else:
            raise RuntimeError("Reward computation failed after all retries.")


# ---- copied: areal/workflow/rlvr.py, RLVRWorkflow._compute_rewards (the call) --------------------
async def compute_rewards(async_reward_fn, completions_str, prompt_str, input_tokens, output_tokens, task_data):
    reward = await async_reward_fn(
        prompt_str,
        completions_str,
        input_tokens,
        output_tokens,
        **task_data,
    )
    return reward


# ---- copied: controller/workflow.py, _run_offline._run_one (without the proxy's bookkeeping) -----
async def run_one(agent, data, gateway_addr, session_api_key, http_client=None, set_last_reward=None):
    try:
        rewards = await agent.run(
            data,
            base_url=gateway_addr,
            http_client=http_client,
            api_key=session_api_key,
        )
        if isinstance(rewards, dict):
            final_reward = float(
                next(reversed(rewards.values())) if rewards else 0.0
            )
        elif isinstance(rewards, (int, float)):
            final_reward = float(rewards)
        else:
            raise ValueError(f"Invalid reward type: {type(rewards)}")
        set_last_reward(final_reward)
        return final_reward
    except Exception as exc:
        logger.warning("Agent task failed (%s: %s). This trajectory will be rejected.", type(exc).__name__, exc)
        set_last_reward(0.0)
        return 0.0


GSM8K = {"messages": [{"role": "user", "content": "Natalia sold clips to 48 of her friends in April, and then "
                                                  "she sold half as many clips in May. How many clips did Natalia sell "
                                                  "altogether in April and May?\nPlease put your final answer within \\boxed{}."}],
         "answer": "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 clips altogether "
                   "in April and May.\n#### 72"}


def test_reward_fn_under_async_reward_wrapper_in_rlvr_workflows_call(assay_url):
    wrapper = AsyncRewardWrapper(areal.make_reward_fn(verifier="math", assay_url=assay_url), max_workers=2)
    completions = ["48 + 24 = 72, so \\boxed{72}", "\\boxed{70}", "The answer is 72.", "no idea"]

    async def main():
        return await asyncio.gather(*(compute_rewards(wrapper, c, GSM8K["messages"][0]["content"], [1, 2, 3], [4, 5], GSM8K)
                                      for c in completions))

    assert asyncio.run(main()) == [1.0, 0.0, 1.0, 0.0]


def test_the_reward_fn_named_by_string_as_areals_examples_do(assay_url, monkeypatch):
    """examples/math/gsm8k_rl.py names its reward function by import path; AReaL imports it."""
    import importlib

    monkeypatch.setenv("ASSAY_URL", assay_url)
    mod, name = "assay_client.areal.math_reward_fn".rsplit(".", 1)
    fn = getattr(importlib.import_module(mod), name)
    wrapper = AsyncRewardWrapper(fn, max_workers=1)
    got = asyncio.run(compute_rewards(wrapper, "\\boxed{72}", "q", [1], [2], GSM8K))
    assert got == 1.0


def test_an_unscored_item_gives_areal_the_null_reward_it_asked_for(assay_url):
    # ASSAY_SANDBOX=none on the test server: a code item cannot be run, Assay answers reward null.
    row = {"verifier": "code", "answer": {"inputs": ["1\n"], "outputs": ["1\n"]}}
    wrapper = AsyncRewardWrapper(areal.make_reward_fn(assay_url=assay_url, null_reward=-1.0), max_workers=2)
    got = asyncio.run(compute_rewards(wrapper, "```python\nprint(input())\n```", "echo", [1], [2], row))
    assert got == -1.0


def test_a_row_without_a_verifier_fails_with_what_to_change(assay_url):
    with pytest.raises(ValueError, match="verifier='math'"):
        areal.reward_fn("q", "\\boxed{1}", [1], [2], assay_url=assay_url, answer="1")


def test_async_reward_micro_batches_a_workflows_concurrent_samples(assay_url):
    client = areal.async_client(assay_url, None)
    before = client.requests.get("/reward/batch", 0)

    async def main():
        return await asyncio.gather(*(areal.async_reward("q", f"\\boxed{{{i}}}", [1], [2], assay_url=assay_url,
                                                         verifier="math", answer=str(i if i % 2 else i + 1))
                                      for i in range(200)))

    got = asyncio.run(main())
    assert got == [1 if i % 2 else 0 for i in range(200)]
    assert client.requests["/reward/batch"] - before <= 10


class FakeModel:
    """An OpenAI-compatible /chat/completions on loopback: answers each question from a table,
    and records the Authorization header each request carried."""

    def __init__(self, answers):
        self.auth = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.auth.append(self.headers.get("Authorization"))
                text = answers[body["messages"][-1]["content"]]
                data = json.dumps({"id": "c1", "object": "chat.completion", "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def test_the_example_agent_returns_assays_reward_through_areals_runner(assay_url, caplog):
    q = GSM8K["messages"][0]["content"]
    model = FakeModel({q: "24 in May, 48 + 24 = 72. \\boxed{72}", "What is 2+2?": "\\boxed{5}",
                       "Print 1.": "```python\nprint(1)\n```"})
    agent = areal.AssayAgent(verifier="math", assay_url=assay_url, temperature=1.0)
    set_rewards = []
    rows = [GSM8K, {"messages": [{"role": "user", "content": "What is 2+2?"}], "answer": "4"},
            # unscorable (no sandbox on the test server): rejected, as AReaL rejects a failed run
            {"messages": [{"role": "user", "content": "Print 1."}], "verifier": "code",
             "answer": {"inputs": [""], "outputs": ["1\n"]}}]

    async def main():
        return await asyncio.gather(*(run_one(agent, row, model.url, "session-key", set_last_reward=set_rewards.append)
                                      for row in rows))

    try:
        assert asyncio.run(main()) == [1.0, 0.0, 0.0]
    finally:
        model.server.shutdown()
    assert sorted(set_rewards) == [0.0, 0.0, 1.0] and model.auth == ["Bearer session-key"] * 3
    rejected = [r.getMessage() for r in caplog.records if "will be rejected" in r.getMessage()]
    assert len(rejected) == 1 and "AssayError" in rejected[0] and "no sandbox" in rejected[0]


def test_a_slow_assay_raises_under_areals_wrapper_instead_of_becoming_reward_0(fake_assay):
    """AsyncRewardWrapper scores a sample 0 when the function outlasts its timeout (15 s by
    default), and re-raises any other failure after its retries. reward_fn's deadline (12 s by
    default, under that timeout) makes a slow Assay an exception. Here both are scaled down: a
    wrapper timeout of 3 s and a deadline of 1 s, against an Assay that takes 5 s to answer.
    Before the deadline bounded each HTTP exchange, the wrapper returned 0 after its retries."""
    fake = fake_assay(delay=5.0)
    wrapper = AsyncRewardWrapper(areal.make_reward_fn(verifier="math", assay_url=fake.url, deadline=1.0),
                                 timeout_seconds=3, max_workers=1, max_retries=1)
    with pytest.raises(Exception, match="deadline"):
        asyncio.run(compute_rewards(wrapper, "\\boxed{72}", "q", [1], [2], GSM8K))


# ---- completions decoded with their special tokens ----------------------------------------------
# RLVRWorkflow decodes resp.output_tokens with `tokenizer.decode(...)`, skip_special_tokens left
# False, so the completion ends with the model's end-of-sequence token (and padding, in some
# engines): "42<|im_end|>" must score as "42", as the server's OpenRLHF route strips them.
@pytest.mark.parametrize("tail", ["<|im_end|>", "</s>", "<|endoftext|>", "<|eot_id|>", "<｜end▁of▁sentence｜>",
                                  "<end_of_turn>", "<|im_end|>\n<|endoftext|><pad><pad>"])
def test_reward_fn_scores_a_completion_decoded_with_its_end_tokens(assay_url, tail):
    fn = areal.make_reward_fn(verifier="exact", assay_url=assay_url)
    assert fn("What is 6*7?", "42" + tail, [1], [2], answer="42") == 1.0

    async def main():
        return await areal.async_reward("q", "42" + tail, [1], [2], assay_url=assay_url, verifier="exact", answer="42")

    assert asyncio.run(main()) == 1.0


def test_end_tokens_are_stripped_only_at_the_end(fake_assay):
    fake = fake_assay()
    sent = []
    for text in ["<|im_start|>think<|im_end|> 42<|im_end|>", "a </s> b", "42 <|im_end|>  ", "x" * 100_000 + "<eos>", "<pad>"]:
        areal.reward_fn("q", text, [1], [2], assay_url=fake.url, verifier="exact", answer="42")
        sent.append(fake.requests[-1]["body"]["items"][0]["response"])
    assert sent == ["<|im_start|>think<|im_end|> 42", "a </s> b", "42 ", "x" * 100_000, ""]
