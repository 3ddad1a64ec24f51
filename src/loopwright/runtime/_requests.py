"""The request of one recorded model call, rebuilt from the run's log.

A `model_response` event holds the reply, its usage and duration, and a fingerprint of
the request (`request_digest`), not the messages: storing every request would store the
conversation again at every step. The messages are rebuilt instead, the way `runs replay`
re-runs a run: the run's recorded spec makes the agent, its recorded replies and tool
results are served from the log, and the loop builds each request again. The rebuilt
request counts only when its fingerprint equals the recorded one; otherwise it is
refused with the reason (the code changed since, the run used MCP tools that are not
connected here, ...). Nothing runs: a call the log does not answer ends the rebuild.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.effects import (
    Effects,
    EventLog,
    GateRequest,
    GateVerdict,
    LiveEffects,
    VerificationResult,
)
from loopwright.effects._protocol import ToolInvocation, Verification
from loopwright.effects._replay import replaying
from loopwright.effects._wrapped import WrappedEffects
from loopwright.errors import LoopwrightError, ReplayDivergence, UsageError
from loopwright.events import Event, ModelResponseEvent, RunStartedEvent
from loopwright.messages import ModelRequest, ModelResponse, ToolCall, ToolResult
from loopwright.models import Model
from loopwright.models._scripted import stand_in_model
from loopwright.runtime._spec import RunSpec, build_agent, recorded_spec
from loopwright.runtime._turns import replayed_lineage
from loopwright.store import RunStore


@dataclass(frozen=True)
class RebuiltRequest:
    """A recorded model call's request (`request`), or why it could not be rebuilt."""

    seq: int
    request: dict[str, Any] | None = None
    problem: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "request": self.request, "problem": self.problem}


class _Done(BaseException):
    """The rebuild has what it came for (a BaseException: no tool error handler in the
    loop may take it for a failure of the call)."""


class _NothingLive(WrappedEffects):
    """What the log does not answer is not performed: the rebuild ends there."""

    async def call_model(
        self, model: Model, request: ModelRequest, timeout: float | None
    ) -> ModelResponse:
        raise _Done

    async def call_tool(
        self, call: ToolCall, invoke: ToolInvocation, *, idempotent: bool, timeout: float | None
    ) -> ToolResult:
        raise _Done

    async def gate(self, request: GateRequest) -> GateVerdict:
        raise _Done

    async def verify(self, check: Verification) -> VerificationResult:
        raise _Done


class _Capture(WrappedEffects):
    """Keeps the request of the `wanted`-th model call (1-based)."""

    def __init__(self, inner: Effects, wanted: int) -> None:
        super().__init__(inner)
        self.wanted = wanted
        self.calls = 0
        self.request: dict[str, Any] | None = None

    async def call_model(
        self, model: Model, request: ModelRequest, timeout: float | None
    ) -> ModelResponse:
        self.calls += 1
        if self.calls > self.wanted:
            raise _Done
        if self.calls == self.wanted:  # as it is now: the loop goes on with its history
            self.request = request_view(request)
        return await self.inner.call_model(model, request, timeout)


def request_view(request: ModelRequest) -> dict[str, Any]:
    """A request as the API shows it: the messages, the tools offered natively, settings."""
    return {
        "messages": [message.to_dict() for message in request.messages],
        "tools": [spec.name for spec in request.tools],
        "temperature": request.temperature,
        "max_output_tokens": request.max_output_tokens,
        "output_schema": request.output_schema,
    }


def _model_call(events: list[Event], seq: int) -> tuple[ModelResponseEvent, int]:
    """The `model_response` event at `seq` and which model call of the run it was."""
    calls = 0
    for event in events:
        if isinstance(event, ModelResponseEvent):
            calls += 1
            if event.seq == seq:
                return event, calls
    raise UsageError(f"event {seq} is not one of the run's model calls")


async def rebuild_request(store: RunStore, run_id: str, seq: int) -> RebuiltRequest:
    """The request of the model call recorded at `seq` in `run_id`'s log, rebuilt and
    checked against its recorded fingerprint. A UsageError if `seq` is not a model call."""
    events = store.events(run_id)
    target, number = _model_call(events, seq)
    made = _agent_of(events)
    if isinstance(made, str):
        return RebuiltRequest(seq, problem=made)
    agent, spec, started = made

    async def past_the_end(event: Event) -> None:
        raise _Done

    log = EventLog(run_id, scrubber=agent.scrubber, sink=past_the_end, recorded=events)
    live = _NothingLive(LiveEffects(log, clock=agent.clock, deltas=None))
    capture = _Capture(replaying(live, events), number)
    context = agent.run_context(
        run_id,
        tenant=started.tenant,
        parent_run_id=started.parent_run_id,
        parent_call_id=started.parent_call_id,
        recorded=events,
    )
    try:
        lineage = await replayed_lineage(store, run_id, agent, spec)
    except LoopwrightError as exc:  # a follow-up whose earlier turns cannot be made again
        return RebuiltRequest(seq, problem=f"its conversation's history cannot be rebuilt: {exc}")
    setup = agent.setup(spec.request, context, spec=spec.to_dict(), lineage=lineage, goes_on=False)
    try:
        await agent.run_with(capture, setup)
    except _Done:
        pass
    except ReplayDivergence as exc:
        if exc.seq <= target.seq:
            why = "its fingerprint differs" if exc.seq == target.seq else str(exc)
            return RebuiltRequest(seq, problem=f"{DIFFERENT} ({why})")
    if capture.request is None or log.seq < target.seq:
        return RebuiltRequest(seq, problem="the rebuilt run did not reach this call")
    return RebuiltRequest(seq, request=agent.scrubber.scrub_fields(capture.request))


DIFFERENT = "this code does not build the request the run sent: it ran under other code or tools"
NO_SPEC = "the run was started from code, not from a RunSpec: nothing to rebuild its requests from"
SKILL_COMMANDS = "the run's skill runs commands to build its prompt: a rebuild would run them again"


def _agent_of(events: list[Event]) -> tuple[AgentExecutor, RunSpec, RunStartedEvent] | str:
    """The agent the run's recorded spec makes (with a model that is never called), or
    why there is none to rebuild its requests with."""
    started = events[0]
    spec = recorded_spec(events)
    if spec is None or not isinstance(started, RunStartedEvent) or started.kind != "agent":
        return NO_SPEC
    if spec.skill and spec.allow_skill_commands:
        return SKILL_COMMANDS
    tool_mode = AgentOptions.from_dict(started.options).tool_mode or "prompted"
    stand_in = stand_in_model(started.model, tool_mode)
    try:
        return build_agent(spec, stand_in), spec, started
    except LoopwrightError as exc:
        return f"the run's agent cannot be made here: {exc}"
