"""TaskExecutor: the streaming contract, args_from/condition, gates, hooks, failures, state."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest
from task_helpers import load, make_executor, write_task

from loopwright.agent import AgentOptions
from loopwright.errors import ConfigurationError
from loopwright.events import (
    ChangeRecordedEvent,
    ConfirmationRequiredEvent,
    Event,
    FunctionResultEvent,
    GateDecisionEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StepCompleteEvent,
    StreamEvent,
    TaskCompleteEvent,
    TaskStartEvent,
    WarningEvent,
)
from loopwright.runtime import Runtime
from loopwright.tasks import GateBroker, TaskDefinition, TaskExecutor, TaskSettings, rebuild_state
from loopwright.testing import InMemoryRunStore, ScriptedModel

E = TypeVar("E", bound=Event)

PIPELINE = """
name: pipeline
inputs:
  file: notes.txt
  loud: true
steps:
  - name: measure
    type: tool
    tool: count_lines
    args_from:
      path: inputs.file
  - name: first_word
    type: tool
    tool: shout
    condition: inputs.loud and results.measure.lines >= 2
    args_from:
      text: results.measure.words[0]
  - name: never
    type: tool
    tool: shout
    condition: results.measure.lines > 100
    args: {text: unreachable}
"""


async def collect(
    executor: TaskExecutor, task: TaskDefinition, *args: Any, **kwargs: Any
) -> list[Event]:
    return [e async for e in executor.execute(task, *args, **kwargs)]


def by_type(events: Sequence[Event], kind: type[E]) -> list[E]:
    return [e for e in events if isinstance(e, kind)]


def finished(events: Sequence[Event]) -> RunFinishedEvent:
    """The run's last event: its run_finished."""
    last = events[-1]
    assert isinstance(last, RunFinishedEvent), last
    return last


async def test_streaming_contract_and_args_from_condition_across_steps(
    tmp_path: Path, workspace: Path
) -> None:
    loaded = load(tmp_path, PIPELINE)
    executor, sink, _ = make_executor(loaded, workspace)
    events = await collect(executor, loaded.definition, "measure my notes", {}, "acme")
    assert isinstance(events[0], RunStartedEvent) and events[0].kind == "task"
    assert events[0].tenant == "acme" and events[0].options["inputs"]["file"] == "notes.txt"
    assert isinstance(events[1], TaskStartEvent) and events[1].total_steps == 3
    assert [type(e) for e in events[-2:]] == [TaskCompleteEvent, RunFinishedEvent]
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert sink.events == events
    shout = [e for e in by_type(events, FunctionResultEvent) if e.function == "shout"]
    assert shout[0].arguments == {"text": "alpha"} and shout[0].result == "ALPHA"
    statuses = {e.step: e.status for e in by_type(events, StepCompleteEvent)}
    assert statuses == {"measure": "completed", "first_word": "completed", "never": "skipped"}
    assert finished(events).status == "completed"


async def test_condition_false_on_input_skips_and_records_it(
    tmp_path: Path, workspace: Path
) -> None:
    loaded = load(tmp_path, PIPELINE)
    executor, _, _ = make_executor(loaded, workspace)
    state = await executor.run(loaded.definition, "", {"loud": False})
    skipped = [s.step_name for s in state.steps_completed if s.status == "skipped"]
    assert skipped == ["first_word", "never"]
    assert state.status == "completed"


async def test_missing_required_input_is_a_clear_error(tmp_path: Path, workspace: Path) -> None:
    loaded = load(tmp_path, PIPELINE.replace("file: notes.txt", "file: null"))
    executor, sink, _ = make_executor(loaded, workspace)
    with pytest.raises(ConfigurationError, match="needs input"):
        await collect(executor, loaded.definition)
    assert sink.events == []


async def test_args_from_a_missing_value_fails_the_step(tmp_path: Path, workspace: Path) -> None:
    loaded = load(tmp_path, PIPELINE)
    executor, _, _ = make_executor(loaded, workspace)
    state = await executor.run(loaded.definition, "", {"file": "notes.txt"})
    assert state.status == "completed"
    loaded = load(tmp_path, PIPELINE.replace("words[0]", "words[9]"))
    executor, _, _ = make_executor(loaded, workspace)
    state = await executor.run(loaded.definition)
    failed = state.steps_completed[-1]
    assert (failed.step_name, failed.status) == ("first_word", "failed")
    assert "words[9] does not exist" in (failed.error or "")
    assert state.status == "failed" and state.current_step == "first_word"


