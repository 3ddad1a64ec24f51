"""TemporalEffects: the `Effects` of a run inside a Temporal workflow.

The agent loop (agent/_loop.py) runs unchanged in the workflow; each effect it asks for is
scheduled here as an activity, with a finite retry policy. Events the loop appends wait in
`PendingEvents` and travel with the next activity (or an append activity when the loop
flushes), so the Postgres event log gets them in batches, each before the effect after it.

Workflow code only: no I/O, time from `workflow.now()`/`workflow.time()`.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from datetime import timedelta
from typing import Any, Protocol, TypeVar

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, TimeoutType
from temporalio.exceptions import CancelledError as TemporalCancelled
from temporalio.exceptions import TimeoutError as TemporalTimeout

from loopwright import errors
from loopwright.effects import EventLog, GateRequest, GateVerdict, VerificationResult
from loopwright.effects._protocol import ToolInvocation, Verification
from loopwright.engines.temporal._content import result_from_dict
from loopwright.engines.temporal._payloads import (
    APPEND_EVENTS,
    MODEL_CALL,
    TOOL_CALL,
    TOOL_OUTCOME,
    VERIFY,
    AgentRunInput,
    AppendInput,
    Continued,
    EngineSettings,
    Events,
    ModelCallInput,
    ModelCallResult,
    OutcomeInput,
    RunPlan,
    ToolCallInput,
    ToolOutcome,
    Verified,
    VerifyInput,
)
from loopwright.engines.temporal._versions import TOOL_CODE_CHANGED
from loopwright.events import Event, ModelResponseEvent, ToolCallEvent, event_to_dict
from loopwright.messages import Message, ModelRequest, ModelResponse, ToolCall, ToolResult
from loopwright.models import Model

__all__ = ["EngineSettings", "PendingEvents", "TemporalEffects", "WorkflowClock", "call_once"]
R = TypeVar("R")


class GateWaiter(Protocol):
    """Where a workflow's gates wait for their decision (engines/temporal/_approvals.py)."""

    async def wait(self, request: GateRequest) -> GateVerdict: ...


class WorkflowClock:
    """The workflow's deterministic clock (the same values when history is replayed)."""

    def time(self) -> float:
        return workflow.now().timestamp()

    def monotonic(self) -> float:
        return workflow.time()


REF_MIN_CHARS = 2048
"""A tool result at least this long travels in an event as a reference to the content
store (where its tool activity committed it), not a second time in the history."""


class PendingEvents:
    """The Recorder of a workflow's EventLog: events wait here for the next activity."""

    def __init__(self, run_id: str, settings: EngineSettings) -> None:
        self.run_id = run_id
        self.settings = settings
        self._events: Events = []
        self.request_digest: str | None = None
        """The fingerprint of the whole texts of the latest model request, when it held
        references: its model_response event is stored with it."""
        self.committed: dict[str, str] = {}
        """call_id -> the long result its tool activity committed to the content store."""

    def write(self, event: Event) -> None:
        data = event_to_dict(event)
        if isinstance(event, ToolCallEvent) and self.committed.get(event.call_id) == event.result:
            del self.committed[event.call_id]
            data["result"] = None
            data["result_ref"] = event.call_id
        if isinstance(event, ModelResponseEvent) and self.request_digest is not None:
            data["request_digest"], self.request_digest = self.request_digest, None
        self._events.append(data)

    def take(self) -> Events:
        taken, self._events = self._events, []
        return taken

    def give_back(self, events: Events) -> None:
        """Events an activity carried whose attempts all failed (or were cancelled): they
        go with the next activity, which skips those a failed attempt did store."""
        self._events = [*events, *self._events]

    async def carried(self, activity: str, data: Any, result: type[R], **options: Any) -> R:
        """Run `activity` with the pending events in `data.events` (it stores them before
        its work). If it fails, they wait for the next activity: the events a step made
        are durable whether or not the attempt that carried them survived."""
        events = self.take()
        try:
            done: R = await workflow.execute_activity(
                activity, dataclasses.replace(data, events=events), result_type=result, **options
            )
        except BaseException:
            self.give_back(events)
            raise
        return done

    async def flush(self) -> None:
        if not self._events:
            return
        await self.carried(
            APPEND_EVENTS,
            AppendInput(self.run_id),
            int,
            start_to_close_timeout=timedelta(seconds=60),
            heartbeat_timeout=timedelta(seconds=self.settings.heartbeat_timeout_s),
            retry_policy=RetryPolicy(maximum_attempts=self.settings.store_attempts),
        )


