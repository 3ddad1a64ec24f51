"""Seed 004 (task executor core engine): the contract of issue 21 line by line, through the
compat TaskExecutor, with real tools, a real workspace and state directory, and the
ai_engine mocked by ScriptedModel."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import shutil
import time
import typing
import uuid
from pathlib import Path
from typing import Any

import pytest

from loopwright.compat import (
    ChangeEntry,
    Settings,
    StepDefinition,
    StepResult,
    TaskDefinition,
    TaskExecutor,
    TaskParseError,
    TaskRunState,
)
from loopwright.tasks import StepDefinition as NativeStepDefinition
from loopwright.testing import ScriptedModel
from loopwright.tools import ToolContext, ToolRegistry, tool

SEED_TYPES = {
    "task_start",
    "step_start",
    "function_result",
    "stream",
    "confirmation_required",
    "step_complete",
    "task_complete",
}


@tool(effect="read")
def count_devices(site: str) -> dict[str, Any]:
    """Count the devices at a site."""
    return {"site": site, "count": 3}


@tool(effect="write")
def save_note(ctx: ToolContext, path: str, text: str) -> str:
    """Write a note into the workspace."""
    (ctx.workspace / path).write_text(text, encoding="utf-8")
    return f"saved {path}"


@tool(effect="read")
def failing(site: str) -> str:
    """Always fails."""
    raise RuntimeError(f"site {site} unreachable")


def settings(tmp_path: Path, **kwargs: Any) -> Settings:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    kwargs.setdefault(
        "tools", {"count_devices": count_devices, "save_note": save_note, "failing": failing}
    )
    return Settings(data_dir=tmp_path / "data", workspace=workspace, **kwargs)


def task(*steps: StepDefinition) -> TaskDefinition:
    return TaskDefinition("inventory", "network-analyst", ("inventory",), "low", list(steps), {})


COUNT = StepDefinition("count", "tool", "count devices", "count_devices", {"site": "inputs.site"})


async def collect(
    executor: TaskExecutor, definition: TaskDefinition, **kwargs: Any
) -> list[dict[str, Any]]:
    context = kwargs.pop("session_context", {"site": "hq"})
    return [e async for e in executor.execute(definition, "count hq", context, "acme", **kwargs)]


# --- constructor and settings ---------------------------------------------------------------
def test_constructor_is_ai_engine_then_settings_positional(tmp_path: Path) -> None:
    engine = ScriptedModel([])
    config = settings(tmp_path)
    executor = TaskExecutor(engine, config)
    assert executor.ai_engine is engine and executor.settings is config
    assert executor.native.model is engine
    assert executor.native.tools.names() == ["count_devices", "save_note", "failing"]


def test_settings_defaults() -> None:
    assert Settings().gate_timeout_s == 300.0
    assert str(Settings().data_dir) == "~/.loopwright"


@pytest.mark.parametrize("shape", ["list", "registry", "dict"])
def test_settings_tools_as_list_registry_or_dict(tmp_path: Path, shape: str) -> None:
    tools: Any = {
        "list": [count_devices, save_note],
        "registry": ToolRegistry([count_devices, save_note]),
        "dict": {"count": count_devices, "note": save_note},
    }[shape]
    executor = TaskExecutor(None, settings(tmp_path, tools=tools))
    expected = ["count", "note"] if shape == "dict" else ["count_devices", "save_note"]
    assert executor.native.tools.names() == expected
    assert executor.native.tools.get(expected[1]).effect == "write"
    assert executor.native.tools.get(expected[0]).effect == "read"


# --- the streaming contract -----------------------------------------------------------------
async def test_a_tool_step_yields_the_seed_dicts_in_order(tmp_path: Path) -> None:
    executor = TaskExecutor(None, settings(tmp_path))
    events = await collect(executor, task(COUNT))
    assert events == [
        {"type": "task_start", "task_name": "inventory", "total_steps": 1},
        {"type": "step_start", "step": "count", "step_index": 0},
        {
            "type": "function_result",
            "function": "count_devices",
            "result": {"site": "hq", "count": 3},
            "success": True,
        },
        {"type": "step_complete", "step": "count", "status": "completed"},
        {
            "type": "task_complete",
            "task_name": "inventory",
            "status": "completed",
            "summary": "1 steps done",
        },
    ]
    assert all(type(e) is dict for e in events)


async def test_state_file_under_data_dir_clients_task_runs(tmp_path: Path) -> None:
    executor = TaskExecutor(None, settings(tmp_path))
    await collect(executor, task(COUNT))
    assert executor.task_id is not None
    path = tmp_path / "data" / "clients" / "acme" / "task-runs" / f"{executor.task_id}.json"
    assert executor.state_path("acme", executor.task_id) == path
    state = TaskRunState.from_dict(json.loads(path.read_text(encoding="utf-8")))
    assert (state.task_id, state.task_name, state.status) == (
        executor.task_id,
        "inventory",
        "completed",
    )
    assert [s.step_name for s in state.steps_completed] == ["count"]
    assert isinstance(state.steps_completed[0], StepResult)
    assert executor.load_state("acme", executor.task_id) == state


async def test_tool_step_failure_aborts_the_rest(tmp_path: Path) -> None:
    steps = [StepDefinition("probe", "tool", "", "failing", {"site": "inputs.site"}), COUNT]
    executor = TaskExecutor(None, settings(tmp_path))
    events = await collect(executor, task(*steps))
    result = next(e for e in events if e["type"] == "function_result")
    assert result["success"] is False and "site hq unreachable" in result["result"]
    complete = [e for e in events if e["type"] == "step_complete"]
    assert [(c["step"], c["status"]) for c in complete] == [("probe", "failed")]
    assert "site hq unreachable" in complete[0]["error"]
    assert events[-1]["type"] == "task_complete" and events[-1]["status"] == "failed"
    state = executor.load_state("acme", executor.task_id or "")
    assert state.status == "failed" and state.current_step == "probe"


async def test_condition_skips_and_args_from_reads_earlier_results(tmp_path: Path) -> None:
    steps = [
        COUNT,
        StepDefinition(
            "big",
            "tool",
            "",
            "count_devices",
            {"site": "results.count.site"},
            "results.count.count > 10",
        ),
        StepDefinition(
            "again",
            "tool",
            "",
            "count_devices",
            {"site": "results.count.site"},
            "results.count.count == 3",
        ),
    ]
    events = await collect(TaskExecutor(None, settings(tmp_path)), task(*steps))
    complete = [(e["step"], e["status"]) for e in events if e["type"] == "step_complete"]
    assert complete == [("count", "completed"), ("big", "skipped"), ("again", "completed")]
    results = [e["result"] for e in events if e["type"] == "function_result"]
    assert results == [{"site": "hq", "count": 3}, {"site": "hq", "count": 3}]


async def test_agent_step_streams_chunks_from_the_ai_engine(tmp_path: Path) -> None:
    reply = json.dumps({"thought": "three devices at hq", "final_answer": "HQ has 3 devices."})
    engine = ScriptedModel([reply])
    steps = [COUNT, StepDefinition("explain", "agent", "Explain the count in one sentence.")]
    events = await collect(TaskExecutor(engine, settings(tmp_path)), task(*steps))
    assert {e["type"] for e in events} <= SEED_TYPES
    chunks = [e["chunk"] for e in events if e["type"] == "stream"]
    assert chunks == ["three devices at hq", "HQ has 3 devices."]
    assert all(set(e) == {"type", "chunk"} for e in events if e["type"] == "stream")
    assert events[-1] == {
        "type": "task_complete",
        "task_name": "inventory",
        "status": "completed",
        "summary": "2 steps done",
    }
    assert "Explain the count in one sentence." in engine.requests[0].messages[-1].content


# --- gates: the asyncio.Event handshake -----------------------------------------------------
async def test_gate_yields_event_and_waits_until_it_is_set(tmp_path: Path) -> None:
    steps = [
        StepDefinition(
            "confirm", "gate", "", None, None, None, "Write the note for {inputs.site}?"
        ),
        StepDefinition(
            "write", "tool", "", "save_note", args={"path": "note.txt", "text": "hello"}
        ),
    ]
    executor = TaskExecutor(None, settings(tmp_path))
    stream = executor.execute(task(*steps), "write it", {"site": "hq"}, "acme")
    seen = [await anext(stream), await anext(stream), await anext(stream)]
    gate = seen[-1]
    assert set(gate) == {"type", "request_id", "message", "_event"}
    assert gate["type"] == "confirmation_required" and gate["message"] == "Write the note for hq?"
    assert isinstance(gate["_event"], asyncio.Event)

    following = asyncio.ensure_future(anext(stream))
    done, _ = await asyncio.wait({following}, timeout=0.2)
    assert not done  # paused at the gate
    assert not (tmp_path / "ws" / "note.txt").exists()
    gate["_event"].set()  # what the seed's WebSocket handler does on "confirm"
    assert await following == {"type": "step_complete", "step": "confirm", "status": "completed"}
    rest = [e async for e in stream]
    assert (tmp_path / "ws" / "note.txt").read_text(encoding="utf-8") == "hello"
    assert rest[-1]["type"] == "task_complete" and rest[-1]["status"] == "completed"
    assert all("_event" not in e for e in rest)


async def test_gate_timeout_aborts_and_saves_state(tmp_path: Path) -> None:
    steps = [StepDefinition("confirm", "gate", "Go?"), COUNT]
    executor = TaskExecutor(None, settings(tmp_path, gate_timeout_s=0.3))
    started = time.monotonic()
    events = await collect(executor, task(*steps))
    elapsed = time.monotonic() - started
    assert elapsed < 5.0
    complete = [e for e in events if e["type"] == "step_complete"]
    assert [(c["step"], c["status"]) for c in complete] == [("confirm", "timed_out")]
    assert "no decision" in complete[0]["error"]
    assert events[-1]["status"] == "failed"
    assert not any(e["type"] == "function_result" for e in events)
    state = executor.load_state("acme", executor.task_id or "")
    assert (state.status, state.current_step) == ("failed", "confirm")


async def test_a_write_tool_without_a_gate_asks_first_and_reject_stops(tmp_path: Path) -> None:
    steps = [StepDefinition("write", "tool", "", "save_note", args={"path": "n.txt", "text": "x"})]
    executor = TaskExecutor(None, settings(tmp_path))
    events: list[dict[str, Any]] = []
    async for event in executor.execute(task(*steps), "", {}, "acme"):
        events.append(event)
        if event["type"] == "confirmation_required":
            assert "save_note" in event["message"]
            assert executor.reject(event["request_id"])
    assert [e["type"] for e in events][-2:] == ["step_complete", "task_complete"]
    assert events[-2]["status"] == "rejected" and events[-1]["status"] == "cancelled"
    assert not (tmp_path / "ws" / "n.txt").exists()


# --- the data models ------------------------------------------------------------------------
def test_step_definition_takes_the_seed_fields_in_the_seed_order() -> None:
    step = StepDefinition("s", "tool", "d", "t", {"a": "inputs.a"}, "inputs.go", "msg")
    assert (step.name, step.type, step.description, step.tool) == ("s", "tool", "d", "t")
    assert (step.args_from, step.condition, step.message_template) == (
        {"a": "inputs.a"},
        "inputs.go",
        "msg",
    )
    assert isinstance(step, NativeStepDefinition)
    assert dataclasses.replace(step, name="t").name == "t"


RUN_ID = re.compile(r"run_[0-9a-f]{16}")


async def test_task_id_is_the_runs_id_not_a_uuid(tmp_path: Path) -> None:
    """Seed 004: "`TaskRunState` ... `task_id` (uuid)". It is the run's id instead: the id
    the state file is named by and holds, the id a later `rollback` or `load_state` takes."""
    executor = TaskExecutor(None, settings(tmp_path))
    await collect(executor, task(COUNT))
    task_id = executor.task_id or ""
    assert RUN_ID.fullmatch(task_id), task_id
    with pytest.raises(ValueError):
        uuid.UUID(task_id)
    state = executor.load_state("acme", task_id)
    assert state.task_id == task_id
    assert executor.state_path("acme", task_id).name == f"{task_id}.json"


def test_one_id_for_the_run_in_the_store_its_events_and_its_state_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same task run as `loopwright task run` stores it: the store's run id is every
    event's `run_id`, the state file's name and its `task_id`."""
    from loopwright.cli import main
    from loopwright.store import SqliteRunStore

    examples = Path(__file__).parents[2] / "examples" / "tasks"
    ws = shutil.copytree(examples / "workspace", tmp_path / "ws")
    store, state_dir = tmp_path / "runs.db", tmp_path / "state"
    argv = ["task", "run", str(examples / "rotate-keys.yaml"), "--workspace", str(ws),
            "--input", "as_of=2025-06-01", "--client", "acme", "--yes", "--json",
            "--store", str(store), "--state-dir", str(state_dir)]  # fmt: skip
    assert main(argv) == 0
    [record] = SqliteRunStore(store).list_runs(tenant="acme")
    assert RUN_ID.fullmatch(record.run_id), record.run_id
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert events and {e["run_id"] for e in events} == {record.run_id}
    [state_file] = state_dir.rglob("task-runs/*.json")
    assert state_file.name == f"{record.run_id}.json"
    assert json.loads(state_file.read_text(encoding="utf-8"))["task_id"] == record.run_id


