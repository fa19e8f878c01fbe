"""`assay-train`: GRPO with TRL's GRPOTrainer, every rollout scored by Assay.

    assay-train --data train.jsonl --model Qwen/Qwen2.5-0.5B-Instruct --output-dir out \\
                --assay-url http://127.0.0.1:8787 --max-steps 100

The dataset is JSONL, one `{"prompt": ..., "verifier": ..., "reference": ...}` per line (`prompt`
a string or chat messages; `options` optional). Each step logs TRL's reward mean and std, plus
`assay/assay/null_fraction` (the share of rollouts Assay could not score, which TRL leaves out of the
baseline) and `assay/assay/reward_wait_s` (its reward function is named `assay`); with `--log-file` every log line is also appended as JSON.
On CUDA the model runs in bf16; without a GPU it runs on the CPU in fp32. At the end it prints
throughput: rollouts/s and the share of step time spent waiting for rewards.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Dict, List, Optional, Sequence

from .client import AssayClient
from .trl import AssayReward


def read_jsonl(path: str) -> List[Dict[str, Any]]:
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as e:
                raise SystemExit(f"{path}:{n}: not JSON ({e})")
            if not isinstance(row, dict) or "prompt" not in row or "verifier" not in row:
                raise SystemExit(f'{path}:{n}: each line needs {{"prompt", "verifier", "reference"}}')
            rows.append(row)
    if not rows:
        raise SystemExit(f"{path}: no rows")
    return rows


def make_dataset(rows: Sequence[Dict[str, Any]]):
    """A datasets.Dataset. References and options may be any JSON (a string, a list, an object);
    Arrow needs one type per column, so they travel as JSON text and AssayReward decodes them."""
    from datasets import Dataset

    return Dataset.from_dict({
        "prompt": [r["prompt"] for r in rows],
        "verifier": [r["verifier"] for r in rows],
        "reference": [json.dumps(r.get("reference")) for r in rows],
        "options": [json.dumps(r.get("options")) for r in rows],
    })


class JsonColumnsReward(AssayReward):
    """AssayReward for datasets made by make_dataset: decodes the JSON text columns."""

    def items_for(self, prompts, completions, **columns):
        for key in (self.reference_column, self.options_column):
            if columns.get(key) is not None:
                columns[key] = [json.loads(v) if isinstance(v, str) else v for v in columns[key]]
        return super().items_for(prompts, completions, **columns)


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="assay-train", description="GRPO (TRL) with rewards from Assay")
    p.add_argument("--data", required=True, help="JSONL of {prompt, verifier, reference}")
    p.add_argument("--model", required=True, help="model name or local path (AutoModelForCausalLM)")
    p.add_argument("--output-dir", default="assay-train-out")
    p.add_argument("--assay-url", default=None, help="Assay server (default $ASSAY_URL or http://127.0.0.1:8787)")
    p.add_argument("--api-key", default=None, help="bearer key (default $ASSAY_API_KEY)")
    p.add_argument("--max-steps", type=int, default=100)
    p.add_argument("--batch-size", type=int, default=8, help="completions per device per step")
    p.add_argument("--num-generations", type=int, default=4, help="completions per prompt (the GRPO group)")
    p.add_argument("--max-completion-length", type=int, default=256)
    p.add_argument("--learning-rate", type=float, default=1e-6)
    p.add_argument("--beta", type=float, default=0.0, help="KL coefficient")
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--gradient-accumulation-steps", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-file", default=None, help="append every log line as JSON here")
    p.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto")
    return p.parse_args(argv)


def _callback_class():
    from transformers import TrainerCallback

    class AssayStats(TrainerCallback):
        """Times each optimizer step and writes the trainer's log lines to a JSONL file."""

        def __init__(self, reward: AssayReward, log_file: Optional[str]):
            self.reward = reward
            self.log_file = log_file
            self.step_s: List[float] = []
            self.logs: List[Dict[str, Any]] = []
            self._t0 = 0.0

        def on_step_begin(self, args, state, control, **kw):
            self._t0 = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            self.step_s.append(time.perf_counter() - self._t0)

        def on_log(self, args, state, control, logs=None, **kw):
            if not logs or not state.is_world_process_zero:
                return
            line = {"step": state.global_step, **logs}
            self.logs.append(line)
            if "reward" in logs:
                print(f"step {state.global_step}: reward mean {logs.get('reward')} std {logs.get('reward_std')} "
                      f"null fraction {logs.get(self.reward.metric('null_fraction'))}", file=sys.stderr, flush=True)
            if self.log_file:
                with open(self.log_file, "a", encoding="utf-8") as f:
                    f.write(json.dumps(line, default=str) + "\n")

        def summary(self) -> Dict[str, Any]:
            total = sum(self.step_s)
            return {
                "steps": len(self.step_s),
                "rollouts": self.reward.items,
                "step_s": total,
                "rollouts_per_s": self.reward.items / total if total else 0.0,
                "reward_wait_s": self.reward.wait_s,
                "reward_wait_share": self.reward.wait_s / total if total else 0.0,
                "null_fraction": self.reward.nulls / self.reward.items if self.reward.items else 0.0,
            }

    return AssayStats


def build_trainer(opts: argparse.Namespace, client: Optional[AssayClient] = None):
    """The GRPOTrainer, its Assay reward function and the stats callback, ready to train()."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    cuda = torch.cuda.is_available() if opts.device == "auto" else opts.device == "cuda"
    if cuda and not torch.cuda.is_available():
        raise SystemExit("--device cuda, but torch sees no CUDA device")
    dtype = torch.bfloat16 if cuda else torch.float32

    tokenizer = AutoTokenizer.from_pretrained(opts.model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(opts.model, dtype=dtype)

    reward = JsonColumnsReward(client=client or AssayClient(opts.assay_url, opts.api_key))
    config = GRPOConfig(
        output_dir=opts.output_dir,
        max_steps=opts.max_steps,
        per_device_train_batch_size=opts.batch_size,
        gradient_accumulation_steps=opts.gradient_accumulation_steps,
        num_generations=opts.num_generations,
        max_completion_length=opts.max_completion_length,
        learning_rate=opts.learning_rate,
        beta=opts.beta,
        temperature=opts.temperature,
        seed=opts.seed,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        bf16=cuda,
        fp16=False,
        use_cpu=not cuda,
        log_completions=False,
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    callback = _callback_class()(reward, opts.log_file)
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        reward_funcs=[reward],
        args=config,
        train_dataset=make_dataset(read_jsonl(opts.data)),
        callbacks=[callback],
    )
    return trainer, reward, callback


def run(argv: Optional[Sequence[str]] = None, client: Optional[AssayClient] = None) -> Dict[str, Any]:
    opts = parse_args(argv)
    trainer, reward, stats = build_trainer(opts, client)
    trainer.train()
    summary = stats.summary()
    summary["device"] = str(trainer.accelerator.device)
    summary["dtype"] = str(next(trainer.model.parameters()).dtype)
    print(json.dumps({"assay_train_summary": summary}), flush=True)
    return {"trainer": trainer, "reward": reward, "stats": stats, "summary": summary}


def main(argv: Optional[Sequence[str]] = None) -> None:
    run(argv)


if __name__ == "__main__":
    main()
