"""Sub-agents: agent.as_tool(...) runs a child run linked to the parent's call; usage
against the parent's budget; depth limit; cancel; resume continues the child."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from inprocess_cli import CliRun
from loopwright import AgentExecutor, AgentOptions
from loopwright.events import (
    Event,
    RunFinishedEvent,
    RunStartedEvent,
    ToolCallEvent,
    ToolCallStartedEvent,
)
from loopwright.messages import ModelResponse, Usage
from loopwright.runtime import Runtime
from loopwright.store import SqliteRunStore
from loopwright.testing import ScriptedModel
from loopwright.tools import tool

CALLS: list[str] = []


@tool(effect="read")
def lookup(topic: str) -> str:
    """Look a topic up.

    Args:
        topic: what to look up
    """
    CALLS.append(topic)
    return f"facts about {topic}"


def act(name: str, **arguments: Any) -> str:
    return json.dumps({"thought": "go", "action": name, "action_input": arguments})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


def reply(text: str, tokens: int) -> ModelResponse:
    return ModelResponse(text=text, usage=Usage(tokens, 0), model="scripted")


class Collect:
    def __init__(self) -> None:
        self.events: list[Event] = []

    async def __call__(self, event: Event) -> None:
        self.events.append(event)

    def of(self, run_id: str) -> list[Event]:
        return [e for e in self.events if e.run_id == run_id]

    def child_of(self, run_id: str) -> str:
        return child_of(self.events, run_id)


def child_of(events: list[Event], run_id: str, call_id: str = "call_1_0") -> str:
    """The run that the call `call_id` of run `run_id` started, as its `tool_call_started`
    names it."""
    [child] = [
        e.child_run_id
        for e in events
        if isinstance(e, ToolCallStartedEvent) and (e.run_id, e.call_id) == (run_id, call_id)
    ]
    assert child is not None
    return child


def researcher(replies: list[Any]) -> AgentExecutor:
    return AgentExecutor(ScriptedModel(replies, strict=False), [lookup])


async def test_child_is_its_own_run_linked_to_the_call() -> None:
    CALLS.clear()
    child = researcher([act("lookup", topic="tides"), final("tides follow the moon")])
    parent_model = ScriptedModel([act("research", request="why tides?"), final("the moon")])
    parent = AgentExecutor(parent_model, [child.as_tool("research", "Research a question.")])
    seen = Collect()
    result = await parent.run("explain tides", on_event=seen, run_id="run_parent")
    assert result.answer == "the moon"
    child_id = seen.child_of("run_parent")
    started = seen.of(child_id)[0]
    assert isinstance(started, RunStartedEvent)
    assert (started.parent_run_id, started.parent_call_id) == ("run_parent", "call_1_0")
    assert started.request == "why tides?"
    assert isinstance(seen.of(child_id)[-1], RunFinishedEvent)
    [finished] = [e for e in seen.of("run_parent") if isinstance(e, ToolCallEvent)]
    assert finished.result == "tides follow the moon"
    assert CALLS == ["tides"]


async def test_child_usage_counts_against_the_parent_budget() -> None:
    child = researcher([reply(act("lookup", topic="x"), 600), reply(final("done"), 600)])
    parent_model = ScriptedModel(
        [reply(act("research", request="x"), 100), reply(final("never"), 100)], strict=False
    )
    options = AgentOptions(max_tokens_total=1000)
    tools = [child.as_tool("research", "Research.")]
    result = await AgentExecutor(parent_model, tools, options=options).run("x")
    assert result.status == "stopped" and result.reason == "budget"
    assert result.usage.input_tokens >= 700  # the parent's 100 + the child's 600
    # the child got only what the parent had left (900): its second call was not made
    assert len(parent_model.requests) == 1
    assert len(child.model.requests) == 1  # type: ignore[attr-defined]


async def test_depth_limit() -> None:
    leaf = researcher([final("leaf")])
    middle = AgentExecutor(
        ScriptedModel([act("leaf", request="x"), final("middle")]),
        [leaf.as_tool("leaf", "Leaf.", max_depth=2)],
    )
    top_model = ScriptedModel([act("middle", request="x"), final("top")])
    top = AgentExecutor(top_model, [middle.as_tool("middle", "Middle.", max_depth=2)])
    seen = Collect()
    result = await top.run("x", on_event=seen)
    assert result.success
    runs = {e.run_id for e in seen.events if isinstance(e, RunStartedEvent)}
    assert len(runs) == 2  # top and middle; the leaf was refused
    refused = [e for e in seen.events if isinstance(e, ToolCallEvent) and e.tool_name == "leaf"]
    assert refused[0].is_error and "nest 2 deep at most" in refused[0].result


async def test_cancelling_the_parent_cancels_the_child() -> None:
    gate = asyncio.Event()

    @tool(effect="read")
    async def slow() -> str:
        """Wait a long time."""
        await gate.wait()
        return "late"

    child = AgentExecutor(ScriptedModel([act("slow"), final("x")], strict=False), [slow])
    parent = AgentExecutor(
        ScriptedModel([act("work", request="x"), final("y")], strict=False),
        [child.as_tool("work", "Work.")],
    )
    seen = Collect()
    task = asyncio.ensure_future(parent.run("x", on_event=seen, run_id="run_p"))
    while not any(
        isinstance(e, ToolCallStartedEvent) and e.tool_name == "slow" for e in seen.events
    ):
        await asyncio.sleep(0.01)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    finished = {e.run_id: e.status for e in seen.events if isinstance(e, RunFinishedEvent)}
    assert finished == {"run_p": "cancelled", seen.child_of("run_p"): "cancelled"}


async def test_resume_continues_the_child_where_it_stopped() -> None:
    CALLS.clear()
    replies = [act("lookup", topic="a"), act("lookup", topic="b"), final("a and b")]
    child = researcher(replies)
    parent_replies = [act("research", request="a then b"), final("done: a and b")]
    parent = AgentExecutor(ScriptedModel(parent_replies), [child.as_tool("research", "R.")])
    seen = Collect()
    await parent.run("go", on_event=seen, run_id="run_q")
    child_id = seen.child_of("run_q")
    # the process "stopped" after the child's first lookup finished
    first_done = next(
        i for i, e in enumerate(seen.events)
        if isinstance(e, ToolCallEvent) and e.run_id == child_id
    )  # fmt: skip
    recorded = seen.events[: first_done + 1]
    CALLS.clear()
    child2 = researcher(replies)  # the same scripts: each goes on after what its log served
    parent2 = AgentExecutor(ScriptedModel(parent_replies), [child2.as_tool("research", "R.")])
    again = Collect()
    result = await parent2.run("go", on_event=again, recorded=recorded)
    assert result.answer == "done: a and b"
    assert CALLS == ["b"]  # "a" was not looked up again
    assert (
        next(e.seq for e in again.of(child_id))
        == len([e for e in recorded if e.run_id == child_id]) + 1
    )


async def test_child_runs_are_stored_with_their_parent(tmp_path: Path) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    runtime = Runtime(store)
    child = researcher([final("child answer")])
    parent = AgentExecutor(
        ScriptedModel([act("research", request="q"), final("parent answer")]),
        [child.as_tool("research", "R.")],
    )
    try:
        handle = runtime.start_agent(parent, "q", run_id="run_s")
        await handle.wait()
        record = store.get_run(child_of(store.events("run_s"), "run_s"))
        assert record is not None and record.parent_run_id == "run_s"
        assert record.status == "completed"
        started = store.events(record.run_id)[0]
        assert isinstance(started, RunStartedEvent) and started.parent_call_id == "call_1_0"
    finally:
        runtime.close()
        store.close()


@pytest.mark.subprocess  # the example, as a user runs it
def test_example_and_the_cli_live_view_nest_the_child(
    tmp_path: Path, run_cli: Callable[..., CliRun]
) -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {"PYTHONPATH": str(root / "src"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(root / "examples" / "subagents.py")],
        capture_output=True, text=True, timeout=120, check=False, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:4] == [
        "run started: How tall is Mont Blanc?",
        "  run started: How tall is Mont Blanc? Give the latest survey. (for call call_1_0)",
        "  encyclopedia -> Mont Blanc: 4,805.59 m (2021 survey)",
        "research -> 4,805.59 m (2021 survey)",
    ]
    cli = run_cli(
        "run", "How tall is Mont Blanc?",
        "--model", f"scripted:{root / 'examples' / 'subagents_lead.json'}",
        "--tools", f"{root / 'examples' / 'subagents.py'}:research",
        "--store", str(tmp_path / "runs.db"), env=env,
    )  # fmt: skip
    assert cli.code == 0, cli.err
    nested = [line for line in cli.out.splitlines() if line.startswith("    │ ")]
    assert nested[0] == "    │ ▶ How tall is Mont Blanc? Give the latest survey."
    assert '    │   → Calling encyclopedia {"topic": "Mont Blanc"}' in nested
    store = SqliteRunStore(tmp_path / "runs.db")
    try:
        runs = store.list_runs()
        [child] = [r for r in runs if r.parent_run_id]
        assert child.status == "completed"
        assert {r.run_id for r in runs} == {child.run_id, child.parent_run_id}
    finally:
        store.close()
