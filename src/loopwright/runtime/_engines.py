"""The engines of a Runtime by name, and which one executes a run."""

from __future__ import annotations

from loopwright.errors import UsageError
from loopwright.runtime._engine import RunEngine
from loopwright.store import RunRecord

REACH = {
    "temporal": "Temporal workers: its gates, cancel and resume go through "
    "Temporal (pass --temporal HOST:PORT; a server: serve --engine temporal --temporal "
    "HOST:PORT)",
}
"""How to reach the engine of a run this Runtime was not given, by the engine's name."""


class Engines(dict[str, RunEngine]):
    """A Runtime's engines by name: the embedded one, and the one new runs start on."""

    def of(self, record: RunRecord) -> RunEngine:
        """The engine that executes the run; a UsageError naming what to give when there
        is no such engine here."""
        engine = self.get(record.engine)
        if engine is None:
            where = REACH.get(record.engine, f"the {record.engine} engine: give it to the Runtime")
            raise UsageError(f"run {record.run_id} executes on {where}")
        return engine

    def running(self, run_id: str) -> RunEngine | None:
        """The engine of a run started or resumed here that has not ended (it may not be
        stored yet)."""
        for engine in self.values():
            handle = engine.handles.get(run_id)
            if handle is not None and not handle.done:
                return engine
        return None

    def live(self, record: RunRecord) -> bool:
        """Is the run executing now: here, or on the workers of its engine?"""
        if self.running(record.run_id) is not None:
            return True
        engine = self.get(record.engine)
        return engine is not None and engine.executes(record)
