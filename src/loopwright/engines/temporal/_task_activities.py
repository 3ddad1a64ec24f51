"""The activities of a Temporal task run: prepare it, perform one of its effects, and
store its events before a gate waits.

A task step's effect (a tool call, the backup before a write, one agent attempt) runs here
on a worker, through the same invocation the embedded engine calls in-process: the worker
loads the run's task file and tools once (`TaskSpec`, cached per run) and rebuilds the
step's invocation from the fields the workflow sends. Tool calls keep the agent runs'
guarantee: an idempotency key per call (`run_id:call_id`), first writer wins, a tool that
is not idempotent is never run twice.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import OrderedDict
from collections.abc import Callable
from secrets import token_hex
from typing import Any

from temporalio import activity

from loopwright.effects import EventLog, LiveEffects
from loopwright.engines.temporal._activities import (
    LEASE_OWNER,
    RunActivities,
    _as_application_errors,
    _heartbeating,
    uncertain_result,
)
from loopwright.engines.temporal._activity_support import store_call
from loopwright.engines.temporal._content import result_dict, result_from_dict
from loopwright.engines.temporal._payloads import (
    GATE_OPEN,
    TASK_EFFECT,
    TASK_PREPARE,
    TASK_RECORDING,
    GateOpenInput,
    TaskEffectInput,
    TaskPrepared,
    TaskPrepareInput,
    TaskRecordingInput,
    TaskRecordingPage,
    ToolOutcome,
)
from loopwright.engines.temporal._versions import check_tool_code, tool_code
from loopwright.errors import ConfigurationError
from loopwright.events import Event, ModelTextDeltaEvent, event_to_dict
from loopwright.messages import ToolCall, ToolResult
from loopwright.models import resolve_model
from loopwright.safety.operations import ChangeEntry
from loopwright.safety.scrub import Scrubber
from loopwright.tasks import TaskSpec, prepare_task
from loopwright.tasks._context import Journal, StepContext
from loopwright.tasks._invocations import AgentInvocation, BackupInvocation, UndoInvocation
from loopwright.tasks._run import step_context, task_run_context

RECORDING_PAGE = 500
"""Events per page of a resumed task run's recording."""
GATE_LEASE_MARGIN_S = 120.0


def check_task_spec(spec: TaskSpec) -> None:
    """What the Temporal engine cannot do for a task run yet (refused, nothing started)."""
    if not spec.task_file:
        raise ConfigurationError("a task run on Temporal needs a task file (workers load it)")


