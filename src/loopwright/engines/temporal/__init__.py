"""Scale-out on Temporal: agent and task runs as workflows, effects as activities, Postgres for
content and live events (the `temporal` extra; docs/scale-out.md). Runs are started,
resumed, approved and cancelled through a `Runtime` whose engine is a `TemporalEngine`:
it registers each run in the store first, and checks a gate before it is decided."""

from loopwright.engines.temporal._activities import RunActivities
from loopwright.engines.temporal._allows import WorkerAllows
from loopwright.engines.temporal._client import connect, run_worker
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
    "run_worker",
    "start_dev_server",
    "worker_build_id",
]
