"""What a worker builds once per agent run and keeps for the run's next activities: its
setup (its tools keeping whole results, its MCP servers connected on this worker, scrubbing
the worker's secrets too) with the run's tool output limit, and the models runs call.

A worker whose tool code is not the code a run started with refuses the run; so does one
that does not allow what the run's spec asks for (engines/temporal/_allows.py).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence

from loopwright.agent._setup import RunSetup
from loopwright.engines.temporal._activity_support import (
    LEASE_OWNER,
    WorkerSecrets,
    _without_client_retries,
    store_call,
)
from loopwright.engines.temporal._allows import WorkerAllows
from loopwright.engines.temporal._build import build_setup
from loopwright.engines.temporal._mcp import MCPSessions
from loopwright.engines.temporal._payloads import RunPlan
from loopwright.engines.temporal._report import WorkerReport
from loopwright.engines.temporal._versions import check_tool_code, tool_code
from loopwright.engines.temporal._worker_agent import worker_agent
from loopwright.models import Model, resolve_model
from loopwright.run_context import RunContext
from loopwright.runtime import RunSpec
from loopwright.store import PersistentStore
from loopwright.store._base import FINISHED
from loopwright.tools import Tool

FULL_RESULT_CHARS = 64 * 1024 * 1024
"""The worker's tools keep results up to this long; past the run's own limit they are
stored whole in the content store and the run gets the truncated text."""


class RunSetups:
    """The setups of the runs this worker executes (up to `cache_runs`, the least recently
    made dropped first) and the models they call."""

    def __init__(
        self,
        store: PersistentStore,
        mcp: MCPSessions,
        secrets: WorkerSecrets,
        report: WorkerReport,
        on_worker: Callable[[RunContext], RunContext],
        *,
        allows: WorkerAllows,
        cache_runs: int = 64,
    ) -> None:
        self.store = store
        self.allows = allows
        self.mcp = mcp
        self.secrets = secrets
        self.report = report
        self.on_worker = on_worker
        """Completes a run's context on this worker (engines/temporal/_subagents.py)."""
        self._setups: OrderedDict[str, tuple[RunSetup, int]] = OrderedDict()
        self._models: dict[tuple[str, str | None], Model] = {}
        self._cache_runs = cache_runs

    async def setup(self, plan: RunPlan) -> RunSetup:
        return (await self.setup_and_limit(plan))[0]

    async def setup_and_limit(self, plan: RunPlan) -> tuple[RunSetup, int]:
        """The run's setup and its tool output limit (its tools keep up to
        FULL_RESULT_CHARS)."""
        found = self._setups.get(plan.run_id)
        if found is None:  # this worker checks for itself what the run asks (_allows.py)
            self.allows.check_run(plan.run_id, RunSpec.from_dict(plan.spec))
            tools = None
            if plan.mcp_tools:
                tools = await self.mcp_tools(plan.run_id, RunSpec.from_dict(plan.spec).mcp)
            agent, setup = build_setup(
                plan, mcp_tools=tools, secrets=self.secrets.values, on_worker=self.on_worker
            )
            await self._check_tool_code(plan, tool_code(agent.tools))
            self.report.took(plan.run_id, "agent", RunSpec.from_dict(plan.spec).request)
            found = setup, setup.tool_executor.max_output_chars
            setup.tool_executor.max_output_chars = FULL_RESULT_CHARS
            self._setups[plan.run_id] = found
            while len(self._setups) > self._cache_runs:
                self._setups.popitem(last=False)
        return found

    async def _check_tool_code(self, plan: RunPlan, here: str) -> None:
        """Refuse the run if this worker's tool code is not the code it started with; its
        lease is released first, so it lists as interrupted (and can be resumed) at once."""
        if plan.tool_code is not None and plan.tool_code != here:
            await store_call(self.store.release_lease, plan.run_id, LEASE_OWNER)
        check_tool_code(plan.run_id, plan.tool_code, here)

    def model(self, spec: RunSpec, calls_before: int) -> Model:
        """The run's model (for a run of an agent built in Python, the worker's agent's);
        a scripted one goes on after the replies already served."""
        if spec.agent is not None:
            own = _without_client_retries(worker_agent(spec.agent).model)
            if hasattr(own, "resume_after"):
                own.resume_after(calls_before)
            return own
        key = (spec.model, spec.base_url)
        model = self._models.get(key)
        if model is None or hasattr(model, "resume_after"):
            model = _without_client_retries(resolve_model(spec.model, base_url=spec.base_url))
            if hasattr(model, "resume_after"):
                model.resume_after(calls_before)
            else:
                self._models[key] = model
        return model

    async def mcp_tools(self, run_id: str, servers: Sequence[str]) -> list[Tool]:
        """The run's MCP tools on this worker. Before opening a run's servers, the sessions
        of runs that ended meanwhile (on another worker, which stored their end) close."""
        if run_id not in self.mcp.open_runs():
            for other in self.mcp.open_runs():
                record = await store_call(self.store.get_run, other)
                if record is None or record.status in FINISHED:
                    await self.forget(other)
        return await self.mcp.tools(run_id, servers)

    async def forget(self, run_id: str) -> None:
        """Drop an ended run's setup and close its MCP sessions."""
        self._setups.pop(run_id, None)
        await self.mcp.close(run_id)