class TaskActivities:
    """The task activities of one worker, sharing its agent-run activities' stores."""

    def __init__(self, runs: RunActivities, *, cache_runs: int = 64) -> None:
        self.runs = runs
        self._contexts: OrderedDict[str, tuple[StepContext, str]] = OrderedDict()
        self._cache_runs = cache_runs

    def all(self) -> list[Callable[..., Any]]:
        return [self.prepare, self.effect, self.gate_open, self.recording]

    def _context(self, run_id: str, spec_data: dict[str, Any]) -> tuple[StepContext, str]:
        """The run's StepContext on this worker (its plan, tools, backups), made once, and
        the id of its tool code (its tools and its task file)."""
        found = self._contexts.get(run_id)
        if found is not None:
            self._contexts.move_to_end(run_id)
            return found
        spec = TaskSpec.from_dict(spec_data)
        self.runs.allows.check_task(run_id, spec)  # before its task file is loaded
        model = resolve_model(spec.model, base_url=spec.base_url) if spec.model else None
        plan = prepare_task(spec, model=model, agent_events=self._agent_event)
        # its tool results, agent steps' runs and answers scrubbed with the worker's secrets
        scrubber = Scrubber.default().with_secrets(self.runs.secrets.values)
        fx = LiveEffects(EventLog(run_id, scrubber=scrubber))
        run = task_run_context(plan, fx, store=self.runs.store)  # an agent step resumes from it
        ctx = dataclasses.replace(step_context(plan, fx, run), journal=Journal(fx))
        code = tool_code(ctx.tool_executor.registry, *([spec.task_file] if spec.task_file else []))
        self._contexts[run_id] = ctx, code
        while len(self._contexts) > self._cache_runs:
            self._contexts.popitem(last=False)
        return ctx, code

    async def _agent_event(self, event: Event) -> None:
        """An agent step's own run (parent_run_id: the task run), stored as it happens."""
        if not isinstance(event, ModelTextDeltaEvent):  # live only, never stored
            await store_call(self.runs.store.append, event)

    @activity.defn(name=TASK_PREPARE)
    async def prepare(self, data: TaskPrepareInput) -> TaskPrepared:
        """Check the spec, load the task and resolve its model once: the model's name."""
        async with _as_application_errors():
            spec = TaskSpec.from_dict(data.spec)
            check_task_spec(spec)
            ctx, code = await asyncio.to_thread(self._context, data.run_id, data.spec)
            model = ctx.plan.model
            gate_key = token_hex(16)  # the run's gate ids' secret, sealed in the history
            if model is None:
                return TaskPrepared(None, None, code, gate_key)
            return TaskPrepared(model.name, model.preferred_tool_mode, code, gate_key)

    @activity.defn(name=TASK_EFFECT)
    async def effect(self, data: TaskEffectInput) -> ToolOutcome:
        """One effect of a step, at most once per idempotency key unless idempotent."""
        run_id = data.run_id
        call = ToolCall.from_dict(data.call)
        key = f"{run_id}:{call.id}"
        content = self.runs.content
        async with _as_application_errors():
            ctx, code = await asyncio.to_thread(self._context, run_id, data.spec)
            if data.tool_code is not None and data.tool_code != code:  # listed interrupted
                await store_call(self.runs.store.release_lease, run_id, LEASE_OWNER)
            check_tool_code(run_id, data.tool_code, code)
            self.runs.report.took(run_id, "task", ctx.plan.task.name)
            await self.runs._append(run_id, data.events)
            state, committed = await store_call(content.claim_tool_call, key, run_id)
            if committed is not None:
                return ToolOutcome(result_dict(committed), "committed")
            if state == "started" and not data.idempotent:
                return ToolOutcome(result_dict(uncertain_result(call)), "uncertain")
            result = await _heartbeating(_invoke(ctx, data.invocation, call))
            result = result_from_dict(self.runs.secrets.scrub(result_dict(result)))
            result = await store_call(content.finish_tool_call, key, result)
        return ToolOutcome(result_dict(result), "ran")

    @activity.defn(name=GATE_OPEN)
    async def gate_open(self, data: GateOpenInput) -> int:
        """Store the events up to a gate's `confirmation_required` (so `runs approve` and
        the dashboard see it waiting) and hold the run's lease for as long as it may wait."""
        async with _as_application_errors():
            await self.runs._append(data.run_id, data.events)
            ttl = data.timeout_s + GATE_LEASE_MARGIN_S
            await store_call(self.runs.store.acquire_lease, data.run_id, LEASE_OWNER, ttl)
        return len(data.events)

    @activity.defn(name=TASK_RECORDING)
    async def recording(self, data: TaskRecordingInput) -> TaskRecordingPage:
        """One page of a task run's stored events after `after` (a resumed run replays
        them)."""
        stored = await store_call(self.runs.store.events, data.run_id, after=data.after)
        page = stored[:RECORDING_PAGE]
        return TaskRecordingPage([event_to_dict(e) for e in page], len(stored) > len(page))


async def _invoke(ctx: StepContext, what: dict[str, Any], call: ToolCall) -> ToolResult:
    """The step's invocation, rebuilt on this worker from what the workflow sent."""
    kind = what["kind"]
    if kind == "tool":
        return await ctx.tool_executor.execute(call)
    if kind == "backup":
        return await BackupInvocation(ctx, what["tool"], what["arguments"], what["step"])(call)
    if kind == "undo":
        changes = tuple(ChangeEntry.from_dict(c) for c in what["changes"])
        return await UndoInvocation(ctx, changes)(call)
    if kind == "agent":
        invocation = AgentInvocation(
            ctx, what["prompt"], what["step"], int(what["attempt"]), what.get("schema")
        )
        return await invocation(call)
    raise ConfigurationError(f"a task effect of unknown kind {kind!r}")
