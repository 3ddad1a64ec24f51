"""Seed 001's trace on Python logging (issue 34, item 9): "Thinking... Calling... Observing...
Final Answer", one INFO record a step on the `loopwright.trace` logger, written by an event
sink (the loop itself never logs or prints).

Seed 001's line held here: "Run it and watch the logs: "Thinking... Calling Echo...
Observing... Thinking... Final Answer"."
"""

from __future__ import annotations

import json
import logging

import pytest

from loopwright.agent import AgentExecutor
from loopwright.compat import AgentExecutor as SeedAgentExecutor
from loopwright.telemetry import EventLogger
from loopwright.testing import ScriptedModel
from loopwright.tools import tool


@tool
def echo(text: str) -> str:
    """Repeat the given text back."""
    return text


def action(text: str) -> str:
    return json.dumps({"thought": "echo it", "action": "echo", "action_input": {"text": text}})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


def trace_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "loopwright.trace"]


async def test_the_seed_001_executor_logs_its_trace_at_info(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Seed 001: "watch the logs: "Thinking... Calling Echo... Observing... Thinking...
    Final Answer"": with the `loopwright` logger at INFO, a run writes exactly that."""
    caplog.set_level(logging.INFO, logger="loopwright")
    agent = SeedAgentExecutor(ScriptedModel([action("hi"), final("said hi")]), [echo])
    assert await agent.run("echo hi") == "said hi"
    assert trace_of(caplog) == [
        "Thinking... (iteration 1/10)",
        'Calling echo({"text": "hi"})...',
        "Observing echo: hi",
        "Thinking... (iteration 2/10)",
        "Final Answer: said hi",
    ]
    assert all(r.levelno == logging.INFO for r in caplog.records if r.name == "loopwright.trace")
    assert {getattr(r, "run_id", None) for r in caplog.records if r.name == "loopwright.trace"} == {
        agent.result.run_id if agent.result else None
    }


async def test_nothing_is_logged_when_the_logger_is_not_enabled(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="loopwright")
    agent = SeedAgentExecutor(ScriptedModel([action("hi"), final("said hi")]), [echo])
    assert await agent.run("echo hi") == "said hi"
    assert trace_of(caplog) == []


async def test_the_loop_never_logs_a_native_run_logs_through_the_sink(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The trace is a sink's work: a native run without it logs nothing, with
    `on_event=EventLogger()` it logs the same lines; a model's control characters are
    shown as escapes, not sent to the terminal."""
    caplog.set_level(logging.INFO, logger="loopwright")
    await AgentExecutor(ScriptedModel([action("hi"), final("ok")]), [echo]).run("echo hi")
    assert trace_of(caplog) == []
    model = ScriptedModel([action("\x1b[2Jgone"), final("ok")])
    await AgentExecutor(model, [echo]).run("echo", on_event=EventLogger())
    lines = trace_of(caplog)
    assert lines[0] == "Thinking... (iteration 1/10)" and lines[-1] == "Final Answer: ok"
    assert "Observing echo: \\x1b[2Jgone" in lines and not any("\x1b" in line for line in lines)
