"""One task run: hooks, then steps in order, then hooks, through the run's Effects.

    run_task:  run_started (with the TaskSpec), task_start, the body, the finish
    _body:     the pre-task hook, the steps, the post-task hook (its failure is a warning)
    _step:     step_start, the condition, the handler's StepOutcome, step_complete
    _finish:   roll back on failure (if asked), task_complete, run_finished

The run's state is a `TaskProgress` value that `advance` moves on after each step. Every
event goes through the run's EventLog (via the journal); every effect through `fx`. The
run never knows whether it is live or resumed: on resume the effects already in the log
are served from it (ReplayEffects), so completed steps are not repeated.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import tempfile
from pathlib import Path

from loopwright import telemetry
from loopwright.effects import Effects
from loopwright.errors import LoopwrightError, ReplayDivergence, is_interrupt
from loopwright.events import (
    FunctionResultEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StepCompleteEvent,
    StepStartEvent,
    TaskCompleteEvent,
    TaskStartEvent,
    WarningEvent,
)
from loopwright.events._types import RunStatus
from loopwright.messages import ToolCall
from loopwright.run_context import EventSource, Gatekeeper, Leases, RunContext, ThreadPool
from loopwright.safety.operations import ChangeEntry, OperationSafety
from loopwright.tasks._context import Journal, StepContext
from loopwright.tasks._expressions import compile_expression
from loopwright.tasks._invocations import UndoInvocation
from loopwright.tasks._models import StepDefinition, TaskRunState
from loopwright.tasks._progress import StepOutcome, TaskProgress, advance, forgive
from loopwright.tasks._spec import TaskPlan
from loopwright.tasks._state import StateFileExporter, StateWriter
from loopwright.tasks._steps import HANDLERS
from loopwright.tools import ToolContext, ToolExecutor


async def run_task(plan: TaskPlan, fx: Effects, context: RunContext | None = None) -> TaskRunState:
    """Run the plan to its end; the final state (its events are in `fx.log`). `context`
    is the run's (the Runtime's: its gates, its tenant's tool threads); by default one
    made from the plan (`task_run_context`)."""
    run = functools.partial(_run_task, context=context)
    tracing = telemetry.active()
    if tracing is not None:  # OpenTelemetry on: a span for the task and each effect
        from loopwright.tasks._traced import traced_task_run

        return await traced_task_run(plan, fx, tracing, run)
    return await run(plan, fx)


async def _run_task(plan: TaskPlan, fx: Effects, *, context: RunContext | None) -> TaskRunState:
    ctx = step_context(plan, fx, context)
    task = plan.task
    await ctx.journal.append(
        RunStartedEvent(
            kind="task",
            request=plan.spec.request or task.name,
            model=plan.model.name if plan.model is not None else "",
            tools=plan.registry.names(),
            options={
                "task_file": task.source_path,
                "task_name": task.name,
                "inputs": dict(plan.inputs),
                "workspace": str(plan.settings.workspace),
            },
            tenant=plan.spec.tenant,
            spec=plan.spec.to_dict(),
        )
    )
    await ctx.journal.append(TaskStartEvent(task_name=task.name, total_steps=len(task.steps)))
    progress = TaskProgress(plan.inputs, plan.spec.request)
    try:
        progress = await _body(ctx, progress)
    except asyncio.CancelledError as exc:
        if is_interrupt(exc):  # interrupted: it has not ended (resumable)
            raise
        await ctx.journal.append(TaskCompleteEvent(task_name=task.name, status="cancelled"))
        await ctx.journal.append(
            RunFinishedEvent(
                status="cancelled",
                answer=None,
                reason="cancelled",
                usage={},
                cost=0.0,
                steps=len(ctx.journal.state.steps_completed),
                partial={"failed_step": ctx.journal.state.current_step},
            )
        )
        raise
    except ReplayDivergence:
        raise
    except LoopwrightError as exc:
        await ctx.journal.append(RunErrorEvent(error_type=type(exc).__name__, message=str(exc)))
        progress = dataclasses.replace(progress, stopped=("failed", str(exc)))
    await _finish(ctx, progress)
    return ctx.journal.state


def task_run_context(
    plan: TaskPlan,
    fx: Effects,
    *,
    gates: Gatekeeper | None = None,
    store: EventSource | None = None,
    leases: Leases | None = None,
    tool_threads: ThreadPool | None = None,
) -> RunContext:
    """The context of the task run of `plan` over `fx` (its run id, tenant, workspace and
    scrubber), with what the caller gives: what its tools get through `ToolContext.run`."""
    return RunContext(
        run_id=fx.log.run_id,
        workspace=plan.settings.workspace,
        tenant=plan.spec.tenant,
        scrubber=fx.log.scrubber,
        gates=gates,
        store=store,
        leases=leases,
        tool_threads=tool_threads,
    )


def step_context(plan: TaskPlan, fx: Effects, context: RunContext | None = None) -> StepContext:
    """What the steps of `plan` share when run over `fx`: its journal (with the state
    file when the plan has one), tool executor (its tools get the run's `context`, their
    results are scrubbed with its scrubber, the run's secrets included) and backups (a
    Temporal worker runs steps with it too)."""
    settings = plan.settings
    run_id = fx.log.run_id
    run = context or task_run_context(plan, fx)
    tool_context = ToolContext.of_run(run)
    exporter = StateFileExporter(settings.state_root) if settings.state_root else None
    backups = _backup_dir(exporter, plan.spec.tenant, run_id)
    return StepContext(
        plan=plan,
        fx=fx,
        journal=Journal(fx, StateWriter(exporter) if exporter is not None else None),
        tool_executor=ToolExecutor(  # its results scrubbed as the run's events are
            plan.registry,
            context=tool_context,
            timeout=settings.tool_timeout_s,
            scrubber=run.scrubber,
            failure_text=step_failure_text,
        ),
        safety=OperationSafety(
            workspace=settings.workspace.resolve(),
            backup_dir=backups,
            snapshot_hooks=plan.snapshot_hooks,
        ),
        run=run,
    )


def step_failure_text(tool_name: str, error: str, failures: int) -> str:
    """A failed tool step's error as it is: no model reads it, so no advice to try again."""
    del tool_name, failures  # the step's events name the tool; a step is not retried
    return error


