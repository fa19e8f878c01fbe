"""verl's multi-turn sandbox tool (SandboxFusionTool) driving a live Assay.

verl's tool (repository volcengine/verl, tag v0.7.0, commit f9c855f7cf04d603c9546bc01776c74806a879c1,
file verl/tools/sandbox_fusion_tools.py, class SandboxFusionTool: `__init__` reads the config
below, `execute` calls `execute_code`) sends each tool call through verl's own SandboxFusion
client (`_process_single_case`, copied verbatim in verl_sandbox_fusion.py) to `sandbox_fusion_url`,
which here is Assay's /run_code. `execute_code` is copied below as it is in that file (Apache
License 2.0, Copyright 2025 Bytedance Ltd. and/or its affiliates), with `ToolResponse` and the
logger as small stand-ins, since importing verl pulls torch and ray. The tool config is verl's
examples/sglang_multiturn/config/tool_config/sandbox_fusion_tool_config.yaml at that tag, with
only the URL changed.
"""
import logging
from dataclasses import dataclass
from typing import Optional

import pytest

from conftest import need, need_docker, serve_assay
from verl_sandbox_fusion import _process_single_case

TOOL_CONFIG = """
tools:
  - class_name: "verl.tools.sandbox_fusion_tools.SandboxFusionTool"
    config:
      sandbox_fusion_url: "{url}/run_code"
      num_workers: 10
      enable_global_rate_limit: true
      rate_limit: 10
      default_timeout: 30
      default_language: "python"
      memory_limit_mb: 1024
      type: native

    tool_schema:
      type: "function"
      function:
        name: "code_interpreter"
        description: "A tool for executing code."
        parameters:
          type: "object"
          properties:
            code:
              type: "string"
              description: "The code to execute."
          required: ["code"]
"""

logger = logging.getLogger(__name__)


@dataclass
class ToolResponse:  # stand-in for verl.tools.schemas.ToolResponse (its `text` field)
    text: Optional[str] = None


class SandboxFusionTool:
    """The parts of verl's SandboxFusionTool a tool call runs: its config reading and execute_code."""

    def __init__(self, config: dict):
        # as in SandboxFusionTool.__init__ (v0.7.0)
        self.default_timeout = config.get("default_timeout", 30)
        self.default_language = config.get("default_language", "python")
        self.sandbox_fusion_url = config.get("sandbox_fusion_url", "")
        self.memory_limit_mb = config.get("memory_limit_mb", 1024)

    def execute(self, parameters: dict) -> ToolResponse:
        # as in SandboxFusionTool.execute (v0.7.0), without the ray pool
        code = parameters.get("code", "")
        timeout = parameters.get("timeout", self.default_timeout)
        language = parameters.get("language", self.default_language)
        if not isinstance(code, str):
            code = str(code)
        return self.execute_code("instance", code, timeout, language)

    # verbatim from verl v0.7.0 verl/tools/sandbox_fusion_tools.py
    def execute_code(self, instance_id, code, timeout=30, language="python"):
        result_status, metadata = _process_single_case(
            0, None, None, self.sandbox_fusion_url, code, timeout, self.memory_limit_mb, language
        )
        # we should always expect this since we don't have correct answer
        if metadata["run_status"] == "Finished":
            actual_output = metadata["stdout"] + metadata["stderr"]
            logger.debug(f"actual_output from sandbox fusion: {actual_output},{instance_id}")
            return ToolResponse(text=actual_output)
        else:
            return ToolResponse(text="no stdout here")


@pytest.fixture(scope="module")
def docker_assay():
    need_docker()
    with serve_assay(ASSAY_SANDBOX="docker", ASSAY_RUN_CODE_PYTHON="python", ASSAY_SANDBOX_POOL="2") as url:
        yield url


def test_verl_sandbox_tool_calls_run_in_assay(docker_assay):
    yaml = need("yaml")
    cfg = yaml.safe_load(TOOL_CONFIG.format(url=docker_assay))["tools"][0]
    assert cfg["tool_schema"]["function"]["name"] == "code_interpreter"
    tool = SandboxFusionTool(cfg["config"])
    # A tool call's output is what the model sees next: stdout then stderr.
    assert tool.execute({"code": "print(sum(range(10)))"}).text == "45\n"
    raised = tool.execute({"code": "import sys\nprint('before')\nraise ValueError('bad input')"}).text
    assert raised.startswith("before\n") and "ValueError: bad input" in raised
    assert tool.execute({"code": "echo from bash", "language": "bash"}).text == "from bash\n"
    # A call past its timeout: verl's client reads run_status TimeLimitExceeded -> "no stdout here".
    assert tool.execute({"code": "while True: pass", "timeout": 1}).text == "no stdout here"
