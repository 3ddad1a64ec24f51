"""Approvals on Temporal: a gate waits in the workflow for an Update `approve`.

In the workflow, `GateWaits` holds the run's open gates. `wait` opens one, stores the
events up to its `confirmation_required` (the `gate_open` activity: `runs approve` and the
dashboard see it pending, as for an embedded run) and waits, with the gate's timeout (a
durable timer), for the decision. The Update's validator refuses a decision on a gate that
is not open (unknown, or already decided), so a refused one leaves no history; the handler
records the decision and the waiting gate goes on. Nothing here depends on a worker: a
gate waits across any number of workers stopping and starting.

A decision made while no worker polls cannot wait for the Update's answer: it is sent as
the Signal `approve_later` instead, stored in the workflow's history, and taken when a worker
replays it (the same rules, without the answer: one on a gate that is not waiting, or
already decided, is dropped).

Outside the workflow, `decide` is how the Runtime's TemporalEngine (engines/temporal/
_engine.py) decides a gate of a Temporal run, once `Runtime.approve` checked it waits.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.client import Client
from temporalio.common import RetryPolicy

from loopwright.effects import GateRequest, GateVerdict
from loopwright.engines.temporal._effects import PendingEvents
from loopwright.engines.temporal._payloads import GATE_OPEN, EngineSettings, GateOpenInput
from loopwright.errors import UsageError
from loopwright.events import ConfirmationRequiredEvent, Event

APPROVE = "approve"
"""The Update's name (its argument: a GateDecision, as a JSON object)."""
DECIDE_LATER = "approve_later"
"""The Signal's name: the same argument, for a decision made while no worker polls."""


@dataclass(frozen=True)
class GateDecision:
    """A decision on a gate of a workflow: the argument of the Update `approve` and of the
    Signal `approve_later`, made and read here only. It travels as the JSON object of its
    fields (`to_wire`), as decisions always have: recorded histories replay."""

    gate_id: str
    approved: bool
    by: str = ""
    reason: str = ""

    def to_wire(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_wire(cls, data: object) -> GateDecision:
        """The decision an Update or a Signal carries; a ValueError if it is malformed
        (anyone reaching the Temporal frontend can send one)."""
        if not isinstance(data, dict):
            raise ValueError("an approval is a JSON object: gate_id, approved, by, reason")
        gate_id, approved = data.get("gate_id"), data.get("approved")
        by, reason = data.get("by", ""), data.get("reason", "")
        if not isinstance(gate_id, str) or not isinstance(approved, bool):
            raise ValueError("an approval needs gate_id (a string) and approved (true or false)")
        if not isinstance(by, str) or not isinstance(reason, str):
            raise ValueError("an approval's by and reason are strings")
        return cls(gate_id, approved, by, reason)


class GatePendingEvents(PendingEvents):
    """PendingEvents that notes which gates have their `confirmation_required` made."""

    def __init__(self, run_id: str, settings: EngineSettings) -> None:
        super().__init__(run_id, settings)
        self.asked: set[str] = set()

    def write(self, event: Event) -> None:
        super().write(event)
        if isinstance(event, ConfirmationRequiredEvent):
            self.asked.add(event.request_id)


class GateWaits:
    """The open gates of one workflow run and the decisions the Update brought."""

    def __init__(self, pending: GatePendingEvents) -> None:
        self.pending = pending
        self.open: dict[str, GateRequest] = {}
        self.decided: dict[str, GateDecision] = {}

    def refusal(self, gate_id: str) -> str | None:
        """Why a decision on `gate_id` is refused now (None: it is accepted)."""
        if gate_id in self.decided:
            return f"gate {gate_id!r} already has a decision"
        if gate_id not in self.open:
            return f"no gate {gate_id!r} is waiting in run {self.pending.run_id}"
        return None

    def decide(self, decision: GateDecision) -> None:
        self.decided[decision.gate_id] = decision

    async def wait(self, request: GateRequest) -> GateVerdict:
        """Open the gate, store its events, wait for the decision or the timeout."""
        gate_id = request.request_id
        self.open[gate_id] = request
        try:
            # the loop appends confirmation_required right after it asked; then it is stored
            await workflow.wait_condition(lambda: gate_id in self.pending.asked)
            await self.pending.carried(
                GATE_OPEN,
                GateOpenInput(self.pending.run_id, request.timeout_s),
                int,
                start_to_close_timeout=timedelta(seconds=60),
                retry_policy=RetryPolicy(maximum_attempts=self.pending.settings.store_attempts),
            )
            try:
                await workflow.wait_condition(
                    lambda: gate_id in self.decided, timeout=timedelta(seconds=request.timeout_s)
                )
            except TimeoutError:
                why = f"no decision within {request.timeout_s:g}s"
                return GateVerdict("timed_out", "timeout", why)
            decision = self.decided[gate_id]
            outcome = "approved" if decision.approved else "rejected"
            return GateVerdict(outcome, decision.by, decision.reason)
        finally:
            del self.open[gate_id]


class Approvable:
    """The Update `approve` of a workflow whose gates wait in `self.gates` (a base class
    of the agent-run and task-run workflows)."""

    gates: GateWaits | None = None

    @workflow.update(name=APPROVE)
    async def approve(self, data: dict[str, Any]) -> dict[str, Any]:
        """A decision on a waiting gate (a GateDecision's JSON object)."""
        decision = GateDecision.from_wire(data)
        assert self.gates is not None  # the validator let it through: a gate is open
        self.gates.decide(decision)
        return {"gate_id": decision.gate_id, "approved": decision.approved}

    @workflow.signal(name=DECIDE_LATER)
    def approve_later(self, data: dict[str, Any]) -> None:
        """A decision stored while no worker polled: taken if its gate still waits."""
        try:
            decision = GateDecision.from_wire(data)
        except ValueError:
            return
        if self.gates is not None and self.gates.refusal(decision.gate_id) is None:
            self.gates.decide(decision)

    @approve.validator
    def check_approve(self, data: dict[str, Any]) -> None:
        """Refuse (before any history is written) a malformed decision, one on a gate
        that is not waiting, and a second decision on the same gate."""
        gate_id = GateDecision.from_wire(data).gate_id
        if self.gates is None:
            raise ValueError(f"no gate {gate_id!r} is waiting: the run has not started yet")
        refusal = self.gates.refusal(gate_id)
        if refusal is not None:
            raise ValueError(refusal)


async def decide(client: Client, run_id: str, decision: GateDecision) -> None:
    """Decide a gate of the Temporal run `run_id` (its workflow id) through its Update; a
    UsageError says why the workflow refused it (unknown gate, already decided, run not
    running)."""
    from temporalio.client import RPCError, WorkflowUpdateFailedError

    handle = client.get_workflow_handle(run_id)
    try:
        await handle.execute_update(APPROVE, decision.to_wire())
    except WorkflowUpdateFailedError as exc:
        cause = exc.cause
        raise UsageError(f"run {run_id}: {getattr(cause, 'message', None) or cause}") from None
    except RPCError as exc:
        raise UsageError(f"run {run_id} takes no decision on Temporal: {exc.message}") from None