GATED = """
name: gated
steps:
  - name: approve
    type: gate
    message_template: "Shout at {inputs.who}?"
  - name: shout
    type: tool
    tool: shout
    args_from: {text: inputs.who}
"""


async def test_gate_pauses_until_decided_through_its_event(tmp_path: Path, workspace: Path) -> None:
    loaded = load(tmp_path, GATED)
    executor, _, gates = make_executor(loaded, workspace)
    stream = executor.execute(loaded.definition, "", {"who": "bob"})
    seen: list[Event] = []
    async for event in stream:
        seen.append(event)
        if isinstance(event, ConfirmationRequiredEvent):
            break
    gate = seen[-1]
    assert isinstance(gate, ConfirmationRequiredEvent)
    assert gate.message == "Shout at bob?" and gate.timeout_s == 300
    assert [g.request_id for g in gates.pending()] == [gate.request_id]
    next_event = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0)
    assert not next_event.done()  # paused on the gate
    assert gates.resolve(gate.request_id, True, "alice")
    decided = await next_event
    assert (
        isinstance(decided, GateDecisionEvent)
        and decided.approved
        and decided.decided_by == "alice"
    )
    rest = [e async for e in stream]
    assert finished(rest).status == "completed"
    assert by_type(rest, FunctionResultEvent)[0].result == "BOB"
    assert gates.pending() == [] and not gates.resolve(gate.request_id, False, "late")


async def test_gate_rejected_cancels_the_task(tmp_path: Path, workspace: Path) -> None:
    loaded = load(tmp_path, GATED)
    executor, _, gates = make_executor(loaded, workspace)
    events: list[Event] = []
    async for event in executor.execute(loaded.definition, "", {"who": "bob"}):
        events.append(event)
        if isinstance(event, ConfirmationRequiredEvent):
            gates.resolve(event.request_id, False, "carol")
    assert by_type(events, StepCompleteEvent)[0].status == "rejected"
    assert not by_type(events, FunctionResultEvent)
    assert finished(events).status == "cancelled" and "carol" in (finished(events).answer or "")


async def test_gate_timeout_aborts_and_saves_state(tmp_path: Path, workspace: Path) -> None:
    loaded = load(tmp_path, GATED)
    executor, _, gates = make_executor(loaded, workspace, gate_timeout_s=0.05)
    events = await collect(executor, loaded.definition, "", {"who": "bob"})
    complete = by_type(events, StepCompleteEvent)[0]
    assert complete.status == "timed_out"
    assert finished(events).status == "failed"
    assert gates.pending() == []
    saved = json.loads(next((workspace.parent / "state").rglob("*.json")).read_text())
    assert saved["status"] == "failed" and saved["current_step"] == "approve"


HOOKED = """
name: hooked
steps:
  - name: main
    type: tool
    tool: shout
    args: {text: main}
"""


async def test_pre_hook_failure_aborts_before_the_steps(tmp_path: Path, workspace: Path) -> None:
    write_task(
        tmp_path,
        "---\nsteps:\n  - {name: check, type: tool, tool: fail_check}\n---\n",
        "hooks/pre-task.md",
    )
    loaded = load(tmp_path, HOOKED)
    executor, _, _ = make_executor(loaded, workspace)
    events = await collect(executor, loaded.definition)
    assert [e.step for e in by_type(events, StepCompleteEvent)] == ["pre-task:check"]
    assert finished(events).status == "failed" and "pre-task hook failed" in (
        finished(events).answer or ""
    )


async def test_post_hook_failure_is_a_warning(tmp_path: Path, workspace: Path) -> None:
    write_task(
        tmp_path,
        "---\nsteps:\n  - {name: check, type: tool, tool: fail_check}\n---\n",
        "hooks/post-analysis.md",
    )
    loaded = load(tmp_path, HOOKED)
    executor, _, _ = make_executor(loaded, workspace)
    events = await collect(executor, loaded.definition)
    assert [e.step for e in by_type(events, StepCompleteEvent)] == ["main", "post-task:check"]
    warnings = [w.message for w in by_type(events, WarningEvent)]
    assert any("post-task hook failed" in w and "the check failed" in w for w in warnings)
    assert finished(events).status == "completed"


