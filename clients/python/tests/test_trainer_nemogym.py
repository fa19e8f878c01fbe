"""NeMo-Gym's resources-server models against Assay's /seed_session, /verify, /aggregate_metrics.

nemo-gym does not install from the local index, so its request/response models are written here
from its source (repository NVIDIA-NeMo/Gym, nemo_gym/base_resources_server.py:
BaseRunRequest, BaseVerifyRequest, BaseVerifyResponse, ResourcesSeedSessionRequest/Response,
ResourcesCloseSessionRequest/Response; nemo_gym/config_types.py and base_resources_server.py:
AggregateMetricsRequest, AggregateMetrics; nemo_gym/global_config.py: TASK_INDEX_KEY_NAME),
with the Responses-API types reduced to the fields Assay reads (NeMo-Gym's NeMoGymResponse is
the OpenAI Responses object). A reply that does not validate against them fails here as it would
in NeMo-Gym's client.
"""
from __future__ import annotations

import json
import urllib.request
from typing import Any, Dict, List, Optional

import pytest

from conftest import need

pydantic = need("pydantic")
from pydantic import BaseModel, ConfigDict, Field  # noqa: E402

TASK_INDEX_KEY_NAME = "_ng_task_index"


class OutputText(BaseModel):
    type: str = "output_text"
    text: str
    annotations: List[Any] = []


class OutputMessage(BaseModel):
    id: str
    type: str = "message"
    role: str = "assistant"
    status: str = "completed"
    content: List[OutputText]


class NeMoGymResponse(BaseModel):  # the Responses-API object, reduced
    model_config = ConfigDict(extra="allow")
    id: str
    object: str = "response"
    output: List[Dict[str, Any]]


class NeMoGymResponseCreateParamsNonStreaming(BaseModel):
    model_config = ConfigDict(extra="allow")
    input: Any


class BaseRunRequest(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    responses_create_params: NeMoGymResponseCreateParamsNonStreaming
    capture_rollout_id: Optional[str] = Field(default=None, alias="_ng_rollout_id", exclude=True)


class BaseVerifyRequest(BaseRunRequest):
    response: NeMoGymResponse


class BaseVerifyResponse(BaseVerifyRequest):
    reward: float
    mask_sample: bool = False
    failure_kind: Optional[str] = None
    failure_reason: Optional[str] = None


class AssayVerifyRequest(BaseVerifyRequest):
    """How an environment declares its dataset row's own fields (as NeMo-Gym's servers do)."""
    verifier: str
    reference: Any = None
    options: Optional[Dict[str, Any]] = None


class ResourcesSeedSessionRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    resources_session_id: str = Field(min_length=1)
    episode_id: str
    task_id: str
    task_data: Dict[str, Any]


class ResourcesSeedSessionResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")
    resources_session_id: str
    resources_tools: Optional[Dict[str, Any]] = None
    sandbox_access: Optional[Dict[str, Any]] = None


class BaseSeedSessionResponse(BaseModel):
    pass


class ResourcesCloseSessionResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")
    resources_session_id: str


class AggregateMetricsRequest(BaseModel):
    verify_responses: List[Dict[str, Any]]


class AggregateMetrics(BaseModel):
    group_level_metrics: List[Dict[str, Any]] = Field(default_factory=list)
    agent_metrics: Dict[str, Any] = Field(default_factory=dict)
    key_metrics: Dict[str, Any] = Field(default_factory=dict)


def post(url: str, model: BaseModel) -> dict:
    data = model.model_dump_json(by_alias=True, exclude_none=False).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def make_request(text_parts, verifier="exact", reference="paris", options=None, task=0):
    msg = OutputMessage(id="msg_1", content=[OutputText(text=t) for t in text_parts])
    response = NeMoGymResponse(id="resp_1", output=[
        {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "The capital is Paris."}]},
        msg.model_dump(),
    ])
    params = NeMoGymResponseCreateParamsNonStreaming(input=[{"role": "user", "content": "Capital of France?"}])
    req = AssayVerifyRequest(responses_create_params=params, response=response, verifier=verifier, reference=reference, options=options)
    return req, {TASK_INDEX_KEY_NAME: task}


