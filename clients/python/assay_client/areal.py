"""AReaL adapter (github:inclusionAI/AReaL; checked against the commit named in the client README).

- `reward_fn(prompt, completions, prompt_ids, completion_ids, **data)`: AReaL's reward-function
  signature (areal/api/reward_api.py), for `RLVRWorkflow(reward_fn=...)` and anything that wraps it
  in `AsyncRewardWrapper`. That wrapper runs the function in a process pool, so this one is a
  blocking, picklable, module-level function (one keep-alive connection per pool process). The
  dataset row's fields arrive as `**data`: `verifier` (or the default bound with
  `make_reward_fn(verifier=...)`), the reference from `reference` / `answer` / `ground_truth` /
  `solution` (GSM8K's whole `answer`, "... #### 72", is a reference Assay's math verifier reads),
  `options`. The completion is sent less the end-of-sequence tokens AReaL's decode keeps
  (`42<|im_end|>` -> `42`). AReaL needs a number: an item Assay could not score (reward null)
  gets `null_reward` (default 0.0) and a warning in the log. `deadline` (default 12 s) bounds
  the whole call, every retry included, under AsyncRewardWrapper's own 15 s timeout: past that
  timeout AReaL's wrapper gives the sample a reward of 0 with nothing but its own log line, so a
  slow or busy Assay must raise first (the wrapper re-raises an exception after its retries).
- `async_reward(...)`: the same as a coroutine through `AsyncAssay`, for workflows that await
  rewards on their own event loop: thousands of concurrent calls become a few `/reward/batch`
  requests. Returns None for an unscored item.
- `AssayAgent`: an agent workflow (`async def run(self, data, **extra_kwargs)`, the shape of
  areal/workflow/openai/math_agent.py's MathAgent) that asks AReaL's OpenAI-compatible proxy
  (`base_url`, `api_key` from extra_kwargs) for one completion and returns Assay's reward for it,
  or raises AssayError (AReaL's runner then rejects that trajectory, logging the reason) when
  Assay could not score it.

Nothing here imports AReaL: the functions only have its signatures.
"""
from __future__ import annotations

import functools
import logging
import os
from typing import Any, Dict, List, Optional

from ._shared import async_client, item_for_row, strip_end_tokens, sync_client
from .client import AssayError

log = logging.getLogger("assay_client.areal")

#: reward_fn's deadline, seconds: under AsyncRewardWrapper's default timeout (15 s; areal/api/reward_api.py),
#: past which AReaL scores the sample 0 instead of raising.
AREAL_DEADLINE_S = 12.0

__all__ = ["reward_fn", "make_reward_fn", "math_reward_fn", "async_reward", "AssayAgent"]


def _prompt_text(prompt: Any) -> Optional[str]:
    return prompt if isinstance(prompt, str) else None


def _completion_text(completions: Any) -> Any:
    """The completion as scored: RLVRWorkflow decodes the output tokens with `tokenizer.decode`,
    special tokens kept, so the text ends with the model's end-of-sequence token ("42<|im_end|>",
    "</s>") and maybe padding; those are stripped (strip_end_tokens), as the server does for
    OpenRLHF's queries, or `exact`, `format` and `regex` would score a right answer 0. (The
    tokenizer never reaches a reward function, so the tokens are matched by their spelling.)"""
    return strip_end_tokens(completions) if isinstance(completions, str) else completions


def reward_fn(prompt: Any, completions: str, prompt_ids: Optional[List[int]] = None,
              completion_ids: Optional[List[int]] = None, *, assay_url: Optional[str] = None,
              api_key: Optional[str] = None, verifier: Optional[str] = None,
              null_reward: float = 0.0, deadline: float = AREAL_DEADLINE_S, **data: Any) -> float:
    """AReaL's reward function: Assay's reward for `completions` against the row in `data`; raises
    AssayError when Assay does not answer within `deadline` seconds."""
    item = item_for_row(_completion_text(completions), data, verifier=verifier, prompt=_prompt_text(prompt))
    result = sync_client(assay_url, api_key).score_batch([item], deadline=deadline)[0]
    reward = result.get("reward")
    if reward is None:
        log.warning("Assay could not score an item (%s: %s); AReaL gets null_reward=%s",
                    result.get("status"), result.get("reason"), null_reward)
        return float(null_reward)
    return float(reward)


