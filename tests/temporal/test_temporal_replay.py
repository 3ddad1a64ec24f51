"""Workflow code is deterministic: recorded histories replay with Temporal's Replayer
(no server needed), the frozen history of each workflow version included."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from loopwright.engines.temporal import AGENT_RUN, AgentRunWorkflow

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "temporal"


@pytest.mark.parametrize(
    ("version", "fixture"),
    [("v1", "agent_run_v1"), ("v1", "agent_run_v1_continued")],  # a run after continue-as-new
)
async def test_the_frozen_history_of_each_version_replays(version: str, fixture: str) -> None:
    text = (FIXTURES / f"{fixture}.json").read_text()
    history = WorkflowHistory.from_json("run_fixture0000000001", text)
    result = await Replayer(workflows=[AgentRunWorkflow]).replay_workflow(history)
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
    result = await Replayer(workflows=[AgentRunWorkflow]).replay_workflow(
        history, raise_on_replay_failure=False
    )
    assert result.replay_failure is not None
    assert "nondetermin" in str(result.replay_failure).lower().replace("-", ""), (
        result.replay_failure
    )