def _backup_dir(exporter: StateFileExporter | None, tenant: str, run_id: str) -> Path:
    if exporter is not None:
        return exporter.backup_dir(tenant, run_id)
    return Path(tempfile.gettempdir()) / "loopwright-backups" / run_id


async def _body(ctx: StepContext, progress: TaskProgress) -> TaskProgress:
    progress = await _hook(ctx, progress, "pre-task")
    if progress.stopped is not None:
        why = f"pre-task hook failed: {progress.stopped[1]}"
        return dataclasses.replace(progress, stopped=("failed", why))
    for index, step in enumerate(ctx.plan.task.steps):
        progress = await _step(ctx, progress, step, index, step.name)
        if progress.stopped is not None:
            return progress
    progress = await _hook(ctx, progress, "post-task")
    if progress.stopped is not None:
        message = f"post-task hook failed: {progress.stopped[1]}"
        await ctx.journal.append(WarningEvent(message=message))
        progress = forgive(progress)
    return progress


async def _hook(ctx: StepContext, progress: TaskProgress, kind: str) -> TaskProgress:
    hook = ctx.plan.task.hooks.get(kind)
    if hook is None:
        return progress
    for index, step in enumerate(hook.steps):
        progress = await _step(ctx, progress, step, index, f"{kind}:{step.name}")
        if progress.stopped is not None:
            break
    return progress


async def _step(
    ctx: StepContext, progress: TaskProgress, step: StepDefinition, index: int, name: str
) -> TaskProgress:
    await ctx.journal.append(StepStartEvent(step=name, step_index=index, step_type=step.type))
    outcome = await _outcome(ctx, progress, step, name)
    await ctx.journal.append(
        StepCompleteEvent(
            step=name,
            status=outcome.status,
            result=outcome.result,
            error=outcome.error,
        )
    )
    return advance(progress, step.name, name, outcome)


async def _outcome(
    ctx: StepContext, progress: TaskProgress, step: StepDefinition, name: str
) -> StepOutcome:
    if step.condition is not None:
        try:
            holds = compile_expression(step.condition).evaluate(progress.scope)
        except LoopwrightError as exc:
            return StepOutcome.failed(f"condition {step.condition!r}: {exc}")
        if not holds:
            return StepOutcome.skipped(f"condition false: {step.condition}")
    return await HANDLERS[step.type](ctx, step, name, progress)


async def _finish(ctx: StepContext, progress: TaskProgress) -> None:
    task = ctx.plan.task
    status: RunStatus = "completed"
    summary = f"{len(task.steps)} steps done"
    if progress.stopped is not None:
        status, summary = progress.stopped
        changes = len(progress.changes)
        if changes and ctx.plan.settings.rollback_on_failure:
            undone = await _undo(ctx, progress)
            status = "rolled_back" if undone == changes else "failed"
            summary += f"; {undone} of {changes} change(s) rolled back"
        elif changes:
            summary += (
                f"; {changes} change(s) can be undone with: loopwright task rollback {ctx.run_id}"
            )
    journal = ctx.journal
    await journal.append(TaskCompleteEvent(task_name=task.name, status=status, summary=summary))
    state = journal.state
    await journal.append(
        RunFinishedEvent(
            status=status,
            answer=summary,
            reason=None if status == "completed" else status,
            usage={},
            cost=0.0,
            steps=len(state.steps_completed),
            partial=None
            if status == "completed"
            else {"failed_step": state.current_step, "changes": len(state.change_log)},
        )
    )


async def _undo(ctx: StepContext, progress: TaskProgress) -> int:
    """Restore the run's changes, newest first, as one effect (restoring a backup twice is
    harmless, so a resumed run that was rolling back simply does it again). How many were
    undone."""
    call = ToolCall(f"{ctx.run_id}:undo", "undo", {"changes": len(progress.changes)})
    invoke = UndoInvocation(ctx, tuple(progress.changes))
    result = await ctx.fx.call_tool(call, invoke, idempotent=True, timeout=None)
    undone = 0
    for outcome in json.loads(result.content):
        entry = ChangeEntry.from_dict(outcome["entry"])
        undone += bool(outcome["ok"])
        await ctx.journal.append(
            FunctionResultEvent(
                step=entry.step,
                function="undo",
                arguments={"resource_id": entry.resource_id},
                result=outcome["message"] if outcome["ok"] else None,
                success=bool(outcome["ok"]),
                error=None if outcome["ok"] else outcome["message"],
            )
        )
    return undone
