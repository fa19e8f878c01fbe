"""TRL's own reward path on a real GRPOTrainer (TRL 1.13, installed), against a live Assay.

Written from TRL's source (repository huggingface/trl, trl/trainer/grpo_trainer.py):
- GRPOTrainer._calculate_rewards(inputs, prompts, completions, completion_ids_list) builds
  `reward_kwargs = {key: [example[key] for example in inputs]}` from every dataset column but
  prompt/completion/completion_ids, adds trainer_state, log_extra and log_metric (a bound method
  of the trainer), calls each reward function, turns None into NaN and fills rewards_per_func.
- GRPOTrainer._generate_and_score_completions decodes conversational completions with
  trl.chat_template_utils.parse_response when the tokenizer has a response template, which moves
  `<think>` text into `reasoning_content` (or `thinking`), then computes
  `unscorable_mask = torch.isnan(rewards_per_func).all(dim=1)` and, for sum_then_normalize,
  `rewards = (rewards_per_func * weights).nansum(dim=1); rewards[unscorable_mask] = nan` before
  the nan-aware group mean/std: a row leaves the baseline only when EVERY function returned None.
This test calls the trainer's real _calculate_rewards and replays those few lines after it.
"""
from __future__ import annotations

import pytest

from assay_client.trl import AssayReward, message_text, none_is_masked
from conftest import need
from test_train_e2e import build_tiny_model


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    need("trl")
    path = tmp_path_factory.mktemp("tiny") / "model"
    build_tiny_model(path)
    return path


def grpo_trainer(model_dir, reward_funcs, tmp_path, monkeypatch):
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    torch.set_num_threads(2)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    args = GRPOConfig(output_dir=str(tmp_path / "out"), per_device_train_batch_size=4, num_generations=4,
                      max_completion_length=4, report_to=[], use_cpu=True, logging_steps=1)
    ds = Dataset.from_list([{"prompt": "Q:1+1=?A:", "reference": "2"}] * 4)
    return GRPOTrainer(model=model, reward_funcs=reward_funcs, args=args, train_dataset=ds, processing_class=tokenizer)


def rows_like_hf_datasets():
    """Dataset rows as HF datasets hands them over: an integer `reference` column, and an
    `options` struct column whose rows set different keys (unset keys come back None)."""
    np = need("numpy")
    from datasets import Dataset

    ds = Dataset.from_list([
        {"prompt": "What is 70+2?", "verifier": "exact", "reference": 72, "options": {"case_sensitive": True}},
        {"prompt": "What is 70+2?", "verifier": "exact", "reference": 72, "options": {"normalize_whitespace": False}},
        {"prompt": "What is 70+2?", "verifier": "format", "reference": 0, "options": None},
        {"prompt": "What is 70+2?", "verifier": "format", "reference": 0, "options": None},
    ])
    rows = [dict(r) for r in ds]
    assert rows[0]["options"] == {"case_sensitive": True, "normalize_whitespace": None}  # what HF does
    rows[1]["reference"] = np.int64(72)  # a numpy-backed column hands over numpy scalars
    return rows


def test_calculate_rewards_with_integer_references_null_options_and_reasoning_content(assay_url, tiny_model, tmp_path, monkeypatch):
    torch = need("torch")
    f = AssayReward(url=assay_url)
    trainer = grpo_trainer(tiny_model, [f], tmp_path, monkeypatch)
    inputs = rows_like_hf_datasets()
    prompts = [[{"role": "user", "content": r.pop("prompt")}] for r in inputs]
    # What parse_response makes of "<think>70+2</think><answer>72</answer>": the reasoning moved out.
    completions = [
        [{"role": "assistant", "content": "72"}],
        [{"role": "assistant", "content": "72", "reasoning_content": "70 plus 2"}],  # exact reads after </think>
        [{"role": "assistant", "content": "<answer>72</answer>", "reasoning_content": "70+2"}],
        [{"role": "assistant", "content": "<answer>72</answer>", "thinking": "70+2"}],  # LFM2.5 names it thinking
    ]
    rewards_per_func = trainer._calculate_rewards(inputs, prompts, completions, [[1, 2]] * 4)
    assert rewards_per_func.shape == (4, 1)
    assert rewards_per_func[:, 0].tolist() == [1.0, 1.0, 1.0, 1.0], rewards_per_func
    # Rows 0 and 1: integer references (int, np.int64) and null options were accepted, not invalid.
    assert f.nulls == 0 and f.items == 4
    # Without the reasoning put back, format scores 0: prove the test can fail.
    from assay_client import AssayClient
    bare = AssayClient(assay_url).score_batch([{"verifier": "format", "response": "<answer>72</answer>"}])
    assert bare[0]["reward"] == 0.0


