"""Runtime: owns every run's life (start, resume, cancel, approve, subscribe); the store
writer; replay and export of stored runs."""

from loopwright.runtime._export import export_run, task_state
from loopwright.runtime._follow import continue_spec, stored_result
from loopwright.runtime._handles import RunHandle
from loopwright.runtime._lease import DEFAULT_LEASE_TTL_S, LeaseKeeper
from loopwright.runtime._replay import ReplayReport, find_run, replay_run
from loopwright.runtime._resume import resume_run
from loopwright.runtime._runtime import Runtime
from loopwright.runtime._spec import RUN_SPEC_VERSION, RunSpec, build_agent, recorded_spec
from loopwright.runtime._writer import StoreWriter

__all__ = [
    "DEFAULT_LEASE_TTL_S",
    "RUN_SPEC_VERSION",
    "LeaseKeeper",
    "ReplayReport",
    "RunHandle",
    "RunSpec",
    "Runtime",
    "StoreWriter",
    "build_agent",
    "continue_spec",
    "export_run",
    "find_run",
    "recorded_spec",
    "replay_run",
    "resume_run",
    "stored_result",
    "task_state",
]
