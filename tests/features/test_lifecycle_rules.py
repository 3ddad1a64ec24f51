"""The Runtime owns the rules of a run's life, so every face (CLI, server, Python) gets the
same answers: `approve` checks the run, its tenant and the gate and says what it did;
`resume` refuses a run already running here or already ended."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import pytest

from loopwright import AgentExecutor
from loopwright.errors import GateNotFound, RunNotFound, UsageError
from loopwright.events import ConfirmationRequiredEvent, RunStartedEvent, ToolCallStartedEvent
from loopwright.runtime import GateDecided, Runtime
from loopwright.store import SqliteRunStore
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


def gated_agent() -> AgentExecutor:
    model = ScriptedModel([act("delete_file", path="a.txt"), json.dumps({"final_answer": "ok"})])
    return AgentExecutor(model, [delete_file], approve=True)


async def waiting_gate(runtime: Runtime, run_id: str) -> str:
    async with contextlib.aclosing(runtime.follow(run_id)) as events:
        async for event in events:
            if isinstance(event, ConfirmationRequiredEvent):
                return event.request_id
    raise AssertionError("the run ended without asking")


async def test_approve_checks_the_run_its_tenant_and_the_gate(tmp_path: Path) -> None:
    DELETED.clear()
    store = SqliteRunStore(tmp_path / "runs.db")
    runtime = Runtime(store)
    try:
        handle = runtime.start_agent(gated_agent(), "tidy", tenant="acme", run_id="run_g")
        gate = await asyncio.wait_for(waiting_gate(runtime, "run_g"), 30)
        with pytest.raises(RunNotFound):  # another tenant's gate, though it waits right here
            await runtime.approve("run_g", gate, True, "mallory", tenant="globex")
        with pytest.raises(GateNotFound, match="has no gate 'gate_nope' waiting"):
            await runtime.approve("run_g", "gate_nope", True, "ops", tenant="acme")
        decided = await runtime.approve("run_g", None, True, "ops", "fine", tenant="acme")
        assert decided == GateDecided("run_g", gate, True, "process") and decided.taken
        result = await asyncio.wait_for(handle.wait(), 30)
        with pytest.raises(UsageError, match=f"has no gate {gate!r} waiting"):
            await runtime.approve("run_g", gate, False, "ops", tenant="acme")
    finally:
        runtime.close()
        store.close()
    assert result.success and DELETED == ["a.txt"]  # approved once, by the right tenant


async def test_resume_refuses_a_run_running_here_or_ended(tmp_path: Path) -> None:
    DELETED.clear()
    store = SqliteRunStore(tmp_path / "runs.db")
    runtime = Runtime(store)
    try:
        handle = runtime.start_agent(gated_agent(), "tidy", run_id="run_r")
        gate = await asyncio.wait_for(waiting_gate(runtime, "run_r"), 30)
        with pytest.raises(UsageError, match="run run_r is already running"):
            await runtime.resume("run_r")
        await runtime.approve("run_r", gate, True, "ops")
        await asyncio.wait_for(handle.wait(), 30)
        with pytest.raises(UsageError, match=r"run run_r already ended \(completed\)"):
            await runtime.resume("run_r")
    finally:
        runtime.close()
        store.close()
    assert DELETED == ["a.txt"]  # not twice


def test_a_subagents_gate_of_an_interrupted_lead_names_the_lead_to_resume(
    tmp_path: Path,
) -> None:
    """The process of a lead died while its sub-agent waited at a gate: the sub-agent's run
    cannot be resumed on its own (it runs inside the lead's call), so the refusal names the
    lead's run to resume."""
    lead, child = "run_lead", "run_lead_cleaner"  # the child named by the lead's call
    store = SqliteRunStore(tmp_path / "runs.db")
    store.append_many([
        RunStartedEvent(run_id=lead, seq=1, ts=1.0, kind="agent", request="tidy", model="m", tools=[],
                        options={}, tenant="default"),
        ToolCallStartedEvent(run_id=lead, seq=2, ts=2.0, iteration_number=1, call_id="call_1_0",
                             tool_name="cleaner", arguments={}, child_run_id=child),
        RunStartedEvent(run_id=child, seq=1, ts=3.0, kind="agent", request="clean", model="m", tools=[],
                        options={}, tenant="default", parent_run_id=lead,
                        parent_call_id="call_1_0"),
        ConfirmationRequiredEvent(run_id=child, seq=2, ts=4.0, step="delete_file",
                                  request_id="gate_c", message="Delete?", timeout_s=60.0),
    ])  # fmt: skip
    runtime = Runtime(store)
    try:
        with pytest.raises(UsageError) as refused:
            asyncio.run(runtime.approve(child, None, True, "ops"))
    finally:
        runtime.close()
        store.close()
    assert f"sub-agent's run of run {lead}, which is interrupted" in str(refused.value)
    assert f"loopwright runs resume {lead}`" in str(refused.value)
    assert f"runs resume {child}" not in str(refused.value)
