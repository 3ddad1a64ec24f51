"""Pending gates, read from a run's log (they live with the GateBroker in loopwright.tasks)."""

from __future__ import annotations

from loopwright.tasks._gates import gate_was_asked, pending_gates

__all__ = ["gate_was_asked", "pending_gates"]
