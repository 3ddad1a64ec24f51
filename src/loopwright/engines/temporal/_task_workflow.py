"""TaskRunWorkflow: one task run as a Temporal workflow.

The workflow runs tasks/_run.py's `run_task` over `TemporalTaskEffects`: the same task
runner as the embedded engine. Each effect a step asks for (a tool call, the backup before
a write, an agent attempt) is the `task_effect` activity on a worker; a gate waits in the
workflow for the Update `approve` (engines/temporal/_approvals.py). Events travel with the
next activity to the Postgres event log, as for agent runs.

The workflow loads the task file itself (its steps decide the control flow; the workers
load it again for the tools): it must be at the same path on every worker and must not
change while the run lasts. A failed run's rollback (`rollback_on_failure`) is one more
effect on a worker, which restores the backups it took there. No state JSON file is
written on this engine: the run store is the run's state (`runs show`).
"""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy

from loopwright.effects import EventLog, GateRequest, GateVerdict, VerificationResult
from loopwright.effects._protocol import ToolInvocation, Verification
from loopwright.effects._replay import Recording
from loopwright.engines.temporal._approvals import Approvable, GatePendingEvents, GateWaits
from loopwright.engines.temporal._build import RemoteModel
from loopwright.engines.temporal._content import result_from_dict
from loopwright.engines.temporal._continue import ContinuedLog, ResumedEffects
from loopwright.engines.temporal._effects import WorkflowClock, call_once
from loopwright.engines.temporal._payloads import (
    TASK_EFFECT,
    TASK_PREPARE,
    TASK_RECORDING,
    TASK_RUN,
    EngineSettings,
    OutcomeInput,
    TaskEffectInput,
    TaskPrepared,
    TaskPrepareInput,
    TaskRecordingInput,
    TaskRecordingPage,
    TaskRunInput,
    TaskRunOutcome,
    gate_key_of,
)
from loopwright.errors import ConfigurationError
from loopwright.events import Event, event_from_dict
from loopwright.messages import ModelRequest, ModelResponse, ToolCall, ToolResult
from loopwright.models import Model
from loopwright.safety.scrub import Scrubber
from loopwright.tasks import TaskSpec, prepare_task, run_task
from loopwright.tasks._invocations import AgentInvocation, BackupInvocation, UndoInvocation
from loopwright.tools import ToolExecutor

__all__ = ["TASK_RUN", "TaskRunWorkflow", "invocation_data"]


def invocation_data(invoke: ToolInvocation) -> dict[str, Any]:
    """What a worker needs to rebuild the step's invocation (see tasks/_invocations.py)."""
    if isinstance(invoke, BackupInvocation):
        return {"kind": "backup", "tool": invoke.tool, "arguments": invoke.arguments,
                "step": invoke.step}  # fmt: skip
    if isinstance(invoke, AgentInvocation):
        return {"kind": "agent", "prompt": invoke.prompt, "step": invoke.step,
                "attempt": invoke.attempt, "schema": invoke.schema}  # fmt: skip
    if isinstance(invoke, UndoInvocation):
        return {"kind": "undo", "changes": [c.to_dict() for c in invoke.changes]}
    if isinstance(getattr(invoke, "__self__", None), ToolExecutor):
        return {"kind": "tool"}
    raise ConfigurationError(f"the Temporal engine cannot run the invocation {invoke!r}")


