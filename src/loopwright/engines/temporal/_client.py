"""Connect to Temporal, start agent and task runs as workflows, and run a worker.

Starting (and resuming) a run's workflow is the TemporalEngine's part of `Runtime.start`
and `Runtime.resume` (which register the run and check it first): not a door of its own."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker

from loopwright.agent import AgentExecutor
from loopwright.agent._process import new_run_id
from loopwright.engines.temporal._activities import RunActivities
from loopwright.engines.temporal._activity_support import Heartbeats
from loopwright.engines.temporal._allows import WorkerAllows
from loopwright.engines.temporal._codec import PayloadCipher, data_converter
from loopwright.engines.temporal._payloads import (
    AgentRunInput,
    EngineSettings,
    Resumed,
    TaskRunInput,
)
from loopwright.engines.temporal._report import WorkerReport
from loopwright.engines.temporal._sandbox import workflow_runner
from loopwright.engines.temporal._task_activities import TaskActivities
from loopwright.engines.temporal._task_workflow import TASK_RUN, TaskRunWorkflow
from loopwright.engines.temporal._versions import worker_build_id
from loopwright.engines.temporal._worker_agent import hold_worker_agent
from loopwright.engines.temporal._workflow import AGENT_RUN, TASK_QUEUE, AgentRunWorkflow
from loopwright.errors import ConfigurationError
from loopwright.runtime import RunSpec
from loopwright.tasks import TaskSpec

CONNECT_WAIT_S = 30.0


async def connect(
    address: str, *, namespace: str = "default", wait_s: float = CONNECT_WAIT_S
) -> Client:
    """A client of the Temporal frontend at HOST:PORT (retried while it starts up), whose
    payloads are sealed with the deployment's key and which takes only sealed ones."""
    converter = data_converter(address=address)  # engines/temporal/_codec.py
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return await Client.connect(address, namespace=namespace, data_converter=converter)
        except Exception as exc:  # the frontend is not ready yet, or not there at all
            if time.monotonic() >= deadline:
                raise ConfigurationError(
                    f"cannot reach Temporal at {address} (namespace {namespace!r}): {exc}"
                ) from None
            await asyncio.sleep(0.2)


async def start_agent_run(
    client: Client,
    spec: RunSpec,
    *,
    run_id: str | None = None,
    parent_run_id: str | None = None,
    settings: EngineSettings | None = None,
    task_queue: str = TASK_QUEUE,
    workflow_task_timeout_s: float | None = None,
) -> WorkflowHandle[Any, Any]:
    """Start `spec` as a workflow whose id is the run id; a worker picks it up. A workflow
    task a worker took and never answered goes to another after `workflow_task_timeout_s`
    (None: Temporal's default, 10 s)."""
    run_id = run_id or new_run_id()
    data = AgentRunInput(
        run_id, spec.to_dict(), settings or EngineSettings(), parent_run_id=parent_run_id
    )
    task_timeout = None
    if workflow_task_timeout_s is not None:
        task_timeout = timedelta(seconds=workflow_task_timeout_s)
    return await client.start_workflow(
        AGENT_RUN, data, id=run_id, task_queue=task_queue, task_timeout=task_timeout
    )


async def start_task_run(
    client: Client,
    spec: TaskSpec,
    *,
    run_id: str | None = None,
    settings: EngineSettings | None = None,
    task_queue: str = TASK_QUEUE,
) -> WorkflowHandle[Any, Any]:
    """Start the task run `spec` as a workflow whose id is the run id; a worker picks it up
    (the task file must be at the same path on the workers; the engine checked it)."""
    run_id = run_id or new_run_id()
    data = TaskRunInput(run_id, spec.to_dict(), settings or EngineSettings())
    return await client.start_workflow(TASK_RUN, data, id=run_id, task_queue=task_queue)


async def resume_agent_run(
    client: Client,
    spec: RunSpec,
    run_id: str,
    *,
    workspace_section: str | None,
    parent_run_id: str | None = None,
    settings: EngineSettings | None = None,
    task_queue: str = TASK_QUEUE,
) -> WorkflowHandle[Any, Any]:
    """Go on with the stored run `run_id` in a new workflow (same id) after its workflow
    failed or was terminated: the loop replays the recorded events, nothing recorded is
    done again, and it goes on live where the record ends."""
    data = AgentRunInput(
        run_id,
        spec.to_dict(),
        settings or EngineSettings(),
        parent_run_id=parent_run_id,
        resume=Resumed(workspace_section),
    )
    return await client.start_workflow(AGENT_RUN, data, id=run_id, task_queue=task_queue)


