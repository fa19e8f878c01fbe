"""verl's own handling of Assay, replayed from verl's source (repository volcengine/verl):

- verl/trainer/ppo/reward.py, get_custom_reward_fn: loads the file by path as `custom_module`
  and wraps the function; newer verl with `_call_with_kwargs(raw_fn, extra_kwargs, *args, **kwargs)`:
  `merged_kwargs = {**kwargs, **extra_kwargs}` (reward_kwargs win over verl's own arguments),
  older verl with `raw_fn(*args, **kwargs, **reward_kwargs)` (a clash is a TypeError).
- verl/workers/reward_manager/batch.py, BatchRewardManager.verify: `compute_score(data_sources=...,
  solution_strs=..., ground_truths=..., extra_infos=...)`, data_sources an array indexed by position.
- verl/experimental/reward/reward_loop/naive.py, NaiveRewardLoopManager.run_single:
  `compute_score(data_source=, solution_str=, ground_truth=, extra_info=, reward_model=,
  reward_model_tokenizer=)` in an executor; reads result["score"], the rest to reward_extra_info.
- verl/utils/reward_score/sandbox_fusion/utils.py, call_sandbox_api and _process_single_case:
  `request_timeout = compile_timeout + run_timeout + API_TIMEOUT (10)`, a 504 retried up to
  MAX_RETRIES (3) with `INITIAL_RETRY_DELAY * (attempt + 1)` s between, anything else final; the
  reply read into True / False / -1 / -2 / -3 / -4.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from collections.abc import MutableMapping, MutableSequence
from functools import partial

import pytest

from assay_client import verl
from conftest import need, need_docker, serve_assay


def _call_with_kwargs(raw_fn, extra_kwargs, *args, **kwargs):
    merged_kwargs = {**kwargs, **extra_kwargs}
    return raw_fn(*args, **merged_kwargs)


def get_custom_reward_fn(path, name, reward_kwargs):
    import importlib.util

    spec = importlib.util.spec_from_file_location("custom_module", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["custom_module"] = module
    spec.loader.exec_module(module)
    return partial(_call_with_kwargs, getattr(module, name), dict(reward_kwargs))


def test_batch_manager_call_with_assay_data_sources_in_reward_kwargs(assay_url):
    np = need("numpy")
    fn = get_custom_reward_fn(verl.__file__, "compute_score_batch",
                              {"assay_url": assay_url, "assay_data_sources": {"my/capitals": "exact"}})
    # BatchRewardManager.verify's call: data_sources is the batch's own array.
    scores = fn(data_sources=np.array(["my/capitals", "my/capitals"], dtype=object),
                solution_strs=["Paris", "Lyon"], ground_truths=["paris", "paris"],
                extra_infos=np.array([{}, {}], dtype=object))
    assert [s["score"] for s in scores] == [1.0, 0.0]


def test_a_table_named_data_sources_would_replace_verls_own_argument(assay_url):
    """The old documented `reward_kwargs.data_sources` under verl's merge: the table wins over the
    batch's array, and `data_sources[0]` is a KeyError. The adapter now says what to rename."""
    table = {"my/capitals": "exact"}
    merged = {**{"data_sources": ["my/capitals"]}, **{"data_sources": table}}
    with pytest.raises(KeyError):
        merged["data_sources"][0]
    fn = get_custom_reward_fn(verl.__file__, "compute_score_batch", {"assay_url": assay_url, "data_sources": table})
    with pytest.raises(ValueError, match="assay_data_sources"):
        fn(data_sources=["my/capitals"], solution_strs=["Paris"], ground_truths=["paris"], extra_infos=[{}])
    one = get_custom_reward_fn(verl.__file__, "compute_score", {"assay_url": assay_url, "data_sources": table})
    with pytest.raises(ValueError, match="assay_data_sources"):
        one(data_source="my/capitals", solution_str="Paris", ground_truth="paris", extra_info={})


def test_reward_loop_naive_manager_call(assay_url):
    fn = get_custom_reward_fn(verl.__file__, "compute_score",
                              {"assay_url": assay_url, "assay_data_sources": {"openai/gsm8k": "math"}})
    # run_single's keyword call, with the reward-model arguments the reward loop adds.
    result = fn(data_source="openai/gsm8k", solution_str="so the answer is \\boxed{72}", ground_truth=72,
                extra_info={"index": 0}, reward_model=None, reward_model_tokenizer=None)
    score = result["score"] if isinstance(result, dict) else result
    assert score == 1.0
    assert all(isinstance(v, (int, float)) for v in result.values())


class FakeDictConfig(MutableMapping):
    """OmegaConf's DictConfig as the adapter sees it: a MutableMapping that is not a dict (and so
    not JSON-serializable: `json.dumps` raises "Object of type DictConfig is not JSON serializable").
    The local package index has omegaconf without its antlr4 runtime, so the real one is used only
    where it imports."""

    def __init__(self, d):
        self._d = dict(d)

    def __getitem__(self, k):
        return self._d[k]

    def __setitem__(self, k, v):
        self._d[k] = v

    def __delitem__(self, k):
        del self._d[k]

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)


