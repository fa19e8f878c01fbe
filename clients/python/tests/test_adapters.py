"""Each adapter called with exactly the argument shapes its trainer uses, against the live server."""
from __future__ import annotations

import json
import urllib.request

import pytest

from assay_client import AssayClient
from assay_client import openrlhf as orl
from assay_client import verl
from assay_client.trl import AssayReward, message_text
from conftest import need


# ---- TRL ---------------------------------------------------------------------------------------

def trl_kwargs(**columns):
    """The keyword arguments TRL 1.13's GRPOTrainer._calculate_rewards adds to every call."""
    TrainerState = need("transformers").TrainerState

    extra, metrics = {}, {}
    kwargs = dict(columns)
    kwargs["trainer_state"] = TrainerState()
    kwargs["log_extra"] = lambda column, values: extra.setdefault(column, []).extend(values)
    kwargs["log_metric"] = lambda name, value: metrics.setdefault(name, []).append(value)
    return kwargs, metrics


def test_trl_standard_format_with_dataset_columns(assay_url):
    f = AssayReward(url=assay_url)
    prompts = ["Capital of France?"] * 2 + ["Pick one: (A) 1 (B) 2"] * 2
    completions = [" Paris", "Lyon", "The answer is (B).", "(A)"]
    kwargs, metrics = trl_kwargs(reference=["paris", "paris", "B", "B"], verifier=["exact", "exact", "choice", "choice"],
                                 id=[0, 0, 1, 1])
    out = f(prompts=prompts, completions=completions, completion_ids=[[1, 2]] * 4, **kwargs)
    assert out == [1.0, 0.0, 1.0, 0.0]
    assert metrics["assay/assay/null_fraction"] == [0.0]
    assert f.__name__ == "assay" and f.items == 4


