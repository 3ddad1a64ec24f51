"""AgentRunWorkflow: one agent run as a Temporal workflow.

The workflow runs agent/_loop.py's `run_agent` over `TemporalEffects`: the same loop as
the embedded engine. It holds only the loop's control state; the model, the tools and the
store are reached through activities. Not sandboxed (the loop imports the whole package);
the loop's code is deterministic given its effects' results, and its clock is the
workflow's.

Its input starts a run (`spec`), goes on with one after a continue-as-new (`continued`:
the plan and the number of events already stored) or resumes one whose workflow ended
without finishing it (`resume`: the workspace section its run_started recorded).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy

from loopwright.agent._loop import run_agent
from loopwright.engines.temporal._activities import PREPARE
from loopwright.engines.temporal._approvals import Approvable, GatePendingEvents, GateWaits
from loopwright.engines.temporal._build import RunPlan, build_setup
from loopwright.engines.temporal._continue import ContinuedLog, continued, load_recording
from loopwright.engines.temporal._effects import (
    EngineSettings,
    TemporalEffects,
    WorkflowClock,
)
from loopwright.events import Event

AGENT_RUN = "loopwright.agent_run.v1"
TASK_QUEUE = "loopwright"


async def _plan(data: dict[str, Any]) -> dict[str, Any]:
    if "continued" in data:
        plan: dict[str, Any] = data["continued"]["plan"]
        return plan
    prepare = {"run_id": data["run_id"], "spec": data["spec"]}
    prepare["parent_run_id"] = data.get("parent_run_id")
    if "resume" in data:
        prepare["workspace_section"] = data["resume"].get("workspace_section")
    result: dict[str, Any] = await workflow.execute_activity(
        PREPARE,
        prepare,
        start_to_close_timeout=timedelta(seconds=120),
        retry_policy=RetryPolicy(maximum_attempts=3),
    )
    return result


async def _recorded(
    data: dict[str, Any], plan: dict[str, Any], settings: EngineSettings
) -> list[Event]:
    if "continued" in data:
        return await load_recording(plan, int(data["continued"]["seq"]), settings)
    if "resume" in data:
        return await load_recording(plan, None, settings)
    return []


@workflow.defn(name=AGENT_RUN, sandboxed=False)
class AgentRunWorkflow(Approvable):
    @workflow.run
    async def run(self, data: dict[str, Any]) -> dict[str, Any]:
        settings = EngineSettings.from_dict(data.get("settings") or {})
        run_id = str(data["run_id"])
        plan = await _plan(data)
        recorded = await _recorded(data, plan, settings)
        agent, setup = build_setup(RunPlan.from_dict(plan))
        pending = GatePendingEvents(run_id, settings)
        log = ContinuedLog(
            run_id,
            clock=WorkflowClock(),
            scrubber=agent.scrubber,
            recorder=pending,
            recorded=recorded,
        )
        self.gates = GateWaits(pending)  # tool approvals wait for the Update `approve`
        temporal = TemporalEffects(log, pending, plan, settings, self.gates)
        fx = continued(temporal, recorded)
        try:
            result = await run_agent(setup, fx)
        except asyncio.CancelledError:
            await pending.flush()  # run_finished (cancelled, with its partial work)
            raise
        await pending.flush()
        return {
            "run_id": run_id,
            "status": result.status,
            "answer": result.answer,
            "reason": result.reason,
            "steps": len(result.steps),
            "model_calls": temporal.model_calls,
        }