def test_reasoning_moved_out_by_trl_is_put_back_before_the_content():
    msg = {"role": "assistant", "content": "<answer>4</answer>", "reasoning_content": "2+2"}
    assert message_text([msg]) == "<think>2+2</think><answer>4</answer>"
    assert message_text([{"role": "assistant", "content": "x", "thinking": "t"}]) == "<think>t</think>x"
    assert message_text([{"role": "assistant", "content": "x", "reasoning_content": ""}]) == "x"
    assert message_text([{"role": "assistant", "content": "x", "reasoning_content": None}]) == "x"


def unscorable_then_advantages(torch, rewards_per_func, weights, num_generations):
    """_generate_and_score_completions after _calculate_rewards (sum_then_normalize, scale 'group')."""
    from trl.trainer.utils import nanstd

    unscorable_mask = torch.isnan(rewards_per_func).all(dim=1)
    rewards = (rewards_per_func * weights.unsqueeze(0)).nansum(dim=1)
    rewards[unscorable_mask] = torch.nan
    mean = torch.nanmean(rewards.view(-1, num_generations), dim=1).repeat_interleave(num_generations)
    std = nanstd(rewards.view(-1, num_generations), dim=1).repeat_interleave(num_generations)
    return torch.nan_to_num((rewards - mean) / (std + 1e-4), nan=0.0), mean


def test_none_leaves_the_baseline_only_when_every_reward_function_returns_none(assay_url, tiny_model, tmp_path, monkeypatch, caplog):
    torch = need("torch")
    assay = AssayReward(verifier="exact", url=assay_url)

    def length_bonus(prompts, completions, **kw):
        return [0.0] * len(completions)

    prompts = ["Q:1+1=?A:"] * 4
    completions = ["2", "3", "2", "2"]
    inputs = [{"prompt": p, "reference": r} for p, r in zip(prompts, ["2", "2", {"bad": 1}, "2"])]  # row 2: invalid -> None

    alone = grpo_trainer(tiny_model, [assay], tmp_path / "a", monkeypatch)
    rpf = alone._calculate_rewards(inputs, prompts, completions, [[1]] * 4)
    assert torch.isnan(rpf[2, 0]) and rpf[:, 0].tolist()[:2] == [1.0, 0.0]
    adv, mean = unscorable_then_advantages(torch, rpf, alone.reward_weights, 4)
    assert adv[2] == 0.0 and mean[0].item() == pytest.approx(2 / 3)  # the baseline of the 3 scored rows
    assert none_is_masked(alone) is None

    with caplog.at_level("WARNING", logger="assay_client.trl"):
        both = grpo_trainer(tiny_model, [AssayReward(verifier="exact", url=assay_url), length_bonus], tmp_path / "b", monkeypatch)
        rpf = both._calculate_rewards(inputs, prompts, completions, [[1]] * 4)
    adv, mean = unscorable_then_advantages(torch, rpf, both.reward_weights, 4)
    assert mean[0].item() == pytest.approx(2 / 4)  # the None row counted as 0: it stayed in the baseline
    assert adv[2] < 0
    assert "2 reward functions" in none_is_masked(both)
    assert any("stays in its group's baseline" in r.getMessage() for r in caplog.records)
    assert "no unscorable-row mask" in none_is_masked(None, "1.5.2")

    # null_reward= picks the number sent instead of None.
    chosen = AssayReward(verifier="exact", url=assay_url, null_reward=0.5)
    assert chosen(prompts=prompts, completions=completions, reference=[i["reference"] for i in inputs]) == [1.0, 0.0, 0.5, 1.0]


def test_the_readme_trl_snippet_builds_the_reward_function(assay_url):
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    guide = text[text.index("### TRL"):text.index("### verl")]
    code = re.search(r"```python\n(.*?)```", guide, re.S).group(1)
    call = re.search(r"reward_funcs=\[(AssayReward\(.*?\))\]", code).group(1)
    f = eval(call.replace("http://127.0.0.1:8787", assay_url), {"AssayReward": AssayReward})
    assert f(prompts=["2+2?"], completions=["\\boxed{4}"], reference=["4"]) == [1.0]


