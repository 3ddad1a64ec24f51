"""Start, resume and cancel runs; fan their events out to the store and subscribers."""

from loopwright.runtime._export import export_run, task_state
from loopwright.runtime._follow import continue_spec, stored_result
from loopwright.runtime._lease import DEFAULT_LEASE_TTL_S, LeaseKeeper
from loopwright.runtime._resume import (
    ReplayReport,
    find_run,
    recorded_spec,
    replay_run,
    resume_agent_run,
)
from loopwright.runtime._runtime import EventSink, RunBody, RunHandle, Runtime
from loopwright.runtime._spec import RunSpec, build_agent

__all__ = [
    "DEFAULT_LEASE_TTL_S",
    "EventSink",
    "LeaseKeeper",
    "ReplayReport",
    "RunBody",
    "RunHandle",
    "RunSpec",
    "Runtime",
    "build_agent",
    "continue_spec",
    "export_run",
    "find_run",
    "recorded_spec",
    "replay_run",
    "resume_agent_run",
    "stored_result",
    "task_state",
]
