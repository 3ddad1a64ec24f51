"""A ScriptedModel given its whole script again goes on after the replies the run's log
already served, on every resume path: `Runtime.resume`, `agent.run(recorded=...)`, and a
sub-agent resumed inside its lead's call. So a resumed test run never makes a destructive
call twice."""

from __future__ import annotations

import json
from typing import Any

from loopwright import AgentExecutor
from loopwright.events import Event, ToolCallEvent, ToolCallStartedEvent
from loopwright.testing import ScriptedModel
from loopwright.tools import tool

DELETED: list[str] = []


@tool(effect="destructive")
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: the file
    """
    DELETED.append(path)
    return f"deleted {path}"


def act(name: str, **arguments: Any) -> str:
    return json.dumps({"thought": "go", "action": name, "action_input": arguments})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


DELETES = [act("delete_file", path="a"), act("delete_file", path="b"), final("both")]
LEAD = [act("cleaner", request="delete a and b"), final("cleaned")]


def cut_after_first_delete(events: list[Event], run_id: str) -> list[Event]:
    """The log of a process that stopped right after the run's first delete was stored."""
    done = next(
        i for i, e in enumerate(events) if isinstance(e, ToolCallEvent) and e.run_id == run_id
    )
    return events[: done + 1]


async def test_run_with_recorded_goes_on_after_the_served_replies() -> None:
    DELETED.clear()
    events: list[Event] = []
    await AgentExecutor(ScriptedModel(DELETES), [delete_file]).run(
        "delete a and b", run_id="run_s", on_event=events.append
    )
    recorded = cut_after_first_delete(events, "run_s")
    DELETED.clear()
    model = ScriptedModel(DELETES)  # the whole script again, as `--model scripted:FILE` is
    result = await AgentExecutor(model, [delete_file]).run("delete a and b", recorded=recorded)
    assert result.answer == "both"
    assert DELETED == ["b"]  # "a" was done before the stop: not again
    assert model.remaining == 0 and len(model.requests) == 2  # the served reply not asked


async def test_a_resumed_subagent_goes_on_after_its_served_replies() -> None:
    DELETED.clear()
    events: list[Event] = []

    def lead() -> AgentExecutor:
        child = AgentExecutor(ScriptedModel(DELETES), [delete_file])
        return AgentExecutor(ScriptedModel(LEAD), [child.as_tool("cleaner", "Cleans.")])

    await lead().run("tidy", run_id="run_l", on_event=events.append)
    assert DELETED == ["a", "b"]
    [child_id] = [
        e.child_run_id for e in events if isinstance(e, ToolCallStartedEvent) and e.child_run_id
    ]
    recorded = cut_after_first_delete(events, child_id)
    DELETED.clear()
    result = await lead().run("tidy", recorded=recorded)
    assert result.answer == "cleaned"
    assert DELETED == ["b"]  # the child resumed after its first delete, its model too
