"""The ReAct agent loop."""

from loopwright.agent._effects import RecordedEffects
from loopwright.agent._executor import AgentExecutor, new_run_id
from loopwright.agent._follow_up import follow_up_request
from loopwright.agent._options import ITERATION_TIERS, AgentOptions, Tier
from loopwright.agent._result import CompletedStep, ExecutionResult, VerificationResult
from loopwright.agent._setup import Verifier
from loopwright.agent._verify import CallableVerifier, CommandVerifier, as_verifier

__all__ = [
    "ITERATION_TIERS",
    "AgentExecutor",
    "AgentOptions",
    "CallableVerifier",
    "CommandVerifier",
    "CompletedStep",
    "ExecutionResult",
    "RecordedEffects",
    "Tier",
    "VerificationResult",
    "Verifier",
    "as_verifier",
    "follow_up_request",
    "new_run_id",
]
