"""End to end: a few GRPO steps of `assay-train` on the CPU with a tiny random Llama and a
character-level tokenizer built here (nothing downloaded), on arithmetic scored by Assay's math
verifier, checking that the rewards the trainer logged are the ones Assay returned.

ASSAY_E2E_VERIFIER picks another verifier (e.g. `exact`) where `math` is not built in."""
from __future__ import annotations

import json
import math
import os
import random

import pytest

from assay_client import AssayClient
from conftest import need

VERIFIER = os.environ.get("ASSAY_E2E_VERIFIER", "math")
STEPS = 4
BATCH = 8          # completions per step
GENERATIONS = 4    # per prompt: 2 prompts per step


class RecordingClient(AssayClient):
    """Keeps every batch of results Assay returned, in call order."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.calls = []

    def score_batch(self, items, **kw):  # kw: deadline=, which reward_batch passes on
        results = super().score_batch(items, **kw)
        self.calls.append([r.get("reward") for r in results])
        return results


def build_tiny_model(path):
    """A 2-layer Llama with hidden size 32 and a character-level tokenizer over digits and signs,
    built from scratch: nothing is downloaded."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    chars = list("0123456789+-*= ") + ["Q", "A", ":", "?"]
    specials = ["<pad>", "<s>", "</s>", "<unk>"]
    vocab = {t: i for i, t in enumerate(specials + chars)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tok.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                        pad_token="<pad>", unk_token="<unk>")
    tokenizer.save_pretrained(path)
    config = LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                         bos_token_id=vocab["<s>"], eos_token_id=vocab["</s>"], pad_token_id=vocab["<pad>"],
                         tie_word_embeddings=True)
    import torch

    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    # Under a second of supervised warm-up on the 25 sums, so the policy is right about half the
    # time: the rewards Assay returns then vary, and GRPO has a signal to act on.
    seqs = torch.tensor([tokenizer(f"Q:{a}+{b}=?A:{a + b}")["input_ids"] + [vocab["</s>"]]
                         for a in range(5) for b in range(5)])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for _ in range(80):
        loss = model(input_ids=seqs, labels=seqs).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.save_pretrained(path)


def write_dataset(path, n=16):
    rng = random.Random(0)
    with open(path, "w") as f:
        for i in range(n):
            a, b = rng.randint(0, 4), rng.randint(0, 4)
            row = {"prompt": f"Q:{a}+{b}=?A:", "verifier": VERIFIER, "reference": str(a + b)}
            if i % 4 == 3:
                # A reference of the wrong shape: Assay answers status invalid, reward null.
                row["reference"] = {"not": "a reference"}
            f.write(json.dumps(row) + "\n")


def test_grpo_steps_on_cpu_log_the_rewards_assay_returned(assay_url, tmp_path, monkeypatch):
    need("trl")
    import torch

    from assay_client import train

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # the CPU path, whatever the machine has
    torch.set_num_threads(2)

    available = AssayClient(assay_url).health()["verifiers"]
    assert VERIFIER in available, f"the live server has no {VERIFIER!r} verifier (it has {available}); set ASSAY_E2E_VERIFIER"

    model_dir, data, log_file = tmp_path / "model", tmp_path / "train.jsonl", tmp_path / "log.jsonl"
    build_tiny_model(model_dir)
    write_dataset(data)
    client = RecordingClient(assay_url)
    out = train.run([
        "--data", str(data), "--model", str(model_dir), "--output-dir", str(tmp_path / "out"),
        "--max-steps", str(STEPS), "--batch-size", str(BATCH), "--num-generations", str(GENERATIONS),
        "--max-completion-length", "6", "--learning-rate", "1e-3", "--log-file", str(log_file),
        "--device", "cpu",
    ], client=client)

    summary = out["summary"]
    assert summary["device"] == "cpu" and summary["dtype"] == "torch.float32"
    assert summary["steps"] == STEPS and summary["rollouts"] == STEPS * BATCH

    # One Assay batch per step, one result per rollout.
    assert len(client.calls) == STEPS
    assert all(len(c) == BATCH for c in client.calls)

    logged = [json.loads(line) for line in log_file.read_text().splitlines()]
    steps = [x for x in logged if "reward" in x]
    assert len(steps) == STEPS
    nulls_seen = 0
    for returned, line in zip(client.calls, steps):
        scored = [r for r in returned if r is not None]
        nulls = len(returned) - len(scored)
        nulls_seen += nulls
        assert line["assay/assay/null_fraction"] == pytest.approx(nulls / len(returned))
        if scored:
            mean = sum(scored) / len(scored)
            std = math.sqrt(sum((r - mean) ** 2 for r in scored) / (len(scored) - 1)) if len(scored) > 1 else 0.0
            assert line["reward"] == pytest.approx(mean, abs=1e-6)
            assert line[f"rewards/assay/mean"] == pytest.approx(mean, abs=1e-6)
            assert line["reward_std"] == pytest.approx(std, abs=1e-5)
        else:
            assert line["reward"] is None
    # Every fourth prompt has a malformed reference, so some group in the run came back null;
    # the warmed-up policy gets some sums right and some wrong, so the comparison is not 0 == 0.
    assert nulls_seen > 0
    every = [r for c in client.calls for r in c if r is not None]
    assert 0.0 in every and 1.0 in every, every
    # Training ran: the trainer logged a loss for each step.
    assert all("loss" in x for x in steps)