def test_each_assay_reward_function_logs_its_own_null_fraction(assay_url, tiny_model, tmp_path, monkeypatch):
    """TRL averages each log_metric name over the step: with one shared name, a function that
    scored everything (0 %) and one that scored nothing (100 %) read as 50 %."""
    need("torch")
    scored = AssayReward(verifier="exact", url=assay_url, name="capital")
    unscored = AssayReward(verifier="exact", url=assay_url, name="broken", reference_column="bad_reference")
    trainer = grpo_trainer(tiny_model, [scored, unscored], tmp_path, monkeypatch)
    inputs = [{"prompt": "Q", "reference": "2", "bad_reference": {"bad": 1}} for _ in range(4)]
    trainer._calculate_rewards(inputs, ["Q"] * 4, ["2", "3", "2", "2"], [[1]] * 4)
    assert trainer._pending_metrics["assay/capital/null_fraction"] == [0.0]
    assert trainer._pending_metrics["assay/broken/null_fraction"] == [1.0]
    assert "assay/null_fraction" not in trainer._pending_metrics
    assert len(trainer._pending_metrics["assay/capital/reward_wait_s"]) == 1


def test_async_reward_function_runs_on_trls_async_path(assay_url, tiny_model, tmp_path, monkeypatch):
    """GRPOTrainer.__init__ sets `_has_async_funcs` from `inspect.iscoroutinefunction` and starts its
    event loop thread; `_calculate_rewards` awaits async functions there with asyncio.gather."""
    import inspect

    torch = need("torch")
    sync = AssayReward(verifier="exact", url=assay_url, name="sync_exact")
    asynchronous = AssayReward(verifier="exact", url=assay_url, name="async_exact").as_async()
    assert inspect.iscoroutinefunction(asynchronous) and asynchronous.__name__ == "async_exact"
    assert not inspect.iscoroutinefunction(sync)  # the plain form stays on TRL's sync path
    trainer = grpo_trainer(tiny_model, [sync, asynchronous], tmp_path, monkeypatch)
    assert trainer._has_async_funcs and trainer.reward_func_names == ["sync_exact", "async_exact"]
    inputs = [{"prompt": "Q", "reference": r} for r in ["2", "2", {"bad": 1}, "2"]]
    rpf = trainer._calculate_rewards(inputs, ["Q"] * 4, ["2", "3", "2", "2"], [[1]] * 4)
    assert rpf[:, 0].tolist()[:2] == [1.0, 0.0] and rpf[:, 1].tolist()[:2] == [1.0, 0.0]
    assert rpf[3].tolist() == [1.0, 1.0]
    assert torch.isnan(rpf[2]).all()  # None from the async function too
    assert asynchronous.assay.items == 4 and asynchronous.assay.nulls == 1
    assert trainer._pending_metrics["assay/async_exact/null_fraction"] == [0.25]


def test_a_dataset_column_overriding_a_constructor_argument_warns_once(assay_url, caplog):
    f = AssayReward(verifier="math", url=assay_url)
    with caplog.at_level("WARNING", logger="assay_client.trl"):
        out = f(prompts=["Capital?"] * 2, completions=["Paris", "Lyon"], reference=["paris", "paris"],
                verifier=["exact", "exact"], options=[None, None])
        f(prompts=["Capital?"], completions=["Paris"], reference=["paris"], verifier=["exact"])
    assert out == [1.0, 0.0]  # the column is what was used
    warnings = [r.getMessage() for r in caplog.records if "overrides" in r.getMessage()]
    assert len(warnings) == 1, warnings
    assert "'verifier'" in warnings[0] and "verifier='math'" in warnings[0] and "verifier_column=None" in warnings[0]
    # An options column over options= warns the same way; a None row in it is no override.
    caplog.clear()
    opts = AssayReward(verifier="exact", url=assay_url, options={"case_sensitive": False})
    with caplog.at_level("WARNING", logger="assay_client.trl"):
        assert opts(prompts=["Q"] * 2, completions=["PARIS", "PARIS"], reference=["paris"] * 2,
                    options=[None, {"case_sensitive": True}]) == [1.0, 0.0]
    assert ["'options'" in r.getMessage() for r in caplog.records if "overrides" in r.getMessage()] == [True]
    # A column equal to the argument is no override.
    caplog.clear()
    same = AssayReward(verifier="exact", url=assay_url)
    with caplog.at_level("WARNING", logger="assay_client.trl"):
        same(prompts=["Capital?"], completions=["Paris"], reference=["paris"], verifier=["exact"])
    assert not [r for r in caplog.records if "overrides" in r.getMessage()]
    # verifier_column=None uses the argument and ignores the column.
    ignore = AssayReward(verifier="exact", url=assay_url, verifier_column=None)
    assert ignore(prompts=["Q"], completions=["Paris"], reference=["paris"], verifier=["no-such-verifier"]) == [1.0]


