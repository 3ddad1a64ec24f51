"""A model whose own code raises (a bug in an adapter or in your `Model` class: a
ValueError on a reply it did not expect) ends the run `failed` with the error, on every path a run
takes: `run`, `run_sync`, `stream`, a Runtime's run and the seed's executors. The error's
class and text are in the run's failure (scrubbed) and in the log at ERROR with its
traceback; nothing escapes as an exception."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Literal

import pytest

from loopwright import AgentExecutor, ExecutionResult
from loopwright.compat import AutonomousSkillExecutor
from loopwright.events import Event, RunErrorEvent, RunFinishedEvent, encode_event
from loopwright.messages import ModelRequest, ModelResponse
from loopwright.runtime import Runtime
from loopwright.skills import load_skill
from loopwright.testing import InMemoryRunStore
from loopwright.tools import ToolExecutor, ToolRegistry

TOKEN = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"


class BrokenAdapter:
    """A model adapter with a bug: it reads a field the provider did not send."""

    name = "custom:broken"
    preferred_tool_mode: Literal["prompted"] = "prompted"

    async def complete(self, request: ModelRequest) -> ModelResponse:
        reply = {"error": f"upstream said no to {TOKEN}"}
        if "choices" not in reply:
            raise ValueError(f"no choices in {reply}")
        return ModelResponse(text=reply["choices"])


def assert_failed_with_the_error(result: ExecutionResult) -> None:
    assert (result.status, result.reason) == ("failed", "error")
    assert result.message is not None
    assert "the model custom:broken raised ValueError: no choices in {'error'" in result.message
    assert TOKEN not in result.message  # scrubbed, as every text of a run


def assert_logged(caplog: pytest.LogCaptureFixture) -> None:
    [record] = [r for r in caplog.records if r.name == "loopwright.models"]
    assert record.levelno == logging.ERROR
    text = record.getMessage()
    assert "the model custom:broken raised ValueError: no choices in" in text
    assert 'raise ValueError(f"no choices' in text  # the traceback: your line that raised
    assert TOKEN not in text


async def test_run_ends_failed_with_the_models_error_and_logs_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    events: list[Event] = []
    result = await AgentExecutor(BrokenAdapter()).run("hi", on_event=events.append)
    assert_failed_with_the_error(result)
    error = next(e for e in events if isinstance(e, RunErrorEvent))
    assert error.error_type == "ValueError"  # the class the model raised
    last = events[-1]
    assert isinstance(last, RunFinishedEvent) and last.status == "failed"
    assert_logged(caplog)


def test_run_sync_ends_failed(caplog: pytest.LogCaptureFixture) -> None:
    assert_failed_with_the_error(AgentExecutor(BrokenAdapter()).run_sync("hi"))
    assert_logged(caplog)


async def test_stream_ends_with_the_error_then_a_failed_finish() -> None:
    events = [e async for e in AgentExecutor(BrokenAdapter()).stream("hi")]
    error, finished = events[-2], events[-1]
    assert isinstance(error, RunErrorEvent) and error.error_type == "ValueError"
    assert TOKEN not in error.message
    assert isinstance(finished, RunFinishedEvent) and finished.status == "failed"


async def test_a_runtimes_run_is_stored_failed() -> None:
    store = InMemoryRunStore()
    runtime = Runtime(store)
    handle = runtime.start_agent(AgentExecutor(BrokenAdapter()), "hi")
    assert_failed_with_the_error(await handle.wait())
    record = store.get_run(handle.run_id)
    assert record is not None and record.status == "failed"
    stored = store.events(handle.run_id)
    assert any(isinstance(e, RunErrorEvent) and e.error_type == "ValueError" for e in stored)
    assert not any(TOKEN in encode_event(e) for e in stored)


async def test_the_seeds_execute_sync_returns_a_failed_result(tmp_path: Path) -> None:
    """Seed 000: `execute_sync()` collects what `execute()` streams. Where `execute()`
    ends with a TaskErrorEvent and a failed TaskDoneEvent, `execute_sync()` returns the
    failed result; it does not raise."""
    folder = tmp_path / "any-skill"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: any-skill\ndescription: d\n---\nDo it.\n")
    registry = ToolRegistry([])
    executor = AutonomousSkillExecutor(
        load_skill(folder), registry, ToolExecutor(registry), model=BrokenAdapter()
    )
    result = await executor.execute_sync("hi")
    assert not result.success
    assert_failed_with_the_error(result)
