"""OpenTelemetry spans of agent runs, model calls, tool calls and task runs, read back from
the SDK's in-memory exporter: the tree, the GenAI attributes, scrubbing, the trace context
sent to a real HTTP model server, and parentage across a task's agent step."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from loopwright import AgentExecutor, AgentOptions, telemetry
from loopwright.compat import Settings, StepDefinition, TaskDefinition, TaskExecutor
from loopwright.models import OpenAIModel
from loopwright.testing import ScriptedModel
from loopwright.tools import tool

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "streaming"))
from stream_server import openai_sse, stream_server

SECRET = "AKIA" + "Z7Q4LMNB2XK9PQRS"
ROOT = Path(__file__).resolve().parents[2]


@tool(effect="read")
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(effect="read")
def lookup(name: str) -> str:
    """Look a name up."""
    raise RuntimeError(f"no entry for {name}")


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.enable(provider, capture_content=True)
    yield exporter
    telemetry.disable()


def by_name(exporter: InMemorySpanExporter) -> dict[str, list[ReadableSpan]]:
    out: dict[str, list[ReadableSpan]] = {}
    for span in exporter.get_finished_spans():
        out.setdefault(span.name, []).append(span)
    return out


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


CALL = json.dumps({"thought": "add them", "action": "add", "action_input": {"a": 17, "b": 25}})
FINAL = json.dumps({"thought": "done", "final_answer": "42"})


async def test_a_run_is_a_span_tree_with_genai_attributes(spans: InMemorySpanExporter) -> None:
    model = ScriptedModel([CALL, FINAL], name="scripted:calc")
    result = await AgentExecutor(model, [add]).run("What is 17 + 25?")
    assert result.answer == "42"
    named = by_name(spans)
    assert sorted(named) == ["chat calc", "execute_tool add", "invoke_agent loopwright"]
    (run,) = named["invoke_agent loopwright"]
    chats, (tool_span,) = named["chat calc"], named["execute_tool add"]
    assert len(chats) == 2
    assert run.parent is None
    assert {parent_of(s) for s in [*chats, tool_span]} == {run.context.span_id}
    assert run.attributes is not None and chats[0].attributes is not None
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["gen_ai.conversation.id"] == result.run_id
    assert run.attributes["gen_ai.usage.output_tokens"] == result.usage.output_tokens > 0
    chat = chats[0].attributes
    assert chat["gen_ai.operation.name"] == "chat"
    assert chat["gen_ai.provider.name"] == "scripted"
    assert chat["gen_ai.request.model"] == "calc"
    assert chat["gen_ai.usage.output_tokens"] == len(CALL) // 4
    assert tool_span.attributes is not None
    assert tool_span.attributes["gen_ai.tool.name"] == "add"
    assert tool_span.attributes["gen_ai.tool.call.result"] == "42"
    assert tool_span.status.status_code == StatusCode.UNSET
    # the tool ran inside the model turn's run, after the first chat, before the second
    assert chats[0].end_time <= tool_span.start_time <= tool_span.end_time <= chats[1].start_time  # type: ignore[operator]


async def test_attributes_and_errors_are_scrubbed(spans: InMemorySpanExporter) -> None:
    call = json.dumps({"action": "lookup", "action_input": {"name": f"key {SECRET}"}})
    model = ScriptedModel([call, FINAL])
    await AgentExecutor(model, [lookup]).run("look it up")
    (tool_span,) = by_name(spans)["execute_tool lookup"]
    assert tool_span.status.status_code == StatusCode.ERROR
    assert tool_span.attributes is not None
    assert tool_span.attributes["error.type"] == "tool_error"
    exported = json.dumps(
        [
            {"attributes": dict(s.attributes or {}), "status": s.status.description}
            for s in spans.get_finished_spans()
        ]
    )
    assert SECRET not in exported
    assert "[REDACTED" in str(tool_span.attributes["gen_ai.tool.call.arguments"])
    assert "[REDACTED" in (tool_span.status.description or "")


async def test_a_failed_run_marks_its_span(spans: InMemorySpanExporter) -> None:
    model = ScriptedModel([CALL], strict=False)
    options = AgentOptions(max_iterations=1)
    result = await AgentExecutor(model, [add], options=options).run("q")
    assert not result.success
    (run,) = by_name(spans)["invoke_agent loopwright"]
    assert run.status.status_code == StatusCode.ERROR
    assert run.attributes is not None and run.attributes["loopwright.status"] == result.status


async def test_http_model_calls_carry_the_trace_context(spans: InMemorySpanExporter) -> None:
    with stream_server() as server:
        server.replies.append(openai_sse([FINAL]))
        model = OpenAIModel("qwen", base_url=f"{server.url}/v1")
        result = await AgentExecutor(model).run("q")
    assert result.answer == "42"
    (chat,) = by_name(spans)["chat qwen"]
    _version, trace_id, span_id, _flags = server.headers[0]["traceparent"].split("-")
    assert int(trace_id, 16) == chat.context.trace_id
    assert int(span_id, 16) == chat.context.span_id  # the server's work is the call's child
    assert chat.attributes is not None and chat.attributes["gen_ai.provider.name"] == "openai"


@tool(effect="read")
def count_devices(site: str) -> dict[str, Any]:
    """Count the devices at a site."""
    return {"site": site, "count": 3}


async def test_a_task_agent_step_is_a_child_of_the_task(
    spans: InMemorySpanExporter, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = Settings(data_dir=tmp_path / "data", workspace=workspace, tools=[count_devices])
    steps = [
        StepDefinition("count", "tool", "count", "count_devices", {"site": "inputs.site"}),
        StepDefinition("explain", "agent", "Explain the count in one sentence."),
    ]
    definition = TaskDefinition("inventory", "analyst", ("inventory",), "low", steps, {})
    engine = ScriptedModel([json.dumps({"thought": "3", "final_answer": "HQ has 3."})])
    events = [
        e
        async for e in TaskExecutor(engine, settings).execute(
            definition, "hq?", {"site": "hq"}, "acme"
        )
    ]
    assert events[-1]["status"] == "completed"
    named = by_name(spans)
    (task,) = named["task inventory"]
    (counting,) = named["execute_tool count_devices"]
    (step,) = named["execute_tool agent"]
    (agent,) = named["invoke_agent loopwright"]
    (chat,) = named["chat scripted"]
    assert task.parent is None
    assert parent_of(counting) == parent_of(step) == task.context.span_id
    assert parent_of(agent) == step.context.span_id  # the agent run, under its step
    assert parent_of(chat) == agent.context.span_id
    assert {s.context.trace_id for s in (task, step, agent, chat)} == {task.context.trace_id}
    assert agent.attributes is not None
    assert agent.attributes["loopwright.parent_run_id"] == task.attributes["loopwright.run_id"]  # type: ignore[index]


@pytest.mark.subprocess
def test_off_imports_nothing_from_opentelemetry(tmp_path: Path) -> None:
    code = (
        "import asyncio, sys, json\n"
        "from loopwright import AgentExecutor, ScriptedModel\n"
        "from loopwright.cli import main\n"
        "r = AgentExecutor(ScriptedModel([json.dumps({'final_answer': 'hi'})])).run_sync('q')\n"
        "assert r.answer == 'hi'\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.subprocess
async def test_mcp_tool_calls_carry_the_trace_context(spans: InMemorySpanExporter) -> None:
    from loopwright.mcp import MCPConnections

    server = f"{sys.executable} {Path(__file__).parent / 'trace_mcp_server.py'}"
    call = json.dumps({"action": "trace_context", "action_input": {}})
    async with MCPConnections([server]) as connections:
        model = ScriptedModel([call, FINAL])
        result = await AgentExecutor(model, connections.tools()).run("q")
    assert result.steps[0].tool_name == "trace_context"
    sent = json.loads(result.steps[0].result)
    (tool_span,) = by_name(spans)["execute_tool trace_context"]
    _version, trace_id, span_id, _flags = sent["traceparent"].split("-")
    assert int(trace_id, 16) == tool_span.context.trace_id
    assert int(span_id, 16) == tool_span.context.span_id


async def test_an_agent_called_by_a_tool_is_a_child_span(spans: InMemorySpanExporter) -> None:
    """One agent calling another (what `as_tool` does): the inner run's span is a child of
    the outer run's tool call, in the same trace."""
    inner = AgentExecutor(ScriptedModel([FINAL] * 1, name="scripted:inner"))

    @tool(effect="read")
    async def ask_expert(question: str) -> str:
        """Ask another agent."""
        return (await inner.run(question)).answer or ""

    call = json.dumps({"action": "ask_expert", "action_input": {"question": "17 + 25?"}})
    outer = AgentExecutor(ScriptedModel([call, FINAL], name="scripted:outer"), [ask_expert])
    result = await outer.run("ask the expert")
    assert result.steps[0].result == "42"
    runs = sorted(by_name(spans)["invoke_agent loopwright"], key=lambda s: s.start_time or 0)
    (asking,) = by_name(spans)["execute_tool ask_expert"]
    (inner_chat,) = by_name(spans)["chat inner"]
    outer_run, inner_run = runs
    assert parent_of(asking) == outer_run.context.span_id
    assert parent_of(inner_run) == asking.context.span_id
    assert parent_of(inner_chat) == inner_run.context.span_id
    assert inner_run.context.trace_id == outer_run.context.trace_id
