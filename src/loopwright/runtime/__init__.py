"""Runtime: owns every run's life (start, resume, cancel, approve, follow) and hands each
operation to the RunEngine that executes the run; the embedded engine and the store writer;
replay and export of stored runs, and the request a stored model call was sent
(`rebuild_request`)."""

from loopwright.runtime._conversation import Conversation
from loopwright.runtime._embedded import EmbeddedEngine
from loopwright.runtime._engine import Delivery, RunEngine
from loopwright.runtime._export import export_run, task_state
from loopwright.runtime._follow import FollowUp, continue_spec, stored_result
from loopwright.runtime._gates import GateDecided, waiting_gate
from loopwright.runtime._handles import RunHandle
from loopwright.runtime._lease import DEFAULT_LEASE_TTL_S, LeaseKeeper
from loopwright.runtime._replay import ReplayReport, replay_run
from loopwright.runtime._requests import rebuild_request
from loopwright.runtime._resume import agent_spec, check_resumable
from loopwright.runtime._runtime import Runtime, resume_run
from loopwright.runtime._spec import RUN_SPEC_VERSION, RunSpec, build_agent, recorded_spec
from loopwright.runtime._tail import TAIL_WAIT_S, tail_while
from loopwright.runtime._turns import linked_workspace_section, stored_lineage
from loopwright.runtime._writer import StoreWriter
from loopwright.store import FINISHED, find_run  # the store's: `runs show` needs no runtime

__all__ = [
    "DEFAULT_LEASE_TTL_S",
    "FINISHED",
    "RUN_SPEC_VERSION",
    "TAIL_WAIT_S",
    "Conversation",
    "Delivery",
    "EmbeddedEngine",
    "FollowUp",
    "GateDecided",
    "LeaseKeeper",
    "ReplayReport",
    "RunEngine",
    "RunHandle",
    "RunSpec",
    "Runtime",
    "StoreWriter",
    "agent_spec",
    "build_agent",
    "check_resumable",
    "continue_spec",
    "export_run",
    "find_run",
    "linked_workspace_section",
    "rebuild_request",
    "recorded_spec",
    "replay_run",
    "resume_run",
    "stored_lineage",
    "stored_result",
    "tail_while",
    "task_state",
    "waiting_gate",
]
