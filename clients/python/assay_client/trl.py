"""TRL adapter: a reward function for `GRPOTrainer(reward_funcs=[...])`.

    from assay_client.trl import AssayReward
    trainer = GRPOTrainer(model=..., train_dataset=ds, reward_funcs=[AssayReward(verifier="math")])

TRL calls it as `f(prompts=..., completions=..., completion_ids=..., trainer_state=...,
log_extra=..., log_metric=..., **dataset_columns)`, every column repeated once per generation.
The reference comes from the dataset column `reference` (`reference_column`), the verifier from
the column `verifier` when the dataset has one, else from `verifier=`. Completions may be plain
strings or chat messages (`[{"role": "assistant", "content": ...}]`). With tools or a response
parser (transformers >= 5 with a `response_template`/`response_schema`), TRL's `parse_response`
moves the `<think>` block out of `content` into `reasoning_content` (Qwen3, DeepSeek-R1 ...) or
`thinking` (LFM2.5); the completion is sent as `<think>{reasoning}</think>{content}`, the text the
model wrote, so `format` and answer extraction see what they would on a plain-text completion.
Tool calls the parser moved into `tool_calls` are written back as Hermes `<tool_call>` blocks.
With `tools=`, a completion holds the whole rollout (assistant turns, `tool` results): the
`trajectory` verifier gets those messages as JSON (it counts the failed tool calls), `tool_call`
the assistant turns that made calls, any other verifier the last assistant turn
(`completion_text`).

For TRL's async reward path (`inspect.iscoroutinefunction(reward_func)`: TRL runs those on its
own event loop, all at once, with `asyncio.gather`), `AssayReward(...).as_async()` is an
`async def` function doing the same over `AsyncAssayClient`, so several Assay reward functions
(and other async ones) wait for their batches together instead of one after the other.

Metrics go through TRL's `log_metric` under the function's own name, `assay/<name>/null_fraction`
and `assay/<name>/reward_wait_s` (TRL averages each metric name over the step, so one shared
name would average the functions together). A dataset column that overrides a constructor
argument (`verifier` over `verifier=`, `options` over `options=`) is used, with a warning once;
pass `verifier_column=None` / `options_column=None` to ignore the column.

It returns one `float | None` per completion: None where Assay could not score the item. What
TRL does with None (GRPOTrainer._generate_and_score_completions, TRL 1.13): each None becomes
NaN; a row is left out of the group baseline with advantage 0 only when EVERY reward function
returned None for it (`unscorable_mask`, TRL >= 1.6). With other reward functions beside this
one, or an older TRL, the row stays in the baseline and this function adds 0 for it (nansum): a
machinery failure then scores like a wrong answer. The adapter warns once when that applies;
`null_reward=` sends a number of your choice instead of None.
"""
from __future__ import annotations

import json
import logging
import time
from typing import Any, Dict, List, Optional, Sequence

from .client import AssayClient, AsyncAssayClient

#: TRL's own keyword arguments, never dataset columns.
_TRL_KWARGS = frozenset({"trainer_state", "log_extra", "log_metric", "environments", "completion_ids"})


log = logging.getLogger(__name__)

#: The first TRL whose GRPOTrainer leaves a row out of the group baseline when every reward
#: function returned None for it (`unscorable_mask`).
TRL_MASKS_NONE = (1, 6)


def _call_block(call: Any) -> Optional[str]:
    """One tool call as a Hermes / Qwen chat template writes it (and TRL's parse_response reads it
    back): `<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>`; None for a call without
    a function name. Arguments given as a JSON string (OpenAI's form) are written as the object."""
    if not isinstance(call, dict):
        return None
    fn = call.get("function") if isinstance(call.get("function"), dict) else call
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        return None
    args = fn.get("arguments", fn.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            pass  # not JSON: sent as the string the model wrote
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}, ensure_ascii=False, default=str) + "\n</tool_call>"


