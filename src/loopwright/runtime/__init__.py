"""Runtime: owns every run's life (start, resume, cancel, approve, follow) and hands each
operation to the RunEngine that executes the run; the embedded engine and the store writer;
replay and export of stored runs, and the request a stored model call was sent
(`rebuild_request`)."""

from loopwright.runtime._conversation import Conversation
from loopwright.runtime._embedded import EmbeddedEngine
from loopwright.runtime._engine import RunEngine
from loopwright.runtime._export import task_state
from loopwright.runtime._gates import GateDecided
from loopwright.runtime._handles import RunHandle
from loopwright.runtime._replay import ReplayReport, replay_run
from loopwright.runtime._resume_run import resume_run
from loopwright.runtime._runtime import Runtime
from loopwright.runtime._spec import RunSpec

__all__ = [
    "Conversation",
    "EmbeddedEngine",
    "GateDecided",
    "ReplayReport",
    "RunEngine",
    "RunHandle",
    "RunSpec",
    "Runtime",
    "replay_run",
    "resume_run",
    "task_state",
]