RERUN_UNSTARTED = "loopwright-rerun-unstarted-tool"
"""The patch under which a tool call whose attempt failed before it started is run again
(workflows recorded before it replay as they ran)."""


async def call_once(
    pending: PendingEvents,
    activity: str,
    data: Any,
    outcome: OutcomeInput,
    *,
    attempts: int,
    options: dict[str, Any],
) -> ToolOutcome:
    """A tool call's activity (`data`), then, if its attempts failed, `tool_outcome` (its
    input: `outcome`), which stores the events the failed attempt carried and says what
    happened: the committed result, "uncertain" (it started: never run again unless its
    policy allows), or "not_run". A call that never started after a failure that was not
    its own (a lost worker, a dropped store connection) is run again, up to `attempts`
    activities in all: no effect can repeat, its idempotency key was never claimed."""
    for attempt in range(1, max(attempts, 1) + 1):
        try:
            return await pending.carried(activity, data, ToolOutcome, **options)
        except ActivityError as exc:
            error = _loopwright_error(exc)
            if isinstance(error, asyncio.CancelledError | ApplicationError):
                raise error from exc
            found = await pending.carried(
                TOOL_OUTCOME,
                dataclasses.replace(outcome, error=str(error)),
                ToolOutcome,
                start_to_close_timeout=timedelta(seconds=60),
                heartbeat_timeout=timedelta(seconds=pending.settings.heartbeat_timeout_s),
                retry_policy=RetryPolicy(maximum_attempts=pending.settings.store_attempts),
            )
            again = found.outcome == "not_run" and not _deterministic(exc)
            if not (again and attempt < attempts and workflow.patched(RERUN_UNSTARTED)):
                return found
    raise AssertionError("unreachable: the last attempt returns")


def _deterministic(exc: ActivityError) -> bool:
    """A failure the same call would meet again (loopwright's own errors)."""
    cause = exc.cause
    return isinstance(cause, ApplicationError) and cause.non_retryable


def _loopwright_error(exc: ActivityError) -> BaseException:
    """What a failed activity means to the loop: a timeout, a cancel, or the same
    loopwright error the embedded engine would have raised."""
    cause = exc.cause
    if isinstance(cause, TemporalCancelled):
        return asyncio.CancelledError()
    if isinstance(cause, TemporalTimeout) and cause.type == TimeoutType.SCHEDULE_TO_CLOSE:
        return TimeoutError(str(cause))
    if isinstance(cause, ApplicationError) and cause.type == TOOL_CODE_CHANGED:
        # not the run's failure: its workflow stops (the run stays resumable), saying why
        return ApplicationError(cause.message, type=TOOL_CODE_CHANGED, non_retryable=True)
    if isinstance(cause, ApplicationError) and cause.type:
        kind = getattr(errors, cause.type, None)
        if isinstance(kind, type) and issubclass(kind, errors.LoopwrightError):
            try:
                return kind(cause.message)
            except TypeError:  # an error class with other arguments
                pass
    return errors.ModelError(f"the activity failed: {cause or exc}")