class FakeListConfig(MutableSequence):
    def __init__(self, items):
        self._l = list(items)

    def __getitem__(self, i):
        return self._l[i]

    def __setitem__(self, i, v):
        self._l[i] = v

    def __delitem__(self, i):
        del self._l[i]

    def __len__(self):
        return len(self._l)

    def insert(self, i, v):
        self._l.insert(i, v)


def _configs():
    try:
        from omegaconf import OmegaConf
    except ImportError:
        return [lambda d: FakeDictConfig({k: FakeListConfig(v) if isinstance(v, list) else v for k, v in d.items()})]
    return [lambda d: FakeDictConfig({k: FakeListConfig(v) if isinstance(v, list) else v for k, v in d.items()}),
            OmegaConf.create]


@pytest.mark.parametrize("make", _configs())
def test_nested_reward_kwargs_from_hydra_reach_assay_as_json(assay_url, make):
    """`+custom_reward_function.reward_kwargs.options.precision=2` on verl's command line: verl's
    get_custom_reward_fn copies reward_kwargs with dict(...), so `options` stays a DictConfig (and
    its `extract` a ListConfig); the adapter turned that into `not JSON serializable` before."""
    np = need("numpy")
    options = make({"precision": 2, "extract": ["boxed"]})
    with pytest.raises(TypeError, match="not JSON serializable"):
        json.dumps({"options": options})
    kwargs = {"assay_url": assay_url, "assay_data_sources": make({"my/pi": "math"}), "options": options}
    one = get_custom_reward_fn(verl.__file__, "compute_score", kwargs)
    assert one(data_source="my/pi", solution_str="\\boxed{3.14159}", ground_truth="3.14", extra_info={})["score"] == 1.0
    # extract: ["boxed"] reached the verifier too: an unboxed answer is not read.
    assert one(data_source="my/pi", solution_str="3.14", ground_truth="3.14", extra_info={})["score"] == 0.0
    # Without the options the same answer is not equal to 3.14: the precision did the work.
    bare = get_custom_reward_fn(verl.__file__, "compute_score", {"assay_url": assay_url, "verifier": "math"})
    assert bare(data_source="x", solution_str="\\boxed{3.14159}", ground_truth="3.14", extra_info={})["score"] == 0.0
    batch = get_custom_reward_fn(verl.__file__, "compute_score_batch", kwargs)
    scores = batch(data_sources=np.array(["my/pi", "my/pi"], dtype=object),
                   solution_strs=["\\boxed{3.14159}", "\\boxed{3.2}"], ground_truths=["3.14", "3.14"],
                   extra_infos=np.array([{"index": np.int64(0)}, {"index": np.int64(1)}], dtype=object))
    assert [s["score"] for s in scores] == [1.0, 0.0]


def test_plain_turns_any_mapping_and_sequence_into_json():
    np = need("numpy")
    nested = FakeDictConfig({"a": FakeListConfig([1, FakeDictConfig({"b": np.float32(0.5)})]), 3: np.array([[1, 2]]),
                             "t": (np.int64(7), np.bool_(True)), "s": "x", "n": None})
    out = verl.plain(nested)
    assert out == {"a": [1, {"b": 0.5}], "3": [[1, 2]], "t": [7, True], "s": "x", "n": None}
    assert json.loads(json.dumps(out)) == out
    item = verl.item_for("d", "x", FakeDictConfig({"verifier": "exact", "reference": FakeListConfig(["x"]),
                                                    "options": FakeDictConfig({"case_sensitive": False})}))
    assert json.loads(json.dumps(item)) == {"verifier": "exact", "response": "x", "reference": ["x"],
                                             "options": {"case_sensitive": False}}


# ---- /run_code as verl's sandbox_fusion client calls it ----------------------------------------

API_TIMEOUT, MAX_RETRIES, INITIAL_RETRY_DELAY = 10, 3, 1