WRITES = """
name: writes
steps:
  - name: approve
    type: gate
  - name: first
    type: tool
    tool: write_text
    args: {path: notes.txt, content: "overwritten"}
  - name: second
    type: tool
    tool: write_text
    args: {path: new/../created.txt, content: "new file"}
  - name: boom
    type: tool
    tool: explode
    args: {path: notes.txt}
  - name: after
    type: tool
    tool: shout
    args: {text: never}
"""


async def approve_all(
    executor: TaskExecutor, task: TaskDefinition, gates: GateBroker
) -> list[Event]:
    events: list[Event] = []
    async for event in executor.execute(task):
        events.append(event)
        if isinstance(event, ConfirmationRequiredEvent):
            gates.resolve(event.request_id, True, "test")
    return events


async def test_failed_tool_step_aborts_and_rollback_restores_bytes(
    tmp_path: Path, workspace: Path
) -> None:
    (workspace / "notes.txt").write_bytes(b"caf\xc3\xa9\r\nno newline at end")
    before = (workspace / "notes.txt").read_bytes()
    loaded = load(tmp_path, WRITES)
    executor, _, gates = make_executor(loaded, workspace)
    events = await approve_all(executor, loaded.definition, gates)
    steps = [e.step for e in by_type(events, StepCompleteEvent)]
    assert steps == ["approve", "first", "second", "boom"]  # 'after' never ran
    assert (workspace / "notes.txt").read_text() == "overwritten"
    assert "loopwright task rollback" in (finished(events).answer or "")
    changes = by_type(events, ChangeRecordedEvent)
    assert [c.action for c in changes] == ["modify", "create", "modify"]
    state = rebuild_state(events)
    undo: list[Event] = []
    runtime = Runtime(InMemoryRunStore())
    try:
        status = await runtime.rollback(state, on_event=undo.append).wait()
    finally:
        runtime.close()
    assert status == finished(undo).status == "completed"
    assert by_type(undo, RunStartedEvent)[0].parent_run_id == events[0].run_id
    assert (workspace / "notes.txt").read_bytes() == before
    assert not (workspace / "created.txt").exists()


async def test_rollback_on_failure_undoes_in_the_same_run(tmp_path: Path, workspace: Path) -> None:
    before = (workspace / "notes.txt").read_bytes()
    loaded = load(tmp_path, WRITES)
    executor, _, gates = make_executor(loaded, workspace, rollback_on_failure=True)
    events = await approve_all(executor, loaded.definition, gates)
    undos = [e for e in by_type(events, FunctionResultEvent) if e.function == "undo"]
    assert len(undos) == 3 and all(u.success for u in undos)
    assert finished(events).status == "rolled_back"
    assert (workspace / "notes.txt").read_bytes() == before


async def test_an_ungated_write_step_gets_a_gate(tmp_path: Path, workspace: Path) -> None:
    loaded = load(tmp_path, WRITES)
    executor, _, gates = make_executor(loaded, workspace)
    events = await approve_all(executor, loaded.definition, gates)
    asked = [e.step for e in by_type(events, ConfirmationRequiredEvent)]
    # 'first' follows an approved gate; 'second' and 'boom' were not gated by the task
    assert asked == ["approve", "second", "boom"]
    assert "will write using write_text" in by_type(events, ConfirmationRequiredEvent)[1].message


async def test_rejecting_an_added_gate_keeps_the_file(tmp_path: Path, workspace: Path) -> None:
    loaded = load(tmp_path, WRITES.replace("  - name: approve\n    type: gate\n", ""))
    executor, _, gates = make_executor(loaded, workspace)
    events: list[Event] = []
    async for event in executor.execute(loaded.definition):
        events.append(event)
        if isinstance(event, ConfirmationRequiredEvent):
            gates.resolve(event.request_id, False, "ops")
    assert (workspace / "notes.txt").read_text() == "alpha beta\ngamma\n"
    assert not by_type(events, ChangeRecordedEvent)
    assert finished(events).status == "cancelled"


AGENT = """
name: explain
steps:
  - name: measure
    type: tool
    tool: count_lines
    args: {path: notes.txt}
  - name: explain
    type: agent
    description: "Explain a file of {results.measure.lines} lines."
  - name: loud
    type: tool
    tool: shout
    args_from: {text: results.explain}
"""


