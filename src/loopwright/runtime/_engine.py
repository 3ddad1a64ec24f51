"""RunEngine: what executes a run. The Runtime owns every run's life and hands each
operation to the engine the run's record names (`RunRecord.engine`), so nobody guesses.

Two engines implement it: the embedded one (runtime/_embedded.py: this process's event
loop) and Temporal (engines/temporal/_engine.py: workflows on workers). A run started on an
engine is recorded with its name and stays with it: resumed, cancelled and approved
through it. Following a run needs no engine (the store holds its events): an engine only
says whether the run is still live.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Literal, Protocol

from loopwright.effects._log import EventSink
from loopwright.models import Model
from loopwright.runtime._handles import RunHandle
from loopwright.runtime._spec import RunSpec
from loopwright.store import RunRecord

if TYPE_CHECKING:
    from loopwright.tasks import TaskSpec

Delivery = Literal["process", "store", "engine", "queued"]
"""Where a gate decision went: `process`, a gate waiting in this process took it; `store`,
left in the run store for the process that executes the run (it polls); `engine`, the run's
engine took it (a Temporal workflow's Update); `queued`, recorded, and taken by the run
when a worker of its engine polls again (none does now)."""


class RunEngine(Protocol):
    """Start, resume, cancel and approve the runs of one engine, and say whether one is
    live (a follower reads its events from the store: runtime/_tail.py)."""

    name: str
    """Recorded in each run's row (`RunRecord.engine`)."""
    handles: dict[str, RunHandle]
    """The runs this engine started or resumed from this process, until each ends (the
    engine forgets a finished one: a long-lived process keeps no finished runs)."""

    def start(
        self,
        spec: RunSpec,
        *,
        run_id: str,
        parent_run_id: str | None = None,
        secrets: Sequence[str] = (),
        on_event: EventSink | None = None,
        model: Model | None = None,
    ) -> RunHandle:
        """Start an agent run; its handle's result is its ExecutionResult."""
        ...

    def start_task(
        self,
        spec: TaskSpec,
        *,
        run_id: str,
        on_event: EventSink | None = None,
        model: Model | None = None,
    ) -> RunHandle:
        """Start a task run; its handle's result is its TaskRunState."""
        ...

    async def resume(
        self,
        record: RunRecord,
        *,
        secrets: Sequence[str] = (),
        on_event: EventSink | None = None,
        model: Model | None = None,
    ) -> RunHandle:
        """Go on with an interrupted run from its log; a UsageError says why not (the run
        still executes: in this process, or on the engine's workers)."""
        ...

    async def cancel(self, record: RunRecord) -> bool:
        """Cancel the run and wait (bounded) for its end to be stored; False if this
        engine executes no such run now."""
        ...

    async def approve(
        self, record: RunRecord, gate_id: str, approved: bool, decided_by: str, reason: str
    ) -> Delivery:
        """Deliver a decision on a gate the run's log shows waiting (and that does not wait
        in this process); a UsageError says why it cannot be taken."""
        ...

    def executes(self, record: RunRecord) -> bool:
        """Does this engine execute the run now (here, or on its workers)? Answered from
        what this process knows and the record alone: a run listing asks it of every row."""
        ...

    def liveness(self, run_id: str) -> Callable[[], Awaitable[bool]]:
        """Asked by a follower of the run before each read of the store: may the run still
        get events? (It executes here or elsewhere, or waits for a worker.) Its executor
        stores its last event before this says no."""
        ...

    async def aclose(self) -> None:
        """Let go of what the engine holds (connections)."""
        ...
