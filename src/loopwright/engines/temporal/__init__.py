"""Scale-out on Temporal: agent and task runs as workflows, effects as activities, Postgres for
content and live events (the `temporal` extra; docs/scale-out.md)."""

from loopwright.engines.temporal._activities import RunActivities
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
from loopwright.engines.temporal._devserver import DevServer, find_temporal_cli, start_dev_server
from loopwright.engines.temporal._effects import EngineSettings, TemporalEffects
from loopwright.engines.temporal._engine import TemporalEngine
from loopwright.engines.temporal._report import WorkerReport
from loopwright.engines.temporal._task_workflow import TASK_RUN, TaskRunWorkflow
from loopwright.engines.temporal._versions import worker_build_id
from loopwright.engines.temporal._workflow import AGENT_RUN, TASK_QUEUE, AgentRunWorkflow

__all__ = [
    "AGENT_RUN",
    "TASK_QUEUE",
    "TASK_RUN",
    "AgentRunWorkflow",
    "DevServer",
    "EngineSettings",
    "RunActivities",
    "TaskRunWorkflow",
    "TemporalEffects",
    "TemporalEngine",
    "WorkerAllows",
    "WorkerReport",
    "connect",
    "find_temporal_cli",
    "resume_agent_run",
    "resume_task_run",
    "run_worker",
    "send_decision",
    "start_agent_run",
    "start_dev_server",
    "start_task_run",
    "worker_build_id",
]
