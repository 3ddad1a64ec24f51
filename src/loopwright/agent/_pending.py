"""Approvals in code: a run that stops `waiting` at a tool call nobody has decided yet.

`AgentExecutor(..., approve=..., on_pending="wait")`: where a call needs approval and no
decision is at hand, the run does not wait in this process. `confirmation_required` is
logged as at any gate, then the run's gatekeeper (`WaitingGates`) raises `RunSuspended`;
the tool phase adds the call (`PendingApproval`), and the loop ends the run `waiting`,
without `run_finished`: the run is not over. Going on is resuming it: its log replays
(nothing done is done again) up to the gate, where the decision is now found, given to
`agent.resume(result, approve=..., reject=...)` or left in the run store by
`Runtime.approve`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, Protocol

from loopwright.agent._approval import ApprovalPolicy, EitherRule
from loopwright.agent._result import ExecutionResult, PendingApproval
from loopwright.agent._setup import RunSetup
from loopwright.effects import GateRequest, GateVerdict
from loopwright.errors import ConfigurationError, RunSuspended, UsageError
from loopwright.events import Event, ModelTextDeltaEvent, RunStartedEvent
from loopwright.messages import ToolCall
from loopwright.run_context import ApprovalRule, EventSink, Gatekeeper

OnPending = Literal["ask", "wait"]
ON_PENDING: tuple[OnPending, ...] = ("ask", "wait")


class StoredDecision(Protocol):
    """A decision left in the run store (`store.GateDecision`)."""

    @property
    def approved(self) -> bool: ...

    @property
    def decided_by(self) -> str:
        """Who decided, then the reason after a newline (the store's one column)."""
        ...


class DecisionStore(Protocol):
    """Where another process leaves a decision for a run that is not executing (the run
    store: `RunStore.gate_decision`)."""

    def gate_decision(self, run_id: str, request_id: str) -> StoredDecision | None: ...


class WaitingGates:
    """The gatekeeper of a run that ends `waiting` instead of waiting: the decision given
    for the gate (by `agent.resume`), else one left in the store (by `Runtime.approve`),
    else `RunSuspended`."""

    def __init__(
        self,
        decisions: Mapping[str, GateVerdict] | None = None,
        store: DecisionStore | None = None,
    ) -> None:
        self.decisions = dict(decisions or {})
        self.store = store

    async def decide(self, run_id: str, request: GateRequest) -> GateVerdict:
        verdict = self.decisions.get(request.request_id)
        if verdict is None and self.store is not None:
            stored = await asyncio.to_thread(self.store.gate_decision, run_id, request.request_id)
            if stored is not None:  # who decided, then the reason after a newline
                who, _, reason = stored.decided_by.partition("\n")
                verdict = GateVerdict("approved" if stored.approved else "rejected", who, reason)
        if verdict is None:
            raise RunSuspended(request.request_id)
        return verdict

    def resolve(self, request_id: str, approved: bool, decided_by: str, reason: str = "") -> bool:
        return False  # nothing waits here: a decision is given to the resumed run


def check_on_pending(on_pending: str) -> OnPending:
    if on_pending not in ON_PENDING:
        raise ConfigurationError(
            f"on_pending must be 'ask' or 'wait', not {on_pending!r} ('wait': a run ends "
            "`waiting` at a tool call nobody has decided yet)"
        )
    return on_pending


def gatekeeper(
    on_pending: OnPending, gates: Gatekeeper | None, store: DecisionStore | None = None
) -> Gatekeeper | None:
    """Who decides a run's gates: `gates` ("ask"), or a WaitingGates ("wait"), which looks
    in `store` for a decision left there."""
    if on_pending == "ask":
        return gates
    if gates is not None and not isinstance(gates, WaitingGates):
        raise ConfigurationError(
            "gates= decides in this process while the run waits; with on_pending='wait' the "
            "run ends `waiting` instead: decide with agent.resume(result, approve=[...])"
        )
    return gates if gates is not None else WaitingGates(store=store)


def why_approval(rule: ApprovalRule | None, call: ToolCall, effect: str) -> str:
    """Which part of the approval policy asks for `call` (of a tool declaring `effect`)."""
    if isinstance(rule, EitherRule):
        first = rule.first.needs(call, effect)
        why = why_approval(rule.first if first else rule.second, call, effect)
        return why if first else f"{why} (the lead agent's policy)"
    if not isinstance(rule, ApprovalPolicy):
        return "the run's approval rule asks for it"
    if rule.every:
        return "every tool call needs approval (approve=True or '*')"
    if call.name in rule.tools:
        return f"approve= names the tool {call.name}"
    if effect in rule.effects:
        return f"{call.name} is declared {effect}, and approve= names that effect"
    return "the approve= check asked for it"


def pending_approval(setup: RunSetup, call: ToolCall, effect: str, gate_id: str) -> PendingApproval:
    """The call a run stops at, its arguments scrubbed as the run's events are."""
    scrubber = setup.scrubber
    arguments = scrubber.scrub_fields(call.arguments) if scrubber is not None else call.arguments
    return PendingApproval(
        gate_id=gate_id,
        run_id=setup.run_id,
        tool_name=call.name,
        arguments=dict(arguments),
        why=why_approval(setup.approval, call, effect),
        call_id=call.id,
    )


def kept_events(on_event: EventSink | None) -> tuple[list[Event], EventSink]:
    """A list that keeps a run's events (its own and its sub-agents', not the token deltas,
    which are never part of a log) and the sink that fills it, then calls `on_event`."""
    kept: list[Event] = []

    async def sink(event: Event) -> None:
        if not isinstance(event, ModelTextDeltaEvent):
            kept.append(event)
        if on_event is not None:
            outcome = on_event(event)
            if outcome is not None:
                await outcome

    return kept, sink


def decisions_for(
    result: ExecutionResult,
    approve: Iterable[str],
    reject: Mapping[str, str],
    decided_by: str,
) -> dict[str, GateVerdict]:
    """The verdicts `agent.resume` gives: a UsageError, before anything runs, when the run
    is not waiting, when a gate named is not one it waits at, or when one is left undecided
    (the resumed run would stop at it again at once)."""
    run_id = result.run_id
    if result.status != "waiting":
        raise UsageError(
            f"run {run_id} is {result.status}, not waiting for a decision: nothing to resume"
        )
    if not result.events:
        raise UsageError(
            f"run {run_id} was run by a Runtime, which stored its events: decide with "
            f"runtime.approve({run_id!r}, GATE_ID, ...), then runtime.resume_agent(agent, "
            f"{run_id!r})"
        )
    approved = list(approve) if not isinstance(approve, str) else [approve]
    waiting = [p.gate_id for p in result.pending_approvals]
    verdicts = {gate: GateVerdict("approved", decided_by) for gate in approved}
    verdicts.update({g: GateVerdict("rejected", decided_by, why) for g, why in reject.items()})
    for gate in [*approved, *reject]:
        if gate not in waiting:
            raise UsageError(
                f"run {run_id} has no gate {gate!r} waiting (waiting: {', '.join(waiting)})"
            )
    both = set(approved) & set(reject)
    if both:
        raise UsageError(f"gate {sorted(both)[0]} is both approved and rejected")
    undecided = [gate for gate in waiting if gate not in verdicts]
    if undecided:
        raise UsageError(
            f"run {run_id} waits at gate {undecided[0]}: approve it (approve=[...]) or "
            "reject it (reject={gate_id: reason}) to go on"
        )
    return verdicts


def run_started(result: ExecutionResult, events: Sequence[Event]) -> RunStartedEvent:
    """The `run_started` of the run `result` is the result of (what resuming it repeats)."""
    for event in events:
        if isinstance(event, RunStartedEvent) and event.run_id == result.run_id:
            return event
    raise UsageError(f"run {result.run_id}: its events hold no run_started to resume from")
