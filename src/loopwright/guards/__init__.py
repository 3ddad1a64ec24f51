"""Stop policies (guardrails): iterations, repetition, wall clock, budget, no progress."""

from loopwright.guards._budget import DEFAULT_PRICES, Budget, CostLedger
from loopwright.guards._defaults import (
    WALL_CLOCK_AGENTIC_S,
    WALL_CLOCK_DEFAULT,
    WALL_CLOCK_SIMPLE_S,
    DeclaredTool,
    ProgressSignal,
    default_wall_clock,
    file_tools,
    progress_signal,
)
from loopwright.guards._policies import (
    MaxIterations,
    NoProgress,
    Repetition,
    UnknownTools,
    WallClock,
    limit_stop,
    timeout_stop,
)
from loopwright.guards._policy import (
    BasePolicy,
    CallSignature,
    GuardState,
    Nudge,
    PolicyHook,
    Stop,
    StopPolicy,
)

__all__ = [
    "DEFAULT_PRICES",
    "WALL_CLOCK_AGENTIC_S",
    "WALL_CLOCK_DEFAULT",
    "WALL_CLOCK_SIMPLE_S",
    "BasePolicy",
    "Budget",
    "CallSignature",
    "CostLedger",
    "DeclaredTool",
    "GuardState",
    "MaxIterations",
    "NoProgress",
    "Nudge",
    "PolicyHook",
    "ProgressSignal",
    "Repetition",
    "Stop",
    "StopPolicy",
    "UnknownTools",
    "WallClock",
    "default_wall_clock",
    "file_tools",
    "limit_stop",
    "progress_signal",
    "timeout_stop",
]
