"""SkyRL-Gym adapter (github:NovaSky-AI/SkyRL, skyrl-gym; checked version in the client README).

`AssayEnv`: a text environment (a `skyrl_gym.envs.base_text_env.BaseTextEnv`) whose `step(action)`
scores the model's final answer with Assay and ends the episode. Register it and name it in the
dataset's `env_class` column:

    from skyrl_gym.envs import register
    register(id="assay", entry_point="assay_client.skyrl:AssayEnv")

Per sample (`extras`, the dataset row as SkyRL passes it): `reward_spec.ground_truth` is the
reference (SkyRL's own convention, as GSM8kEnv reads it), `reward_spec.verifier` / `extras.verifier`
the verifier, `reward_spec.options` its options. Per environment (`env_config`, from
`environment.skyrl_gym.assay` in SkyRL's config): `verifier` (default for rows without one),
`assay_url`, `api_key`, `null_reward` (default 0.0: SkyRL needs a number; `metadata.assay_scored`
says when Assay could not score the item).

SkyRL calls `step` synchronously (in its env executor when it has one), so this uses the blocking
client, one keep-alive connection per thread. skyrl_gym is imported when `AssayEnv` is first used
(PEP 562 module `__getattr__`), never at `import assay_client.skyrl`: skyrl_gym.make insists on
an instance of its own `Env`, so the class is built on that base then.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

from ._shared import item_for_row, sync_client

__all__ = ["AssayEnv", "AssayEnvMixin"]


def _get(config: Any, key: str, default: Any = None) -> Any:
    """env_config is an OmegaConf DictConfig in SkyRL, a dict in tests: both answer .get."""
    if config is None:
        return default
    value = config.get(key, default) if hasattr(config, "get") else getattr(config, key, default)
    return default if value is None else value


class AssayEnvMixin:
    """The behaviour of AssayEnv, on top of whatever BaseTextEnv the running SkyRL defines."""

    def __init__(self, env_config: Any = None, extras: Optional[Dict[str, Any]] = None):
        super().__init__()
        extras = extras or {}
        spec = extras.get("reward_spec")
        if not isinstance(spec, Mapping) or "ground_truth" not in spec:
            raise ValueError("AssayEnv needs extras['reward_spec']['ground_truth'] (the reference), "
                             "as SkyRL's dataset rows carry it")
        self.row: Dict[str, Any] = {"reference": spec["ground_truth"]}
        verifier = spec.get("verifier") or extras.get("verifier")
        if verifier:
            self.row["verifier"] = verifier
        if spec.get("options"):
            self.row["options"] = spec["options"]
        self.default_verifier = _get(env_config, "verifier")
        self.assay_url = _get(env_config, "assay_url")
        self.api_key = _get(env_config, "api_key")
        self.null_reward = float(_get(env_config, "null_reward", 0.0))
        self.prompt: Optional[str] = None
        self.last_result: Optional[Dict[str, Any]] = None

    def init(self, prompt: Any) -> Any:
        if isinstance(prompt, list) and prompt and isinstance(prompt[-1], Mapping):
            content = prompt[-1].get("content")
            self.prompt = content if isinstance(content, str) else None
        return prompt, {}

    def step(self, action: str) -> Dict[str, Any]:
        self.turns = getattr(self, "turns", 0) + 1
        item = item_for_row(action, self.row, verifier=self.default_verifier, prompt=self.prompt)
        result = sync_client(self.assay_url, self.api_key).score_batch([item])[0]
        self.last_result = result
        reward = result.get("reward")
        scored = reward is not None
        return {
            "observations": [],
            "reward": float(reward) if scored else self.null_reward,
            "done": True,  # the final answer ends the episode
            "metadata": {"assay_scored": scored, "assay_status": result.get("status"),
                         "assay_reason": result.get("reason")},
            "postprocessed_action": None,
        }

    def get_metrics(self) -> Dict[str, Any]:
        r = self.last_result or {}
        return {"assay_scored": 0.0 if r.get("reward") is None else 1.0,
                "assay_elapsed_ms": float(r.get("elapsed_ms") or 0.0)}


_built: Dict[str, Any] = {}


def __getattr__(name: str) -> Any:
    if name != "AssayEnv":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if "AssayEnv" not in _built:
        try:
            from skyrl_gym.envs.base_text_env import BaseTextEnv
        except ImportError as e:
            raise ImportError("assay_client.skyrl.AssayEnv is a SkyRL-Gym environment: install skyrl-gym") from e
        _built["AssayEnv"] = type("AssayEnv", (AssayEnvMixin, BaseTextEnv), {"__module__": __name__})
    return _built["AssayEnv"]