async def resume_task_run(
    client: Client,
    spec: TaskSpec,
    run_id: str,
    *,
    settings: EngineSettings | None = None,
    task_queue: str = TASK_QUEUE,
) -> WorkflowHandle[Any, Any]:
    """Go on with the stored task run `run_id` (its recorded `spec`) in a new workflow of
    the same id, after its workflow failed or was terminated: recorded steps are served
    from its events, a gate that was waiting waits again."""
    data = TaskRunInput(run_id, spec.to_dict(), settings or EngineSettings(), resume=True)
    return await client.start_workflow(TASK_RUN, data, id=run_id, task_queue=task_queue)


DEFAULT_CACHED = 1000
"""Temporal's own default for `Worker(max_cached_workflows=...)`."""
GRACEFUL_TIMEOUT_S = 30.0
"""How long a stopping worker lets its in-flight activities finish (then hands them back)."""
STICKY_TIMEOUT_S = 10.0
"""Temporal's own default for `Worker(sticky_queue_schedule_to_start_timeout=...)`: how long
a workflow's next task waits for the worker that has it cached before any worker takes it
(after a worker dies, its runs wait this long)."""


async def run_worker(
    client: Client,
    store_url: str,
    *,
    task_queue: str = TASK_QUEUE,
    stop: asyncio.Event | None = None,
    max_concurrent_activities: int = 100,
    secrets: Sequence[str] = (),
    max_cached_workflows: int | None = None,
    graceful_timeout_s: float = GRACEFUL_TIMEOUT_S,
    report: WorkerReport | None = None,
    sticky_timeout_s: float = STICKY_TIMEOUT_S,
    allows: WorkerAllows | None = None,
    agent: AgentExecutor[Any, Any] | None = None,
) -> None:
    """Run agent-run and task-run workflows and their activities until `stop` is set.
    `secrets` are the worker's own (never a run's): scrubbed from everything its
    activities return to the workflow or store. `max_cached_workflows=0` replays every
    workflow from its history at each of its tasks (a determinism check; slower).
    Once `stop` is set, the worker takes no new task and gives its in-flight activities
    `graceful_timeout_s` to finish; those still running are then handed back (retried on
    another worker where their policy allows). `report` hears of the runs this worker
    takes and ends, and of what it did with its in-flight calls when it stopped.
    `sticky_timeout_s`: how long a workflow's next task waits for this worker, which has
    it cached, before any worker of the queue takes it (how long its runs wait if it dies).
    `allows`: what the runs may ask of this worker (engines/temporal/_allows.py; by default
    nothing that runs a program or loads code a spec names). `agent`: the agent built in
    Python that `allows.agent` names (both or neither), which the runs naming that
    reference run (engines/temporal/_worker_agent.py)."""
    allows = _allows_with_agent(allows or WorkerAllows(), agent)
    report = report or WorkerReport()
    codec = client.data_converter.payload_codec
    activities = RunActivities(
        store_url, secrets=secrets, report=report, allows=allows,
        cipher=codec if isinstance(codec, PayloadCipher) else None,
    )  # fmt: skip
    worker = Worker(
        client,
        task_queue=task_queue,
        workflows=[AgentRunWorkflow, TaskRunWorkflow],
        activities=[*activities.all(), *TaskActivities(activities).all()],
        max_concurrent_activities=max_concurrent_activities,
        max_cached_workflows=DEFAULT_CACHED
        if max_cached_workflows is None
        else max_cached_workflows,
        graceful_shutdown_timeout=timedelta(seconds=graceful_timeout_s),
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=sticky_timeout_s),
        build_id=worker_build_id(),  # announced: every workflow task it completes carries it
        workflow_runner=workflow_runner(),  # the workflows run sandboxed (_sandbox.py)
        interceptors=[report.interceptor(), Heartbeats()],  # in-flight calls, heartbeats
    )
    try:
        async with worker:
            await (stop or asyncio.Event()).wait()
            report.stop(graceful_timeout_s)
        report.stopped()
    finally:
        await activities.aclose()


def _allows_with_agent(allows: WorkerAllows, agent: AgentExecutor[Any, Any] | None) -> WorkerAllows:
    """`allows`, once the agent built in Python that `allows.agent` names is held for the
    runs naming it (both or neither)."""
    if (agent is None) != (allows.agent is None):
        raise ConfigurationError("run_worker: give `agent` with `allows.agent`, its reference")
    if agent is not None and allows.agent is not None:
        hold_worker_agent(allows.agent, agent)
    return allows
