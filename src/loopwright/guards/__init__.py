"""Stop policies (guardrails): iterations, repetition, wall clock, budget, no progress."""

from loopwright.guards._budget import Budget, CostLedger
from loopwright.guards._policies import (
    MaxIterations,
    NoProgress,
    Repetition,
    UnknownTools,
    WallClock,
)
from loopwright.guards._policy import BasePolicy, GuardState, Nudge, Stop, StopPolicy

__all__ = [
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
    "UnknownTools",
    "WallClock",
]
