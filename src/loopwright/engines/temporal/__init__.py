"""Scale-out on Temporal: agent and task runs as workflows, effects as activities, Postgres for
content and live events (the `temporal` extra; docs/scale-out.md)."""

from loopwright.engines.temporal._allows import WorkerAllows
from loopwright.engines.temporal._client import (
    connect,
    resume_agent_run,
    resume_task_run,
    run_worker,
    send_decision,
    start_agent_run,
    start_task_run,
)
from loopwright.engines.temporal._devserver import DevServer, start_dev_server
from loopwright.engines.temporal._effects import EngineSettings, TemporalEffects
from loopwright.engines.temporal._engine import TemporalEngine

__all__ = [
    "DevServer",
    "EngineSettings",
    "TemporalEffects",
    "TemporalEngine",
    "WorkerAllows",
    "connect",
    "resume_agent_run",
    "resume_task_run",
    "run_worker",
    "send_decision",
    "start_agent_run",
    "start_dev_server",
    "start_task_run",
]
