"""verl's MCP tool support driving Assay's POST /mcp: verl's own MCP client code (MCPClientManager
and mcp2openai, verbatim in verl_replay/, volcengine/verl v0.7.0) lists Assay's tools and calls
them through fastmcp, as verl's MCPBaseTool does during a multi-turn rollout.

verl's flow (v0.7.0): verl/tools/mcp_base_tool.py builds one tool per MCP tool from
`ClientManager.fetch_tool_schemas(tool_selected_list)` (tools/list, converted by mcp2openai), then
`MCPBaseTool._call_tool` calls `ClientManager.call_tool(name, parameters, timeout)` (tools/call) and
`MCPBaseTool._parse_tool_result` joins the text parts; both methods are replayed below (they sit on
verl's BaseTool, which needs torch).
"""
from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from conftest import need, serve_assay

sys.path.append(str(Path(__file__).parent / "verl_replay"))

KEY = "verl-mcp-key-1"


def _parse_tool_result(content: list) -> tuple[str, dict]:
    # verl v0.7.0, verl/tools/mcp_base_tool.py, MCPBaseTool._parse_tool_result (Apache-2.0, Bytedance)
    tools_content = [part.text for part in filter(lambda x: x.type == "text", content)]
    return " ".join(tools_content), {}


async def _call_tool(manager, name: str, parameters: dict) -> tuple[str, dict]:
    # verl v0.7.0, verl/tools/mcp_base_tool.py, MCPBaseTool._call_tool, its happy path and its
    # error path (a ClientError or any exception becomes the tool's text)
    from fastmcp.exceptions import ClientError

    err_msg = ""
    metadata: dict = {}
    try:
        call_tool_result = await manager.call_tool(name, parameters, 30)
        result, metadata = _parse_tool_result(call_tool_result.content)
    except ClientError as e:
        err_msg = f"\n Tool call failed: {e}"
    except ConnectionError as e:
        err_msg = f"\n Connection failed: {e}"
    except Exception as e:
        err_msg = f"\n An unexpected error occurred: {e}"
    finally:
        if err_msg:
            result = err_msg
            metadata["api_request_error"] = err_msg
        else:
            metadata["api_request_error"] = None
    return result, metadata


def _manager(tmp_path: Path, server: dict):
    """A fresh MCPClientManager over a verl mcp_servers_config_path file holding `server`."""
    need("fastmcp")
    from verl.tools.utils.mcp_clients.McpClientManager import MCPClientManager

    config = tmp_path / "mcp_server.json"
    config.write_text(json.dumps({"mcpServers": {"assay": server}}))
    manager = MCPClientManager()
    # verl keeps these as class attributes (one ClientManager per process): a fresh one per test.
    manager.clients, manager.tool_client_mapping, manager.initialized = [], {}, False
    asyncio.run(manager.initialize(str(config), rate_limit=100))
    return manager


def _rollout(manager) -> dict:
    async def go():
        schemas = await manager.fetch_tool_schemas(["check_math", "run_code", "run_tests", "run_sql"])
        right = await _call_tool(manager, "check_math", {"response": "so \\boxed{\\frac{1}{2}}", "reference": "0.5"})
        wrong = await _call_tool(manager, "check_math", {"response": "\\boxed{3}", "reference": "0.5"})
        code = await _call_tool(manager, "run_code", {"code": "print(1)", "language": "python"})
        missing = await _call_tool(manager, "check_math", {"reference": "1"})
        return {"schemas": schemas, "right": right, "wrong": wrong, "code": code, "missing": missing}

    return asyncio.run(go())


def _check(r: dict) -> None:
    names = sorted(s["function"]["name"] for s in r["schemas"])
    assert names == ["check_math", "run_code", "run_sql", "run_tests"]
    for s in r["schemas"]:  # mcp2openai: OpenAI function tools with the server's JSON schema
        assert s["type"] == "function"
        assert s["function"]["parameters"]["type"] == "object"
        assert s["function"]["description"]
    math = next(s for s in r["schemas"] if s["function"]["name"] == "check_math")
    assert math["function"]["parameters"]["required"] == ["response", "reference"]
    text, meta = r["right"]
    assert meta["api_request_error"] is None
    assert json.loads(text)["reward"] == 1
    text, meta = r["wrong"]
    assert meta["api_request_error"] is None, "a wrong answer is a result the model reads, not a failed call"
    assert json.loads(text)["reward"] == 0
    # No sandbox on this server: run_code answers SandboxFusion's SandboxError, as /run_code does.
    text, _ = r["code"]
    assert "SandboxError" in text
    # A call the server refuses (a required argument missing) reaches the model as text saying why.
    text, _ = r["missing"]
    assert "response" in text


def test_verl_mcp_client_lists_and_calls_assay_tools(tmp_path: Path) -> None:
    with serve_assay() as url:
        _check(_rollout(_manager(tmp_path, {"url": f"{url}/mcp"})))


def test_verl_mcp_client_with_a_key_in_the_path(tmp_path: Path) -> None:
    """With ASSAY_API_KEYS: the key in the URL (verl's `auth_token` would switch it to the legacy
    SSE transport, which Assay does not serve), or fastmcp's `headers` in the server entry."""
    with serve_assay(ASSAY_API_KEYS=KEY) as url:
        _check(_rollout(_manager(tmp_path, {"url": f"{url}/k/{KEY}/mcp"})))
        _check(_rollout(_manager(tmp_path, {"url": f"{url}/mcp", "headers": {"Authorization": f"Bearer {KEY}"}})))
        refused = _manager(tmp_path, {"url": f"{url}/mcp"})
        with pytest.raises(Exception, match=r"401|Unauthorized|API key|error response"):
            asyncio.run(refused.fetch_tool_schemas([]))
