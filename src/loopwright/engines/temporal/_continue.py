"""How a workflow goes on with a run another workflow run started: after a continue-as-new
(a long run) or a resume (a run whose workflow failed or was terminated).

The loop is not rebuilt from a snapshot: as the embedded engine does on resume
(effects/_replay.py), it runs again from the start over the run's recorded events, served
model replies and tool results instead of activities, and goes on live where the record
ends. The events come from the Postgres event log through the `recording` activity, in
pages, with long tool results as references (engines/temporal/_refs.py): a continued run's
history holds ~1 KB per earlier step, not the results.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

from loopwright.clock import Clock
from loopwright.effects import EventLog, Recording, ReplayEffects
from loopwright.effects._protocol import ToolInvocation
from loopwright.engines.temporal._approvals import GatePendingEvents
from loopwright.engines.temporal._effects import TemporalEffects
from loopwright.engines.temporal._payloads import (
    RECORDING,
    EngineSettings,
    RecordingInput,
    RecordingPage,
    RunPlan,
)
from loopwright.events import (
    ConfirmationRequiredEvent,
    Event,
    ModelResponseEvent,
    event_from_dict,
)
from loopwright.messages import ModelRequest, ModelResponse, ToolCall, ToolResult
from loopwright.models import Model
from loopwright.safety.scrub import Scrubber

RESUME_READS_COMMITTED = "loopwright-resume-reads-committed-tool"
"""The patch under which a resumed run's call that started and did not end asks its worker
(the content store's row) instead of being reported interrupted (workflows recorded
before it replay as they ran)."""


class ContinuedLog(EventLog):
    """The EventLog of a continued run, whose recorder is the workflow's pending events.
    A stored `model_response` holds the fingerprint of the request's whole texts, the
    workflow's loop makes one over the references it holds (engines/temporal/_refs.py):
    those are not compared; every other event is. A recorded `confirmation_required`
    tells the gates (engines/temporal/_approvals.py) that their question is asked, as
    writing it does. Its `gate_key` is the one `prepare` recorded in the history (b"" for
    a workflow recorded before: the same ids as it made then)."""

    def __init__(
        self,
        run_id: str,
        *,
        clock: Clock,
        scrubber: Scrubber | None,
        recorder: GatePendingEvents,
        recorded: Sequence[Event] = (),
        gate_key: bytes,
    ) -> None:
        super().__init__(run_id, clock=clock, scrubber=scrubber, recorder=recorder,
                         recorded=recorded, gate_key=gate_key)  # fmt: skip
        self.pending = recorder

    def _check(self, event: Event) -> None:
        recorded = self.recorded[event.seq - 1]
        if isinstance(event, ModelResponseEvent) and isinstance(recorded, ModelResponseEvent):
            event = dataclasses.replace(event, request_digest=recorded.request_digest)
        super()._check(event)
        if isinstance(event, ConfirmationRequiredEvent):
            self.pending.asked.add(event.request_id)  # a resumed gate that was waiting waits


class ResumedEffects(ReplayEffects):
    """The recorded effects first, then the workflow's activities (`live`). A call the
    record shows started but not ended goes to its worker, whose tool activity reads the
    call's row in the content store first: a committed result is served (never run
    again), one still `started` is uncertain, and one never claimed (it never ran) runs."""

    async def call_tool(
        self, call: ToolCall, invoke: ToolInvocation, *, idempotent: bool, timeout: float | None
    ) -> ToolResult:
        recording = self.recording
        unended = call.id in recording.started_tools and call.id not in recording.tool_results
        if unended and not idempotent and workflow.patched(RESUME_READS_COMMITTED):
            return await self.inner.call_tool(call, invoke, idempotent=False, timeout=timeout)
        return await super().call_tool(call, invoke, idempotent=idempotent, timeout=timeout)


class ContinuedEffects(ResumedEffects):
    """The recorded effects first, then the workflow's activities; a served model call
    still moves the Temporal effects' position (call number, messages sent)."""

    def __init__(self, recording: Recording, live: TemporalEffects) -> None:
        super().__init__(recording, live)
        self.temporal = live

    async def call_model(
        self, model: Model, request: ModelRequest, timeout: float | None
    ) -> ModelResponse:
        if self.recording.model_responses:
            self.temporal.served(request)
            return self.recording.model_responses.popleft()
        return await self.temporal.call_model(model, request, timeout)


async def load_recording(plan: RunPlan, upto: int | None, settings: EngineSettings) -> list[Event]:
    """The run's stored events up to `upto` (None: all), page by page."""
    events: list[Event] = []
    after = 0
    while True:
        page = await workflow.execute_activity(
            RECORDING,
            RecordingInput(plan, after, upto),
            result_type=RecordingPage,
            start_to_close_timeout=timedelta(seconds=120),
            heartbeat_timeout=timedelta(seconds=settings.heartbeat_timeout_s),
            retry_policy=RetryPolicy(maximum_attempts=settings.store_attempts),
        )
        events.extend(event_from_dict(e) for e in page.events)
        after = page.last
        if not page.more:
            return events