async def test_agent_step_streams_its_text_and_feeds_later_steps(
    tmp_path: Path, workspace: Path
) -> None:
    model = ScriptedModel(['{"thought": "two lines", "final_answer": "short notes"}'])
    loaded = load(tmp_path, AGENT)
    executor, sink, _ = make_executor(loaded, workspace, model=model)
    events = await collect(executor, loaded.definition, "explain the notes")
    chunks = [e.chunk for e in by_type(events, StreamEvent)]
    assert chunks == ["two lines", "short notes"]
    assert "Explain a file of 2 lines." in model.requests[0].messages[-1].content
    assert by_type(events, FunctionResultEvent)[-1].result == "SHORT NOTES"
    child = [e for e in sink.events if e.run_id != events[0].run_id]
    assert isinstance(child[0], RunStartedEvent) and child[0].parent_run_id == events[0].run_id


CALL = '{"action": "count_lines", "action_input": {"path": "notes.txt"}}'
ONE_ITERATION = AgentOptions(max_iterations=1)


async def test_agent_step_retries_once_with_a_simpler_prompt(
    tmp_path: Path, workspace: Path
) -> None:
    # the first attempt calls a tool and runs out of iterations; the second answers
    model = ScriptedModel([CALL, '{"final_answer": "fine"}'], strict=False)
    loaded = load(tmp_path, AGENT)
    executor, _, _ = make_executor(loaded, workspace, model=model, agent_options=ONE_ITERATION)
    events = await collect(executor, loaded.definition)
    assert any("retrying once" in w.message for w in by_type(events, WarningEvent))
    assert "Do not call any tool" in model.requests[-1].messages[-1].content
    assert finished(events).status == "completed"


async def test_agent_step_failing_twice_aborts(tmp_path: Path, workspace: Path) -> None:
    model = ScriptedModel([CALL], strict=False)  # then the script runs out
    loaded = load(tmp_path, AGENT)
    executor, _, _ = make_executor(loaded, workspace, model=model, agent_options=ONE_ITERATION)
    events = await collect(executor, loaded.definition)
    assert by_type(events, StepCompleteEvent)[-1].status == "failed"
    assert finished(events).status == "failed" and "failed twice" in (finished(events).answer or "")


async def test_state_from_the_store_matches_the_json_export(
    tmp_path: Path, workspace: Path
) -> None:
    runtime = Runtime(InMemoryRunStore())
    loaded = load(tmp_path, PIPELINE)
    executor = TaskExecutor.for_task(
        loaded,
        settings=TaskSettings(workspace=workspace, state_root=tmp_path / "st"),
        sink=runtime.publish,
    )
    events = await collect(executor, loaded.definition, "go", {}, "acme")
    run_id = events[0].run_id
    record = runtime.store.get_run(run_id)
    assert record is not None and record.kind == "task" and record.status == "completed"
    rebuilt = rebuild_state(runtime.store.events(run_id))
    exported = json.loads(
        (tmp_path / "st" / "clients" / "acme" / "task-runs" / f"{run_id}.json").read_text()
    )
    assert rebuilt.to_dict() == exported
    assert [s["step_name"] for s in exported["steps_completed"]] == [
        "measure",
        "first_word",
        "never",
    ]


async def test_a_finished_agent_step_is_served_from_the_log_on_resume(
    tmp_path: Path, workspace: Path
) -> None:
    model = ScriptedModel(['{"thought": "two lines", "final_answer": "short notes"}'])
    loaded = load(tmp_path, AGENT)
    executor, _, _ = make_executor(loaded, workspace, model=model)
    events = await collect(executor, loaded.definition, "explain the notes")
    done = next(
        i for i, e in enumerate(events) if isinstance(e, StepCompleteEvent) and e.step == "explain"
    )
    prefix = events[: done + 1]  # the process died right after the agent step
    no_replies = ScriptedModel([])  # a model call now would fail the step
    again, sink, _ = make_executor(loaded, workspace, model=no_replies)
    rest = [e async for e in again.execute(loaded.definition, "explain the notes", recorded=prefix)]
    assert no_replies.requests == []
    assert [e.seq for e in rest] == list(range(done + 2, done + 2 + len(rest)))
    assert by_type(rest, FunctionResultEvent)[0].result == "SHORT NOTES"
    assert finished(rest).status == "completed" and sink.events == rest
