"""TemporalLauncher: how `loopwright serve --engine temporal` starts, cancels and decides
runs: each run is a workflow on the Temporal workers; the server reads its events from
the shared Postgres store like those of any run another process executes."""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio.client import Client, RPCError, WorkflowHandle

from loopwright.engines.temporal._approvals import decide
from loopwright.engines.temporal._client import connect, start_agent_run, start_task_run
from loopwright.engines.temporal._effects import EngineSettings
from loopwright.engines.temporal._workflow import TASK_QUEUE
from loopwright.runtime import RunSpec
from loopwright.store import RunStore
from loopwright.tasks import TaskSpec


class TemporalLauncher:
    """One Temporal client (connected on first use, in the server's event loop)."""

    name = "temporal"

    def __init__(
        self,
        address: str,
        *,
        task_queue: str = TASK_QUEUE,
        settings: EngineSettings | None = None,
    ) -> None:
        self.address = address
        self.task_queue = task_queue
        self.settings = settings
        self._client: Client | None = None
        self._connecting = asyncio.Lock()

    async def client(self) -> Client:
        async with self._connecting:
            if self._client is None:
                self._client = await connect(self.address)
            return self._client

    async def start_agent(self, spec: RunSpec) -> WorkflowHandle[Any, Any]:
        client = await self.client()
        queue = self.task_queue
        return await start_agent_run(client, spec, settings=self.settings, task_queue=queue)

    async def resume(self, run_id: str, store: RunStore) -> WorkflowHandle[Any, Any]:
        """Resume the stored run `run_id` whose workflow ended without finishing it
        (a UsageError says why not: finished, still running, no recorded spec)."""
        from loopwright.engines.temporal._resume import resume_stored_run

        client = await self.client()
        queue = self.task_queue
        handle, _ = await resume_stored_run(
            client, store, run_id, task_queue=queue, settings=self.settings
        )
        return handle

    async def start_task(self, spec: TaskSpec) -> WorkflowHandle[Any, Any]:
        client = await self.client()
        queue = self.task_queue
        return await start_task_run(client, spec, settings=self.settings, task_queue=queue)

    async def cancel(self, run_id: str) -> bool:
        """Ask the run's workflow to cancel; False if there is no such running workflow."""
        client = await self.client()
        try:
            await client.get_workflow_handle(run_id).cancel()
        except RPCError:
            return False
        return True

    async def decide(
        self, run_id: str, gate_id: str, approved: bool, by: str, reason: str = ""
    ) -> None:
        await decide(await self.client(), run_id, gate_id, approved, by, reason)
