"""Runtime: owns every run's life: start, resume, cancel, approve, follow. The CLI, the
server and the Python API only call it.

Each operation goes to the RunEngine that executes the run, named in its stored record
(`RunRecord.engine`): the embedded engine (this process, runtime/_embedded.py) is always
there; another one (Temporal: `loopwright.engines.temporal.TemporalEngine`) is given as
`engine`, and new runs start on it. Following a run reads the store and needs no engine:
the events of a run recorded under an engine this Runtime was not given are read as its
executor stores them. What drives the run (resume, cancel, a gate decision that does not
wait in this process) needs its engine, and is refused with what to pass.

A follower that joins late (or reconnects) gives the last `seq` it saw: it gets the stored
events after it, then live ones, with nothing missed and nothing twice, whichever engine
and process executes the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from loopwright.agent import AgentExecutor, ExecutionResult, ForkPoint
from loopwright.agent._process import new_run_id
from loopwright.effects import Gatekeeper
from loopwright.effects._log import EventSink
from loopwright.errors import UsageError
from loopwright.events import Event
from loopwright.models import Model, ModelRegistry
from loopwright.run_context import DepsT, ThreadPool
from loopwright.runtime._conversation import Conversation
from loopwright.runtime._decide import decide_gate
from loopwright.runtime._embedded import EmbeddedEngine
from loopwright.runtime._engine import RunEngine
from loopwright.runtime._engines import Engines
from loopwright.runtime._gates import GateDecided
from loopwright.runtime._handles import RunHandle
from loopwright.runtime._lease import DEFAULT_LEASE_TTL_S, LeaseKeeper
from loopwright.runtime._publish import publish_event
from loopwright.runtime._resume import check_resumable
from loopwright.runtime._rollback import launch_rollback
from loopwright.runtime._spec import RunSpec
from loopwright.runtime._stop import cancel_run, interrupt_here
from loopwright.runtime._tail import TAIL_WAIT_S, stored_liveness, tail_while
from loopwright.runtime._turns import check_links, fork_point, fork_spec, run_id_of
from loopwright.runtime._waiting import resume_agent
from loopwright.runtime._writer import StoreWriter
from loopwright.safety.operations import SnapshotHook
from loopwright.store import RunRecord, RunStore, conversation_turns
from loopwright.store._memory import memory_store

if TYPE_CHECKING:
    from loopwright.tasks import TaskRunState, TaskSpec
    from loopwright.tasks._state import StateFileExporter


class Runtime:
    """The runs of one process, the store they are logged to, and the engines that run them."""

    def __init__(
        self,
        store: RunStore | None = None,
        *,
        models: ModelRegistry | None = None,
        gates: Gatekeeper | None = None,
        lease_ttl_s: float = DEFAULT_LEASE_TTL_S,
        engine: RunEngine | None = None,
        tool_threads: Callable[[str], ThreadPool] | None = None,
        mcp_trusted: Iterable[str] = (),
    ) -> None:
        """`tool_threads` chooses each run's pool for its sync tools by tenant (by default
        `TenantToolThreads()`: a pool of its own per tenant). `mcp_trusted` names the MCP
        servers (as a spec's `mcp` gives them) whose tool annotations decide approvals and
        resume; every other server's tools are `unknown`."""
        self.store: RunStore = store if store is not None else memory_store()
        self.embedded = EmbeddedEngine(
            self.store, models=models, gates=gates, lease_ttl_s=lease_ttl_s,
            tool_threads=tool_threads, mcp_trusted=tuple(mcp_trusted),
        )  # fmt: skip
        self.engine: RunEngine = engine if engine is not None else self.embedded
        """Where new runs start (and the engine of the runs recorded under its name)."""
        self.engines = Engines({self.embedded.name: self.embedded})
        self.engines[self.engine.name] = self.engine

    # the embedded engine's parts (a server and tests read them)
    @property
    def models(self) -> ModelRegistry:
        return self.embedded.models

    @property
    def gates(self) -> Gatekeeper:
        """Decides the gates of the runs executing here: `approve`, or from the store."""
        return self.embedded.gates

    @property
    def handles(self) -> dict[str, RunHandle]:
        return self.embedded.handles

    @property
    def leases(self) -> LeaseKeeper:
        return self.embedded.leases

    @property
    def writer(self) -> StoreWriter:
        return self.embedded.writer

    # --- starting ------------------------------------------------------------------------

    def start(
        self,
        spec: RunSpec,
        *,
        run_id: str | None = None,
        parent_run_id: str | None = None,
        secrets: Iterable[str] = (),
        on_event: EventSink | None = None,
        model: Model | None = None,
        after: str | ExecutionResult | None = None,
    ) -> RunHandle:
        """Start an agent run from its spec on this Runtime's engine; its events are
        stored, then sent on; the handle's result is its ExecutionResult. `after` (a run
        id or a result, or the spec's `after`): a follow-up in that run's conversation; the
        spec's `fork_of`: a fork (`fork`). Refused before anything starts (FollowUpError,
        ForkError, RunNotFound for another tenant's run) when that run cannot be."""
        if after is not None:
            spec = dataclasses.replace(spec, after=run_id_of(after))
        check_links(self.store, tenant=spec.tenant, after=spec.after, fork_of=spec.fork_of)
        return self.engine.start(
            spec, run_id=run_id or new_run_id(), parent_run_id=parent_run_id,
            secrets=list(secrets), on_event=on_event, model=model,
        )  # fmt: skip

    def start_agent(
        self,
        agent: AgentExecutor[DepsT, Any],
        request: str,
        *,
        tenant: str = "default",
        run_id: str | None = None,
        parent_run_id: str | None = None,
        on_event: EventSink | None = None,
        deps: DepsT | None = None,
        after: str | ExecutionResult[Any] | None = None,
        fork_of: tuple[str | ExecutionResult[Any], int] | None = None,
    ) -> RunHandle:
        """Start a run of an agent built in code, in this process, given its `deps` (a
        TypeError, before anything runs, when they are not of its deps_type). It has no
        spec: it goes on from the store with `resume_agent`, given the agent again.

        `after` (a run id or a result): a follow-up in that stored run's conversation;
        `fork_of=(run, step)`: a fork of that stored run (see `fork`). Refused as `start`
        refuses them."""
        agent.check_deps(deps)
        following = run_id_of(after) if after is not None else None
        fork = fork_point(fork_of) if fork_of is not None else None
        check_links(self.store, tenant=tenant, after=following, fork_of=fork)
        return self.embedded.start_agent(
            agent, request, run_id=run_id or new_run_id(), tenant=tenant,
            parent_run_id=parent_run_id, on_event=on_event, deps=deps, after=following,
            fork_of=fork,
        )  # fmt: skip

    async def resume_agent(
        self,
        agent: AgentExecutor[DepsT, Any],
        run_id: str,
        *,
        deps: DepsT | None = None,
        on_event: EventSink | None = None,
        tenant: str | None = None,
    ) -> RunHandle:
        """Go on with a stored run of an agent built in code (`start_agent`), in this process
        or another: one that ended `waiting` (decide its gate with `approve` first), or one
        whose process stopped. Its log replays (no model or tool call is made again), then
        it runs live; its `deps` are given again (they are never recorded). A UsageError
        for a run that already ended or runs here, ResumeConflict for one another process
        executes."""
        agent.check_deps(deps)
        record = self.find(run_id, tenant=tenant)
        if record.engine != self.embedded.name:
            raise UsageError(f"run {run_id} executes on {record.engine}: use Runtime.resume")
        if self.embedded.executes_here(record.run_id):  # resumed already (a second click)
            raise UsageError(f"run {record.run_id} is already running (in this process)")
        return await resume_agent(self.embedded, agent, record, deps=deps, on_event=on_event)

    def fork(
        self,
        run_id: str,
        step: int,
        *,
        request: str | None = None,
        model: str | None = None,
        base_url: str | None = None,
        tenant: str | None = None,
        secrets: Iterable[str] = (),
        on_event: EventSink | None = None,
    ) -> RunHandle:
        """A new run whose first `step` steps (iterations, as `runs show` numbers them) are
        the stored run's, served from its log (nothing made again), then live, with another
        `request` or `model` (its server: `base_url`) when given. For a run started from a
        RunSpec (from code: `start_agent(..., fork_of=(run_id, step))`). ForkError past its
        last step or while it runs."""
        record = self.find(run_id, tenant=tenant)
        spec = fork_spec(self.store, record, ForkPoint(run_id, step), request, model, base_url)
        return self.start(spec, secrets=secrets, on_event=on_event)

    def conversation(
        self,
        agent: AgentExecutor | RunSpec,
        *,
        after: str | ExecutionResult | None = None,
        tenant: str | None = None,
    ) -> Conversation:
        """A conversation with `agent` whose turns this Runtime runs and stores: a new one,
        or the one `after` (a run id or a result) is the latest turn of."""
        return Conversation(self, agent, after=after, tenant=tenant)

    def turns(self, run_id: str, *, tenant: str | None = None) -> list[RunRecord]:
        """The turns of the conversation `run_id` is in, oldest first (one run when it is
        no follow-up and has none): `loopwright.store.conversation_turns`."""
        return conversation_turns(self.store, run_id, tenant=tenant)

    def start_task(
        self,
        spec: TaskSpec,
        *,
        run_id: str | None = None,
        on_event: EventSink | None = None,
        model: Model | None = None,
    ) -> RunHandle:
        """Start a task run from its spec on this Runtime's engine; its gates are decided
        through `approve`; the handle's result is its TaskRunState."""
        return self.engine.start_task(
            spec, run_id=run_id or new_run_id(), on_event=on_event, model=model
        )

    # --- any run, on its engine -----------------------------------------------------------

    def find(self, run_id: str, *, tenant: str | None = None) -> RunRecord:
        """The stored run (RunNotFound if it is not there, or is another tenant's)."""
        return self.store.find_run(run_id, tenant=tenant)

    def engine_of(self, record: RunRecord) -> RunEngine:
        """The engine that executes the run; a UsageError naming what to give when this
        Runtime has no such engine."""
        return self.engines.of(record)

    async def resume(
        self,
        run_id: str,
        *,
        secrets: Iterable[str] = (),
        on_event: EventSink | None = None,
        model: Model | None = None,
        tenant: str | None = None,
    ) -> RunHandle:
        """Continue an interrupted run from its log, on its engine: done model and tool
        calls are reused. A UsageError if it already ended, or still runs (here, or on its
        engine's workers: the engine says); ResumeConflict if another live process holds
        the run."""
        record = await asyncio.to_thread(self.find, run_id, tenant=tenant)
        check_resumable(record)
        engine = self.engine_of(record)
        return await engine.resume(record, secrets=list(secrets), on_event=on_event, model=model)

    async def cancel(self, run_id: str, *, tenant: str | None = None) -> bool:
        """Cancel a run; it ends `cancelled` with its partial work: one executing here or
        on its engine, or one that executes nowhere now (interrupted, or waiting for a
        decision: it can no longer be resumed). False when its engine executes no such run
        now; a UsageError for a run of the embedded engine that already ended or that
        another process executes."""
        return await cancel_run(self.embedded, self.engines, run_id, tenant)

    async def interrupt(self, run_id: str) -> bool:
        """Stop a run executing in this process without ending it (Ctrl-C at the CLI): it
        is left `interrupted`, to be resumed (`resume`) or cancelled (`cancel`). False
        when no run of this process executes it (a run on another engine goes on)."""
        return await interrupt_here(self.embedded, run_id)

    async def approve(
        self,
        run_id: str,
        gate_id: str | None,
        approved: bool,
        decided_by: str,
        reason: str = "",
        *,
        tenant: str | None = None,
    ) -> GateDecided:
        """Decide a gate the run waits at (`gate_id` None: the one it waits at), whoever
        executes the run: here, another process (through the store), or the run's engine.
        `reason` (optional) reaches the run: a denied tool call's observation quotes it.
        The decision is recorded with `decided_by`. RunNotFound for a run that is not
        stored or is another tenant's, GateNotFound for a gate the run never asked, a
        UsageError for one it does not wait at now or when nobody can take the decision."""
        record = await asyncio.to_thread(self.find, run_id, tenant=tenant)
        return await decide_gate(
            self.embedded, self.engine_of, record, gate_id, approved, decided_by, reason
        )

    def live(self, record: RunRecord) -> bool:
        """Is the run executing now: here, or on the workers of its engine (a listing's
        `live`; a run another process executes under the embedded engine is not)?"""
        return self.engines.live(record)

    async def follow(
        self,
        run_id: str,
        *,
        after: int = 0,
        tenant: str | None = None,
        poll_s: float = TAIL_WAIT_S,
    ) -> AsyncGenerator[Event, None]:
        """The run's events with seq > after, each once, in order, until it ends: stored
        ones, then new ones as whoever executes it stores them, with the events of its
        sub-agents' runs nested where they happen (and, for a run executing here, its token
        deltas). Every live view (the CLI, `runs follow`, SSE, the WebSocket) is this. It
        reads the store, whichever engine and process executes the run: following drives
        nothing. RunNotFound if the run is not stored (nor starting here), or is another
        tenant's."""
        following = self.follow_lines(run_id, after=after, tenant=tenant, poll_s=poll_s)
        async with contextlib.aclosing(following) as events:
            async for event, _ in events:
                yield event

    def follow_lines(
        self,
        run_id: str,
        *,
        after: int = 0,
        tenant: str | None = None,
        poll_s: float = TAIL_WAIT_S,
    ) -> AsyncGenerator[tuple[Event, str | None], None]:
        """`follow`'s events, each with its JSON line where one is at hand (else None):
        the line this process stored for it, encoded once (what `--json` prints). An event
        read back from the store, or a token delta, comes without one (`encode_event`).
        The follower itself, no stage between (the run is looked up as it is first read)."""
        return tail_while(
            self.store, run_id, after=after, live=self._liveness(run_id, tenant), poll_s=poll_s,
            watch=self.embedded.wakeups.watch(self.store), here=self.embedded.executes_here,
        )  # fmt: skip

    def _liveness(self, run_id: str, tenant: str | None) -> Callable[[], Awaitable[bool]]:
        """Is the run live (asked before each read)? Its engine says (found as first asked:
        RunNotFound if the run is neither stored nor starting here, or is another tenant's);
        without its engine here, its stored record."""
        found: list[Callable[[], Awaitable[bool]]] = []

        async def live() -> bool:
            if not found:
                engine = self._running(run_id)
                if engine is None or tenant is not None:
                    record = await asyncio.to_thread(self.store.get_run, run_id, tenant=tenant)
                    if record is None and (
                        engine is None or self.store.get_run(run_id) is not None
                    ):
                        self.store.find_run(run_id, tenant=tenant)  # RunNotFound, the store
                    if engine is None and record is not None:
                        engine = self.engines.get(record.engine)
                stored = functools.partial(stored_liveness, self.store, run_id)
                found.append(stored if engine is None else engine.liveness(run_id))
            return await found[0]()

        return live

    def _running(self, run_id: str) -> RunEngine | None:
        """The engine of a run this Runtime started or resumed and that has not ended (it
        may not be stored yet)."""
        return self.engines.running(run_id)

    def rollback(
        self,
        state: TaskRunState,
        *,
        snapshot_hooks: Mapping[str, SnapshotHook] | None = None,
        exporter: StateFileExporter | None = None,
        on_event: EventSink | None = None,
    ) -> RunHandle:
        """Undo a finished task run's changes, newest first, as a task run of its own (its
        parent the original), in this process; the handle's result is the rollback's status.
        Once every change is undone, the original run is stored `rolled_back`."""
        return launch_rollback(
            self.embedded, state, snapshot_hooks=snapshot_hooks, exporter=exporter,
            on_event=on_event,
        )  # fmt: skip

    async def publish(self, event: Event) -> None:
        """Store an event built outside an EventLog, with the run's lease (runs driven by
        hand; every run this Runtime starts, resumes or rolls back logs through its own)."""
        await publish_event(self.embedded, event)

    def close(self) -> None:
        """Store what is queued, release every lease (an unfinished run shows interrupted)."""
        self.embedded.close()

    async def aclose(self) -> None:
        """`close`, and let go of every engine's connections."""
        for engine in self.engines.values():
            await engine.aclose()
