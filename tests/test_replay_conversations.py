"""Replay tests (seed 001): a recorded conversation, and the executor's next step given it.

Each file in tests/fixtures/conversations/ holds a request, the assistant replies with the
observations their tools returned, the model's next reply, and the step it must lead to.
Tools replay the recorded observations, so the history the model sees is exactly the
recorded one; the assertion is on what the executor does next.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.events import Event, RunFinishedEvent, ToolCallStartedEvent
from loopwright.testing import ScriptedModel
from loopwright.tools import Tool

CONVERSATIONS = sorted((Path(__file__).parent / "fixtures" / "conversations").glob("*.json"))


def replay_tools(observations: list[str], names: set[str]) -> list[Tool]:
    """Tools that answer with the recorded observations, in order, whatever they are called."""
    queue = list(observations)

    async def recorded(**arguments: Any) -> str:
        return queue.pop(0) if queue else "(no recorded observation)"

    schema = {"type": "object", "properties": {}, "additionalProperties": True}
    return [Tool(name, f"replays {name}", schema, recorded) for name in sorted(names)]


def tool_names(data: dict[str, Any]) -> set[str]:
    names = {"echo", "lookup_user", "lookup_team_lead", "get_weather"}
    if "tool" in data["expect"]:
        names.add(data["expect"]["tool"])
    return names


@pytest.mark.parametrize("path", CONVERSATIONS, ids=[p.stem for p in CONVERSATIONS])
async def test_next_step_given_recorded_history(path: Path) -> None:
    data = json.loads(path.read_text())
    replies = [turn["assistant"] for turn in data["turns"]] + [data["next"]]
    observations = [o for turn in data["turns"] for o in turn["observations"]]
    model = ScriptedModel(replies, strict=False)
    agent = AgentExecutor(
        model,
        replay_tools(observations, tool_names(data)),
        options=AgentOptions(max_iterations=len(replies), last_turn=False),  # next step may act
    )
    events: list[Event] = []

    async def keep(event: Event) -> None:
        events.append(event)

    await agent.run(data["request"], on_event=keep)
    # the model saw the recorded history: every observation reached it, in order
    last_request = model.requests[-1].messages
    seen = "\n".join(m.content for m in last_request)
    positions = [seen.find(o.split("\n")[0]) for o in observations]
    assert all(p >= 0 for p in positions) and positions == sorted(positions)
    expect = data["expect"]
    if "final_answer" in expect:
        finished = events[-1]
        assert isinstance(finished, RunFinishedEvent) and finished.answer == expect["final_answer"]
    else:
        last_call = [e for e in events if isinstance(e, ToolCallStartedEvent)][-1]
        assert (last_call.tool_name, last_call.arguments) == (expect["tool"], expect["arguments"])
