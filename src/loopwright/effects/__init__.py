"""The effect boundary: everything a run does to the world goes through `Effects`.

A run's loop (the agent's ReAct loop, the task runner) is plain bookkeeping. Its model
calls, tool calls, gate decisions and verification go through one `Effects` object, and
every result is appended, as an event, to the run's `EventLog`:

- `LiveEffects` performs them in this process;
- `ReplayEffects` serves them from a run's recorded log (resume after a crash, replay),
  then hands over to live effects where the recording ends;
- a Temporal engine is a third implementation (the effects as activities).
"""

from loopwright.effects._deltas import DeltaSettings
from loopwright.effects._live import LiveEffects
from loopwright.effects._log import EventLog, EventSink, Recorder, send_event
from loopwright.effects._protocol import (
    Effects,
    Gatekeeper,
    GateRequest,
    GateVerdict,
    VerificationResult,
)
from loopwright.effects._replay import Recording, ReplayEffects, replaying

__all__ = [
    "DeltaSettings",
    "Effects",
    "EventLog",
    "EventSink",
    "GateRequest",
    "GateVerdict",
    "Gatekeeper",
    "LiveEffects",
    "Recorder",
    "Recording",
    "ReplayEffects",
    "VerificationResult",
    "replaying",
    "send_event",
]
