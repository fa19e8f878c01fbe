"""verl's reward loop driving assay_client.verl_loop.compute_score, replayed from github:volcengine/verl
at commit b178a3cd56f58b2d502255daba591e92833930a7 (after v0.7.0). verl is Apache-2.0 licensed
(Copyright 2024 Bytedance Ltd. and/or its affiliates; http://www.apache.org/licenses/LICENSE-2.0);
copied, changed only where noted:

- verl/trainer/ppo/reward.py: `_call_with_kwargs`, `_call_with_kwargs_async`, and
  `get_custom_reward_fn`'s choice between them (`inspect.iscoroutinefunction(raw_fn)`), the file
  loaded by path as verl/utils/import_utils.py `load_extern_object` does.
- verl/experimental/reward_loop/reward_manager/naive.py: NaiveRewardManager.__init__ and run_single
  (whole), on a stand-in for DataProto (numpy arrays for the tensors: the same indexing) and a
  character tokenizer.
- verl/experimental/reward_loop/reward_loop.py: RewardLoopWorker.compute_score_batch (a task per
  sample, gathered).
"""
from __future__ import annotations

import asyncio
import importlib.util
import inspect
import sys
from functools import partial

import pytest

from assay_client import verl_loop
from conftest import need


def _call_with_kwargs(raw_fn, extra_kwargs, *args, **kwargs):
    merged_kwargs = {**kwargs, **extra_kwargs}
    return raw_fn(*args, **merged_kwargs)


async def _call_with_kwargs_async(raw_fn, extra_kwargs, *args, **kwargs):
    merged_kwargs = {**kwargs, **extra_kwargs}
    return await raw_fn(*args, **merged_kwargs)


def get_custom_reward_fn(module_path, fn_name, reward_kwargs):
    spec = importlib.util.spec_from_file_location("custom_module_verl_loop", module_path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["custom_module_verl_loop"] = module
    spec.loader.exec_module(module)
    raw_fn = getattr(module, fn_name)
    reward_kwargs = dict(reward_kwargs)
    if not inspect.iscoroutinefunction(raw_fn):
        return partial(_call_with_kwargs, raw_fn, reward_kwargs)
    else:
        return partial(_call_with_kwargs_async, raw_fn, reward_kwargs)


class CharTokenizer:
    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(int(i)) for i in ids)


class Item:
    """data[0] of a one-sample DataProto: .batch (tensors) and .non_tensor_batch."""

    def __init__(self, batch, non_tensor_batch):
        self.batch, self.non_tensor_batch = batch, non_tensor_batch


class OneSample:
    def __init__(self, item):
        self.item = item

    def __len__(self):
        return 1

    def __getitem__(self, i):
        return self.item


class NaiveRewardManager:
    def __init__(self, config, tokenizer, compute_score=None, reward_router_address=None, reward_model_tokenizer=None):
        self.config = config
        self.tokenizer = tokenizer
        self.loop = asyncio.get_event_loop()  # RewardManagerBase.__init__: verl.utils.ray_utils.get_event_loop()
        self.compute_score = compute_score
        self.is_async_reward_score = inspect.iscoroutinefunction(self.compute_score)
        self.reward_router_address = reward_router_address
        self.reward_model_tokenizer = reward_model_tokenizer

    async def run_single(self, data) -> dict:
        assert len(data) == 1, "Only support single data item"
        data_item = data[0]
        response_ids = data_item.batch["responses"]
        response_length = response_ids.shape[-1]
        valid_response_length = data_item.batch["attention_mask"][-response_length:].sum()
        valid_response_ids = response_ids[:valid_response_length]

        data_source = data_item.non_tensor_batch["data_source"]
        ground_truth = data_item.non_tensor_batch["reward_model"]["ground_truth"]
        extra_info = data_item.non_tensor_batch.get("extra_info", {})
        tool_extra_fields = data_item.non_tensor_batch.get("tool_extra_fields", None)
        if tool_extra_fields is not None:
            extra_info.update(tool_extra_fields.items())

        num_turns = data_item.non_tensor_batch.get("__num_turns__", None)
        rollout_reward_scores = data_item.non_tensor_batch.get("reward_scores", {})
        extra_info["num_turns"] = num_turns
        extra_info["rollout_reward_scores"] = rollout_reward_scores

        response_str = await self.loop.run_in_executor(
            None, lambda: self.tokenizer.decode(valid_response_ids, skip_special_tokens=True)
        )

        extra_reward_kwargs = (
            {
                "reward_router_address": self.reward_router_address,
                "reward_model_tokenizer": self.reward_model_tokenizer,
            }
            if self.reward_router_address is not None
            else {}
        )
        if self.is_async_reward_score:
            result = await self.compute_score(
                data_source=data_source,
                solution_str=response_str,
                ground_truth=ground_truth,
                extra_info=extra_info,
                **extra_reward_kwargs,
            )
        else:
            result = await self.loop.run_in_executor(
                None,
                lambda: self.compute_score(
                    data_source=data_source,
                    solution_str=response_str,
                    ground_truth=ground_truth,
                    extra_info=extra_info,
                    **extra_reward_kwargs,
                ),
            )

        reward_extra_info = {}

        score: float
        if isinstance(result, dict):
            score = result["score"]
            for key, value in result.items():
                reward_extra_info[key] = value
        else:
            score = result
            reward_extra_info["acc"] = score

        reward = score

        return {"reward_score": reward, "reward_extra_info": reward_extra_info}


