"""AgentRunWorkflow: one agent run as a Temporal workflow.

The workflow runs agent/_loop.py's `run_agent` over `TemporalEffects`: the same loop as
the embedded engine. It holds only the loop's control state; the model, the tools and the
store are reached through activities. It runs in Temporal's workflow sandbox
(engines/temporal/_sandbox.py); the loop's code is deterministic given its effects'
results, and its clock is the workflow's.

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

from loopwright.agent._lineage import NO_LINEAGE, Lineage, lineage_from_payload, recording_of
from loopwright.agent._loop import run_agent
from loopwright.engines.temporal._approvals import Approvable, GatePendingEvents, GateWaits
from loopwright.engines.temporal._build import build_setup
from loopwright.engines.temporal._continue import ContinuedEffects, ContinuedLog, load_recording
from loopwright.engines.temporal._effects import TemporalEffects, WorkflowClock
from loopwright.engines.temporal._payloads import (
    AGENT_RUN,
    LINEAGE,
    PREPARE,
    TASK_QUEUE,
    AgentRunInput,
    AgentRunOutcome,
    EngineSettings,
    LineageInput,
    PrepareInput,
    RunPlan,
    gate_key_of,
)
from loopwright.events import Event

__all__ = ["AGENT_RUN", "TASK_QUEUE", "AgentRunWorkflow"]


async def _plan(data: AgentRunInput) -> RunPlan:
    if data.continued is not None:
        return data.continued.plan
    prepare = PrepareInput(
        data.run_id,
        data.spec,
        parent_run_id=data.parent_run_id,
        workspace_section=data.resume.workspace_section if data.resume else None,
    )
    plan: RunPlan = await workflow.execute_activity(
        PREPARE,
        prepare,
        result_type=RunPlan,
        start_to_close_timeout=timedelta(seconds=120),
        heartbeat_timeout=timedelta(seconds=data.settings.heartbeat_timeout_s),
        retry_policy=RetryPolicy(maximum_attempts=3),
    )
    return plan


async def _recorded(data: AgentRunInput, plan: RunPlan) -> list[Event]:
    if data.continued is not None:
        return await load_recording(plan, data.continued.seq, data.settings)
    if data.resume is not None:
        return await load_recording(plan, None, data.settings)
    return []


async def _lineage(plan: RunPlan, settings: EngineSettings) -> Lineage:
    """What a follow-up or a fork takes from earlier runs (read from the store by a worker:
    the earlier turns' transcript, a fork's first steps); nothing for any other run."""
    if plan.spec.get("after") is None and plan.spec.get("fork_of") is None:
        return NO_LINEAGE
    payload: dict[str, Any] = await workflow.execute_activity(
        LINEAGE,
        LineageInput(plan),
        result_type=dict,
        start_to_close_timeout=timedelta(seconds=120),
        heartbeat_timeout=timedelta(seconds=settings.heartbeat_timeout_s),
        retry_policy=RetryPolicy(maximum_attempts=3),
    )
    return lineage_from_payload(payload)


@workflow.defn(name=AGENT_RUN)
class AgentRunWorkflow(Approvable):
    @workflow.run
    async def run(self, data: AgentRunInput) -> AgentRunOutcome:
        settings = data.settings
        plan = await _plan(data)
        recorded = await _recorded(data, plan)
        lineage = await _lineage(plan, settings)
        agent, setup = build_setup(plan, lineage=lineage)
        pending = GatePendingEvents(data.run_id, settings)
        log = ContinuedLog(
            data.run_id,
            clock=WorkflowClock(),
            scrubber=agent.scrubber,
            recorder=pending,
            recorded=recorded,
            gate_key=gate_key_of(plan.gate_key),
        )
        self.gates = GateWaits(pending)  # tool approvals wait for the Update `approve`
        forked = len(lineage.served.model_responses) if lineage.served is not None else 0
        temporal = TemporalEffects(log, pending, plan, settings, self.gates, unstored_calls=forked)
        recording = recording_of(recorded, lineage.served)  # a fork's first steps too
        fx = temporal if recording is None else ContinuedEffects(recording, temporal)
        try:
            result = await run_agent(setup, fx)
        except asyncio.CancelledError:
            await pending.flush()  # run_finished (cancelled, with its partial work)
            raise
        await pending.flush()
        return AgentRunOutcome(
            run_id=data.run_id,
            status=result.status,
            answer=result.answer,
            reason=result.reason,
            steps=len(result.steps),
            model_calls=temporal.model_calls,
        )
