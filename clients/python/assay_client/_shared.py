"""What the asynchronous trainers' adapters (areal, verl_loop, verifiers_env, skyrl) share: one
client per (URL, key) per process, and the Assay item for one sample read from a dataset row."""
from __future__ import annotations

import functools
from typing import Any, Dict, Mapping, Optional

from .aio import AsyncAssay
from .client import AssayClient

#: Row fields read as the reference, first present wins: Assay's own name, then the names the
#: trainers' datasets use (AReaL's and verifiers' `answer`, SkyRL's and verl's `ground_truth`).
REFERENCE_FIELDS = ("reference", "answer", "ground_truth", "solution")


@functools.lru_cache(maxsize=None)
def sync_client(url: Optional[str] = None, api_key: Optional[str] = None) -> AssayClient:
    """One blocking client per (URL, key) in this process (URL / key None: ASSAY_URL / ASSAY_API_KEY)."""
    return AssayClient(url, api_key)


@functools.lru_cache(maxsize=None)
def async_client(url: Optional[str] = None, api_key: Optional[str] = None) -> AsyncAssay:
    """One micro-batching client per (URL, key) in this process, so concurrent per-sample awaits
    from anywhere in the trainer share its batches and its connection pool."""
    return AsyncAssay(url, api_key)


def item_for_row(response: str, row: Mapping[str, Any], *, verifier: Optional[str] = None,
                 prompt: Any = None, options: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The Assay item for one sample: the row's `verifier` field, else `verifier`; the reference from
    the first of REFERENCE_FIELDS the row has; the row's `options`, else `options`."""
    name = row.get("verifier") or verifier
    if not isinstance(name, str) or not name:
        raise ValueError("no Assay verifier for this sample: pass verifier='math' (or another name from "
                         "GET /verifiers) to the adapter, or put a 'verifier' field in the dataset row")
    item: Dict[str, Any] = {"verifier": name, "response": response if isinstance(response, str) else str(response)}
    for key in REFERENCE_FIELDS:
        if row.get(key) is not None:
            ref = row[key]
            item["reference"] = ref.tolist() if hasattr(ref, "tolist") else ref
            break
    opts = row.get("options") or options
    if opts:
        item["options"] = dict(opts)
    if isinstance(prompt, str) and prompt:
        item["prompt"] = prompt
    return item
