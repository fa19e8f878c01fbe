"""verl adapter: `compute_score` for `custom_reward_function` (version-keyed flags in
clients/python/README.md, "verl"). verl <= 0.8 reads the top-level `custom_reward_function.*`,
verl >= 0.9 only `reward.custom_reward_function.*`; `reward_kwargs` entries are new keys, so each
override needs a leading `+` (`+custom_reward_function.reward_kwargs.assay_url=...`).
`compute_score` serves NaiveRewardManager and the reward loop's managers (one item per call);
`compute_score_batch` serves BatchRewardManager (`reward_model.reward_manager=batch`), which
exists up to verl 0.6 (0.7.0 with `reward_model.use_reward_loop=False`).

verl calls `compute_score(data_source, solution_str, ground_truth, extra_info, **reward_kwargs)`
and reads `result["score"]` (every other key goes to `reward_extra_info` and its logs, so every
key here is a number, present for every item). The verifier comes from, in order:
`extra_info["verifier"]`, a ground truth that is itself `{"verifier": ..., "reference": ...}`
(a dict or its JSON), the `DATA_SOURCE_VERIFIERS` table (exact name, then the longest prefix),
then `reward_kwargs["verifier"]`. Extend the table with `register_data_source`, or with
`reward_kwargs["assay_data_sources"]` (not `data_sources`: verl's `_call_with_kwargs` merges
reward_kwargs OVER its own call arguments, `{**kwargs, **extra_kwargs}`, and BatchRewardManager
passes the batch's own `data_sources=` list, which a table of that name would replace). verl
needs a number, so an item Assay could not score gets `null_reward` (default 0.0) and
`assay_scored: 0` so the logs show it.

Nested `reward_kwargs` (`+custom_reward_function.reward_kwargs.options.precision=2`) arrive as
OmegaConf DictConfig/ListConfig (verl copies only the top level into a dict); they, numpy arrays
and numpy scalars are turned into plain JSON (`plain`) before they are sent.

Settings come from `reward_kwargs` (`assay_url`, `api_key`, `verifier`, `null_reward`,
`assay_data_sources`) or the environment (`ASSAY_URL`, `ASSAY_API_KEY`).
"""
from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

# Absolute, not relative: verl loads this file by path as `custom_module`, outside its package.
from assay_client.client import AssayClient

#: data_source -> Assay verifier. Names from verl's own data preprocessing scripts.
DATA_SOURCE_VERIFIERS: Dict[str, str] = {
    "openai/gsm8k": "math",
    "gsm8k": "math",
    "lighteval/MATH": "math",
    "DigitalLearningGmbH/MATH-lighteval": "math",
    "HuggingFaceH4/MATH-500": "math",
    "math_dapo": "math",
    "math": "math",
    "numina_": "math",
    "aime": "math",
    "Idavidrein/gpqa": "choice",
    "cais/mmlu": "choice",
    "codecontests": "code",
    "apps": "code",
    "codeforces": "code",
    "taco": "code",
    "livecodebench": "code",
}

_clients: Dict[Tuple[Optional[str], Optional[str]], AssayClient] = {}
_lock = threading.Lock()


def register_data_source(data_source: str, verifier: str) -> None:
    """Routes `data_source` (an exact name, or a prefix) to `verifier`."""
    DATA_SOURCE_VERIFIERS[data_source] = verifier


def _client(url: Optional[str], api_key: Optional[str]) -> AssayClient:
    key = (url, api_key)
    with _lock:
        if key not in _clients:
            _clients[key] = AssayClient(url, api_key)
        return _clients[key]


def plain(x: Any) -> Any:
    """`x` as plain JSON values, recursively: any Mapping (OmegaConf's DictConfig, which verl's
    `reward_kwargs` hold below their top level: verl copies only the top with `dict(...)`) becomes
    a dict with string keys, any other sequence (ListConfig, tuples) a list, numpy arrays and
    scalars their Python values (`tolist()`). Anything else is returned as is."""
    if x is None or isinstance(x, (str, bool, int, float)):
        return x
    if isinstance(x, Mapping):
        return {k if isinstance(k, str) else str(k): plain(v) for k, v in x.items()}
    if callable(getattr(x, "tolist", None)):  # numpy arrays and scalars
        return plain(x.tolist())
    if isinstance(x, (Sequence, set, frozenset)) and not isinstance(x, (bytes, bytearray)):
        return [plain(v) for v in x]
    return x


def _spec(ground_truth: Any) -> Optional[Mapping[str, Any]]:
    if isinstance(ground_truth, Mapping) and isinstance(ground_truth.get("verifier"), str):
        return ground_truth
    if isinstance(ground_truth, str) and ground_truth.lstrip().startswith("{"):
        try:
            parsed = json.loads(ground_truth)
        except ValueError:
            return None
        if isinstance(parsed, dict) and isinstance(parsed.get("verifier"), str):
            return parsed
    return None