async def compute_score_batch(manager, samples):  # RewardLoopWorker.compute_score_batch, a task per sample
    tasks = []
    for s in samples:
        tasks.append(asyncio.create_task(manager.run_single(s)))
    return await asyncio.gather(*tasks)


def sample(np, text, data_source, ground_truth, pad=4, extra_info=None):
    ids = [ord(c) for c in text] + [0] * pad
    mask = [1] * 7 + [1] * len(text) + [0] * pad  # prompt of 7 tokens, then the response
    return OneSample(Item({"responses": np.array(ids), "attention_mask": np.array(mask)},
                          {"data_source": data_source, "reward_model": {"ground_truth": ground_truth},
                           "extra_info": dict(extra_info or {})}))


def test_run_single_awaits_the_coroutine_and_a_steps_samples_share_a_few_batches(assay_url):
    np = need("numpy")
    fn = get_custom_reward_fn(verl_loop.__file__, "compute_score",
                              {"assay_url": assay_url, "assay_data_sources": {"my/capitals": "exact"}})
    assert inspect.iscoroutinefunction(fn)  # so run_single awaits it, not a thread per sample

    samples = []
    for i in range(300):
        if i % 3 == 0:
            samples.append(sample(np, f"so \\boxed{{{i}}}", "openai/gsm8k", str(i if i % 2 == 0 else i + 1)))
        elif i % 3 == 1:
            samples.append(sample(np, "Paris" if i % 2 else "Lyon", "my/capitals", "paris"))
        else:  # a malformed ground truth: Assay calls it invalid; verl still gets a number
            samples.append(sample(np, "x", "my/capitals", {"not": "a string"}))

    client = verl_loop.async_client(assay_url, None)
    before = dict(client.requests)

    async def main():
        manager = NaiveRewardManager(config=None, tokenizer=CharTokenizer(), compute_score=fn)
        assert manager.is_async_reward_score
        return await compute_score_batch(manager, samples)

    out = asyncio.run(main())
    for i, o in enumerate(out):
        info = o["reward_extra_info"]
        if i % 3 == 0:
            assert o["reward_score"] == (1.0 if i % 2 == 0 else 0.0) and info["assay_scored"] == 1, i
        elif i % 3 == 1:
            assert o["reward_score"] == (1.0 if i % 2 else 0.0), i
        else:
            assert o["reward_score"] == 0.0 and info["assay_invalid"] == 1 and info["assay_scored"] == 0
        assert set(info) == {"score", "assay_scored", "assay_invalid", "assay_elapsed_ms"}
    assert client.requests.get("/reward/batch", 0) - before.get("/reward/batch", 0) <= 10
    assert client.requests.get("/reward", 0) == before.get("/reward", 0)


def test_the_same_samples_score_as_the_blocking_adapter_does(assay_url):
    from assay_client import verl

    cases = [("openai/gsm8k", "\\boxed{72}", "72", None), ("openai/gsm8k", "\\boxed{7}", "72", None),
             ("x", "Paris", '{"verifier": "exact", "reference": "paris"}', None),
             ("x", "Lyon", "paris", {"verifier": "exact"})]
    kwargs = {"assay_url": assay_url, "null_reward": -1.0}
    want = [verl.compute_score(d, s, g, e, **kwargs) for d, s, g, e in cases]

    async def main():
        return await asyncio.gather(*(verl_loop.compute_score(d, s, g, e, **kwargs) for d, s, g, e in cases))

    got = asyncio.run(main())
    drop = lambda r: {k: v for k, v in r.items() if k != "assay_elapsed_ms"}
    assert [drop(r) for r in got] == [drop(r) for r in want] and [r["score"] for r in got] == [1.0, 0.0, 1.0, 0.0]


def test_an_unknown_data_source_says_what_to_configure():
    with pytest.raises(ValueError, match="register_data_source"):
        asyncio.run(verl_loop.compute_score("nobody/knows", "x", "y", {}))
