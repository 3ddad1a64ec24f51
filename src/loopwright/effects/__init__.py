"""The effect boundary: everything a run does to the world goes through `Effects`.

A run's loop (the agent's ReAct loop, the task runner) is plain bookkeeping. Its model
calls, tool calls, gate decisions and verification go through one `Effects` object, and
every result is appended, as an event, to the run's `EventLog`:

- `LiveEffects` performs them in this process;
- `ReplayEffects` serves them from a run's recorded log (resume after a crash, replay),
  then hands over to live effects where the recording ends;
- a Temporal engine is a third implementation (the effects as activities).

`WrappedEffects` passes every effect to an inner `Effects` (what a wrapper overrides is
what it adds); `TracedEffects`, one such wrapper, traces each effect with OpenTelemetry
and is imported only when named (loopwright.telemetry on).
"""

from typing import TYPE_CHECKING, Any

from loopwright.effects._deltas import DeltaSettings
from loopwright.effects._live import LiveEffects
from loopwright.effects._log import EventLog
from loopwright.effects._protocol import (
    Effects,
    Gatekeeper,
    GateRequest,
    GateVerdict,
    VerificationResult,
)
from loopwright.effects._replay import Recording, ReplayEffects

if TYPE_CHECKING:
    from loopwright.effects._traced import TracedEffects


def __getattr__(name: str) -> Any:
    if name == "TracedEffects":  # imports OpenTelemetry: named only when tracing is on
        from loopwright.effects._traced import TracedEffects

        return TracedEffects
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DeltaSettings",
    "Effects",
    "EventLog",
    "GateRequest",
    "GateVerdict",
    "Gatekeeper",
    "LiveEffects",
    "Recording",
    "ReplayEffects",
    "TracedEffects",
    "VerificationResult",
]
