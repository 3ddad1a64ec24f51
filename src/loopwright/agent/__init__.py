"""The ReAct agent loop."""

from loopwright.agent._executor import AgentExecutor
from loopwright.agent._follow_up import follow_up_request
from loopwright.agent._lineage import ForkPoint
from loopwright.agent._options import AgentOptions
from loopwright.agent._pending import WaitingGates
from loopwright.agent._result import CompletedStep, ExecutionResult, PendingApproval
from loopwright.agent._verify import CommandVerifier
from loopwright.effects import VerificationResult

__all__ = [
    "AgentExecutor",
    "AgentOptions",
    "CommandVerifier",
    "CompletedStep",
    "ExecutionResult",
    "ForkPoint",
    "PendingApproval",
    "VerificationResult",
    "WaitingGates",
    "follow_up_request",
]