def test_trl_chat_format_and_none_for_unscored(assay_url):
    f = AssayReward(verifier="exact", url=assay_url)
    prompts = [[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Capital?"}]] * 3
    completions = [
        [{"role": "assistant", "content": "Paris"}],
        [{"role": "assistant", "content": [{"type": "text", "text": "Par"}, {"type": "text", "text": "is"}]}],
        [{"role": "assistant", "content": "Paris"}],
    ]
    # The third row's reference has the wrong shape for `exact`: Assay answers status invalid, reward null.
    kwargs, metrics = trl_kwargs(reference=["paris", "paris", {"bad": 1}])
    out = f(prompts=prompts, completions=completions, completion_ids=[[1]] * 3, **kwargs)
    assert out == [1.0, 1.0, None]
    assert metrics["assay/assay_exact/null_fraction"] == [pytest.approx(1 / 3)]
    assert f.__name__ == "assay_exact"


def test_trl_sends_the_question_as_prompt(fake_assay):
    fake = fake_assay()
    f = AssayReward(verifier="v", url=fake.url)
    prompt = [{"role": "user", "content": "What is 2+2?"}]
    f(prompts=[prompt], completions=[[{"role": "assistant", "content": "4"}]], reference=["4"])
    item = fake.requests[0]["body"]["items"][0]
    assert item == {"id": 0, "verifier": "v", "response": "4", "reference": "4", "prompt": "What is 2+2?"}


def test_trl_without_a_verifier_says_what_to_do(assay_url):
    with pytest.raises(ValueError, match="verifier"):
        AssayReward(url=assay_url)(prompts=["q"], completions=["a"], reference=["a"])


def test_message_text_shapes():
    assert message_text("plain") == "plain"
    assert message_text([{"role": "assistant", "content": "a"}, {"role": "tool", "content": "t"}]) == "a"
    assert message_text([]) == ""


# ---- verl --------------------------------------------------------------------------------------

def test_verl_compute_score_as_naive_reward_manager_calls_it(assay_url):
    verl.register_data_source("my/capitals", "exact")
    # NaiveRewardManager: compute_score(data_source=..., solution_str=..., ground_truth=..., extra_info=...)
    out = verl.compute_score(data_source="my/capitals", solution_str="Paris", ground_truth="paris",
                             extra_info={"split": "train", "index": 0}, assay_url=assay_url)
    assert set(out) == {"score", "assay_scored", "assay_invalid", "assay_elapsed_ms"}
    assert (out["score"], out["assay_scored"], out["assay_invalid"]) == (1.0, 1, 0)
    assert all(isinstance(v, (int, float)) for v in out.values())
    # A prefix of a registered name routes too; a wrong answer is 0.
    assert verl.compute_score("my/capitals-v2", "Lyon", "paris", None, assay_url=assay_url)["score"] == 0.0


def test_verl_verifier_from_ground_truth_or_extra_info_and_nulls_as_numbers(assay_url):
    gt = json.dumps({"verifier": "choice", "reference": "B"})
    assert verl.compute_score("anything", "The answer is (B)", gt, None, assay_url=assay_url)["score"] == 1.0
    out = verl.compute_score("anything", "x", {"bad": 1}, {"verifier": "exact"}, assay_url=assay_url, null_reward=-1.0)
    assert out["score"] == -1.0 and out["assay_scored"] == 0 and out["assay_invalid"] == 1


def test_verl_unknown_data_source_says_how_to_route_it(assay_url):
    with pytest.raises(ValueError, match="register_data_source"):
        verl.compute_score("nobody/knows", "x", "y", None, assay_url=assay_url)


def test_verl_batch_form_with_numpy_columns(assay_url):
    np = need("numpy")
    verl.register_data_source("my/capitals", "exact")
    # BatchRewardManager passes numpy object arrays from DataProto.non_tensor_batch.
    out = verl.compute_score_batch(
        data_sources=np.array(["my/capitals"] * 3, dtype=object),
        solution_strs=np.array(["Paris", "Rome", "paris!"], dtype=object),
        ground_truths=np.array(["paris", "paris", np.array(["paris!", "x"], dtype=object)], dtype=object),
        extra_infos=np.array([{"index": i} for i in range(3)], dtype=object),
        assay_url=assay_url,
    )
    assert [o["score"] for o in out] == [1.0, 0.0, 1.0]


def load_like_verl(path, name, reward_kwargs):
    """verl's get_custom_reward_fn: import the file by path as `custom_module`, then merge
    custom_reward_function.reward_kwargs into every call."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("custom_module", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["custom_module"] = module
    spec.loader.exec_module(module)
    raw_fn = getattr(module, name)
    return lambda *args, **kwargs: raw_fn(*args, **{**kwargs, **reward_kwargs})


def test_verl_loads_the_file_by_path_as_custom_reward_function(assay_url):
    fn = load_like_verl(verl.__file__, "compute_score", {"assay_url": assay_url})
    verl.register_data_source("my/by-path", "exact")  # on the package: the file-loaded copy sees it
    out = fn(data_source="my/by-path", solution_str="Paris", ground_truth="paris", extra_info={"index": 1})
    assert out["score"] == 1.0
    batch = load_like_verl(verl.__file__, "compute_score_batch", {"assay_url": assay_url})
    assert [o["score"] for o in batch(data_sources=["my/by-path"] * 2, solution_strs=["Paris", "Rome"],
                                      ground_truths=["paris", "paris"], extra_infos=[{}, {}])] == [1.0, 0.0]


def test_openrlhf_file_loads_by_path(assay_url, monkeypatch):
    import importlib.util

    need("torch")
    spec = importlib.util.spec_from_file_location("reward_func", orl.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "_client", AssayClient(assay_url))
    assert module.reward_func(["q Paris"], ["q "], [orl.label("exact", "paris")])["rewards"].tolist() == [1.0]


def test_verl_table_maps_common_sources_to_math():
    assert verl.verifier_for("openai/gsm8k") == "math"
    assert verl.verifier_for("lighteval/MATH") == "math"
    assert verl.verifier_for("custom", {"custom": "regex"}) == "regex"


# ---- OpenRLHF ----------------------------------------------------------------------------------

def openrlhf_post(url, queries, prompts, labels):
    """What openrlhf.utils.remote_rm_utils.request_api_wrapper sends:
    requests.post(url, json={"query": ..., "prompts": ..., "labels": ...},
                  headers={"Content-Type": "application/json"}, timeout=180)."""
    data = json.dumps({"query": queries, "prompts": prompts, "labels": labels}).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=180) as r:
        return json.loads(r.read())


def test_openrlhf_get_reward_with_the_exact_payload_and_its_tensor_handling(assay_url):
    torch = need("torch")
    tmpl = "<|im_start|>user\n{q}<|im_end|>\n<|im_start|>assistant\n"
    p1, p2 = tmpl.format(q="Capital of France?"), tmpl.format(q="Pick (A) or (B)")
    # OpenRLHF decodes prompt + response with skip_special_tokens=False: the EOS token stays.
    batch1 = openrlhf_post(assay_url + "/get_reward",
                           [p1 + "Paris<|im_end|>", p1 + "Lyon<|im_end|>"], [p1, p1],
                           [orl.label("exact", "paris"), orl.label("exact", "paris")])
    batch2 = openrlhf_post(assay_url + "/get_reward?null_reward=-0.5",
                           [p2 + "The answer is (B)<|im_end|>", p2 + "B<|im_end|>", p2 + "?"], [p2, p2, p2],
                           [orl.label("choice", "B"), json.dumps({"verifier": "choice", "reference": {"not": "a choice"}}), orl.label("choice", "B")])
    assert batch1["rewards"] == [1, 0]
    assert batch2["rewards"] == [1, -0.5, 0]
    assert batch2["extra_logs"]["assay_unscored"] == [0, 1, 0]
    # update_samples_with_rewards (OpenRLHF >= 0.8): concatenate over requests, split per sample.
    infos, sizes = [batch1, batch2], [2, 3]
    rewards = torch.cat([torch.as_tensor(i["rewards"]) for i in infos], dim=0).split(sizes)
    scores = torch.cat([torch.as_tensor(i["scores"]) for i in infos], dim=0).split(sizes)
    logs = {k: torch.cat([torch.as_tensor(i["extra_logs"][k]) for i in infos], dim=0).split(sizes)
            for k in infos[0]["extra_logs"]}
    assert [r.tolist() for r in rewards] == [[1.0, 0.0], [1.0, -0.5, 0.0]]
    assert [s.shape[0] for s in scores] == sizes
    assert logs["assay_unscored"][1].tolist() == [0, 1, 0]


def test_openrlhf_plain_labels_with_verifier_in_the_url(assay_url):
    body = openrlhf_post(assay_url + "/get_reward?verifier=exact", ["Q: a? A: yes", "Q: b? A: no"], ["Q: a? A:", "Q: b? A:"], ["yes", "yes"])
    assert body["rewards"] == [1, 0]


def test_openrlhf_custom_reward_func_returns_tensors(assay_url, monkeypatch):
    need("torch")
    monkeypatch.setattr(orl, "_client", AssayClient(assay_url))
    out = orl.reward_func(["q Paris", "q Rome"], ["q ", "q "], [orl.label("exact", "paris")] * 2)
    assert out["rewards"].tolist() == [1.0, 0.0]
    assert out["extra_logs"]["assay_unscored"].tolist() == [0.0, 0.0]


def test_verl_says_in_the_log_when_it_trains_on_null_reward(caplog):
    """verl needs a number; an unscored item's 0.0 was otherwise silent (assay_scored reaches only
    verl's validation metrics). One warning per UNSCORED_NOTICE_S, with the count."""
    import logging
    verl._unscored.update(n=0, last=float("-inf"))
    with caplog.at_level(logging.WARNING, logger="assay_client.verl"):
        for _ in range(3):
            got = verl._as_score({"reward": None, "status": "error", "reason": "sandbox down"}, 0.0)
            assert got["score"] == 0.0 and got["assay_scored"] == 0
        verl._as_score({"reward": 1.0, "status": "ok"}, 0.0)
    notes = [r.getMessage() for r in caplog.records if r.name == "assay_client.verl"]
    assert len(notes) == 1 and "could not score 1 item" in notes[0] and "sandbox down" in notes[0]
    verl._unscored["last"] = float("-inf")
    with caplog.at_level(logging.WARNING, logger="assay_client.verl"):
        verl._as_score({"reward": None, "status": "error", "reason": "x"}, 0.0)
    assert "could not score 3 item" in caplog.records[-1].getMessage()
