"""What the asynchronous trainers' adapters (areal, verl_loop, verifiers_env, skyrl) share: one
client per (URL, key) per process, and the Assay item for one sample read from a dataset row."""
from __future__ import annotations

import functools
import re
from typing import Any, Dict, Mapping, Optional

from .aio import AsyncAssay
from .client import AssayClient

#: Row fields read as the reference, first present wins: Assay's own name, then the names the
#: trainers' datasets use (AReaL's and verifiers' `answer`, SkyRL's and verl's `ground_truth`).
REFERENCE_FIELDS = ("reference", "answer", "ground_truth", "solution")


#: One end-of-sequence or padding token as chat templates spell them: <|im_end|>, <|endoftext|>,
#: <|eot_id|>, </s>, <eos>, <pad>, <end_of_turn>, <｜end▁of▁sentence｜>; the server's END_TOKEN
#: (src/server/routes/openrlhf.ts), matched against a bounded tail only.
_END_TOKEN = re.compile(r"(?:<\|[A-Za-z0-9_.:-]{1,40}\|>|<｜[^｜<>]{1,40}｜>|</s>|<eos>|<pad>|<end_of_turn>)\Z")


def strip_end_tokens(text: str) -> str:
    """`text` less the trailing run of end-of-sequence / padding tokens (and the whitespace between
    them) that a completion decoded without skip_special_tokens ends with: "4<|im_end|>" -> "4".
    The server's stripEndTokens (OpenRLHF route), rule for rule. Linear: each step looks at a
    bounded tail (48 characters) and moves the end back by a whole token."""
    end = len(text)
    stripped = False
    while True:
        e = end
        while e > 0 and text[e - 1].isspace():
            e -= 1
        m = _END_TOKEN.search(text, max(0, e - 48), e)
        if not m:
            break
        end = m.start()
        stripped = True
    return text[:end] if stripped else text


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