def _calls(message: Any) -> List[str]:
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    blocks = [_call_block(c) for c in calls] if isinstance(calls, (list, tuple)) else []
    return [b for b in blocks if b]


def message_text(x: Any, think_tag: str = "think") -> str:
    """The text of a completion or prompt: a string as is; for chat messages the content of the
    last message (for a completion, the assistant's turn); content parts joined when a message
    carries a list of `{"type": "text", "text": ...}` parts. Reasoning that TRL's response parser
    moved out of the content (`reasoning_content`, or `thinking`) is put back in front of it as
    `<think>{reasoning}</think>`, and the tool calls it moved out (`tool_calls`) after it, one
    `<tool_call>` block each, as the model wrote them."""
    if x is None:
        return ""
    if isinstance(x, str):
        return x
    if isinstance(x, dict):
        content = x.get("content", "")
        if isinstance(content, list):
            text = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
        else:
            text = "" if content is None else str(content)
        reasoning = x.get("reasoning_content") or x.get("thinking")
        if isinstance(reasoning, str) and reasoning:
            text = f"<{think_tag}>{reasoning}</{think_tag}>{text}"
        calls = _calls(x)
        return "\n".join(([text] if text else []) + calls) if calls else text
    if isinstance(x, (list, tuple)):
        if not x:
            return ""
        assistant = [m for m in x if isinstance(m, dict) and m.get("role") == "assistant"]
        return message_text(assistant[-1] if assistant else x[-1], think_tag)
    return str(x)


#: Verifiers that score a whole tool-using rollout, sent as its chat messages in JSON (the
#: `messages` form of verifiers/trajectory: tool results and their failures are in the roles).
TRANSCRIPT_VERIFIERS = frozenset({"trajectory"})

#: Verifiers that score the tool calls a completion made (verifiers/tool_call reads Hermes
#: `<tool_call>` blocks), sent the assistant turns up to the last one that made calls.
CALL_VERIFIERS = frozenset({"tool_call"})


def completion_text(x: Any, verifier: Optional[str] = None, think_tag: str = "think") -> str:
    """The response sent for a completion scored by `verifier`. Text, and chat completions without
    tool calls: `message_text` (the last assistant turn). A chat completion with tool turns (TRL's
    tool loop, a verifiers ToolEnv rollout) scored by a TRANSCRIPT_VERIFIERS verifier: its messages
    as JSON. By a CALL_VERIFIERS verifier: its assistant turns, up to the last that made calls,
    joined by newlines, each with its calls as `<tool_call>` blocks; only the first keeps its
    reasoning, since tool_call reads the calls after the last `</think>` (one calling turn is
    ToolRL's layout, `<think>...</think>\n<tool_call>...`). Any other verifier: the last turn's text."""
    if isinstance(x, (list, tuple)) and any(isinstance(m, dict) for m in x):
        if verifier in TRANSCRIPT_VERIFIERS:
            return json.dumps(list(x), ensure_ascii=False, default=str)
        if verifier in CALL_VERIFIERS:
            turns = [m for m in x if isinstance(m, dict) and m.get("role") == "assistant"]
            calling = [k for k, m in enumerate(turns) if _calls(m)]
            if calling:
                turns = [m if k == 0 else {**m, "reasoning_content": None, "thinking": None}
                         for k, m in enumerate(turns[:calling[-1] + 1])]
                return "\n".join(t for t in (message_text(m, think_tag) for m in turns) if t)
    return message_text(x, think_tag)


def prompt_text(x: Any) -> str:
    """The question a prompt asks: for chat prompts, the last user message."""
    if isinstance(x, (list, tuple)):
        users = [m for m in x if isinstance(m, dict) and m.get("role") == "user"]
        return message_text(users[-1] if users else (x[-1] if x else ""))
    return message_text(x)


