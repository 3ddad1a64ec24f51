"""Approval of agent tool calls: the policy, the gate machinery (GateBroker, the store),
denial as an observation, the timeout, and resume at the same gate."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from loopwright import AgentExecutor, AgentOptions
from loopwright.agent._approval import approval_request_id
from loopwright.errors import ConfigurationError
from loopwright.events import (
    ConfirmationRequiredEvent,
    Event,
    GateDecisionEvent,
    ToolCallStartedEvent,
)
from loopwright.store import SqliteRunStore
from loopwright.tasks import GateBroker
from loopwright.tasks._gates import join_decider
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


@tool(effect="read")
def list_files() -> str:
    """List the files."""
    return "a.txt b.txt"


def call(name: str, **arguments: Any) -> str:
    return json.dumps({"thought": "go", "action": name, "action_input": arguments})


FINAL = json.dumps({"thought": "done", "final_answer": "ok"})


class Recorder:
    def __init__(self, gates: GateBroker | None = None, decide: Any = None) -> None:
        self.events: list[Event] = []
        self.gates = gates
        self.decide = decide

    async def __call__(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, ConfirmationRequiredEvent) and self.decide is not None:
            assert self.gates is not None
            self.gates.resolve(event.request_id, *self.decide)

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


@pytest.fixture(autouse=True)
def _clean() -> None:
    DELETED.clear()


async def test_approved_call_runs_after_the_gate() -> None:
    gates = GateBroker()
    seen = Recorder(gates, (True, "alice"))
    model = ScriptedModel([call("delete_file", path="a.txt"), FINAL])
    agent = AgentExecutor(model, [delete_file, list_files], approve=["delete_file"])
    result = await agent.run("clean up", on_event=seen, gates=gates, run_id="run_a")
    assert result.success and DELETED == ["a.txt"]
    [asked] = seen.of(ConfirmationRequiredEvent)
    public = approval_request_id("run_a", "call_1_0")  # from the run's and the call's ids
    assert asked.request_id.startswith(public + "_") and len(asked.request_id) == len(public) + 17
    assert asked.step == "delete_file" and "a.txt" in asked.message
    [decided] = seen.of(GateDecisionEvent)
    assert decided.approved and decided.decided_by == "alice"
    kinds = [type(e).__name__ for e in seen.events]
    assert kinds.index("GateDecisionEvent") < kinds.index("ToolCallStartedEvent")


async def test_denied_call_is_an_observation_with_the_reason() -> None:
    gates = GateBroker()
    seen = Recorder(gates, (False, "bob", "keep the backups"))
    model = ScriptedModel([call("delete_file", path="a.txt"), FINAL])
    agent = AgentExecutor(model, [delete_file], approve="destructive")
    result = await agent.run("clean up", on_event=seen, gates=gates)
    assert result.success and DELETED == []
    assert not seen.of(ToolCallStartedEvent)
    [decided] = seen.of(GateDecisionEvent)
    assert not decided.approved and decided.reason == "keep the backups"
    observation = model.requests[1].messages[-1].content
    assert "bob denied it" in observation and "keep the backups" in observation


async def test_policy_by_effect_and_by_callable() -> None:
    gates = GateBroker()
    seen = Recorder(gates, (True, "carol"))
    model = ScriptedModel([call("list_files"), call("delete_file", path="b.txt"), FINAL])
    agent = AgentExecutor(model, [delete_file, list_files], approve=["destructive"])
    await agent.run("x", on_event=seen, gates=gates)
    assert [e.step for e in seen.of(ConfirmationRequiredEvent)] == ["delete_file"]

    seen = Recorder(gates, (True, "carol"))
    model = ScriptedModel(
        [call("delete_file", path="keep.txt"), call("delete_file", path="tmp"), FINAL]
    )
    agent = AgentExecutor(
        model, [delete_file], approve=lambda c: not str(c.arguments["path"]).startswith("tmp")
    )
    await agent.run("x", on_event=seen, gates=gates)
    assert [e.message for e in seen.of(ConfirmationRequiredEvent)] == [
        'Allow the agent to call delete_file {"path": "keep.txt"}?'
    ]
    assert DELETED == ["b.txt", "keep.txt", "tmp"]


async def test_without_a_gatekeeper_nobody_can_approve() -> None:
    model = ScriptedModel([call("delete_file", path="a.txt"), FINAL])
    result = await AgentExecutor(model, [delete_file], approve=True).run("x")
    assert result.success and DELETED == []
    assert "not run" in model.requests[1].messages[-1].content


def test_unknown_names_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="'delete' is neither a tool"):
        AgentExecutor(ScriptedModel([FINAL]), [delete_file], approve=["delete"])
    with pytest.raises(ConfigurationError, match="approval_timeout_s"):
        AgentOptions(approval_timeout_s=0)


async def test_timeout_refuses_the_call_within_the_bound() -> None:
    seen = Recorder()
    model = ScriptedModel([call("delete_file", path="a.txt"), FINAL])
    options = AgentOptions(approval_timeout_s=0.3)
    agent = AgentExecutor(model, [delete_file], approve=True, options=options)
    started = time.monotonic()
    result = await agent.run("x", on_event=seen, gates=GateBroker())
    elapsed = time.monotonic() - started
    assert result.success and DELETED == [] and elapsed < 3.0
    [decided] = seen.of(GateDecisionEvent)
    assert decided.decided_by == "timeout" and not decided.approved
    assert "nobody approved it in time" in model.requests[1].messages[-1].content


async def test_resume_waits_at_the_same_gate_and_keeps_decided_ones(tmp_path: Path) -> None:
    replies = [call("delete_file", path="one"), call("delete_file", path="two"), FINAL]
    gates = GateBroker()
    seen = Recorder(gates)
    agent = AgentExecutor(ScriptedModel(replies, strict=False), [delete_file], approve=True)
    task = asyncio.ensure_future(agent.run("x", on_event=seen, gates=gates, run_id="run_r"))
    while not seen.of(ConfirmationRequiredEvent):
        await asyncio.sleep(0.01)
    gates.resolve(seen.of(ConfirmationRequiredEvent)[0].request_id, True, "dan")
    while len(seen.of(ConfirmationRequiredEvent)) < 2:
        await asyncio.sleep(0.01)
    task.cancel()  # the process "stops" while the second gate waits
    await asyncio.gather(task, return_exceptions=True)
    cut = max(i for i, e in enumerate(seen.events) if isinstance(e, ConfirmationRequiredEvent)) + 1
    recorded = seen.events[:cut]
    assert DELETED == ["one"]

    store = SqliteRunStore(tmp_path / "runs.db")
    resumed_gates = GateBroker(store, poll_s=0.02)
    again = Recorder(resumed_gates)
    open_gate = recorded[-1]
    assert isinstance(open_gate, ConfirmationRequiredEvent)
    waiting = open_gate.request_id  # the open gate's id, as its log recorded it
    assert waiting.startswith(approval_request_id("run_r", "call_2_0") + "_")
    store.post_gate_decision("run_r", waiting, False, join_decider("api:eve", "not two"))
    model = ScriptedModel(replies)  # the same script: it goes on after the served replies
    agent = AgentExecutor(model, [delete_file], approve=True)
    result = await agent.run("x", on_event=again, gates=resumed_gates, recorded=recorded)
    assert result.success and DELETED == ["one"]  # the first not run again, the second denied
    # the open gate's confirmation_required is already in the log: it waits again without a
    # second one, and only its decision is new (the first gate's was served from the log)
    assert again.of(ConfirmationRequiredEvent) == []
    [decided] = again.of(GateDecisionEvent)
    assert decided.request_id == waiting
    assert (decided.decided_by, decided.reason) == ("api:eve", "not two")
    store.close()


@pytest.mark.subprocess
def test_example_refuses_the_destructive_call() -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(root / "examples" / "approvals.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PYTHONPATH": str(root / "src"), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == 'asked: Allow the agent to call delete_file {"name": "report-2023.txt"}?'
    assert "reviewer denied it. Reason given: we keep reports for 5 years" in lines[2]
    assert lines[-1] == "still there: True"
