"""verifiers' Rubric scoring assay_client.verifiers_env, replayed from github:PrimeIntellect-ai/verifiers
at tag v0.1.14 (commit 2fbd2b7fab0236cb039c4aa5afb25ad9c5f17134). verifiers is MIT licensed
(Copyright (c) 2025 William Brown; the licence's notice applies to the copied code below):

- verifiers/rubrics/rubric.py, class Rubric: `_is_group_func`, `score_objects` and
  `task_score_fields` (the task lookup dropped: these environments have no taskset),
  `_call_individual_reward_func`, `score_rollout` and `score_group` (the group-function branch
  kept), verbatim otherwise; its `parser` and decorator discovery left out (unused here).
- verifiers/utils/async_utils.py: `maybe_await`.
- verifiers/types.py: TASK_INPUT_FIELDS.
- verifiers/envs/singleturn_env.py: SingleTurnEnv(**kwargs) takes dataset, system_prompt, rubric
  (a recorder stands in for it: generation is not what is tested).
"""
from __future__ import annotations

import asyncio
import importlib.util
import inspect
import logging
import sys
import types
from pathlib import Path
from typing import Any, cast, get_origin

import pytest

from assay_client import verifiers_env
from conftest import need, serve_assay

TASK_INPUT_FIELDS = {"prompt", "answer", "info", "example_id"}


async def maybe_await(func, *args, **kwargs):
    result = func(*args, **kwargs)
    if inspect.isawaitable(result):
        return await result
    return result


class Rubric:
    def __init__(self, funcs=None, weights=None, parser=None):
        self.logger = logging.getLogger(f"{__name__}.{self.__class__.__name__}")
        self.funcs = funcs or []
        self.weights = weights or []
        if not self.weights:
            self.weights = [1.0] * len(self.funcs)
        elif len(self.weights) != len(self.funcs):
            raise ValueError(
                f"Number of weights ({len(self.weights)}) must match number of functions ({len(self.funcs)})"
            )
        self.parser = parser
        self.class_objects = {}
        if self.parser:
            self.class_objects["parser"] = self.parser
        self.score_object_providers = []
        self.group_score_object_providers = []

    def _is_group_func(self, func) -> bool:
        sig = inspect.signature(func)
        param_names = set(sig.parameters.keys())
        group_indicators = {"states", "prompts", "completions", "answers", "tasks", "infos"}
        return_annotation = inspect.signature(func).return_annotation
        returns_list = return_annotation is list or get_origin(return_annotation) is list
        return bool(param_names & group_indicators) or returns_list

    def score_objects(self, state):
        task = None
        objects = self.task_score_fields(state, task)
        objects.update(
            {
                "prompt": state["prompt"],
                "completion": state["completion"],
                "answer": state.get("answer", ""),
                "state": state,
                "info": state.get("info", {}),
                **self.class_objects,
            }
        )
        objects["task"] = task
        for provider in self.score_object_providers:
            objects.update(provider(state))
        return objects

    def task_score_fields(self, state, task):
        fields = {}
        input_data = state.get("input")
        if isinstance(input_data, dict):
            fields.update({key: value for key, value in input_data.items() if key not in TASK_INPUT_FIELDS})
        return fields

    def _get_individual_reward_funcs(self):
        return [func for func in self.funcs if not self._is_group_func(func)]

    def _get_group_reward_funcs(self):
        return [func for func in self.funcs if self._is_group_func(func)]

    def _get_individual_reward_weights(self):
        return [weight for func, weight in zip(self.funcs, self.weights) if not self._is_group_func(func)]

    async def _call_individual_reward_func(self, func, state) -> float:
        sig = inspect.signature(func)
        merged = self.score_objects(state)
        if any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
            try:
                ans = float(await maybe_await(func, **merged))
            except Exception as e:
                self.logger.error(f"Error calling reward function {func.__name__}: {e}")
                ans = 0.0
        else:
            allowed = {k: v for k, v in merged.items() if k in sig.parameters}
            try:
                ans = float(await maybe_await(func, **allowed))
            except Exception as e:
                self.logger.error(f"Error calling reward function {func.__name__}: {e}")
                ans = 0.0
        return ans

    async def score_rollout(self, state):
        reward_funcs = self._get_individual_reward_funcs()
        group_reward_funcs = self._get_group_reward_funcs()
        assert len(reward_funcs) > 0 and len(group_reward_funcs) == 0
        reward_scores = []
        for func in reward_funcs:
            reward_scores.append(await self._call_individual_reward_func(func=func, state=state))
        state["reward"] = sum(r * w for r, w in zip(reward_scores, self._get_individual_reward_weights()))
        state["metrics"] = {func.__name__: reward for func, reward in zip(reward_funcs, reward_scores)}

    async def score_group(self, states):
        num_states = len(states)
        if num_states == 0:
            return
        aggregated_rewards = [0.0] * num_states
        aggregated_metrics = {}
        for func, weight in zip(self.funcs, self.weights):
            is_group = self._is_group_func(func)
            if is_group:
                raise AssertionError("the Assay rubric has no group functions")
            else:
                reward_func = func
                score_tasks = [self._call_individual_reward_func(reward_func, state) for state in states]
                scores = await asyncio.gather(*score_tasks)
                func_name = func.__name__
                if func_name not in aggregated_metrics:
                    aggregated_metrics[func_name] = [0.0] * num_states
                for i in range(num_states):
                    score_value = scores[i]
                    aggregated_rewards[i] += score_value * weight
                    aggregated_metrics[func_name][i] = score_value
        avg_reward = sum(aggregated_rewards) / num_states
        for i, state in enumerate(states):
            state["reward"] = aggregated_rewards[i]
            state["advantage"] = aggregated_rewards[i] - avg_reward
            for t in state["trajectory"]:
                if t["advantage"] is None:
                    t["advantage"] = state["advantage"]
                if t["reward"] is None:
                    t["reward"] = state["reward"]
            state["metrics"] = {func_name: values[i] for func_name, values in aggregated_metrics.items()}


