"""A follow-up turn that ends `waiting` at a gate goes on with its conversation's history:
resumed in this process (`agent.resume`) or from the store (`Runtime.resume_agent`), the
model still gets the turn before first, byte for byte. ScriptedModel and real SQLite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from loopwright import AgentExecutor, ExecutionResult, Runtime
from loopwright.messages import ModelRequest
from loopwright.store import SqliteRunStore
from loopwright.testing import ScriptedModel
from loopwright.tools import tool

REMOVED: list[str] = []


@tool(effect="read")
def lookup(name: str) -> str:
    """Look a file up.

    Args:
        name: the file
    """
    return f"{name}: 12 bytes"


@tool(effect="destructive")
def remove(name: str) -> str:
    """Remove a file.

    Args:
        name: the file
    """
    REMOVED.append(name)
    return f"removed {name}"


def act(tool_name: str, **arguments: Any) -> str:
    return json.dumps({"thought": "go", "action": tool_name, "action_input": arguments})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


TURN_1 = [act("lookup", name="a.txt"), final("a.txt has 12 bytes")]
TURN_2 = [act("remove", name="a.txt"), final("removed")]


def agent(replies: list[str]) -> AgentExecutor[None, None]:
    model = ScriptedModel(replies, strict=False)
    return AgentExecutor(model, [lookup, remove], approve=["destructive"], on_pending="wait")


def turn_two_prefix(requests: list[ModelRequest], first_turn_last: ModelRequest) -> bool:
    """Every request of turn 2 starts with turn 1's last request, message for message."""
    before = [m.to_dict() for m in first_turn_last.messages]
    return all([m.to_dict() for m in r.messages][: len(before)] == before for r in requests)


async def test_a_waiting_follow_up_resumed_in_memory_keeps_its_history() -> None:
    REMOVED.clear()
    talker = agent([*TURN_1, *TURN_2])
    model = talker.model
    assert isinstance(model, ScriptedModel)
    first = await talker.run("How big is a.txt?")
    turn_1_last = model.requests[-1]
    waiting = await talker.run("Remove it.", after=first)
    assert waiting.status == "waiting" and REMOVED == []
    done = await talker.resume(waiting, approve=[waiting.pending_approvals[0].gate_id])
    assert done.success and done.answer == "removed" and REMOVED == ["a.txt"]
    turn_2 = model.requests[len(model.requests) - 1 :]  # the request after the gate
    assert turn_two_prefix(turn_2, turn_1_last)


async def test_a_waiting_follow_up_resumed_from_the_store_keeps_its_history(
    tmp_path: Path,
) -> None:
    REMOVED.clear()
    store = SqliteRunStore(tmp_path / "runs.db")
    runtime = Runtime(store)
    try:
        talker = agent([*TURN_1, *TURN_2])
        first: ExecutionResult = await runtime.start_agent(talker, "How big is a.txt?").wait()
        handle = runtime.start_agent(talker, "Remove it.", after=first.run_id)
        waiting: ExecutionResult = await handle.wait()
        assert waiting.status == "waiting"
        gate = waiting.pending_approvals[0].gate_id
        assert (await runtime.approve(waiting.run_id, gate, True, "api:ann")).delivered == "store"
        again = agent(TURN_2)  # another process builds the agent again
        model = again.model
        assert isinstance(model, ScriptedModel)
        done: ExecutionResult = await (await runtime.resume_agent(again, waiting.run_id)).wait()
        assert done.success and REMOVED == ["a.txt"]
        [request] = model.requests  # the one live call, after the gate
        sent = [m.to_dict() for m in request.messages]
        assert sent[1]["content"].startswith("How big is a.txt?")  # turn 1 comes first
        assert any("a.txt: 12 bytes" in m["content"] for m in sent)  # with its observation
    finally:
        runtime.close()
        store.close()