def verify(assay_url, req, extra):
    body = json.loads(req.model_dump_json())
    body.update(extra)
    raw = urllib.request.urlopen(urllib.request.Request(assay_url + "/verify", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST"), timeout=60).read()
    return BaseVerifyResponse.model_validate_json(raw), json.loads(raw)


def test_verify_round_trips_through_nemo_gyms_models(assay_url):
    good, extra = make_request(["Pa", "ris"], options={"case_sensitive": None})
    parsed, raw = verify(assay_url, good, extra)
    assert parsed.reward == 1.0 and isinstance(parsed.reward, float) and parsed.mask_sample is False
    assert raw[TASK_INDEX_KEY_NAME] == 0 and raw["verifier"] == "exact"  # the request is echoed
    assert parsed.response.output == good.response.output
    wrong, extra = make_request(["Lyon"])
    assert verify(assay_url, wrong, extra)[0].reward == 0.0
    # The reasoning summary is not the answer: a completion with only reasoning scores 0.
    empty, extra = make_request([])
    assert verify(assay_url, empty, extra)[0].reward == 0.0


def test_unscored_items_are_masked_not_zeroed(assay_url):
    bad, extra = make_request(["Paris"], reference={"not": "a reference"})
    parsed, _ = verify(assay_url, bad, extra)
    assert (parsed.reward, parsed.mask_sample, parsed.failure_kind) == (0.0, True, "assay:invalid_item")
    assert parsed.failure_reason


def test_seed_close_and_aggregate_metrics(assay_url):
    seeded = ResourcesSeedSessionResponse.model_validate(post(assay_url + "/seed_session", ResourcesSeedSessionRequest(
        resources_session_id="s-1", episode_id="e-1", task_id="t-1", task_data={"q": 1})))
    assert seeded.resources_session_id == "s-1"
    class BaseSeedSessionRequest(BaseModel):
        pass

    assert post(assay_url + "/seed_session", BaseSeedSessionRequest()) == {}
    BaseSeedSessionResponse.model_validate({})
    closed = ResourcesCloseSessionResponse.model_validate(
        json.loads(urllib.request.urlopen(urllib.request.Request(assay_url + "/close_session", method="POST",
            data=json.dumps({"resources_session_id": "s-1", "episode_id": "e-1"}).encode(),
            headers={"Content-Type": "application/json"}), timeout=60).read()))
    assert closed.resources_session_id == "s-1"

    responses = []
    for task, texts in [(0, ["Paris"]), (0, ["Lyon"]), (1, ["Paris"])]:
        req, extra = make_request(texts, task=task)
        responses.append({TASK_INDEX_KEY_NAME: task, "reward": verify(assay_url, req, extra)[0].reward})
    metrics = AggregateMetrics.model_validate(post(assay_url + "/aggregate_metrics", AggregateMetricsRequest(verify_responses=responses)))
    assert metrics.agent_metrics["mean/reward"] == pytest.approx(2 / 3)
    assert {g[TASK_INDEX_KEY_NAME]: g["mean/reward"] for g in metrics.group_level_metrics} == {0: 0.5, 1: 1.0}
    assert metrics.key_metrics == {"mean/reward": pytest.approx(2 / 3)}


# --- NeMo-RL's own reading of the mask -------------------------------------------------------
# Copied from NVIDIA-NeMo/RL at commit 7ea279abf (the mask arrived in 4372db1, "feat(grpo): mask
# env-flagged samples from policy loss (#3163)", after v0.7.0), nemo_rl/experience/rollouts.py,
# function `_extract_mask_sample_flags`. Copyright (c) NVIDIA CORPORATION & AFFILIATES,
# Apache License 2.0 (http://www.apache.org/licenses/LICENSE-2.0). `result["full_result"]` is the
# NeMo-Gym rollout result (nemo_rl/environments/nemo_gym.py builds it from the agent's reply,
# which is the resources server's /verify reply).
def _extract_mask_sample_flags(results):
    """Return True for samples the environment asks GRPO to mask from loss."""
    torch = need("torch")
    return torch.tensor(
        [
            bool(
                (result["full_result"].get("instance_config") or {}).get(
                    "mask_sample", False
                )
            )
            for result in results
        ],
        dtype=torch.bool,
    )


def test_nemo_rl_reads_the_mask_of_an_unscored_item(assay_url):
    good, extra = make_request(["Paris"])
    bad, bad_extra = make_request(["Paris"], reference={"not": "a reference"})
    replies = [verify(assay_url, good, extra)[1], verify(assay_url, bad, bad_extra)[1]]
    flags = _extract_mask_sample_flags([{"full_result": r} for r in replies])
    assert flags.tolist() == [False, True]
    # The top-level flag stays for NeMo-Gym's own readers and older versions.
    assert [r.get("mask_sample", False) for r in replies] == [False, True]
    # A row's own instance_config survives beside the mask.
    bad_row = json.loads(bad.model_dump_json())
    bad_row.update(bad_extra, instance_config={"seed": 3})
    raw = urllib.request.urlopen(urllib.request.Request(assay_url + "/verify", data=json.dumps(bad_row).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST"), timeout=60).read()
    assert json.loads(raw)["instance_config"] == {"seed": 3, "mask_sample": True}