class AssayReward:
    """A TRL reward function backed by Assay. Picklable; one HTTP batch per call."""

    def __init__(
        self,
        verifier: Optional[str] = None,
        *,
        url: Optional[str] = None,
        api_key: Optional[str] = None,
        client: Optional[AssayClient] = None,
        reference_column: str = "reference",
        verifier_column: Optional[str] = "verifier",
        options_column: Optional[str] = "options",
        options: Optional[Dict[str, Any]] = None,
        send_prompt: bool = True,
        name: Optional[str] = None,
        null_reward: Optional[float] = None,
    ):
        self.client = client or AssayClient(url, api_key)
        self.verifier = verifier
        self.reference_column = reference_column
        self.verifier_column = verifier_column
        self.options_column = options_column
        self.options = options
        self.send_prompt = send_prompt
        self.null_reward = null_reward
        self._checked_trainer = False
        self._warned_overrides: set = set()
        self._async_client: Optional[AsyncAssayClient] = None
        # TRL logs each reward function under its __name__ (rewards/<name>/mean).
        self.__name__ = name or (f"assay_{verifier}" if verifier else "assay")
        # Running totals the trainer reads for throughput figures.
        self.calls = 0
        self.items = 0
        self.nulls = 0
        self.wait_s = 0.0
        self.last_rewards: List[Optional[float]] = []

    def _column(self, name: Optional[str], columns: Dict[str, Any]) -> Any:
        return columns.get(name) if name is not None else None

    def _warn_override(self, column: str, argument: str, given: Any, values: Sequence[Any]) -> None:
        """Says once per column that the dataset's column wins over the constructor's argument."""
        if given is None or column in self._warned_overrides:
            return
        differing = [v for v in values if v is not None and _differs(v, given)]
        if not differing:
            return
        self._warned_overrides.add(column)
        log.warning("assay: the dataset column %r overrides AssayReward(%s=%r) for %s (%d of %d completions, "
                    "e.g. %r); drop or rename the column, or pass AssayReward(%s_column=None) to use the argument",
                    column, argument, given, self.__name__, len(differing), len(values), differing[0], argument)

    def items_for(self, prompts: Sequence[Any], completions: Sequence[Any], **columns: Any) -> List[Dict[str, Any]]:
        n = len(completions)
        verifiers = self._column(self.verifier_column, columns)
        references = columns.get(self.reference_column)
        options = self._column(self.options_column, columns)
        if verifiers is not None:
            self._warn_override(self.verifier_column, "verifier", self.verifier, list(verifiers)[:n])
        if options is not None:
            self._warn_override(self.options_column, "options", self.options, list(options)[:n])
        items = []
        for i in range(n):
            verifier = (verifiers[i] if verifiers is not None else None) or self.verifier
            if not verifier:
                raise ValueError(
                    f"no verifier for completion {i}: give AssayReward(verifier=...) or add a "
                    f"'{self.verifier_column}' column to the dataset"
                )
            item: Dict[str, Any] = {"id": i, "verifier": verifier,
                                    "response": completion_text(completions[i], verifier)}
            if references is not None and references[i] is not None:
                item["reference"] = references[i]
            opt = options[i] if options is not None and options[i] is not None else self.options
            if opt:
                item["options"] = opt
            if self.send_prompt and prompts is not None and i < len(prompts):
                item["prompt"] = prompt_text(prompts[i])
            items.append(item)
        return items

    def _items(self, prompts: Sequence[Any], completions: Sequence[Any], kwargs: Dict[str, Any]) -> List[Dict[str, Any]]:
        columns = {k: v for k, v in kwargs.items() if k not in _TRL_KWARGS}
        return self.items_for(prompts, completions, **columns)

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> List[Optional[float]]:
        items = self._items(prompts, completions, kwargs)
        t0 = time.perf_counter()
        rewards = self.client.reward_batch(items)
        return self._finish(items, rewards, time.perf_counter() - t0, kwargs)

    async def acall(self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> List[Optional[float]]:
        """The same as calling it, awaiting Assay on the running event loop (AsyncAssayClient)."""
        items = self._items(prompts, completions, kwargs)
        if self._async_client is None:
            c = self.client
            self._async_client = AsyncAssayClient(c.url, c.api_key, timeout=c.timeout, retry=c.retry,
                                                  chunk_size=c.chunk_size, concurrency=c.concurrency,
                                                  deadline=c.deadline)
        t0 = time.perf_counter()
        rewards = await self._async_client.reward_batch(items)
        return self._finish(items, rewards, time.perf_counter() - t0, kwargs)

    def as_async(self):
        """An `async def` reward function for TRL's async reward path, named like this one (TRL tells
        async functions from sync ones with `inspect.iscoroutinefunction`, which a callable object
        with an async `__call__` does not pass before Python 3.12)."""
        async def reward(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> List[Optional[float]]:
            return await self.acall(prompts, completions, **kwargs)

        reward.__name__ = reward.__qualname__ = self.__name__
        reward.assay = self  # type: ignore[attr-defined]  # its counters (calls, items, nulls, wait_s)
        return reward

    def metric(self, what: str) -> str:
        """The name this function logs `what` under: `assay/<name>/<what>`."""
        return f"assay/{self.__name__}/{what}"

    def _finish(self, items: List[Dict[str, Any]], rewards: List[Optional[float]], waited: float,
                kwargs: Dict[str, Any]) -> List[Optional[float]]:
        nulls = sum(1 for r in rewards if r is None)
        self.calls += 1
        self.items += len(items)
        self.nulls += nulls
        self.wait_s += waited
        self.last_rewards = list(rewards)
        log_metric = kwargs.get("log_metric")
        if not self._checked_trainer:
            self._checked_trainer = True
            self._warn_if_none_is_not_masked(log_metric)
        if callable(log_metric) and items:
            log_metric(self.metric("null_fraction"), nulls / len(items))
            log_metric(self.metric("reward_wait_s"), waited)
        if self.null_reward is not None:
            return [self.null_reward if r is None else r for r in rewards]
        return rewards

    def _warn_if_none_is_not_masked(self, log_metric: Any) -> None:
        """Says once when TRL will not leave an unscored row out of the group baseline: an older
        TRL, or other reward functions beside this one (TRL's `log_metric` is a method of the
        trainer, which lists them)."""
        if self.null_reward is not None:
            return
        why = none_is_masked(getattr(log_metric, "__self__", None))
        if why:
            log.warning("assay: %s, so a completion Assay could not score adds 0 for %s and stays in its "
                        "group's baseline, like a wrong answer; pass AssayReward(null_reward=...) to choose "
                        "the number, and watch %s", why, self.__name__, self.metric("null_fraction"))


def _differs(value: Any, given: Any) -> bool:
    try:
        return bool(value != given)
    except (TypeError, ValueError):  # numpy arrays compare element-wise
        return True


def _version(v: str) -> tuple:
    out = []
    for part in v.split(".")[:3]:
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits) if digits else 0)
    return tuple(out)


def none_is_masked(trainer: Any = None, trl_version: Optional[str] = None) -> Optional[str]:
    """None when TRL leaves a row for which this function returned None out of the group baseline;
    otherwise why not (the TRL version, or the other reward functions)."""
    if trl_version is None:
        try:
            import trl

            trl_version = trl.__version__
        except ImportError:
            return None
    if _version(trl_version) < TRL_MASKS_NONE:
        return f"TRL {trl_version} has no unscorable-row mask (added in {'.'.join(map(str, TRL_MASKS_NONE))})"
    funcs = getattr(trainer, "reward_funcs", None)
    if isinstance(funcs, (list, tuple)) and len(funcs) > 1:
        return f"the trainer has {len(funcs)} reward functions and TRL masks a row only when all of them return None"
    return None