# ---- completions with tool calls -----------------------------------------------------------------
# What GRPOTrainer._tool_call_loop (TRL 1.13) makes of a rollout with `tools=`: the assistant turn
# parse_response read the calls out of (`tool_calls`, arguments a dict, its text gone from
# `content`), one {"role": "tool", "name", "content": str(result)} per call (a failed call's
# result is {"error": str(e)}), then the turn generated after the results.
def tool_rollout(calls, results, final, reasoning=None):
    first = {"role": "assistant", "content": "",
             "tool_calls": [{"type": "function", "function": {"name": n, "arguments": a}} for n, a in calls]}
    if reasoning:
        first["reasoning_content"] = reasoning
    tools = [{"role": "tool", "name": n, "content": str(r)} for (n, _), r in zip(calls, results)]
    return [first, *tools, {"role": "assistant", "content": final}]


def test_tool_call_verifier_reads_the_calls_trl_parsed_out_of_the_completion(assay_url):
    f = AssayReward("tool_call", url=assay_url, options={"normalize": True})
    ref = [{"name": "multiply", "arguments": {"a": 3, "b": 4}}]
    completions = [
        tool_rollout([("multiply", {"a": 3, "b": 4})], [12], "3 x 4 = 12"),
        tool_rollout([("multiply", {"a": 3, "b": 5})], [15], "15"),
        # the model answered without a call
        [{"role": "assistant", "content": "12"}],
        # a turn with reasoning (Qwen3) after the calls: the calls were still made
        tool_rollout([("multiply", {"a": 3, "b": 4})], [12], "12", reasoning="need a product")[:2]
        + [{"role": "assistant", "content": "12", "reasoning_content": "done"}],
    ]
    rewards = f(prompts=["3*4?"] * 4, completions=completions, reference=[ref] * 4)
    assert rewards[0] == 1.0 and rewards[3] == 1.0, rewards
    assert 0.0 < rewards[1] < 1.0 and rewards[2] < rewards[1], rewards


def test_tool_call_verifier_reads_trls_rollout_in_toolrls_layout(assay_url):
    """A ToolRL ground-truth string wants `<think>...</think>\\n<tool_call>\\n...\\n</tool_call>`:
    the text the model wrote before TRL's parser took it apart."""
    f = AssayReward("tool_call", url=assay_url)
    ref = '<think>x</think>\n<tool_call>\n{"name": "get_weather", "parameters": {"city": "Paris"}}\n</tool_call>'
    rollout = tool_rollout([("get_weather", {"city": "Paris"})], ["sunny"], "It is sunny.", reasoning="Weather needed.")
    assert f(prompts=["?"], completions=[rollout], reference=[ref]) == [4.0]


def test_trajectory_verifier_sees_trls_failed_tool_call(assay_url):
    f = AssayReward("trajectory", url=assay_url)
    ref = {"verifier": "math", "reference": "12"}
    failed = tool_rollout([("multiply", {"a": 3, "c": 4})], [{"error": "multiply() got an unexpected keyword argument 'c'"}],
                          "\\boxed{12}")
    clean = tool_rollout([("multiply", {"a": 3, "b": 4})], [12], "\\boxed{12}")
    wrong = tool_rollout([("multiply", {"a": 3, "b": 4})], [12], "\\boxed{13}")
    rewards = f(prompts=["3*4?"] * 3, completions=[failed, clean, wrong], reference=[ref] * 3)
    assert rewards == [0.5, 1.0, 0.0], rewards


def test_message_text_renders_tool_calls_as_hermes_blocks():
    msg = {"role": "assistant", "content": "Let me check.",
           "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"x": 1}}},
                          {"id": "c2", "type": "function", "function": {"name": "g", "arguments": '{"y": [2]}'}}]}
    assert message_text([msg]) == ('Let me check.\n<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>'
                                   '\n<tool_call>\n{"name": "g", "arguments": {"y": [2]}}\n</tool_call>')
    # a call without a function name (nothing to render) leaves the text as it was
    assert message_text([{"role": "assistant", "content": "a", "tool_calls": [{"id": "1"}]}]) == "a"
