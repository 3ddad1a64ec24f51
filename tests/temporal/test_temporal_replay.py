"""Workflow code is deterministic: recorded histories replay with Temporal's Replayer
(no server needed), the frozen history of each workflow version included."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from temporalio import workflow
from temporalio.client import WorkflowHistory

from loopwright.engines.temporal import AGENT_RUN, TASK_RUN, AgentRunWorkflow, TaskRunWorkflow
from loopwright.engines.temporal._sandbox import AllModulesBut, replayer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "temporal"


@pytest.mark.parametrize(
    ("version", "fixture"),
    [("v1", "agent_run_v1"), ("v1", "agent_run_v1_continued")],  # a run after continue-as-new
)
async def test_the_frozen_history_of_each_version_replays(version: str, fixture: str) -> None:
    text = (FIXTURES / f"{fixture}.json").read_text()
    history = WorkflowHistory.from_json("run_fixture0000000001", text)
    result = await replayer(AgentRunWorkflow).replay_workflow(history)
    assert result.replay_failure is None
    started = json.loads(text)["events"][0]["workflowExecutionStartedEventAttributes"]
    assert started["workflowType"]["name"] == AGENT_RUN == f"loopwright.agent_run.{version}"


async def test_a_changed_workflow_is_caught_by_the_replay() -> None:
    """The replay is a real check: a history whose model reply is changed (so the loop now
    calls no tool where it called echo) fails with a non-determinism error."""
    data = json.loads((FIXTURES / "agent_run_v1.json").read_text())
    changed = 0
    for event in data["events"]:
        for payload in (
            event.get("activityTaskCompletedEventAttributes", {})
            .get("result", {})
            .get("payloads", [])
        ):
            text = base64.b64decode(payload["data"]).decode()
            if '\\"action\\": \\"echo\\"' in text:  # the model's first reply: now an answer
                reply = json.loads(text)
                reply["text"] = json.dumps({"final_answer": "no tool this time"})
                payload["data"] = base64.b64encode(json.dumps(reply).encode()).decode()
                changed += 1
    assert changed == 1
    history = WorkflowHistory.from_json("run_fixture0000000001", data)
    result = await replayer(AgentRunWorkflow).replay_workflow(
        history, raise_on_replay_failure=False
    )
    assert result.replay_failure is not None
    assert "nondetermin" in str(result.replay_failure).lower().replace("-", ""), (
        result.replay_failure
    )


def task_history(change: Callable[[dict[str, Any]], int] | None = None) -> WorkflowHistory:
    """The frozen task_run.v1 history, with this checkout's path of its task file (and
    `change` applied to its events: how many payloads it changed)."""
    data = json.loads((FIXTURES / "task_run_v1.json").read_text())
    started = data["events"][0]["workflowExecutionStartedEventAttributes"]
    task_file = json.dumps(str(FIXTURES / "task_run_v1.yaml"))[1:-1]
    for payload in started["input"]["payloads"]:
        text = base64.b64decode(payload["data"]).decode()
        text = text.replace("/FIXTURE_TASK_FILE/task_run_v1.yaml", task_file)
        payload["data"] = base64.b64encode(text.encode()).decode()
    if change is not None:
        assert change(data) == 1
    return WorkflowHistory.from_json("run_taskfixture00001", data)


async def test_the_frozen_task_run_history_replays() -> None:
    """A task run whose gate was approved through the Update `approve`."""
    result = await replayer(TaskRunWorkflow).replay_workflow(task_history())
    assert result.replay_failure is None
    data = json.loads((FIXTURES / "task_run_v1.json").read_text())
    started = data["events"][0]["workflowExecutionStartedEventAttributes"]
    assert started["workflowType"]["name"] == TASK_RUN == "loopwright.task_run.v1"


def _reject_the_gate(data: dict[str, Any]) -> int:
    changed = 0
    for event in data["events"]:
        accepted = event.get("workflowExecutionUpdateAcceptedEventAttributes")
        if accepted is None:
            continue
        for payload in accepted["acceptedRequest"]["input"]["args"]["payloads"]:
            decision = json.loads(base64.b64decode(payload["data"]))
            decision["approved"] = False  # the write step is not run now
            payload["data"] = base64.b64encode(json.dumps(decision).encode()).decode()
            changed += 1
    return changed


async def test_a_changed_decision_is_caught_by_the_task_replay() -> None:
    result = await replayer(TaskRunWorkflow).replay_workflow(
        task_history(_reject_the_gate), raise_on_replay_failure=False
    )
    assert result.replay_failure is not None
    assert "nondetermin" in str(result.replay_failure).lower().replace("-", "")


def test_the_workflows_run_in_the_sandbox() -> None:
    """The workflows are sandboxed; the sandbox re-imports (and restricts) the engine's
    workflow side for each workflow run and shares everything else with the worker."""
    for defined in (AgentRunWorkflow, TaskRunWorkflow):
        assert workflow._Definition.must_from_class(defined).sandboxed
    shared = AllModulesBut()
    for name in ("loopwright.agent._loop", "loopwright.engines.temporal._activities", "httpx"):
        assert name in shared
    for name in ("loopwright.engines.temporal._effects", "loopwright.engines.temporal._workflow"):
        assert name not in shared
    assert "loopwright" not in shared  # else every loopwright module would pass through
