"""Seed 003's guardrails as defaults: the wall clock is on without being asked (30 min for
runs with tools, 10 min for runs without), and the no-progress stop counts
file modifications for runs that can modify files (new observations for the others)."""

from __future__ import annotations

from pathlib import Path

import pytest
from guard_helpers import SlowModel, call, final

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.clock import MockClock
from loopwright.errors import ConfigurationError
from loopwright.events import Event, RunStartedEvent, RunStoppedEvent
from loopwright.testing import ScriptedModel
from loopwright.tools import BUILTIN_TOOLS, ToolContext, tool


@tool(effect="read")
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@tool(effect="write")
def save(ctx: ToolContext, name: str) -> str:
    """Save a record (changes things)."""
    return f"saved {name}"


@tool
def undeclared(key: str) -> str:
    """Declares no effect: it may change things."""
    return key


def test_the_default_wall_clock_depends_on_the_tools() -> None:
    model = ScriptedModel([])
    assert AgentExecutor(model, []).options.timeout_s == 600
    assert AgentExecutor(model, [lookup]).options.timeout_s == 1800
    assert AgentExecutor(model, [lookup, save]).options.timeout_s == 1800
    assert AgentExecutor(model, [undeclared]).options.timeout_s == 1800
    assert AgentExecutor(model, [save], options=AgentOptions(timeout_s=45)).options.timeout_s == 45
    assert AgentExecutor(model, [save], options=AgentOptions(timeout_s=0)).options.timeout_s == 0


async def test_a_run_without_tools_stops_after_10_minutes(clock: MockClock) -> None:
    # no tool to run: each call is answered "unknown tool", and with a threshold of 10
    # calls to unknown tools (3 by default) the run goes on until its clock stops it
    scripted = ScriptedModel([call("lookup", key=f"k{i}") for i in range(10)], strict=False)
    options = AgentOptions(repetition_threshold=10)
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    agent = AgentExecutor(SlowModel(scripted, clock, seconds=250), [], options=options, clock=clock)
    result = await agent.run("slow", on_event=sink)
    assert (result.status, result.reason) == ("stopped", "timeout")
    assert len(scripted.requests) == 3  # 250, 500, 750 s: nothing after the 600 s limit
    assert "600s limit" in (result.message or "")
    started = events[0]
    assert isinstance(started, RunStartedEvent) and started.options["timeout_s"] == 600


async def test_a_run_with_tools_gets_30_minutes(clock: MockClock) -> None:
    replies = [call("lookup", key=f"r{i}") for i in range(10)]
    scripted = ScriptedModel(replies, strict=False)
    agent = AgentExecutor(SlowModel(scripted, clock, seconds=700), [lookup], clock=clock)
    result = await agent.run("slow writes")
    assert (result.status, result.reason) == ("stopped", "timeout")
    assert len(scripted.requests) == 3  # 700, 1400, 2100 s: over 1800 s
    assert "1800s limit" in (result.message or "")


async def test_timeout_zero_turns_the_wall_clock_off(clock: MockClock) -> None:
    scripted = ScriptedModel([call("lookup", key="a"), final("late but done")])
    options = AgentOptions(timeout_s=0)
    agent = AgentExecutor(
        SlowModel(scripted, clock, seconds=5000), [lookup], options=options, clock=clock
    )
    result = await agent.run("very slow")
    assert (result.status, result.answer) == ("completed", "late but done")


def workspace(tmp_path: Path) -> Path:
    for name in "abcdefgh":
        (tmp_path / f"{name}.txt").write_text(f"file {name}\n", encoding="utf-8")
    return tmp_path


async def test_file_tools_make_file_modifications_the_progress_signal(tmp_path: Path) -> None:
    reads = [call("read", path=f"{name}.txt") for name in "abcdefg"]
    model = ScriptedModel(reads, strict=False)
    options = AgentOptions(tier="complex")
    agent = AgentExecutor(
        model, BUILTIN_TOOLS.values(), options=options, workspace=workspace(tmp_path)
    )
    assert agent.options.progress_signal == "files"
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    result = await agent.run("read everything", on_event=sink)
    assert (result.status, result.reason) == ("stopped", "no_progress")
    assert len(result.steps) == 5  # five new files read, none modified: the seed's rule
    stop = next(e for e in events if isinstance(e, RunStoppedEvent))
    assert "no file was modified in 5 rounds" in stop.message
    assert "progress signal: file modifications" in stop.message


async def test_a_file_modification_resets_the_count(tmp_path: Path) -> None:
    replies = [
        call("read", path="a.txt"),
        call("read", path="b.txt"),
        call("write_file", path="out.txt", content="summary"),
        *[call("read", path=f"{name}.txt") for name in "cdefgh"],
    ]
    model = ScriptedModel(replies, strict=False)
    agent = AgentExecutor(
        model,
        BUILTIN_TOOLS.values(),
        options=AgentOptions(tier="complex"),
        workspace=workspace(tmp_path),
    )
    result = await agent.run("summarise")
    assert result.reason == "no_progress"
    assert len(result.steps) == 3 + 5
    assert result.modified_files == ("out.txt",)


async def test_without_file_tools_new_observations_are_progress(tmp_path: Path) -> None:
    read_only = [BUILTIN_TOOLS[name] for name in ("read", "list_files")]
    reads = [call("read", path=f"{name}.txt") for name in "abcdefg"]
    model = ScriptedModel([*reads, final("read them all")])
    agent = AgentExecutor(
        model, read_only, options=AgentOptions(tier="complex"), workspace=workspace(tmp_path)
    )
    assert agent.options.progress_signal == "observations"
    result = await agent.run("read everything")
    assert (result.status, result.answer) == ("completed", "read them all")

    same = [  # three calls in turn: two in turn are a repetition (guards.Repetition)
        call("read", path="a.txt", start_line=1),
        call("read", path="a.txt", end_line=1),
        call("read", path="a.txt", start_line=1, end_line=1),
    ] * 2
    stuck = AgentExecutor(
        ScriptedModel(same, strict=False),
        read_only,
        options=AgentOptions(tier="complex"),
        workspace=workspace(tmp_path),
    )
    stopped = await stuck.run("read a again and again")
    assert stopped.reason == "no_progress"
    assert "progress signal: new observations" in (stopped.message or "")


def test_the_progress_signal_can_be_chosen() -> None:
    options = AgentOptions(progress_signal="observations")
    agent = AgentExecutor(ScriptedModel([]), BUILTIN_TOOLS.values(), options=options)
    assert agent.options.progress_signal == "observations"


def test_bad_values_are_refused_by_name() -> None:
    with pytest.raises(ConfigurationError, match="unknown progress_signal 'bytes'"):
        AgentOptions(progress_signal="bytes")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="timeout_s must be 0"):
        AgentOptions(timeout_s=-1)
