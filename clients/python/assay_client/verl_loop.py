"""verl Reward Loop adapter: `async def compute_score(...)` for `custom_reward_function`.

verl's reward loop (verl/experimental/reward_loop/reward_manager/naive.py, NaiveRewardManager)
checks `inspect.iscoroutinefunction(compute_score)` and, for a coroutine function, awaits
`compute_score(data_source=, solution_str=, ground_truth=, extra_info=, ...)` on its own event loop
for every sample at once (verl/trainer/ppo/reward.py's `get_custom_reward_fn` wraps it in
`_call_with_kwargs_async`, reward_kwargs merged over verl's arguments). The blocking
`assay_client.verl.compute_score` would be run in the loop's default thread pool instead, one
thread and one HTTP request per sample; this one is micro-batched by `AsyncAssay`: the samples
of a step reach Assay as a few `/reward/batch` requests.

Same item mapping, settings and result as `assay_client.verl` (imported from it, not restated):
the verifier from extra_info / the ground truth / the data-source table / reward_kwargs.verifier,
`{"score", "assay_scored", "assay_invalid", "assay_elapsed_ms"}` back, `null_reward` (default 0.0)
where Assay could not score the item. Settings: reward_kwargs `assay_url`, `api_key`, `verifier`,
`null_reward`, `assay_data_sources`; or ASSAY_URL / ASSAY_API_KEY.

    +reward.custom_reward_function.path=$(python -c 'import assay_client.verl_loop as m; print(m.__file__)')
    +reward.custom_reward_function.name=compute_score
"""
from __future__ import annotations

from typing import Any, Dict

# Absolute imports: verl loads this file by path, outside its package.
from assay_client._shared import async_client
from assay_client.verl import _as_score, _renamed, item_for


async def compute_score(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None,
                        **kwargs: Any) -> Dict[str, Any]:
    """verl's per-sample reward function, as a coroutine."""
    _renamed(kwargs)
    item = item_for(data_source, solution_str, ground_truth, extra_info, **kwargs)
    client = async_client(kwargs.get("assay_url"), kwargs.get("api_key"))
    # Through the micro-batcher, as one batch item: an item Assay calls invalid comes back with
    # status "invalid" (reward null, assay_invalid 1), not as an exception that would stop the step.
    result = await client.score(item, allow_invalid=True)
    return _as_score(result, kwargs.get("null_reward", 0.0))
