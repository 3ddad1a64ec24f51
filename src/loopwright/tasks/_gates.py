"""GateBroker: the pending approval gates of task runs, shared by the CLI prompt and the API.

A gate step opens a `PendingGate` and emits `confirmation_required` with its `request_id`;
whoever decides (a person at the terminal, `--yes`, an HTTP request) calls
`GateBroker.decide(request_id, approved, decided_by)`. That sets the gate's `asyncio.Event`;
the waiting task run wakes and emits `gate_decision` into its log.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field


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
    loop: asyncio.AbstractEventLoop | None = None

    @property
    def decided(self) -> bool:
        return self.approved is not None


class GateBroker:
    """Holds the gates waiting for a decision, by request id."""

    def __init__(self) -> None:
        self._gates: dict[str, PendingGate] = {}

    def open(self, run_id: str, step: str, message: str, timeout_s: float) -> PendingGate:
        gate = PendingGate(
            request_id=f"gate_{uuid.uuid4().hex[:12]}",
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

    def decide(self, request_id: str, approved: bool, decided_by: str = "user") -> bool:
        """Approve or reject a pending gate; False if it is unknown or already decided.

        Safe to call from another thread: the event is set on the gate's own loop.
        """
        gate = self._gates.get(request_id)
        if gate is None or gate.decided:
            return False
        gate.approved = approved
        gate.decided_by = decided_by
        if gate.loop is None or gate.loop.is_closed():
            gate.event.set()
        else:
            gate.loop.call_soon_threadsafe(gate.event.set)
        return True

    def close(self, request_id: str) -> None:
        """Forget a gate (decided, timed out or abandoned)."""
        self._gates.pop(request_id, None)