class SingleTurnEnv:
    def __init__(self, **kwargs):
        self.kwargs = kwargs
        self.dataset = kwargs["dataset"]
        self.rubric = kwargs["rubric"]


@pytest.fixture
def fake_vf(monkeypatch):
    vf = types.ModuleType("verifiers")
    vf.Rubric, vf.SingleTurnEnv = Rubric, SingleTurnEnv
    monkeypatch.setitem(sys.modules, "verifiers", vf)
    return vf


@pytest.fixture(scope="module")
def sandboxed_url():
    """Assay with a sandbox (bubblewrap) for the code rows."""
    with serve_assay(ASSAY_SANDBOX="bwrap") as url:
        yield url


def state(prompt, completion, answer, info=None):
    return {"prompt": prompt, "completion": completion, "answer": answer, "info": info or {},
            "input": {"prompt": prompt, "answer": answer, "info": info or {}}, "trajectory": [{"advantage": None, "reward": None}]}


def chat(text):
    return [{"role": "assistant", "content": text}]


def test_the_rubric_scores_a_group_at_once_in_few_batches(assay_url, fake_vf):
    rubric = verifiers_env.assay_rubric("math", assay_url=assay_url)
    q = [{"role": "user", "content": "What is 6 * 7?"}]
    states = [state(q, chat(f"so \\boxed{{{40 + i % 4}}}"), "42") for i in range(64)]
    # a ToolEnv rollout: tool turns, then the final assistant message is what is scored
    states.append(state(q, [{"role": "assistant", "content": "", "tool_calls": [{"id": "1"}]},
                            {"role": "tool", "content": "42"}, {"role": "assistant", "content": "\\boxed{42}"}], "42"))
    client = verifiers_env.async_client(assay_url, None)
    before = client.requests.get("/reward/batch", 0)
    asyncio.run(rubric.score_group(states))
    assert [s["reward"] for s in states] == [1.0 if i % 4 == 2 else 0.0 for i in range(64)] + [1.0]
    assert states[2]["metrics"] == {"assay_math": 1.0, "assay_scored": 1.0}
    assert client.requests["/reward/batch"] - before <= 6
    one = state(q, chat("\\boxed{42}"), "42")
    asyncio.run(rubric.score_rollout(one))
    assert one["reward"] == 1.0


def test_an_unscored_item_gets_null_reward_and_shows_in_the_metric(assay_url, fake_vf):
    rubric = verifiers_env.assay_rubric(assay_url=assay_url, null_reward=-1.0)
    code = {"inputs": ["1\n"], "outputs": ["1\n"]}  # no sandbox on this server: Assay answers null
    states = [state("echo", chat("```python\nprint(input())\n```"), "", {"verifier": "code", "reference": code}),
              state("2+2?", chat("\\boxed{4}"), "4", {"verifier": "math"})]
    asyncio.run(rubric.score_group(states))
    assert [s["reward"] for s in states] == [-1.0, 1.0]
    assert [s["metrics"]["assay_scored"] for s in states] == [0.0, 1.0]


