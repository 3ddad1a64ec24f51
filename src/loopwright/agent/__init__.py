"""The ReAct agent loop."""

from loopwright.agent._conversation import Transcript, messages_digest
from loopwright.agent._executor import AgentExecutor
from loopwright.agent._follow_up import follow_up_request
from loopwright.agent._history import replayed_transcript
from loopwright.agent._lineage import (
    NO_LINEAGE,
    ForkPoint,
    Lineage,
    fork_recording,
    lineage_from_payload,
    lineage_payload,
    recording_of,
)
from loopwright.agent._loop import run_agent
from loopwright.agent._options import (
    ITERATION_TIERS,
    AgentOptions,
    Tier,
    recorded_workspace_section,
)
from loopwright.agent._output import OutputSpec
from loopwright.agent._pending import WaitingGates
from loopwright.agent._process import new_run_id
from loopwright.agent._result import CompletedStep, ExecutionResult, PendingApproval
from loopwright.agent._setup import RunSetup, Verifier
from loopwright.agent._state import LoopState
from loopwright.agent._subagent import child_run_id, run_child
from loopwright.agent._verify import CallableVerifier, CommandVerifier, as_verifier
from loopwright.effects import VerificationResult

__all__ = [
    "ITERATION_TIERS",
    "NO_LINEAGE",
    "AgentExecutor",
    "AgentOptions",
    "CallableVerifier",
    "CommandVerifier",
    "CompletedStep",
    "ExecutionResult",
    "ForkPoint",
    "Lineage",
    "LoopState",
    "OutputSpec",
    "PendingApproval",
    "RunSetup",
    "Tier",
    "Transcript",
    "VerificationResult",
    "Verifier",
    "WaitingGates",
    "as_verifier",
    "child_run_id",
    "follow_up_request",
    "fork_recording",
    "lineage_from_payload",
    "lineage_payload",
    "messages_digest",
    "new_run_id",
    "recorded_workspace_section",
    "recording_of",
    "replayed_transcript",
    "run_agent",
    "run_child",
]