class TemporalEffects:
    """Every effect of one run, as an activity of the current workflow."""

    def __init__(
        self,
        log: EventLog,
        pending: PendingEvents,
        plan: RunPlan,
        settings: EngineSettings,
        gates: GateWaiter | None = None,
        *,
        unstored_calls: int = 0,
    ) -> None:
        self.gates = gates
        self.unstored_calls = unstored_calls
        """A fork's first model calls, served from the old run: their messages are not in
        the content store, so the call after them sends its whole request."""
        """Where a gate waits for the Update `approve` (None: every gate is rejected)."""
        self.log = log
        self.pending = pending
        self.plan = plan
        self.settings = settings
        self.model_calls = 0
        self.calls_here = 0
        """Model calls made by this workflow run (after a continue-as-new: since it)."""
        self._sent: Sequence[Message] = ()

    def monotonic(self) -> float:
        return workflow.time()

    def _policy(self, attempts: int) -> RetryPolicy:
        return RetryPolicy(maximum_attempts=attempts)

    def served(self, request: ModelRequest) -> None:
        """A model call a continued workflow took from the recording (no activity): the
        next live call sends only what is new after it."""
        self.model_calls += 1
        self._sent = request.messages

    async def _continue_if_due(self) -> None:
        """At a step boundary (before a model call): continue-as-new when Temporal suggests
        it or past `continue_after_calls`, carrying the run id and its position only."""
        cap = self.settings.continue_after_calls
        if not self.calls_here:
            return
        if not workflow.info().is_continue_as_new_suggested() and not (
            cap and self.calls_here >= cap
        ):
            return
        await self.pending.flush()  # the new run reads every event up to here from the store
        await workflow.wait_condition(workflow.all_handlers_finished)  # an Update in flight
        workflow.continue_as_new(
            AgentRunInput(
                run_id=self.log.run_id,
                spec=self.plan.spec,
                settings=self.settings,
                continued=Continued(self.plan, self.log.seq),
            )
        )

    async def call_model(
        self, model: Model, request: ModelRequest, timeout: float | None
    ) -> ModelResponse:
        await self._continue_if_due()
        call = self.model_calls
        # nothing stored to build on: the first call, or the first after a fork's served ones
        base = call - 1 if call > self.unstored_calls else None
        keep = 0
        built_on = self._sent if base is not None else ()
        for sent, message in zip(built_on, request.messages, strict=False):
            if sent != message:
                break
            keep += 1
        data = ModelCallInput(
            plan=self.plan,
            call=call,
            base=base,
            keep=keep,
            new=[m.to_dict() for m in request.messages[keep:]],
            temperature=request.temperature,
            max_output_tokens=request.max_output_tokens,
            forked=self.unstored_calls,
        )
        try:
            result = await self.pending.carried(
                MODEL_CALL,
                data,
                ModelCallResult,
                start_to_close_timeout=timedelta(seconds=self.settings.model_timeout_s),
                schedule_to_close_timeout=timedelta(seconds=timeout) if timeout else None,
                heartbeat_timeout=timedelta(seconds=self.settings.heartbeat_timeout_s),
                retry_policy=self._policy(self.settings.model_attempts),
            )
        except ActivityError as exc:
            raise _loopwright_error(exc) from exc
        self.pending.request_digest = result.request_digest
        self.model_calls += 1
        self.calls_here += 1
        self._sent = request.messages
        return ModelResponse.from_dict(result.reply())

    async def call_tool(
        self, call: ToolCall, invoke: ToolInvocation, *, idempotent: bool, timeout: float | None
    ) -> ToolResult:
        """The worker's tool executor runs the call (`invoke` is this process's)."""
        out = await call_once(
            self.pending,
            TOOL_CALL,
            ToolCallInput(self.plan, call.to_dict(), idempotent),
            OutcomeInput(self.log.run_id, call.to_dict(), plan=self.plan),
            attempts=self.settings.tool_attempts,
            options={
                "start_to_close_timeout": timedelta(
                    seconds=timeout or self.settings.tool_timeout_s
                ),
                "heartbeat_timeout": timedelta(seconds=self.settings.heartbeat_timeout_s),
                "retry_policy": self._policy(self.settings.tool_attempts if idempotent else 1),
            },
        )
        result = result_from_dict(out.result)
        if out.outcome in ("ran", "committed") and len(result.content) >= REF_MIN_CHARS:
            self.pending.committed[call.id] = result.content
        return result

    async def gate(self, request: GateRequest) -> GateVerdict:
        """The gate waits in the workflow for the Update `approve` (_approvals.py)."""
        if self.gates is None:  # nobody could decide: rejected, never approved
            return GateVerdict("rejected", "engine", "this workflow takes no gate decisions")
        return await self.gates.wait(request)

    async def verify(self, check: Verification) -> VerificationResult:
        try:
            data = await self.pending.carried(
                VERIFY,
                VerifyInput(self.plan),
                Verified,
                start_to_close_timeout=timedelta(seconds=self.settings.tool_timeout_s),
                heartbeat_timeout=timedelta(seconds=self.settings.heartbeat_timeout_s),
                retry_policy=self._policy(self.settings.tool_attempts),
            )
        except ActivityError as exc:
            raise _loopwright_error(exc) from exc
        return VerificationResult(
            outcome=data.outcome,  # type: ignore[arg-type]
            passed=tuple(data.passed),
            failed=tuple(data.failed),
            output=data.output,
        )