def test_the_example_environment_scores_math_and_code_through_assay(sandboxed_url, fake_vf):
    need("datasets")
    path = Path(__file__).resolve().parents[1] / "examples" / "verifiers" / "assay_math_code.py"
    spec = importlib.util.spec_from_file_location("assay_math_code", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    env = module.load_environment(assay_url=sandboxed_url)
    assert isinstance(env, SingleTurnEnv) and env.kwargs["system_prompt"] == module.SYSTEM_PROMPT
    rows = list(env.dataset)
    answers = {
        "What is 17 * 23?": ["\\boxed{391}", "\\boxed{381}"],
        "Natalia sold": ["48 + 24 = \\boxed{72}", "\\boxed{96}"],
        "Read an integer n": ["```python\nn = int(input())\nprint(n * n)\n```", "```python\nprint(input())\n```"],
        "Read a line": ["```python\nprint(input()[::-1])\n```", "```python\nprint(input())\n```"],
    }
    states, want = [], []
    for row in rows:
        right, wrong = next(v for k, v in answers.items() if row["question"].startswith(k))
        prompt = [{"role": "user", "content": row["question"]}]
        states += [state(prompt, chat(right), row["answer"], row["info"]), state(prompt, chat(wrong), row["answer"], row["info"])]
        want += [1.0, 0.0]
    asyncio.run(env.rubric.score_group(states))
    got = [s["reward"] for s in states]
    # "Read a line" reversed: "racecar" is a palindrome, so the wrong program passes 1 test of 2.
    want[-1] = 0.5
    assert got == want, [(s["completion"][-1]["content"][:30], s["reward"]) for s in states]
    assert all(s["metrics"]["assay_scored"] == 1.0 for s in states)


def test_nothing_imports_verifiers_until_a_rubric_is_asked_for():
    import subprocess

    code = ("import sys, assay_client.verifiers_env, assay_client.areal, assay_client.skyrl, assay_client.verl_loop; "
            "bad = [m for m in ('verifiers', 'skyrl_gym', 'areal', 'verl') if m in sys.modules]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], check=True)


# ---- ToolEnv rollouts: the calls and the tool results reach the verifiers that read them ---------
def tool_env_rollout(args, result, final):
    """A ToolEnv completion as verifiers keeps it: OpenAI messages, arguments a JSON string."""
    return [{"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_0", "type": "function", "function": {"name": "multiply", "arguments": args}}]},
            {"role": "tool", "tool_call_id": "call_0", "content": result},
            {"role": "assistant", "content": final}]


def test_tool_env_rollouts_reach_tool_call_and_trajectory(assay_url, fake_vf):
    q = [{"role": "user", "content": "3*4?"}]
    calls = verifiers_env.assay_rubric("tool_call", assay_url=assay_url, options={"normalize": True})
    ref = [{"name": "multiply", "arguments": {"a": 3, "b": 4}}]
    states = [state(q, tool_env_rollout('{"a": 3, "b": 4}', "12", "12"), "", {"reference": ref}),
              state(q, chat("12"), "", {"reference": ref})]
    asyncio.run(calls.score_group(states))
    assert states[0]["reward"] == 1.0 and states[1]["reward"] < 1.0, [s["reward"] for s in states]

    traj = verifiers_env.assay_rubric("trajectory", assay_url=assay_url)
    ref = {"verifier": "math", "reference": "12"}
    states = [state(q, tool_env_rollout('{"a": 3, "c": 4}', "Error: unexpected keyword argument 'c'", "\\boxed{12}"), "", {"reference": ref}),
              state(q, tool_env_rollout('{"a": 3, "b": 4}', "12", "\\boxed{12}"), "", {"reference": ref})]
    asyncio.run(traj.score_group(states))
    assert [s["reward"] for s in states] == [0.5, 1.0]


# ---- failures the Rubric would hide as 0.0 ----------------------------------------------------------
def test_assay_down_gives_null_reward_not_the_rubrics_zero(fake_vf):
    from conftest import free_port

    rubric = verifiers_env.assay_rubric("math", assay_url=f"http://127.0.0.1:{free_port()}", null_reward=-1.0, deadline=1.0)
    states = [state("2+2?", chat("\\boxed{4}"), "4") for _ in range(2)]
    asyncio.run(rubric.score_group(states))
    assert [s["reward"] for s in states] == [-1.0, -1.0]
    assert [s["metrics"]["assay_scored"] for s in states] == [0.0, 0.0]


def test_a_row_without_a_verifier_stops_scoring_instead_of_scoring_0(assay_url, fake_vf):
    rubric = verifiers_env.assay_rubric(assay_url=assay_url)  # rows must name theirs: this one does not
    with pytest.raises(BaseException, match="verifier='math'"):
        asyncio.run(rubric.score_group([state("2+2?", chat("\\boxed{4}"), "4")]))