class TemporalTaskEffects:
    """The effects of one task run, as activities (and gates as workflow Updates)."""

    def __init__(
        self,
        log: EventLog,
        pending: GatePendingEvents,
        spec: dict[str, Any],
        settings: EngineSettings,
        tool_code: str | None = None,
    ) -> None:
        self.log = log
        self.pending = pending
        self.spec = spec
        self.settings = settings
        self.tool_code = tool_code
        """The id of the run's tool code when it started (engines/temporal/_versions.py)."""
        self.gates = GateWaits(pending)

    def monotonic(self) -> float:
        return workflow.time()

    async def call_model(
        self, model: Model, request: ModelRequest, timeout: float | None
    ) -> ModelResponse:
        raise ConfigurationError("a task run calls models only inside its agent steps")

    async def call_tool(
        self, call: ToolCall, invoke: ToolInvocation, *, idempotent: bool, timeout: float | None
    ) -> ToolResult:
        data = TaskEffectInput(
            run_id=self.log.run_id,
            spec=self.spec,
            call=call.to_dict(),
            idempotent=idempotent,
            invocation=invocation_data(invoke),
            tool_code=self.tool_code,
        )
        out = await call_once(
            self.pending,
            TASK_EFFECT,
            data,
            OutcomeInput(self.log.run_id, call.to_dict()),
            attempts=self.settings.tool_attempts,
            options={
                "start_to_close_timeout": timedelta(
                    seconds=timeout or self.settings.tool_timeout_s
                ),
                "heartbeat_timeout": timedelta(seconds=self.settings.heartbeat_timeout_s),
                "retry_policy": RetryPolicy(
                    maximum_attempts=self.settings.tool_attempts if idempotent else 1
                ),
            },
        )
        return result_from_dict(out.result)

    async def gate(self, request: GateRequest) -> GateVerdict:
        return await self.gates.wait(request)

    async def verify(self, check: Verification) -> VerificationResult:
        raise ConfigurationError("a task run has no verification step")


@workflow.defn(name=TASK_RUN)
class TaskRunWorkflow(Approvable):
    @workflow.run
    async def run(self, data: TaskRunInput) -> TaskRunOutcome:
        settings, run_id = data.settings, data.run_id
        found: TaskPrepared = await workflow.execute_activity(
            TASK_PREPARE,
            TaskPrepareInput(run_id, data.spec),
            result_type=TaskPrepared,
            start_to_close_timeout=timedelta(seconds=120),
            heartbeat_timeout=timedelta(seconds=settings.heartbeat_timeout_s),
            retry_policy=RetryPolicy(maximum_attempts=3),
        )
        model = None
        if found.model_name is not None and found.tool_mode is not None:
            model = RemoteModel(found.model_name, found.tool_mode)
        plan = prepare_task(TaskSpec.from_dict(data.spec), model=model)
        # the state file is the embedded engine's; here the run store is the run's state
        plan = dataclasses.replace(
            plan, settings=dataclasses.replace(plan.settings, state_root=None)
        )
        recorded = await _recording(run_id, settings) if data.resume else []
        pending = GatePendingEvents(run_id, settings)
        log = ContinuedLog(run_id, clock=WorkflowClock(), scrubber=Scrubber(), recorder=pending,
                           recorded=recorded, gate_key=gate_key_of(found.gate_key))  # fmt: skip
        fx = TemporalTaskEffects(log, pending, data.spec, settings, found.tool_code)
        self.gates = fx.gates
        try:  # a resumed run: the recorded effects are served, then it goes on live
            effects = ResumedEffects(Recording.of(recorded), fx) if recorded else fx
            state = await run_task(plan, effects)
        except asyncio.CancelledError:
            await pending.flush()  # task_complete and run_finished (cancelled)
            raise
        await pending.flush()
        return TaskRunOutcome(
            run_id=run_id,
            status=state.status,
            steps=len(state.steps_completed),
            failed_step=state.current_step if state.status != "completed" else None,
        )


async def _recording(run_id: str, settings: EngineSettings) -> list[Event]:
    """The run's stored events (a resumed run's), page by page."""
    events: list[Event] = []
    while True:
        after = events[-1].seq if events else 0
        page = await workflow.execute_activity(
            TASK_RECORDING,
            TaskRecordingInput(run_id, after),
            result_type=TaskRecordingPage,
            start_to_close_timeout=timedelta(seconds=120),
            heartbeat_timeout=timedelta(seconds=settings.heartbeat_timeout_s),
            retry_policy=RetryPolicy(maximum_attempts=settings.store_attempts),
        )
        events.extend(event_from_dict(e) for e in page.events)
        if not page.more:
            return events
