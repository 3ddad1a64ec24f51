"""Workflow code is deterministic: recorded histories replay with Temporal's Replayer
(no server needed), the frozen history of each workflow version included. The frozen
histories were recorded before payloads were sealed: a worker takes no plain payload, so
each is sealed with this process's key first, as a worker now stores it (`sealed`)."""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from temporal_helpers import payloads_of
from temporalio import workflow
from temporalio.api.common.v1 import Payloads
from temporalio.api.failure.v1 import Failure
from temporalio.client import WorkflowHistory
from temporalio.converter import DataConverter
from temporalio.worker import Replayer, WorkflowInstanceDetails
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions
from temporalio.worker.workflow_sandbox._runner import _fake_info  # the sandbox's own

from loopwright.engines.temporal._activity_support import WorkerSecrets
from loopwright.engines.temporal._build import build_setup
from loopwright.engines.temporal._codec import data_converter, load_cipher
from loopwright.engines.temporal._payloads import RunPlan
from loopwright.engines.temporal._sandbox import AllModulesBut, replayer, workflow_runner
from loopwright.engines.temporal._task_workflow import TASK_RUN, TaskRunWorkflow
from loopwright.engines.temporal._workflow import AGENT_RUN, AgentRunWorkflow
from loopwright.runtime import RunSpec

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "temporal"


async def sealed(history: WorkflowHistory) -> WorkflowHistory:
    """`history` with every payload sealed with this process's key, in place."""
    payloads = [p for event in history.events for p in payloads_of(event)]
    for payload, sealed_one in zip(payloads, await load_cipher().encode(payloads), strict=True):
        payload.CopyFrom(sealed_one)
    return history


@pytest.mark.parametrize(
    ("version", "fixture"),
    [("v1", "agent_run_v1"), ("v1", "agent_run_v1_continued")],  # a run after continue-as-new
)
async def test_the_frozen_history_of_each_version_replays(version: str, fixture: str) -> None:
    text = (FIXTURES / f"{fixture}.json").read_text()
    history = await sealed(WorkflowHistory.from_json("run_fixture0000000001", text))
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
    history = await sealed(WorkflowHistory.from_json("run_fixture0000000001", data))
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
    result = await replayer(TaskRunWorkflow).replay_workflow(await sealed(task_history()))
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
        await sealed(task_history(_reject_the_gate)), raise_on_replay_failure=False
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


def _sandboxed_class(defined: type) -> Any:
    """The workflow class as one workflow run's sandbox made it (its own module copy)."""
    instance = workflow_runner().create_instance(
        WorkflowInstanceDetails(
            payload_converter_factory=DataConverter.default._new_payload_converter,
            failure_converter_class=DataConverter.default.failure_converter_class,
            interceptor_classes=[],
            defn=workflow._Definition.must_from_class(defined),
            info=_fake_info,
            randomness_seed=1,
            extern_functions={},
            disable_eager_activity_execution=False,
            worker_level_failure_exception_types=[],
            patch_activation_callback=None,
            last_completion_result=Payloads(),
            last_failure=Failure(),
        )
    )
    return instance.globals_and_locals["__temporal_workflow_class"]  # type: ignore[attr-defined]


async def test_each_workflow_run_gets_the_workflow_side_anew_from_code_compiled_once() -> None:
    """Each workflow run's sandbox makes the workflow side's modules anew (nothing of one
    run's modules is another's), from code compiled once per worker process: without
    bytecode files every workflow run compiled the sources again."""
    for defined in (AgentRunWorkflow, TaskRunWorkflow):
        first, second = _sandboxed_class(defined), _sandboxed_class(defined)
        assert first is not second and first is not defined
        assert first.run.__code__ is second.run.__code__


class LoopSandboxedToo(AllModulesBut):
    """The pass-through set with the loop (agent/) and scrubbing (safety/) re-imported and
    restricted as well, as the workflow side is."""

    def __contains__(self, name: object) -> bool:
        loop = isinstance(name, str) and name.startswith(("loopwright.agent", "loopwright.safety"))
        return super().__contains__(name) and not loop


@pytest.mark.parametrize("fixture", ["agent_run_v1", "agent_run_v1_continued"])
async def test_the_agent_loop_replays_in_the_sandbox_too(fixture: str) -> None:
    """What the loop does in a workflow goes through the effects (the model call's timing
    is the workflow's clock, not the process's): sandboxed with the engine's workflow
    side, it replays the frozen histories."""
    restrictions = dataclasses.replace(
        SandboxRestrictions.default, passthrough_modules=LoopSandboxedToo()
    )
    checker = Replayer(
        workflows=[AgentRunWorkflow],
        workflow_runner=SandboxedWorkflowRunner(restrictions=restrictions),
        data_converter=data_converter(),
    )
    history = await sealed(
        WorkflowHistory.from_json(
            "run_fixture0000000001", (FIXTURES / f"{fixture}.json").read_text()
        )
    )
    result = await checker.replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None, result.replay_failure


def test_the_workflow_side_reads_nothing_of_the_workers_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run built in the workflow scrubs with every detector but none of the worker's
    environment (its replay on another worker makes the same events); the worker's
    activities scrub their results with its environment's secret values."""
    secret = "tok-" + "7" * 24
    monkeypatch.setenv("DEPLOY_API_TOKEN", secret)
    spec = RunSpec(request="hi", model="scripted:none.json", tools=("echo",)).to_dict()
    plan = RunPlan("run_env", spec, "scripted", "prompted", "")
    in_workflow, _ = build_setup(plan)
    on_worker, _ = build_setup(plan, on_worker=lambda context: context)
    assert in_workflow.scrubber.env_secrets == {}
    assert secret in on_worker.scrubber.env_secrets.values()
    assert secret not in json.dumps(WorkerSecrets().scrub({"text": f"key {secret}"}))
