"""verifiers / prime-rl adapter (github:PrimeIntellect-ai/verifiers; checked version in the client README).

- `assay_reward(verifier)`: an async reward function in the shape `vf.Rubric` calls
  (verifiers/rubrics/rubric.py, `_call_individual_reward_func`: keyword arguments picked by name,
  `prompt`, `completion`, `answer`, `info`, `state`, ...; its result passed through `float()`).
  The text scored is the completion's last assistant message (chat) or the completion itself;
  the reference is the row's `answer` (or `info["reference"]`); the verifier is `info["verifier"]`,
  else the one named here, so one environment can mix math and code rows. Every sample of a
  group is awaited at once by `Rubric.score_group`; `AsyncAssay` turns them into a few
  `/reward/batch` requests. verifiers needs a number: an item Assay could not score gets
  `null_reward` (default 0.0); the rubric's metrics show it as `assay_scored` 0 when the
  `assay_rubric` helper adds that metric. `vf.Rubric` scores a reward function that raises as
  0.0, whatever `null_reward` says, so an Assay that cannot be reached (or misses `deadline`) is
  caught here and gives `null_reward` too, with a warning; a sample with no verifier named (in
  `info` or here) or a key Assay refuses (401/403) raises AssayConfigError, which the rubric does
  not catch: every sample would fail alike, and training on 0.0 would hide it.
  A ToolEnv rollout is sent to `trajectory` as its messages in JSON and to `tool_call` as its
  calling turns (assay_client.trl.completion_text).
- `assay_rubric(verifier)`: a `vf.Rubric` with that reward function (weight 1) and the
  `assay_scored` metric (weight 0), for `SingleTurnEnv`, `ToolEnv` or any environment.
- An example environment module: clients/python/examples/verifiers/assay_math_code.py
  (`load_environment`).

Nothing here imports `verifiers` until `assay_rubric` is called.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Dict, Mapping, Optional

from ._shared import async_client, item_for_row
from .client import AssayError
from .trl import completion_text, prompt_text

__all__ = ["assay_reward", "assay_rubric", "AssayConfigError"]

log = logging.getLogger("assay_client.verifiers_env")

#: Assay's answers that say the client's settings are wrong, not this sample or the server's health.
_CONFIG_STATUSES = frozenset({401, 403})


class AssayConfigError(BaseException):
    """The reward function is set up wrong (no verifier named, a key Assay refuses): every sample
    would fail alike. A BaseException, not an Exception, on purpose: `vf.Rubric` catches any
    Exception from a reward function and scores the sample 0.0, which would train on zeros."""

_SCORED_KEY = "assay_results"  # where the reward function leaves each result in the rollout's state


def _row(answer: Any, info: Any) -> Dict[str, Any]:
    row: Dict[str, Any] = dict(info) if isinstance(info, Mapping) else {}
    if answer not in (None, "") and "reference" not in row:
        row["answer"] = answer
    return row


def assay_reward(verifier: Optional[str] = None, *, name: Optional[str] = None,
                 options: Optional[Mapping[str, Any]] = None, assay_url: Optional[str] = None,
                 api_key: Optional[str] = None, null_reward: float = 0.0,
                 deadline: Optional[float] = None) -> Callable[..., Any]:
    """An async reward function for `vf.Rubric(funcs=[...])`, named `name` (default `assay_<verifier>`,
    or `assay`), which vf uses as the metric's name."""

    if verifier is not None and (not isinstance(verifier, str) or not verifier):
        raise ValueError(f"verifier must be a verifier's name (from GET /verifiers) or None, got {verifier!r}")

    async def reward(prompt: Any = None, completion: Any = None, answer: Any = None, info: Any = None,
                     state: Any = None, **kwargs: Any) -> float:
        row = _row(answer, info)
        name = row.get("verifier") or verifier
        try:
            item = item_for_row(completion_text(completion, name if isinstance(name, str) else None), row,
                                verifier=verifier, prompt=prompt_text(prompt) if prompt is not None else None,
                                options=options)
        except ValueError as e:
            raise AssayConfigError(str(e)) from e
        try:
            result = await async_client(assay_url, api_key).score(item, deadline=deadline, allow_invalid=True)
        except AssayError as e:
            if e.status in _CONFIG_STATUSES:
                raise AssayConfigError(str(e)) from e
            log.warning("Assay did not score a rollout (%s); it gets null_reward=%s", e, null_reward)
            result = {"verifier": item["verifier"], "reward": None, "status": "error", "reason": str(e)}
        if isinstance(state, dict):
            state.setdefault(_SCORED_KEY, []).append(result)
        value = result.get("reward")
        return float(null_reward) if value is None else float(value)

    reward.__name__ = name or (f"assay_{verifier}" if verifier else "assay")
    reward.__qualname__ = reward.__name__
    return reward


async def assay_scored(state: Any = None, **kwargs: Any) -> float:
    """1.0 when Assay scored this rollout, 0.0 when it answered null (the reward got null_reward)."""
    results = state.get(_SCORED_KEY, []) if isinstance(state, dict) else []
    return 1.0 if results and all(r.get("reward") is not None for r in results) else 0.0


def assay_rubric(verifier: Optional[str] = None, *, weight: float = 1.0, parser: Any = None, **kwargs: Any) -> Any:
    """`vf.Rubric(funcs=[assay_reward(verifier, **kwargs), assay_scored], weights=[weight, 0.0])`."""
    import verifiers as vf  # imported here: only environments that use the rubric need verifiers

    rubric_kwargs: Dict[str, Any] = {"parser": parser} if parser is not None else {}
    return vf.Rubric(funcs=[assay_reward(verifier, **kwargs), assay_scored], weights=[weight, 0.0], **rubric_kwargs)
