"""The ReAct agent loop."""

from loopwright.agent._effects import RecordedEffects
from loopwright.agent._executor import AgentExecutor, new_run_id
from loopwright.agent._options import ITERATION_TIERS, AgentOptions, Tier
from loopwright.agent._result import CompletedStep, ExecutionResult, VerificationResult
from loopwright.agent._setup import Verifier

__all__ = [
    "ITERATION_TIERS",
    "AgentExecutor",
    "AgentOptions",
    "CompletedStep",
    "ExecutionResult",
    "RecordedEffects",
    "Tier",
    "VerificationResult",
    "Verifier",
    "new_run_id",
]