def test_the_seed_dataclasses_have_the_seed_fields() -> None:
    def names(cls: type) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    assert names(TaskDefinition)[:6] == [
        "name",
        "agent",
        "trigger_keywords",
        "risk_level",
        "steps",
        "hooks",
    ]
    assert names(TaskRunState)[:7] == [
        "task_id", "task_name", "status", "started_at", "steps_completed", "current_step", "change_log",
    ]  # fmt: skip
    status = typing.get_type_hints(TaskRunState)["status"]  # the seed's five and `cancelled`
    assert typing.get_args(status) == (
        "pending", "running", "completed", "failed", "cancelled", "rolled_back",
    )  # fmt: skip
    assert names(StepResult) == [
        "step_name",
        "type",
        "status",
        "result",
        "error",
        "started_at",
        "completed_at",
    ]
    assert names(ChangeEntry)[:5] == [
        "action",
        "resource_type",
        "resource_id",
        "backup_path",
        "timestamp",
    ]
    error = TaskParseError("tasks/x.yaml", "the task needs a 'name'")
    assert (error.file_path, error.message) == ("tasks/x.yaml", "the task needs a 'name'")


async def test_a_plain_function_declares_nothing_so_it_is_gated(tmp_path: Path) -> None:
    def ping(site: str) -> str:
        """Ping a site (declares no effect: it might change something)."""
        return f"pong {site}"

    steps = [StepDefinition("ping", "tool", "", "ping", {"site": "inputs.site"})]
    executor = TaskExecutor(None, settings(tmp_path, tools={"ping": ping}))
    events: list[dict[str, Any]] = []
    async for event in executor.execute(task(*steps), "", {"site": "hq"}, "acme"):
        events.append(event)
        if event["type"] == "confirmation_required":
            event["_event"].set()
    assert [e["type"] for e in events][:3] == ["task_start", "step_start", "confirmation_required"]
    assert events[-2:] == [
        {"type": "step_complete", "step": "ping", "status": "completed"},
        {
            "type": "task_complete",
            "task_name": "inventory",
            "status": "completed",
            "summary": "1 steps done",
        },
    ]
