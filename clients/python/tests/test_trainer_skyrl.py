"""SkyRL-Gym driving assay_client.skyrl.AssayEnv, replayed from github:NovaSky-AI/SkyRL at commit
a9564572eb8e91076be43c1bd5e4615e3de17265 (skyrl-gym 0.4.0; after skyrl_train-v0.4.0). SkyRL is
Apache-2.0 licensed (http://www.apache.org/licenses/LICENSE-2.0); copied, changed only where noted:

- skyrl-gym/skyrl_gym/core.py: class Env (docstrings dropped).
- skyrl-gym/skyrl_gym/envs/base_text_env.py: BaseTextEnvStepOutput, class BaseTextEnv (docstrings
  dropped; aggregate_metrics left out).
- skyrl-gym/skyrl_gym/envs/registration.py: load_env_creator, and make's creation and its
  `isinstance(env, Env)` check (the registry lookup reduced to a dict).
- skyrl/train/generators/skyrl_gym_generator.py: `_run_in_executor_if_available`, and the batched
  generation loop's env calls: make(env_class, env_config=, extras=), init(prompt), step(output)
  -> reward, get_metrics(), close().
"""
from __future__ import annotations

import asyncio
import copy
import importlib
import sys
import types
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, Generic, List, Optional, SupportsFloat, Tuple, TypedDict, TypeVar

import pytest

ObsType = TypeVar("ObsType")
ActType = TypeVar("ActType")


class Env(Generic[ObsType, ActType]):
    def step(self, action):
        raise NotImplementedError

    def init(self, *kwargs):
        raise NotImplementedError

    def close(self):
        pass


MessageType = Dict[str, str]
ConversationType = List[MessageType]


class BaseTextEnvStepOutput(TypedDict):
    observations: ConversationType
    reward: float
    done: bool
    metadata: Dict[str, Any]
    postprocessed_action: Optional[str]


class BaseTextEnv(Env[ConversationType, str]):
    def __init__(self):
        super().__init__()
        self.turns = 0
        self.max_turns = 1
        self.tool_groups = []
        self.tool_to_toolgroup = {}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        pass

    def init(self, prompt: ConversationType) -> Tuple[ConversationType, Dict[str, Any]]:
        return prompt, {}

    def close(self):
        pass

    def get_metrics(self) -> Dict[str, Any]:
        return {}


def load_env_creator(name: str):
    mod_name, attr_name = name.split(":")
    mod = importlib.import_module(mod_name)
    fn = getattr(mod, attr_name)
    return fn


registry: Dict[str, Dict[str, Any]] = {}


def register(id: str, entry_point: str, kwargs: Optional[Dict[str, Any]] = None):
    registry[id] = {"entry_point": entry_point, "kwargs": kwargs or {}}


def make(id: str, **kwargs: Any) -> Env:
    env_spec = registry[id]
    env_spec_kwargs = copy.deepcopy(env_spec["kwargs"])
    env_spec_kwargs.update(kwargs)
    env_creator = load_env_creator(env_spec["entry_point"])
    try:
        env = env_creator(**env_spec_kwargs)
    except TypeError as e:
        raise type(e)(f"{e} was raised from the environment creator for {id} with kwargs ({env_spec_kwargs})")
    if not isinstance(env, Env):
        raise TypeError(f"The environment must inherit from the skyrl_gym.Env class, actual class: {type(env)}. ")
    return env


class Generator:
    def __init__(self, env_executor):
        self.env_executor = env_executor

    async def _run_in_executor_if_available(self, func, *args, **kwargs):
        if (executor := self.env_executor) is not None:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(executor, func, *args, **kwargs)
        else:
            return func(*args, **kwargs)

    async def batched(self, env_classes, env_extras, prompts, outputs, env_config):
        envs = []
        for env_class, env_extra, prompt in zip(env_classes, env_extras, prompts):
            env_extra["max_turns"] = 1
            env = make(env_class, env_config=env_config, extras=env_extra)
            init_prompt, _ = await self._run_in_executor_if_available(env.init, prompt)
            envs.append(env)
        rewards, env_metrics = [], []
        for output, env in zip(outputs, envs):
            env_step_output = await self._run_in_executor_if_available(env.step, output)
            rewards.append(env_step_output["reward"])
            assert env_step_output["done"] is True
            env_metrics.append(env.get_metrics())
            await self._run_in_executor_if_available(env.close)
        return rewards, env_metrics


