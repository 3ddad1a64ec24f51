"""The task state file never lags what a consumer was told (issue 34, item 2).

Seed 004's lines held here:

- "18. State saved to `clients/{client_name}/task-runs/{task_id}.json`"
- "19. State updated after each step completion"
- "20. On failure, state saved with `status=failed` and `current_step` pointing to failed step"
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loopwright.compat import Settings, StepDefinition, TaskDefinition, TaskExecutor
from loopwright.errors import UsageError
from loopwright.events import Event, StepCompleteEvent
from loopwright.tasks import TaskExecutor as NativeTaskExecutor
from loopwright.tasks import TaskSettings
from loopwright.tasks._state import StateFileExporter
from loopwright.tools import ToolRegistry, tool


@tool(effect="read")
def measure(site: str) -> dict[str, Any]:
    """Measure a site."""
    return {"site": site, "ok": True}


@tool(effect="read")
def unreachable(site: str) -> str:
    """Always fails."""
    raise RuntimeError(f"site {site} unreachable")


STEPS = [
    StepDefinition(f"measure_{n}", "tool", "measure", "measure", {"site": "inputs.site"})
    for n in range(4)
]


def definition(*steps: StepDefinition) -> TaskDefinition:
    return TaskDefinition("survey", "analyst", ("survey",), "low", list(steps), {})


def state_file(data_dir: Path, client: str, task_id: str) -> dict[str, Any]:
    path = data_dir / "clients" / client / "task-runs" / f"{task_id}.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("run", range(10))
async def test_a_consumer_told_step_complete_finds_the_step_in_the_state_file(
    tmp_path: Path, run: int
) -> None:
    """Seed 004: "19. State updated after each step completion". Ten runs (the lag was seen
    in 10 of 10): at each `step_complete` the compat executor yields, the state file
    under `clients/{client_name}/task-runs/{task_id}.json` already holds that step."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = Settings(data_dir=tmp_path / "data", tools=[measure], workspace=workspace)
    executor = TaskExecutor(None, settings)
    told: list[str] = []
    async for data in executor.execute(definition(*STEPS), "survey", {"site": "hq"}, "acme"):
        if data["type"] != "step_complete":
            continue
        told.append(data["step"])
        assert executor.task_id is not None
        state = state_file(tmp_path / "data", "acme", executor.task_id)
        assert [s["step_name"] for s in state["steps_completed"]] == told
    assert told == [s.name for s in STEPS]


async def test_a_failed_step_is_in_the_state_file_when_its_step_complete_arrives(
    tmp_path: Path,
) -> None:
    """Seed 004: "20. On failure, state saved with `status=failed` and `current_step`
    pointing to failed step": the failed step and `current_step` are in the file by the
    time its `step_complete` is received (the run's `failed` status follows at its end)."""
    broken = StepDefinition("probe", "tool", "probe", "unreachable", {"site": "inputs.site"})
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = Settings(data_dir=tmp_path / "data", tools=[unreachable], workspace=workspace)
    executor = TaskExecutor(None, settings)
    seen = False
    async for data in executor.execute(definition(broken), "probe", {"site": "hq"}, "acme"):
        assert executor.task_id is not None
        if data["type"] == "step_complete":
            state = state_file(tmp_path / "data", "acme", executor.task_id)
            assert state["current_step"] == "probe"
            assert state["steps_completed"][-1]["status"] == data["status"] == "failed"
            seen = True
        if data["type"] == "task_complete":
            assert state_file(tmp_path / "data", "acme", executor.task_id)["status"] == "failed"
    assert seen


async def test_the_native_sink_is_never_ahead_of_the_state_file(tmp_path: Path) -> None:
    """The same rule for the native TaskExecutor's sink (what the Runtime publishes)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    root = tmp_path / "state"
    checked: list[str] = []

    def sink(event: Event) -> None:
        if isinstance(event, StepCompleteEvent):
            state = state_file(root, "acme", event.run_id)
            assert state["steps_completed"][-1]["step_name"] == event.step
            checked.append(event.step)

    executor = NativeTaskExecutor(
        None,
        ToolRegistry([measure]),
        settings=TaskSettings(workspace=workspace, state_root=root),
        sink=sink,
    )
    await executor.run(definition(*STEPS[:2]), "survey", {"site": "hq"}, "acme")
    assert checked == ["measure_0", "measure_1"]


@pytest.mark.parametrize("client", ["../../escaped", "../x", "a/b", "..", "", "a\\b"])
async def test_a_client_name_that_is_not_a_folder_name_is_refused(
    tmp_path: Path, client: str
) -> None:
    """A client name comes from the caller: `../../escaped` put the state file two folders
    above `clients/`. It is refused before the run starts; nothing is written anywhere."""
    data_dir = tmp_path / "data"
    executor = TaskExecutor(None, Settings(data_dir=data_dir, tools=[measure], workspace=tmp_path))
    with pytest.raises(UsageError, match=r"client name .* cannot name a folder"):
        async for _ in executor.execute(definition(STEPS[0]), "", {"site": "s"}, client):
            pass
    assert list(tmp_path.rglob("*.json")) == []
    exporter = StateFileExporter(data_dir)
    for call in (exporter.path_for, exporter.backup_dir):
        with pytest.raises(UsageError, match="cannot name a folder"):
            call(client, "run_1")
        with pytest.raises(UsageError, match=r"task id '\.\./x' cannot name a folder"):
            call("acme", "../x")
