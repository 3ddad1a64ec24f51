"""Approvals in code: with `on_pending="wait"` a run with nobody to decide ends `waiting`
with its pending approvals, and goes on from where it stopped: in this process from the
result (`agent.resume`), or from the run store (`Runtime.approve` + `Runtime.resume_agent`),
with nothing done twice; bad decisions are refused before anything runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from loopwright import AgentExecutor, Runtime
from loopwright.agent import ExecutionResult
from loopwright.errors import ConfigurationError, UsageError
from loopwright.events import (
    ConfirmationRequiredEvent,
    Event,
    GateDecisionEvent,
    ModelTextDeltaEvent,
    RunFinishedEvent,
    ToolCallEvent,
)
from loopwright.store import SqliteRunStore
from loopwright.tasks import GateBroker
from loopwright.testing import ScriptedModel
from loopwright.tools import tool

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import approvals_in_code

DELETED: list[str] = []
LISTED: list[int] = []
KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"


@tool(effect="destructive")
def delete_file(path: str, token: str = "") -> str:
    """Delete a file.

    Args:
        path: the file
        token: a credential the call carries
    """
    DELETED.append(path)
    return f"deleted {path}"


@tool(effect="read")
def list_files() -> str:
    """List the files."""
    LISTED.append(1)
    return "a.txt b.txt"


def call(name: str, **arguments: Any) -> str:
    return json.dumps({"thought": "go", "action": name, "action_input": arguments})


FINAL = json.dumps({"thought": "done", "final_answer": "ok"})
REPLIES = [call("list_files"), call("delete_file", path="a.txt", token=KEY), FINAL]


@pytest.fixture(autouse=True)
def _clean() -> None:
    DELETED.clear()
    LISTED.clear()


def waiting_agent(replies: list[str] = REPLIES, **kwargs: Any) -> AgentExecutor[None, None]:
    model = ScriptedModel(replies)
    return AgentExecutor(
        model, [list_files, delete_file], approve=["destructive"], on_pending="wait", **kwargs
    )


async def test_a_run_nobody_decides_ends_waiting_with_the_call() -> None:
    agent = waiting_agent()
    result = await agent.run("clean up", run_id="run_w")
    assert result.status == "waiting" and not result.success and DELETED == []
    [pending] = result.pending_approvals
    assert (pending.run_id, pending.tool_name, pending.call_id) == (
        "run_w",
        "delete_file",
        "call_2_0",
    )
    assert pending.arguments["path"] == "a.txt"
    assert KEY not in json.dumps(pending.arguments)  # scrubbed as the events are
    assert pending.why == "delete_file is declared destructive, and approve= names that effect"
    assert pending.gate_id in (result.message or "")
    kinds = [type(e) for e in result.events]
    assert kinds[-1] is ConfirmationRequiredEvent and RunFinishedEvent not in kinds
    with pytest.raises(Exception, match=pending.gate_id):
        result.raise_for_status()


async def test_resume_approves_and_repeats_nothing_done() -> None:
    agent = waiting_agent()
    result = await agent.run("clean up")
    model = agent.model
    assert isinstance(model, ScriptedModel) and len(model.requests) == 2
    seen: list[Event] = []
    gate = result.pending_approvals[0].gate_id
    done = await agent.resume(result, approve=[gate], decided_by="alice", on_event=seen.append)
    assert done.success and done.answer == "ok"
    assert DELETED == ["a.txt"] and LISTED == [1]  # the read ran once, in the first process
    assert len(model.requests) == 3  # one new model call: the replies before were replayed
    assert [s.tool_name for s in done.steps] == ["list_files", "delete_file"]
    [decided] = [e for e in seen if isinstance(e, GateDecisionEvent)]
    assert (decided.request_id, decided.approved, decided.decided_by) == (gate, True, "alice")
    assert not [e for e in seen if isinstance(e, ConfirmationRequiredEvent)]  # in the log
    assert done.events == ()  # kept only while waiting


async def test_token_deltas_reach_on_event_and_stay_out_of_the_kept_log() -> None:
    seen: list[Event] = []
    model = ScriptedModel(REPLIES, stream_chars=8)
    agent = AgentExecutor(
        model, [list_files, delete_file], approve=["destructive"], on_pending="wait"
    )
    result = await agent.run("clean up", on_event=seen.append)
    assert any(isinstance(e, ModelTextDeltaEvent) for e in seen)
    assert not any(isinstance(e, ModelTextDeltaEvent) for e in result.events)
    done = await agent.resume(result, approve=[result.pending_approvals[0].gate_id])
    assert done.success and DELETED == ["a.txt"] and LISTED == [1]


async def test_resume_rejects_with_the_reason_as_the_observation() -> None:
    agent = waiting_agent()
    result = await agent.run("clean up")
    gate = result.pending_approvals[0].gate_id
    done = await agent.resume(result, reject={gate: "we keep reports"})
    assert done.success and DELETED == []
    model = agent.model
    assert isinstance(model, ScriptedModel)
    observation = model.requests[-1].messages[-1].content
    assert "user denied it" in observation and "we keep reports" in observation


def test_resume_sync_for_code_that_is_not_async() -> None:
    agent = waiting_agent()
    result = agent.run_sync("clean up")
    done = agent.resume_sync(result, approve=[result.pending_approvals[0].gate_id])
    assert done.success and DELETED == ["a.txt"] and LISTED == [1]


async def test_the_default_still_refuses_and_waiting_is_opt_in() -> None:
    model = ScriptedModel([call("delete_file", path="a.txt"), FINAL])
    agent = AgentExecutor(model, [delete_file], approve=True)
    assert agent.on_pending == "ask"
    result = await agent.run("x")
    assert result.status == "completed" and result.pending_approvals == () and DELETED == []
    with pytest.raises(ConfigurationError, match="on_pending must be 'ask' or 'wait'"):
        AgentExecutor(model, [delete_file], approve=True, on_pending="later")  # type: ignore[call-overload]
    with pytest.raises(ConfigurationError, match="gates= decides in this process"):
        await waiting_agent().run("x", gates=GateBroker())


async def test_bad_decisions_are_refused_before_anything_runs_and_lose_nothing() -> None:
    agent = waiting_agent()
    result = await agent.run("clean up", run_id="run_bad")
    gate = result.pending_approvals[0].gate_id
    with pytest.raises(
        UsageError, match=rf"run run_bad has no gate 'approve_nope' waiting \(waiting: {gate}\)"
    ):
        await agent.resume(result, approve=["approve_nope"])
    with pytest.raises(UsageError, match=f"run run_bad waits at gate {gate}: approve it"):
        await agent.resume(result)
    with pytest.raises(UsageError, match=f"gate {gate} is both approved and rejected"):
        await agent.resume(result, approve=[gate], reject={gate: "no"})
    assert DELETED == [] and isinstance(agent.model, ScriptedModel)
    assert len(agent.model.requests) == 2  # nothing ran
    done = await agent.resume(result, approve=[gate])  # the result is still whole
    assert done.success and DELETED == ["a.txt"]
    with pytest.raises(UsageError, match="run run_bad is completed, not waiting"):
        await agent.resume(done, approve=[gate])


async def test_a_sub_agent_gate_stops_its_lead_and_resumes_in_the_child() -> None:
    child = AgentExecutor(ScriptedModel([call("delete_file", path="b.txt"), FINAL]), [delete_file])
    lead_model = ScriptedModel([call("helper", request="delete b.txt"), FINAL])
    lead = AgentExecutor(
        lead_model, [child.as_tool("helper", "Deletes files.")], approve=["delete_file"],
        on_pending="wait",
    )  # fmt: skip
    result = await lead.run("tidy", run_id="run_lead")
    [pending] = result.pending_approvals
    assert result.status == "waiting" and pending.run_id != "run_lead"
    assert (pending.tool_name, pending.why) == (
        "delete_file",
        "approve= names the tool delete_file",
    )
    assert {e.run_id for e in result.events} == {"run_lead", pending.run_id}
    done = await lead.resume(result, approve=[pending.gate_id])
    assert done.success and DELETED == ["b.txt"] and done.steps[0].result == "ok"


async def test_through_the_store_decided_by_runtime_approve(tmp_path: Path) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    runtime = Runtime(store)
    try:
        result: ExecutionResult = await runtime.start_agent(waiting_agent(), "clean up").wait()
        run_id, gate = result.run_id, result.pending_approvals[0].gate_id
        record = store.get_run(run_id)
        assert record is not None and record.status == "waiting"
        with pytest.raises(UsageError, match=f"run {run_id} has no gate 'approve_nope'"):
            await runtime.approve(run_id, "approve_nope", True, "api:bob")
        with pytest.raises(UsageError, match=f"run {run_id} was run by a Runtime"):
            await waiting_agent().resume(result, approve=[gate])
        gate_decided = await runtime.approve(run_id, gate, False, "api:bob", "not today")
        assert gate_decided.delivered == "store"
        again = waiting_agent()  # the same agent, as another process builds it
        handle = await runtime.resume_agent(again, run_id)
        record = store.get_run(run_id)
        assert record is not None and record.status == "running"  # executing again
        done = await handle.wait()
        assert done.success and DELETED == [] and LISTED == [1]
        record = store.get_run(run_id)
        assert record is not None and record.status == "completed"
        events = store.events(run_id)
        [decided] = [e for e in events if isinstance(e, GateDecisionEvent)]
        assert (decided.decided_by, decided.reason) == ("api:bob", "not today")
        assert sum(isinstance(e, ToolCallEvent) for e in events) == 1  # list_files, once
        with pytest.raises(UsageError, match=f"run {run_id} already ended"):
            await runtime.resume_agent(again, run_id)
    finally:
        runtime.close()
        store.close()


async def test_a_sub_agent_gate_is_decided_through_the_store(tmp_path: Path) -> None:
    def lead_agent(lead_replies: list[str], child_replies: list[str]) -> AgentExecutor[None, None]:
        child = AgentExecutor(ScriptedModel(child_replies), [delete_file])
        return AgentExecutor(
            ScriptedModel(lead_replies), [child.as_tool("helper", "Deletes files.")],
            approve=["delete_file"], on_pending="wait",
        )  # fmt: skip

    store = SqliteRunStore(tmp_path / "runs.db")
    runtime = Runtime(store)
    try:
        lead = lead_agent(
            [call("helper", request="delete b.txt"), FINAL],
            [call("delete_file", path="b.txt"), FINAL],
        )
        result = await runtime.start_agent(lead, "tidy").wait()
        [pending] = result.pending_approvals
        decided = await runtime.approve(pending.run_id, pending.gate_id, True, "api:eve")
        assert decided.delivered == "store"
        again = lead_agent(  # the same agent, as another process builds it
            [call("helper", request="delete b.txt"), FINAL],
            [call("delete_file", path="b.txt"), FINAL],
        )
        handle = await runtime.resume_agent(again, result.run_id)
        done = await handle.wait()
        assert done.success and DELETED == ["b.txt"]
        child = store.get_run(pending.run_id)
        assert child is not None and child.status == "completed"
    finally:
        runtime.close()
        store.close()


async def test_example_in_one_process(capsys: pytest.CaptureFixture[str]) -> None:
    await approvals_in_code.in_one_process()
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "  (list_files runs)",
        "status: waiting",
        "waiting: delete_file {'name': 'report-2023.txt'} (delete_file is declared "
        "destructive, and approve= names that effect)",
        "status: completed | answer: Cleaned up.",
        "still there: False",
    ]


@pytest.mark.subprocess
def test_example_goes_on_in_another_process(tmp_path: Path) -> None:
    """One process ends the run waiting and exits; another decides and goes on, from
    nothing but the store, the run id and the gate id."""
    import subprocess

    example = str(Path(__file__).resolve().parents[2] / "examples" / "approvals_in_code.py")
    store = str(tmp_path / "runs.db")

    def example_run(*arguments: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, example, *arguments]
        return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)

    started = example_run("start", store)
    assert started.returncode == 0, started.stderr
    fields = dict(line.split(": ", 1) for line in started.stdout.splitlines()[1:4])
    assert fields["status"] == "waiting"
    run_id, gate = fields["run"], fields["gate"]
    assert (tmp_path / "folder" / "report-2023.txt").exists()

    wrong = example_run("decide", store, run_id, "approve_000000000000")
    assert wrong.returncode == 1 and "Traceback" not in wrong.stderr
    assert wrong.stderr.strip() == (
        f"error: run {run_id} has no gate 'approve_000000000000' waiting (waiting: {gate})"
    )
    decided = example_run("decide", store, run_id, gate)
    assert decided.returncode == 0, decided.stderr
    assert decided.stdout.splitlines() == [  # no "(list_files runs)": it is not run again
        "status: completed | answer: Cleaned up.",
        "still there: False",
    ]
    again = example_run("decide", store, run_id, gate)
    assert again.returncode == 1
    assert f"run {run_id} has no gate" in again.stderr and "(status completed)" in again.stderr
