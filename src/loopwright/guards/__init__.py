"""Stop policies (guardrails): iterations, repetition, wall clock, budget, no progress."""

from loopwright.guards._budget import DEFAULT_PRICES, Budget, CostLedger
from loopwright.guards._policies import (
    MaxIterations,
    NoProgress,
    Repetition,
    WallClock,
    timeout_stop,
)
from loopwright.guards._policy import BasePolicy, GuardState, Nudge, Stop, StopPolicy

__all__ = [
    "DEFAULT_PRICES",
    "BasePolicy",
    "Budget",
    "CostLedger",
    "GuardState",
    "MaxIterations",
    "NoProgress",
    "Nudge",
    "Repetition",
    "Stop",
    "StopPolicy",
    "WallClock",
    "timeout_stop",
]
