"""TaskSpec (versioned, frozen fixture), prepare_task/run_task over Effects, GateBroker as a
Gatekeeper (in-process and through the store), and resuming a run from its events
(`Runtime.resume`; `tasks.resume_task` and `resume_effects` are deprecated and say so)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from loopwright.effects import EventLog, GateRequest, LiveEffects
from loopwright.errors import ConfigurationError
from loopwright.events import (
    ConfirmationRequiredEvent,
    Event,
    FunctionResultEvent,
    GateDecisionEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StepCompleteEvent,
    ToolCallStartedEvent,
)
from loopwright.runtime import Runtime
from loopwright.store import SqliteRunStore
from loopwright.tasks import (
    GateBroker,
    TaskRunState,
    TaskSpec,
    prepare_task,
    rebuild_state,
    recorded_task_spec,
    resume_effects,
    resume_task,
    run_task,
)
from loopwright.testing import InMemoryRunStore

FIXTURE = Path(__file__).parent / "fixtures" / "task_spec_v1.json"
TOOLS_FILE = Path(__file__).parents[1] / "store" / "crash_tools.py"


def test_the_v1_spec_fixture_reads_and_writes_back_the_same() -> None:
    data = json.loads(FIXTURE.read_text())
    spec = TaskSpec.from_dict(data)
    assert spec.version == 1 and spec.task_file == "/srv/tasks/rotate-keys.yaml"
    assert spec.settings().gate_timeout_s == 60.0
    assert spec.settings().agent_options.tier == "trivial"
    assert spec.to_dict() == data


def test_an_unknown_version_or_key_is_a_clear_error() -> None:
    data = json.loads(FIXTURE.read_text())
    with pytest.raises(ConfigurationError, match="version 2 is not supported"):
        TaskSpec.from_dict({**data, "version": 2})
    with pytest.raises(ConfigurationError, match=r"unknown key.*api_key"):
        TaskSpec.from_dict({**data, "api_key": "x"})
    with pytest.raises(ConfigurationError, match="task_file"):
        TaskSpec.from_dict({k: v for k, v in data.items() if k != "task_file"})


def lines_task(folder: Path) -> TaskSpec:
    """Line 'a' (not idempotent), a gate, line 'c' (idempotent); spec for the file."""
    lines = json.dumps(str(folder / "lines.txt"))
    task = folder / "lines.yaml"
    task.write_text(
        f"name: lines\ntools: [{json.dumps(str(TOOLS_FILE))}]\nsteps:\n"
        f"  - {{name: a, type: tool, tool: append_line, args: {{path: {lines}, text: a}}}}\n"
        '  - {name: ok, type: gate, message_template: "go on"}\n'
        f"  - {{name: c, type: tool, tool: put_line, args: {{path: {lines}, text: c}}}}\n"
    )
    return TaskSpec(
        task_file=str(task),
        workspace=str(folder),
        state_root=str(folder / "state"),
        auto_gate=False,
        gate_timeout_s=30,
    )


class Collect:
    def __init__(self) -> None:
        self.events: list[Event] = []

    async def __call__(self, event: Event) -> None:
        self.events.append(event)


async def approve_when_asked(gates: GateBroker, decided_by: str) -> None:
    while not gates.pending():
        await asyncio.sleep(0.001)
    gates.resolve(gates.pending()[0].request_id, True, decided_by)


async def resumed(prefix: list[Event], gates: GateBroker, sink: Collect) -> TaskRunState:
    """The run stored up to `prefix` (its process died there), resumed by a Runtime."""
    store = InMemoryRunStore()
    store.append_many(prefix)
    runtime = Runtime(store, gates=gates)
    try:
        handle = await runtime.resume(prefix[0].run_id, on_event=sink)
        state: TaskRunState = await handle.wait()
    finally:
        runtime.close()
    return state


async def full_run(folder: Path) -> list[Event]:
    spec = lines_task(folder)
    sink, gates = Collect(), GateBroker()
    fx = LiveEffects(EventLog("run_lines", sink=sink), gates=gates)
    approver = asyncio.create_task(approve_when_asked(gates, "alice"))
    state = await run_task(prepare_task(spec, model=None), fx)
    await approver
    assert state.status == "completed"
    return sink.events


async def test_run_started_records_the_spec_and_the_state_file_is_the_logs_fold(
    tmp_path: Path,
) -> None:
    events = await full_run(tmp_path)
    first = events[0]
    assert isinstance(first, RunStartedEvent) and first.kind == "task"
    assert recorded_task_spec(events) == lines_task(tmp_path)
    [exported_file] = (tmp_path / "state").glob("clients/*/task-runs/run_lines.json")
    exported = TaskRunState.from_dict(json.loads(exported_file.read_text(encoding="utf-8")))
    assert exported.to_dict() == rebuild_state(events).to_dict()
    assert (tmp_path / "lines.txt").read_text().splitlines() == ["a", "c"]


async def test_a_waiting_gate_waits_again_and_done_steps_are_not_repeated(
    tmp_path: Path,
) -> None:
    events = await full_run(tmp_path)
    asked = next(i for i, e in enumerate(events) if isinstance(e, ConfirmationRequiredEvent))
    prefix = events[: asked + 1]  # the process died while the gate waited
    sink, gates = Collect(), GateBroker()
    approver = asyncio.create_task(approve_when_asked(gates, "bob"))
    state = await resumed(prefix, gates, sink)
    await approver
    assert state.status == "completed"
    assert [e.seq for e in sink.events] == list(range(asked + 2, asked + 2 + len(sink.events)))
    decided = [e for e in sink.events if isinstance(e, GateDecisionEvent)]
    asked_event = prefix[-1]
    assert isinstance(asked_event, ConfirmationRequiredEvent)
    assert [(d.request_id, d.decided_by) for d in decided] == [(asked_event.request_id, "bob")]
    assert [e.step for e in sink.events if isinstance(e, StepCompleteEvent)] == ["ok", "c"]
    assert (tmp_path / "lines.txt").read_text().splitlines() == ["a", "c"]  # 'a' not re-run


async def test_a_decided_gate_is_served_from_the_log(tmp_path: Path) -> None:
    events = await full_run(tmp_path)
    decided = next(i for i, e in enumerate(events) if isinstance(e, GateDecisionEvent))
    sink = Collect()
    state = await resumed(events[: decided + 1], GateBroker(), sink)
    assert state.status == "completed"  # nobody could decide: the verdict came from the log
    assert state.result_of("ok") is not None and state.result_of("ok").result == {  # type: ignore[union-attr]
        "approved": True,
        "decided_by": "alice",
    }


async def test_a_started_step_of_a_tool_that_is_not_idempotent_is_not_run_again(
    tmp_path: Path,
) -> None:
    events = await full_run(tmp_path)
    started = next(i for i, e in enumerate(events) if isinstance(e, ToolCallStartedEvent))
    sink = Collect()
    state = await resumed(events[: started + 1], GateBroker(), sink)
    [result] = [e for e in sink.events if isinstance(e, FunctionResultEvent)]
    assert not result.success and "effect is unknown" in str(result.error)
    assert state.status == "failed" and isinstance(sink.events[-1], RunFinishedEvent)
    assert (tmp_path / "lines.txt").read_text().splitlines() == ["a", "c"]


async def test_gate_broker_takes_a_decision_left_in_the_store(tmp_path: Path) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    gates = GateBroker(store, poll_s=0.01)
    request = GateRequest("gate_1", "approve", "ok?", 5.0)
    waiting = asyncio.create_task(gates.decide("run_1", request))
    while not gates.pending("run_1"):
        await asyncio.sleep(0.001)
    assert store.post_gate_decision("run_1", "gate_1", False, "cli:ops")
    verdict = await asyncio.wait_for(waiting, 5)
    assert (verdict.outcome, verdict.decided_by) == ("rejected", "cli:ops")
    assert gates.pending() == []
    store.close()


async def test_a_gate_nobody_decides_times_out_on_time() -> None:
    fx = LiveEffects(EventLog("run_t"), gates=GateBroker())
    started = time.monotonic()
    verdict = await fx.gate(GateRequest("gate_t", "approve", "ok?", 0.05))
    assert verdict.outcome == "timed_out"
    assert time.monotonic() - started < 2.0


async def test_the_deprecated_resume_doors_name_the_runtime(tmp_path: Path) -> None:
    events = await full_run(tmp_path)
    decided = next(i for i, e in enumerate(events) if isinstance(e, GateDecisionEvent))
    with pytest.warns(DeprecationWarning, match=r"resume_task is deprecated: .*Runtime\(store\)"):
        state = await resume_task(events[: decided + 1], gates=GateBroker())
    assert state.status == "completed"  # it still works meanwhile
    with pytest.warns(DeprecationWarning, match=r"resume_effects is deprecated: .*\.resume"):
        resume_effects(events[:decided])
