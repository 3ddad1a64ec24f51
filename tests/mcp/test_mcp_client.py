"""MCP tools against a real MCP server process (examples/mcp_server.py), stdio and HTTP."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopwright._ports import server_port
from loopwright.agent import AgentExecutor
from loopwright.errors import ConfigurationError
from loopwright.events import ToolCallEvent
from loopwright.mcp import MCPConnections
from loopwright.testing import ScriptedModel

pytestmark = pytest.mark.subprocess

SERVER = Path(__file__).parents[2] / "examples" / "mcp_server.py"
STDIO = f"{sys.executable} {SERVER}"


def call(tool: str, **args: object) -> str:
    return json.dumps({"thought": f"use {tool}", "action": tool, "action_input": args})


def final(answer: str) -> str:
    return json.dumps({"final_answer": answer})


def free_port() -> int:
    """A port for the server to bind, drawn where the kernel hands out none to others."""
    return server_port()


@pytest.fixture
def http_server() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if process.poll() is not None:
                raise RuntimeError("MCP HTTP server exited") from None
            time.sleep(0.05)  # polling a port with a deadline, not synchronising on time
    yield f"http://127.0.0.1:{port}/mcp"
    process.terminate()
    process.wait(timeout=10)


async def test_stdio_tools_join_registry_with_their_schemas() -> None:
    async with MCPConnections([STDIO]) as servers:
        tools = {t.name: t for t in servers.tools()}
    assert {"add_note", "list_notes", "multiply", "slow", "crash"} <= set(tools)
    assert tools["multiply"].parameters["required"] == ["a", "b"]
    assert tools["multiply"].description == "Multiply two integers."


async def test_agent_calls_mcp_tool_over_stdio() -> None:
    model = ScriptedModel([call("multiply", a=6, b=7), final("42")])
    async with MCPConnections([STDIO]) as servers:
        result = await AgentExecutor(model, servers.tools()).run("6*7")
    assert result.success and result.steps[0].result == "42"


async def test_arguments_are_validated_against_server_schema_before_the_call() -> None:
    model = ScriptedModel([call("multiply", a="six", b=7), final("gave up")])
    async with MCPConnections([STDIO]) as servers:
        result = await AgentExecutor(model, servers.tools()).run("x")
    observation = result.steps[0].result
    assert result.steps[0].is_error
    assert "invalid arguments (a)" in observation and "'integer'" in observation


async def test_server_timeout_becomes_error_observation() -> None:
    model = ScriptedModel([call("slow", seconds=10), final("moved on")])
    async with MCPConnections([STDIO], call_timeout_s=0.5) as servers:
        result = await AgentExecutor(model, servers.tools()).run("x")
    assert result.success and result.answer == "moved on"
    assert "did not answer 'slow' within 0.5s" in result.steps[0].result


async def test_server_that_dies_becomes_error_observation_and_event() -> None:
    model = ScriptedModel([call("crash"), call("multiply", a=2, b=3), final("server is gone")])
    async with MCPConnections([STDIO], call_timeout_s=5) as servers:
        events = [e async for e in AgentExecutor(model, servers.tools()).stream("x")]
    finished = [e for e in events if isinstance(e, ToolCallEvent)]
    assert [e.is_error for e in finished] == [True, True]
    assert "MCP server 'notes'" in finished[0].result
    assert events[-1].type == "run_finished"


async def test_streamable_http_transport(http_server: str) -> None:
    model = ScriptedModel([call("add_note", text="buy milk"), call("list_notes"), final("ok")])
    async with MCPConnections([http_server]) as servers:
        result = await AgentExecutor(model, servers.tools()).run("note")
    assert result.steps[0].result == "stored note 1"
    assert "buy milk" in result.steps[1].result


async def test_same_tool_name_on_two_servers_is_prefixed(http_server: str) -> None:
    async with MCPConnections([STDIO, http_server]) as servers:
        names = {t.name for t in servers.tools()}
    assert "notes__multiply" in names and "notes-2__multiply" in names
    assert "multiply" not in names


async def test_unstartable_server_is_a_clear_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot connect to MCP server"):
        async with MCPConnections([f"{tmp_path}/no-such-server"], connect_timeout_s=10):
            pass


def test_cli_run_with_mcp_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from loopwright.cli import main

    script = tmp_path / "script.json"
    script.write_text(json.dumps([call("multiply", a=3, b=5), final("15")]))
    code = main(["run", "3*5", "--model", f"scripted:{script}", "--mcp", STDIO, "--json"])
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0
    assert "multiply" in events[0]["tools"]
    assert events[0]["spec"]["mcp"] == [STDIO]
    assert [e["result"] for e in events if e["type"] == "tool_call"] == ["15"]


DEEP = f"{sys.executable} {Path(__file__).with_name('deep_server.py')}"


async def test_a_tools_list_nested_too_deep_is_a_clear_error_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with pytest.raises(ConfigurationError) as refused:
        async with MCPConnections([f"{DEEP} list"], connect_timeout_s=120):
            pass
    assert str(refused.value).startswith(
        f"MCP server '{DEEP} list' sent a message that cannot be read: "
        "Invalid JSON: recursion limit exceeded at line 1 column "
    )
    assert "\n" not in str(refused.value)
    assert "Traceback" not in caplog.text and "Failed to parse" not in caplog.text


async def test_a_call_answered_too_deep_is_an_error_observation_at_once() -> None:
    model = ScriptedModel([call("deep"), final("gave up")])
    async with MCPConnections([f"{DEEP} call"], call_timeout_s=120) as servers:
        result = await AgentExecutor(model, servers.tools()).run("x")
    assert result.steps[0].is_error
    assert "MCP server 'deep' sent a message that cannot be read: Invalid JSON" in (
        result.steps[0].result
    )