def verifier_for(data_source: Any, table: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """The verifier the table names for `data_source`: an exact entry, else the longest prefix."""
    merged = dict(DATA_SOURCE_VERIFIERS)
    if table:
        merged.update(table)
    name = str(data_source) if data_source is not None else ""
    if name in merged:
        return merged[name]
    prefixes = [k for k in merged if name.startswith(k)]
    return merged[max(prefixes, key=len)] if prefixes else None


def item_for(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None,
             **kwargs: Any) -> Dict[str, Any]:
    """The Assay item for one verl sample."""
    extra = plain(extra_info) if isinstance(extra_info, Mapping) else {}
    spec = _spec(plain(ground_truth) if isinstance(ground_truth, Mapping) else ground_truth)
    verifier = (
        extra.get("verifier")
        or (spec or {}).get("verifier")
        or verifier_for(data_source, plain(kwargs.get("assay_data_sources")))
        or kwargs.get("verifier")
    )
    if not verifier:
        raise ValueError(
            f"no Assay verifier for data_source {data_source!r}: call "
            f"assay_client.verl.register_data_source({str(data_source)!r}, 'math'), pass "
            "reward_kwargs.verifier, or put {'verifier': ...} in extra_info"
        )
    item: Dict[str, Any] = {"verifier": verifier, "response": solution_str if isinstance(solution_str, str) else str(solution_str)}
    reference = spec.get("reference") if spec else ground_truth
    if reference is not None:
        # verl stores ground truths in numpy-backed columns; lists arrive as numpy arrays.
        item["reference"] = plain(reference)
    options = (spec or {}).get("options") or extra.get("options") or kwargs.get("options")
    if options:
        # From the command line (`+...reward_kwargs.options.precision=2`) options are a DictConfig.
        item["options"] = plain(options)
    if isinstance(extra.get("question"), str):
        item["prompt"] = extra["question"]
    return item


log = logging.getLogger("assay_client.verl")

#: Unscored items since the last warning, and when it was (time.monotonic()).
_unscored = {"n": 0, "last": float("-inf")}
_unscored_lock = threading.Lock()
#: At most one warning this often, seconds, with the count since the last.
UNSCORED_NOTICE_S = 30.0


def _note_unscored(result: Mapping[str, Any], null_reward: float) -> None:
    """verl needs a number, so an item Assay could not score trains on `null_reward`; its only other
    trace is `assay_scored`, which verl's training metrics never read (only validation's). Say so in
    the log, rate-limited, with the count."""
    with _unscored_lock:
        _unscored["n"] += 1
        now = time.monotonic()
        if now - _unscored["last"] < UNSCORED_NOTICE_S:
            return
        n, _unscored["n"], _unscored["last"] = _unscored["n"], 0, now
    log.warning("Assay could not score %d item(s) since the last notice (the latest %s: %s); verl trains on "
                "null_reward=%s for them", n, result.get("status"), str(result.get("reason"))[:200], null_reward)


def _as_score(result: Mapping[str, Any], null_reward: float) -> Dict[str, Any]:
    reward = result.get("reward")
    scored = reward is not None
    if not scored:
        _note_unscored(result, null_reward)
    return {
        "score": float(reward) if scored else float(null_reward),
        "assay_scored": 1 if scored else 0,
        "assay_invalid": 1 if result.get("status") == "invalid" else 0,
        "assay_elapsed_ms": float(result.get("elapsed_ms") or 0.0),
    }


def compute_score(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None,
                  **kwargs: Any) -> Dict[str, Any]:
    """verl's per-item reward function. Returns {"score", "assay_scored", "assay_invalid", "assay_elapsed_ms"}."""
    _renamed(kwargs)
    client = _client(kwargs.get("assay_url"), kwargs.get("api_key"))
    item = item_for(data_source, solution_str, ground_truth, extra_info, **kwargs)
    # /reward/batch answers a malformed item with status "invalid" instead of a 400, like the batch path.
    result = client.score_batch([item])[0]
    return _as_score(result, kwargs.get("null_reward", 0.0))


def _renamed(kwargs: Mapping[str, Any]) -> None:
    if isinstance(kwargs.get("data_sources"), Mapping):
        raise ValueError(
            "reward_kwargs.data_sources is now reward_kwargs.assay_data_sources: verl merges reward_kwargs "
            "over its own arguments, so a table named data_sources replaces the batch's data_sources list"
        )


def compute_score_batch(data_sources: Sequence[Any], solution_strs: Sequence[str], ground_truths: Sequence[Any],
                        extra_infos: Optional[Sequence[Any]] = None, **kwargs: Any) -> List[Dict[str, Any]]:
    """verl's batched form (`reward_model.reward_manager=batch`): one result per item, in order."""
    _renamed({"data_sources": data_sources})
    client = _client(kwargs.get("assay_url"), kwargs.get("api_key"))
    n = len(solution_strs)
    infos = list(extra_infos) if extra_infos is not None else [None] * n
    items = [item_for(data_sources[i], solution_strs[i], ground_truths[i], infos[i], **kwargs) for i in range(n)]
    null_reward = kwargs.get("null_reward", 0.0)
    return [_as_score(r, null_reward) for r in client.score_batch(items)]


if __name__ != "assay_client.verl":
    # Loaded by path (verl's get_custom_reward_fn): use the package's functions, so that
    # register_data_source() on assay_client.verl and its client cache apply here too.
    import assay_client.verl as _package

    DATA_SOURCE_VERIFIERS = _package.DATA_SOURCE_VERIFIERS
    register_data_source = _package.register_data_source
    verifier_for = _package.verifier_for
    item_for = _package.item_for
    plain = _package.plain
    compute_score = _package.compute_score
    compute_score_batch = _package.compute_score_batch