@pytest.fixture
def skyrl_gym(monkeypatch):
    """skyrl_gym as the copied pieces above, importable by the names AssayEnv imports."""
    root = types.ModuleType("skyrl_gym")
    root.Env, root.make, root.register = Env, make, register
    envs = types.ModuleType("skyrl_gym.envs")
    base = types.ModuleType("skyrl_gym.envs.base_text_env")
    base.BaseTextEnv, base.BaseTextEnvStepOutput = BaseTextEnv, BaseTextEnvStepOutput
    for name, mod in (("skyrl_gym", root), ("skyrl_gym.envs", envs), ("skyrl_gym.envs.base_text_env", base)):
        monkeypatch.setitem(sys.modules, name, mod)
    import assay_client.skyrl as adapter

    monkeypatch.setattr(adapter, "_built", {})
    registry.clear()
    register(id="assay", entry_point="assay_client.skyrl:AssayEnv")
    return root


def test_step_returns_assays_reward_through_skyrls_make_and_generator(assay_url, skyrl_gym):
    prompts = [[{"role": "user", "content": "What is 6 * 7?"}]] * 4 + [[{"role": "user", "content": "Capital of France?"}]] * 2
    extras = [{"reward_spec": {"method": "rule", "ground_truth": "42"}}] * 4 + \
             [{"reward_spec": {"ground_truth": "paris", "verifier": "exact"}}] * 2
    outputs = ["\\boxed{42}", "\\boxed{41}", "6*7 = 42. The answer is 42", "#### 40", " Paris ", "Lyon"]
    config = {"verifier": "math", "assay_url": assay_url}
    with ThreadPoolExecutor(4) as pool:
        for executor in (pool, None):  # with SkyRL's env executor, and on the loop itself
            rewards, metrics = asyncio.run(Generator(executor).batched(["assay"] * 6, [dict(e) for e in extras],
                                                                       prompts, outputs, config))
            assert rewards == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
            assert all(m["assay_scored"] == 1.0 for m in metrics)


def test_an_unscored_answer_gets_null_reward_and_says_so(assay_url, skyrl_gym):
    env = make("assay", env_config={"assay_url": assay_url, "null_reward": -1.0},
               extras={"reward_spec": {"ground_truth": {"inputs": ["1\n"], "outputs": ["1\n"]}, "verifier": "code"}})
    out = env.step("```python\nprint(input())\n```")  # no sandbox on this server: Assay answers null
    assert out["reward"] == -1.0 and out["done"] is True
    assert out["metadata"]["assay_scored"] is False and "sandbox" in out["metadata"]["assay_reason"]
    assert env.get_metrics()["assay_scored"] == 0.0


def test_a_row_without_ground_truth_or_verifier_says_what_to_add(assay_url, skyrl_gym):
    with pytest.raises(ValueError, match="reward_spec"):
        make("assay", env_config={}, extras={})
    env = make("assay", env_config={"assay_url": assay_url}, extras={"reward_spec": {"ground_truth": "1"}})
    with pytest.raises(ValueError, match="verifier="):
        env.step("1")


def test_without_skyrl_gym_the_env_says_what_to_install(monkeypatch):
    import assay_client.skyrl as adapter

    monkeypatch.setitem(sys.modules, "skyrl_gym", None)  # import fails
    monkeypatch.setattr(adapter, "_built", {})
    with pytest.raises(ImportError, match="skyrl-gym"):
        adapter.AssayEnv
