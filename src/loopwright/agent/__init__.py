"""The ReAct agent loop."""

from loopwright.agent._conversation import messages_digest
from loopwright.agent._executor import AgentExecutor
from loopwright.agent._follow_up import follow_up_request
from loopwright.agent._loop import run_agent
from loopwright.agent._options import ITERATION_TIERS, AgentOptions, Tier
from loopwright.agent._output import OutputSpec
from loopwright.agent._process import new_run_id
from loopwright.agent._result import CompletedStep, ExecutionResult
from loopwright.agent._setup import RunSetup, Verifier
from loopwright.agent._state import LoopState
from loopwright.agent._subagent import child_run_id, run_child
from loopwright.agent._verify import CallableVerifier, CommandVerifier, as_verifier
from loopwright.effects import VerificationResult

__all__ = [
    "ITERATION_TIERS",
    "AgentExecutor",
    "AgentOptions",
    "CallableVerifier",
    "CommandVerifier",
    "CompletedStep",
    "ExecutionResult",
    "LoopState",
    "OutputSpec",
    "RunSetup",
    "Tier",
    "VerificationResult",
    "Verifier",
    "as_verifier",
    "child_run_id",
    "follow_up_request",
    "messages_digest",
    "new_run_id",
    "run_agent",
    "run_child",
]
