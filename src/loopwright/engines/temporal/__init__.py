"""Scale-out on Temporal: agent and task runs as workflows, effects as activities, Postgres for
content and live events (the `temporal` extra; docs/scale-out.md). Runs are started,
resumed, approved and cancelled through a `Runtime` whose engine is a `TemporalEngine`:
it registers each run in the store first, and checks a gate before it is decided."""

from loopwright.engines.temporal._allows import WorkerAllows
from loopwright.engines.temporal._client import connect, run_worker
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
    "run_worker",
    "start_dev_server",
]
