"""Whether workers serve a task queue, as Temporal tells it (the last time a worker polled the
queue), and what the Temporal engine tells the user while a run waits for one: a run no
worker took, a cancel or a decision recorded for the next worker."""

from __future__ import annotations

import time

from temporalio.client import Client
from temporalio.service import RPCError

POLLER_FRESH_S = 90.0
"""A worker that polled a task queue this recently counts as polling it (a poll lasts up
to about a minute)."""


async def workflow_queue(client: Client, run_id: str, default: str) -> str:
    """The task queue the run's workflow is on (`default` when it has none)."""
    try:
        return (await client.get_workflow_handle(run_id).describe()).task_queue
    except RPCError:
        return default


async def last_poll_s_ago(client: Client, task_queue: str) -> float | None:
    """How long ago a worker last polled the task queue's workflow tasks (None: no worker
    did within POLLER_FRESH_S)."""
    from temporalio.api.enums.v1 import TaskQueueType
    from temporalio.api.taskqueue.v1 import TaskQueue
    from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest

    request = DescribeTaskQueueRequest(
        namespace=client.namespace,
        task_queue=TaskQueue(name=task_queue),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    )
    described = await client.workflow_service.describe_task_queue(request)
    now = time.time()
    ages = [now - p.last_access_time.ToDatetime().timestamp() for p in described.pollers]
    fresh = [age for age in ages if age <= POLLER_FRESH_S]
    return max(0.0, min(fresh)) if fresh else None


def _start_a_worker(address: str, queue: str) -> str:
    return f"loopwright worker --temporal {address} --task-queue {queue} --store URL"


def untaken_notice(
    run_id: str, address: str, queue: str, polled: float | None, waited_s: float
) -> str:
    """What a run no worker took within `waited_s` waits for."""
    where = f"task queue {queue!r} at {address}"
    if polled is None:
        return (
            f"run {run_id} waits: no worker polls {where}; it is listed as queued in "
            f"`loopwright runs list` and starts when a worker comes "
            f"({_start_a_worker(address, queue)})"
        )
    return (
        f"run {run_id} was not taken within {waited_s:g}s: a worker "
        f"polled {where} {polled:.0f}s ago; it waits in the queue"
    )


def unpolled_cancel_notice(run_id: str, address: str, queue: str) -> str:
    """A cancel recorded in a workflow that no worker serves."""
    return (
        f"no worker polls task queue {queue!r} at {address}: the cancel of run {run_id} is "
        f"recorded in its workflow, and the run ends `cancelled` when a worker takes it "
        f"({_start_a_worker(address, queue)}); until then it is listed as it was"
    )


def stored_decision_notice(run_id: str, gate_id: str, address: str, queue: str) -> str:
    """A decision stored for the next worker of the run's queue."""
    return (
        f"the decision on gate {gate_id} of run {run_id} is stored: no worker of "
        f"task queue {queue!r} at {address} took it; the run takes it when one polls"
    )
