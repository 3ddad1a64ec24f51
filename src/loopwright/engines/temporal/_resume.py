"""Resuming a stored agent or task run on Temporal (`runs resume --engine temporal`, the server's
resume of a run that executed on Temporal): checks, then a new workflow with the run's id.

The run must be resumable (not finished), its workflow not running (failed, terminated,
timed out, or never started on Temporal), and it must have a recorded RunSpec (TaskSpec).
The new workflow replays the recorded events and goes on live (engines/temporal/
_continue.py; a task run: _task_workflow.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode

from loopwright.agent import AgentOptions
from loopwright.engines.temporal._client import resume_agent_run, resume_task_run
from loopwright.engines.temporal._effects import EngineSettings
from loopwright.engines.temporal._workflow import TASK_QUEUE
from loopwright.errors import UsageError
from loopwright.events import RunStartedEvent
from loopwright.runtime._resume import agent_spec, check_resumable
from loopwright.store import RunStore
from loopwright.store._base import find_run
from loopwright.tasks import recorded_task_spec


async def resume_stored_run(
    client: Client,
    store: RunStore,
    run_id: str,
    *,
    task_queue: str | None = None,
    settings: EngineSettings | None = None,
) -> tuple[WorkflowHandle[Any, Any], int]:
    """Start the workflow that resumes `run_id` on `task_queue` (None: the queue its last
    workflow ran on, or the default queue when Temporal has none); its handle and the last
    stored seq."""
    record = find_run(store, run_id)
    check_resumable(record)
    events = await asyncio.to_thread(store.events, run_id)
    after = events[-1].seq if events else 0
    own = TASK_QUEUE  # the queue of its last workflow, when Temporal has one
    try:
        described = await client.get_workflow_handle(run_id).describe()
        if described.status == WorkflowExecutionStatus.RUNNING:
            raise UsageError(
                f"run {run_id} is still executing on Temporal (its workflow is running): "
                "nothing to resume"
            )
        own = described.task_queue or TASK_QUEUE
    except RPCError as exc:
        if exc.status != RPCStatusCode.NOT_FOUND:
            raise
    queue = task_queue or own
    if record.kind == "task":  # engines/temporal/_task_workflow.py
        task_spec = recorded_task_spec(events)
        task = await resume_task_run(client, task_spec, run_id, settings=settings, task_queue=queue)
        return task, after
    spec = agent_spec(record, events)
    started = next((e for e in events if isinstance(e, RunStartedEvent)), None)
    options = AgentOptions.from_dict(started.options) if started is not None else None
    handle = await resume_agent_run(
        client,
        spec,
        run_id,
        workspace_section=options.workspace_context if options is not None else None,
        parent_run_id=record.parent_run_id,
        settings=settings,
        task_queue=queue,
    )
    return handle, after