def call_sandbox_api(url, code, stdin, compile_timeout, run_timeout, language="python"):
    payload = json.dumps({"compile_timeout": compile_timeout, "run_timeout": run_timeout, "code": code, "stdin": stdin,
                          "language": language, "files": {}, "fetch_files": []}).encode()
    request_timeout = compile_timeout + run_timeout + API_TIMEOUT
    last_error = None
    for attempt in range(MAX_RETRIES):
        req = urllib.request.Request(url, data=payload, method="POST",
                                     headers={"Content-Type": "application/json", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=request_timeout) as r:
                return json.loads(r.read()), None
        except urllib.error.HTTPError as e:
            if e.code == 504:
                last_error = "504"
                if attempt < MAX_RETRIES - 1:
                    time.sleep(INITIAL_RETRY_DELAY * (attempt + 1))
                continue
            return None, f"HTTP {e.code}"
        except Exception as e:  # a client timeout: verl gives up with -1
            return None, str(e)
    return None, last_error


def verdict(api_response, error, expected):
    if error or not api_response:
        return -1
    status, c, r = api_response.get("status"), api_response.get("compile_result"), api_response.get("run_result")
    if status == "SandboxError":
        return -1
    if status == "Failed":
        if c and (c.get("status") in ("Error", "TimeLimitExceeded") or (c.get("status") == "Finished" and c.get("return_code") != 0)):
            return -4
        if r:
            if r.get("status") == "TimeLimitExceeded":
                return -3
            if r.get("status") == "Error" or (r.get("status") == "Finished" and r.get("return_code") != 0):
                return -2
        return -1
    if status == "Success" and r and r.get("status") == "Finished":
        return str(r.get("stdout") or "").rstrip("\n") == str(expected).rstrip("\n")
    return -1


@pytest.fixture(scope="module")
def docker_assay_url():
    """A second live server on the real docker sandbox, with a small pool so requests queue."""
    need_docker()
    with serve_assay(ASSAY_SANDBOX="docker", ASSAY_SANDBOX_POOL="2", ASSAY_RUN_CODE_CALLER_SLACK_MS="3000") as url:
        yield url


def test_verl_client_on_the_docker_sandbox_correct_programs_pass_or_are_retried(docker_assay_url):
    url = docker_assay_url + "/run_code"
    timeout = 2  # verl's sandbox_fusion timeout (compile and run); budget 2 + 2 + 10 s
    jobs = []
    for i in range(16):
        loops = i % 4 == 0
        code = "while True: pass" if loops else "print(sum(map(int, input().split())))"
        jobs.append((loops, code, f"{i} 1", str(i + 1)))

    def one(job):
        loops, code, stdin, expected = job
        t0 = time.monotonic()
        resp, err = call_sandbox_api(url, code, stdin, timeout, timeout)
        return loops, verdict(resp, err, expected), time.monotonic() - t0, resp

    with ThreadPoolExecutor(16) as pool:
        out = list(pool.map(one, jobs))
    for loops, v, secs, resp in out:
        if loops:
            assert v in (-3, -1), (v, resp)
        else:
            # Never a late or wrong 0: a correct program passes, or (all retries 504) is an API error.
            assert v in (True, -1), (v, resp)
    assert sum(1 for loops, v, _, _ in out if not loops and v is True) >= 6
    # A killed program is Finished with a negative return code, read by verl as a runtime error.
    resp, err = call_sandbox_api(url, "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)", "", timeout, timeout)
    assert resp["run_result"]["status"] == "Finished" and resp["run_result"]["return_code"] == -11
    assert verdict(resp, err, "") == -2


# ---- the guide in clients/python/README.md, run as written ------------------------------------

def readme_blocks():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    guide = text[text.index("### verl"):text.index("### OpenRLHF")]
    return re.findall(r"```bash\n(.*?)```", guide, re.S), text


def overrides(block):
    """The arguments verl's main would get: bash runs the block as written (its $(...) and
    quoting included), with `python3 -m ...` replaced by printing its arguments."""
    shim = 'python3() { if [ "$1" = -m ]; then printf "%s\\0" "$@"; else command python3 "$@"; fi; }\n'
    out = subprocess.run(["bash", "-c", shim + block], capture_output=True, text=True, check=True).stdout
    return [w for w in out.split("\0") if "=" in w]


@pytest.mark.parametrize("which,prefix", [(0, ""), (1, "reward.")])
def test_the_readme_verl_commands_work_as_written(assay_url, which, prefix):
    blocks, _ = readme_blocks()
    args = overrides(blocks[which])
    path = next(a for a in args if a.startswith(f"{prefix}custom_reward_function.path=")).split("=", 1)[1]
    assert path.endswith("assay_client/verl.py"), path
    name = next(a.split("=", 1)[1] for a in args if a.startswith(f"{prefix}custom_reward_function.name="))
    kwargs = {}
    for a in args:
        key, value = a.split("=", 1)
        if key.startswith(f"+{prefix}custom_reward_function.reward_kwargs."):
            kwargs[key.rsplit(".", 1)[1]] = value
        else:
            assert not key.startswith("+") and "reward_kwargs" not in key, f"{a}: a new key needs a leading +"
    assert kwargs["assay_url"].startswith("http://")
    kwargs["assay_url"] = assay_url  # the live test server instead of the example's port
    fn = get_custom_reward_fn(path, name, kwargs)
    out = fn(data_source="my/unlisted", solution_str="so \\boxed{4}", ground_truth="4", extra_info={})
    assert out["score"] == 1.0  # reward_kwargs.verifier=math routed an unlisted data_source


def test_the_readme_runtime_env_json_is_valid_json_for_ray():
    import re
    import shlex

    _, text = readme_blocks()
    line = re.search(r"ray job submit --runtime-env-json=('[^']*')", text).group(1)
    env = json.loads(shlex.split(line)[0])
    assert set(env["env_vars"]) == {"ASSAY_URL", "ASSAY_API_KEY"}
