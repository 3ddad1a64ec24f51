"""A stored turn's transcript, made again from its log: what a follow-up in another process
(or after a restart) starts with.

The turn's loop runs again over its recorded events, as a resume does: each model reply,
tool result and approval decision is served from the log, every event the loop makes is
checked against the recorded one, and nothing is live (the first effect or event the log
does not hold ends it). What the loop then holds is the transcript the turn's model saw,
message for message: the same requests, replies, observations (scrubbed, as stored), notes
and cuts to the context window.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Sequence

from loopwright.agent._conversation import Transcript
from loopwright.agent._executor import AgentExecutor
from loopwright.agent._lineage import Lineage
from loopwright.agent._loop import run_agent
from loopwright.agent._state import LoopState
from loopwright.effects import EventLog, GateRequest, GateVerdict, LiveEffects, VerificationResult
from loopwright.effects._protocol import ToolInvocation, Verification
from loopwright.effects._replay import replaying
from loopwright.effects._wrapped import WrappedEffects
from loopwright.errors import FollowUpError, ReplayDivergence
from loopwright.events import Event, ModelResponseEvent, RunStartedEvent
from loopwright.messages import ModelRequest, ModelResponse, ToolCall, ToolResult
from loopwright.models import Model


class _LogEnds(BaseException):
    """The log holds nothing more (a BaseException: no tool error handler in the loop may
    take it for a failure of the call)."""


class _NothingLive(WrappedEffects):
    """What the log does not answer is not performed."""

    async def call_model(
        self, model: Model, request: ModelRequest, timeout: float | None
    ) -> ModelResponse:
        raise _LogEnds

    async def call_tool(
        self, call: ToolCall, invoke: ToolInvocation, *, idempotent: bool, timeout: float | None
    ) -> ToolResult:
        raise _LogEnds

    async def gate(self, request: GateRequest) -> GateVerdict:
        raise _LogEnds

    async def verify(self, check: Verification) -> VerificationResult:
        raise _LogEnds


async def _past_the_end(event: Event) -> None:
    raise _LogEnds


class _SameSteps(EventLog):
    """Checks every re-made event against the log but the fingerprints of the model's
    requests: the turn is made again by an agent whose prompt differs (another model,
    other tools), step for step."""

    def _check(self, event: Event) -> None:
        recorded = self.recorded[event.seq - 1]
        if isinstance(event, ModelResponseEvent) and isinstance(recorded, ModelResponseEvent):
            event = dataclasses.replace(event, request_digest=recorded.request_digest)
        super()._check(event)


async def replayed_transcript(
    agent: AgentExecutor, events: Sequence[Event], history: Transcript | None
) -> Transcript:
    """The transcript of the turn `events` (an agent run's whole log) at its end, made by
    `agent` over the log, after `history` (the transcript of the turn before it, if any):
    as it was sent when `agent` makes every request the turn made; else (another model,
    other tools) as `agent` would have sent the same steps. A FollowUpError when `agent`
    does not make the turn's steps again."""
    started = events[0] if events else None
    if not isinstance(started, RunStartedEvent) or started.kind != "agent":
        raise FollowUpError("a follow-up needs an agent run to follow")
    try:
        return await _made_again(agent, started, events, history, EventLog)
    except ReplayDivergence:
        pass
    try:
        return await _made_again(agent, started, events, history, _SameSteps)
    except ReplayDivergence as exc:
        raise FollowUpError(
            f"run {started.run_id} cannot be followed up by this agent: replaying its log "
            f"{exc} (it ran other steps than this agent makes from its replies)"
        ) from None


async def _made_again(
    agent: AgentExecutor,
    started: RunStartedEvent,
    events: Sequence[Event],
    history: Transcript | None,
    log_kind: type[EventLog],
) -> Transcript:
    run_id = started.run_id
    context = agent.run_context(
        run_id,
        tenant=started.tenant,
        parent_run_id=started.parent_run_id,
        parent_call_id=started.parent_call_id,
        recorded=events,
    )
    log = log_kind(
        run_id, clock=agent.clock, scrubber=context.scrubber, sink=_past_the_end, recorded=events
    )
    fx = replaying(_NothingLive(LiveEffects(log, clock=agent.clock, deltas=None)), events)
    lineage = Lineage(history=history)
    setup = agent.setup(started.request, context, spec=started.spec, lineage=lineage, goes_on=False)
    state = LoopState.start(setup, fx.monotonic(), fingerprinted=True)
    with contextlib.suppress(_LogEnds):  # the turn ended (or its log did)
        await run_agent(setup, fx, state=state)
    return state.conversation
