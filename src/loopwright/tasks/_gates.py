"""GateBroker: where the gates of task runs (and later agent tool approvals) are decided.

It is the runs' `Gatekeeper`: a run's gate effect calls `await decide(run_id, request)`,
which waits until someone decides. Decisions come from this process (a person at the
terminal, `--yes`, an HTTP request: `resolve(request_id, approved, decided_by)`, safe from
any thread) or from another process, through the run store: a server that does not run
the task, or `loopwright task approve`, posts it with `RunStore.post_gate_decision`, and a
broker given the `store` polls it while a gate waits. Whichever comes first wins.

The timeout is the caller's (LiveEffects gives up after the request's `timeout_s`).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from loopwright.effects import GateRequest, GateVerdict
from loopwright.errors import StoreError
from loopwright.events import (
    ConfirmationRequiredEvent,
    Event,
    GateDecisionEvent,
    RunFinishedEvent,
    StepCompleteEvent,
    TaskCompleteEvent,
)
from loopwright.store import RunStore

STORE_POLL_S = 0.25
"""How often a waiting gate looks in the store for a decision another process left."""


@dataclass
class PendingGate:
    request_id: str
    run_id: str
    step: str
    message: str
    timeout_s: float
    event: asyncio.Event = field(default_factory=asyncio.Event)
    approved: bool | None = None
    decided_by: str = ""
    reason: str = ""
    loop: asyncio.AbstractEventLoop | None = None

    @property
    def decided(self) -> bool:
        return self.approved is not None


class GateBroker:
    """The gates waiting for a decision, by request id; a `Gatekeeper` for runs."""

    def __init__(self, store: RunStore | None = None, *, poll_s: float = STORE_POLL_S) -> None:
        self.store = store
        """Where other processes leave decisions (None: only this process decides)."""
        self.poll_s = poll_s
        self._gates: dict[str, PendingGate] = {}

    async def decide(self, run_id: str, request: GateRequest) -> GateVerdict:
        """Wait for a decision on `request` (the Gatekeeper protocol)."""
        gate = self.open(
            run_id, request.step, request.message, request.timeout_s, request.request_id
        )
        poller = None
        if self.store is not None:
            poller = asyncio.get_running_loop().create_task(self._poll(gate))
        try:
            await gate.event.wait()
            outcome = "approved" if gate.approved else "rejected"
            return GateVerdict(outcome, gate.decided_by, gate.reason)
        finally:
            if poller is not None:
                poller.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await poller
            self.close(gate.request_id)

    async def _poll(self, gate: PendingGate) -> None:
        assert self.store is not None
        while not gate.decided:
            try:  # off the event loop: a store may be a network round trip away
                decision = await asyncio.to_thread(
                    self.store.gate_decision, gate.run_id, gate.request_id
                )
            except StoreError:
                decision = None  # a busy store: look again at the next poll
            if decision is not None:
                decided_by, reason = split_decider(decision.decided_by)
                self.resolve(gate.request_id, decision.approved, decided_by, reason)
                return
            await asyncio.sleep(self.poll_s)

    def open(
        self,
        run_id: str,
        step: str,
        message: str,
        timeout_s: float,
        request_id: str | None = None,
    ) -> PendingGate:
        gate = PendingGate(
            request_id=request_id or f"gate_{uuid.uuid4().hex[:12]}",
            run_id=run_id,
            step=step,
            message=message,
            timeout_s=timeout_s,
            loop=asyncio.get_running_loop(),
        )
        self._gates[gate.request_id] = gate
        return gate

    def pending(self, run_id: str | None = None) -> list[PendingGate]:
        """Gates still waiting for a decision (of one run, or of all runs)."""
        return [
            gate
            for gate in self._gates.values()
            if not gate.decided and (run_id is None or gate.run_id == run_id)
        ]

    def resolve(
        self, request_id: str, approved: bool, decided_by: str = "user", reason: str = ""
    ) -> bool:
        """Approve or reject a pending gate (`reason`: why, optional); False if it is
        unknown or already decided.

        Safe to call from another thread: the event is set on the gate's own loop.
        """
        gate = self._gates.get(request_id)
        if gate is None or gate.decided:
            return False
        gate.approved = approved
        gate.decided_by = decided_by
        gate.reason = reason
        if gate.loop is None or gate.loop.is_closed():
            gate.event.set()
        else:
            gate.loop.call_soon_threadsafe(gate.event.set)
        return True

    def close(self, request_id: str) -> None:
        """Forget a gate (decided, timed out or abandoned)."""
        self._gates.pop(request_id, None)


def join_decider(decided_by: str, reason: str = "") -> str:
    """Who decided and why, in the store's one `decided_by` column (the reason after a
    newline), for a decision left for another process."""
    who = " ".join(decided_by.split())
    return f"{who}\n{reason}" if reason else who


def split_decider(stored: str) -> tuple[str, str]:
    who, _, reason = stored.partition("\n")
    return who, reason


def pending_gates(events: Iterable[Event]) -> list[dict[str, Any]]:
    """Gates of a run still waiting for a decision, oldest first."""
    waiting: dict[str, ConfirmationRequiredEvent] = {}
    for event in events:
        if isinstance(event, ConfirmationRequiredEvent):
            waiting[event.request_id] = event
        elif isinstance(event, GateDecisionEvent):
            waiting.pop(event.request_id, None)
        elif isinstance(event, StepCompleteEvent):
            for request_id, gate in list(waiting.items()):
                if gate.step == event.step:
                    del waiting[request_id]
        elif isinstance(event, RunFinishedEvent | TaskCompleteEvent):
            waiting.clear()
    return [
        {
            "request_id": gate.request_id,
            "step": gate.step,
            "message": gate.message,
            "seq": gate.seq,
            "ts": gate.ts,
            "timeout_s": gate.timeout_s,
        }
        for gate in waiting.values()
    ]


def gate_was_asked(events: Iterable[Event], request_id: str) -> bool:
    return any(
        isinstance(e, ConfirmationRequiredEvent) and e.request_id == request_id for e in events
    )