def make_reward_fn(*, verifier: Optional[str] = None, assay_url: Optional[str] = None,
                   api_key: Optional[str] = None, null_reward: float = 0.0,
                   deadline: float = AREAL_DEADLINE_S) -> Any:
    """`reward_fn` with settings bound; picklable (a functools.partial of a module function), so
    AsyncRewardWrapper's process pool can run it. Keep `deadline` under the wrapper's timeout."""
    return functools.partial(reward_fn, assay_url=assay_url, api_key=api_key, verifier=verifier,
                             null_reward=null_reward, deadline=deadline)


#: `reward_fn` for rows without a `verifier` field, scored by `math`; importable by name, as AReaL's
#: examples name their reward function: `reward_fn="assay_client.areal.math_reward_fn"`.
math_reward_fn = make_reward_fn(verifier="math")


async def async_reward(prompt: Any, completions: str, prompt_ids: Optional[List[int]] = None,
                       completion_ids: Optional[List[int]] = None, *, assay_url: Optional[str] = None,
                       api_key: Optional[str] = None, verifier: Optional[str] = None,
                       deadline: Optional[float] = None, **data: Any) -> Optional[float]:
    """`reward_fn` as a coroutine, micro-batched with every other concurrent call; None when Assay
    could not score the item."""
    item = item_for_row(_completion_text(completions), data, verifier=verifier, prompt=_prompt_text(prompt))
    result = await async_client(assay_url, api_key).score(item, deadline=deadline, allow_invalid=True)
    if result.get("reward") is None:
        log.warning("Assay could not score an item (%s: %s); the workflow gets None",
                    result.get("status"), result.get("reason"))
    return result.get("reward")


class AssayAgent:
    """An AReaL agent workflow scored by Assay: one chat completion from the proxy AReaL passes
    (`base_url`, `api_key`; else OPENAI_BASE_URL / OPENAI_API_KEY), Assay's reward for its text.

    `verifier` applies to rows without a `verifier` field; other keyword arguments go to the chat
    completion request (temperature, max_completion_tokens, ...)."""

    def __init__(self, verifier: Optional[str] = "math", assay_url: Optional[str] = None,
                 api_key: Optional[str] = None, **kwargs: Any):
        self.verifier = verifier
        self.assay_url = assay_url
        self.assay_api_key = api_key
        self.kwargs = kwargs.copy()
        self.kwargs.pop("max_turns", None)

    async def run(self, data: Dict[str, Any], **extra_kwargs: Any) -> float:
        from .aio import _aiohttp

        aiohttp = _aiohttp()
        base_url = (extra_kwargs.get("base_url") or os.getenv("OPENAI_BASE_URL") or "").rstrip("/")
        if not base_url:
            raise ValueError("AssayAgent needs the model's OpenAI-compatible URL: AReaL passes base_url; "
                             "outside AReaL set OPENAI_BASE_URL")
        api_key = extra_kwargs.get("api_key") or os.getenv("OPENAI_API_KEY")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        request = {"model": "default", "messages": data["messages"], **self.kwargs}
        async with aiohttp.ClientSession(headers=headers) as session:
            async with session.post(base_url + "/chat/completions", json=request) as resp:
                if resp.status >= 400:
                    raise RuntimeError(f"the model server at {base_url} answered HTTP {resp.status}: "
                                       f"{(await resp.text())[:200]}")
                completion = await resp.json()
        text = strip_end_tokens(completion["choices"][0]["message"].get("content") or "")
        prompt = data["messages"][-1].get("content") if data.get("messages") else None
        row = {k: v for k, v in data.items() if k != "messages"}
        item = item_for_row(text, row, verifier=self.verifier, prompt=prompt)
        result = await async_client(self.assay_url, self.assay_api_key).score(item, allow_invalid=True)
        if result.get("reward") is None:
            # AReaL's agent runner rejects a trajectory whose run() raises; no number would be honest here.
            raise AssayError(f"Assay could not score this trajectory ({result.get('status')}: "
                             f"{result.get('reason')}); AReaL rejects it")
        return float(result["reward"])
