"""EmbeddedEngine: runs execute in this process's event loop (the default RunEngine).

It builds a run from its typed spec (model through its ModelRegistry, tools, MCP sessions,
verifier, secrets), takes the run's lease, gives the run an EventLog whose recorder is the
store's writer thread. A gate waits in its
GateBroker: decided in this process, or from a decision another process left in the store.
Followers read the store; the writer wakes those in this process (`Wakeups`) as it stores.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from loopwright.agent import AgentExecutor, ExecutionResult, ForkPoint
from loopwright.effects import Effects, EventLog, Gatekeeper, LiveEffects, Recording
from loopwright.effects._log import EventSink, send_event
from loopwright.effects._replay import replaying
from loopwright.errors import StoreError, UsageError
from loopwright.events import Event, ModelTextDeltaEvent
from loopwright.models import Model, ModelRegistry
from loopwright.run_context import RunContext, ThreadPool
from loopwright.runtime._engine import Delivery
from loopwright.runtime._handles import RunHandle
from loopwright.runtime._lease import DEFAULT_LEASE_TTL_S, LeaseKeeper
from loopwright.runtime._resume import agent_spec, check_resumable, mcp_tools
from loopwright.runtime._spec import RunSpec, build_agent
from loopwright.runtime._tail import Wakeups
from loopwright.runtime._turns import stored_lineage
from loopwright.runtime._waiting import ended, gates_of, waits_for_resume
from loopwright.runtime._writer import StoreWriter
from loopwright.safety.scrub import Scrubber
from loopwright.store import RunRecord, RunStore
from loopwright.store._owners import owner_is_gone
from loopwright.tasks import GateBroker
from loopwright.tasks._gates import join_decider
from loopwright.tools import TenantToolThreads

if TYPE_CHECKING:
    from loopwright.tasks import TaskSpec


class EmbeddedEngine:
    """The runs executing in this process, the store's writer, the leases they hold."""

    name = "embedded"

    def __init__(
        self,
        store: RunStore,
        *,
        models: ModelRegistry | None = None,
        gates: Gatekeeper | None = None,
        lease_ttl_s: float = DEFAULT_LEASE_TTL_S,
        tool_threads: Callable[[str], ThreadPool] | None = None,
        mcp_trusted: Sequence[str] = (),
    ) -> None:
        self.store = store
        self.mcp_trusted = tuple(mcp_trusted)
        """MCP servers whose tool annotations the user trusts (MCPConnections `trusted`)."""
        self.models = models or ModelRegistry()
        self.tool_threads = tool_threads or TenantToolThreads()
        """Each run's pool for its sync tools, by tenant (so a tenant's stuck tools fill
        only its own)."""
        self.gates: Gatekeeper = gates if gates is not None else GateBroker(self.store)
        self.handles: dict[str, RunHandle] = {}
        self.leases = LeaseKeeper(self.store, ttl_s=lease_ttl_s)
        self.wakeups = Wakeups()
        """Wakes this process's followers of the runs the writer stores events of."""
        self.writer = StoreWriter(self.store, on_stored=self.wakeups.stored)

    # --- agent runs ----------------------------------------------------------------------

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
        model = model or self.models.resolve(spec.model, base_url=spec.base_url)
        body = self._agent_body(spec, model, run_id, parent_run_id, list(secrets), on_event, ())
        return self.launch(run_id, body)

    def start_agent(
        self,
        agent: AgentExecutor[Any, Any],
        request: str,
        *,
        run_id: str,
        tenant: str,
        parent_run_id: str | None,
        on_event: EventSink | None,
        deps: Any = None,
        recorded: Sequence[Event] = (),
        after: str | None = None,
        fork_of: ForkPoint | None = None,
    ) -> RunHandle:
        """A run of an agent built in code, new or resumed from its `recorded` events
        (runtime/_waiting.py's `resume_agent`), given its `deps`."""

        async def body() -> ExecutionResult:
            lineage = await stored_lineage(
                self.store, run_id, agent, tenant=tenant, after=after, fork_of=fork_of
            )
            context = self._context(
                agent, run_id, tenant, parent_run_id, on_event, recorded, deps=deps
            )
            setup = agent.setup(request, context, lineage=lineage)
            fx = self._effects(agent, context, on_event, lineage.served)
            result = await agent.run_with(fx, setup)
            await ended(self.store, self.writer, result)  # `waiting`: stored so
            return result

        return self.launch(run_id, body())

    async def resume(
        self,
        record: RunRecord,
        *,
        secrets: Sequence[str] = (),
        on_event: EventSink | None = None,
        model: Model | None = None,
    ) -> RunHandle:
        run_id = record.run_id
        check_resumable(record)
        if self.executes_here(run_id):
            raise UsageError(f"run {run_id} is already running (in this process)")
        self.leases.hold_as_read(run_id, record.last_seq)  # first: the log is then this one's
        try:
            return await self._resumed(record, secrets, on_event, model)
        except BaseException:
            self.leases.release(run_id)
            raise

    async def _resumed(
        self,
        record: RunRecord,
        secrets: Sequence[str],
        on_event: EventSink | None,
        model: Model | None,
    ) -> RunHandle:
        run_id = record.run_id
        events = await asyncio.to_thread(self.store.events, run_id)
        if record.kind == "task":
            from loopwright.tasks import recorded_task_spec  # the task runner (_launch_task)

            return self._launch_task(run_id, recorded_task_spec(events), model, on_event, events)
        spec = agent_spec(record, events)
        if model is None:  # a scripted one goes on after the replies the log served (setup)
            model = self.models.resolve(spec.model, base_url=spec.base_url)
        body = self._agent_body(
            spec, model, run_id, record.parent_run_id, list(secrets), on_event, events
        )
        return self.launch(run_id, body)

    async def _agent_body(
        self,
        spec: RunSpec,
        model: Model,
        run_id: str,
        parent_run_id: str | None,
        secrets: list[str],
        on_event: EventSink | None,
        recorded: Sequence[Event],
    ) -> ExecutionResult:
        async with mcp_tools(spec.mcp, self.mcp_trusted) as servers_tools:
            agent = build_agent(spec, model, servers_tools)
            if secrets:
                agent.scrubber = agent.scrubber.with_secrets(secrets)
            lineage = await stored_lineage(
                self.store, run_id, agent, tenant=spec.tenant, after=spec.after,
                fork_of=spec.fork_of, spec=spec,
            )  # fmt: skip
            context = self._context(agent, run_id, spec.tenant, parent_run_id, on_event, recorded)
            setup = agent.setup(spec.request, context, spec=spec.to_dict(), lineage=lineage)
            fx = self._effects(agent, context, on_event, lineage.served)
            return await agent.run_with(fx, setup)

    def _context(
        self,
        agent: AgentExecutor[Any, Any],
        run_id: str,
        tenant: str,
        parent_run_id: str | None,
        on_event: EventSink | None,
        recorded: Sequence[Event],
        *,
        deps: Any = None,
    ) -> RunContext:
        """A run's context: its gates decided here (or for an agent that ends `waiting`,
        from the store), its events stored by the writer (which wakes their followers), its
        sub-agents' runs under leases of their own, its deps."""
        return agent.run_context(
            run_id,
            tenant=tenant,
            parent_run_id=parent_run_id,
            gates=gates_of(agent, self.gates, self.store),
            sink=self._live_sink(on_event),
            recorder=self.writer,
            recorded=recorded,
            store=self.store,
            leases=self.leases,
            tool_threads=self.tool_threads(tenant),
            deps=deps,
        )

    def _effects(
        self,
        agent: AgentExecutor[Any, Any],
        context: RunContext,
        on_event: EventSink | None,
        served: Recording | None = None,
    ) -> Effects:
        run_id = context.run_id

        def listened() -> bool:  # stream a reply only while someone follows the run
            return on_event is not None or self.wakeups.watched(run_id)

        return agent.effects(context, listened=listened, served=served)

    def _live_sink(self, on_event: EventSink | None) -> EventSink:
        """The run's sink: token deltas (live only, never stored) go straight to the
        run's followers here; every event to `on_event`."""

        async def sink(event: Event) -> None:
            if isinstance(event, ModelTextDeltaEvent):
                self.wakeups.delta(event)
            if on_event is not None:
                await send_event(on_event, event)

        return sink

    def launch(self, run_id: str, body: Coroutine[Any, Any, Any]) -> RunHandle:
        """Take the run's lease, then run `body` as a task; stored and released at its end."""
        try:
            self.leases.hold(run_id)
        except BaseException:
            body.close()
            raise

        async def run() -> Any:
            try:
                result = await body
            except BaseException:
                with contextlib.suppress(StoreError):  # the run's own error says more
                    await self.writer.flush()
                raise
            else:
                await self.writer.flush()  # StoreError if the run could not be stored
                return result
            finally:
                self.leases.release(run_id)

        task = asyncio.get_running_loop().create_task(run(), name=run_id)
        task.add_done_callback(lambda _: self.wakeups.wake(run_id))  # its followers look again
        return RunHandle(run_id, task).held_in(self.handles)

    # --- task runs -----------------------------------------------------------------------

    def start_task(
        self,
        spec: TaskSpec,
        *,
        run_id: str,
        on_event: EventSink | None = None,
        model: Model | None = None,
    ) -> RunHandle:
        return self._launch_task(run_id, spec, model, on_event, ())

    def _launch_task(
        self,
        run_id: str,
        spec: TaskSpec,
        model: Model | None,
        on_event: EventSink | None,
        recorded: Sequence[Event],
    ) -> RunHandle:
        """A task run, new or resumed from its `recorded` events: its gates decided here, its
        sync tools in its tenant's pool. The task runner is imported here, by the first task
        run: a process that runs agents does not load it."""
        from loopwright.tasks import prepare_task, run_task
        from loopwright.tasks._run import task_run_context

        if model is None and spec.model:
            model = self.models.resolve(spec.model, base_url=spec.base_url)
        plan = prepare_task(spec, model=model, agent_events=self._child_event)
        fx = self._task_effects(run_id, on_event, recorded)
        context = task_run_context(
            plan, fx, gates=self.gates, store=self.store, leases=self.leases,
            tool_threads=self.tool_threads(plan.spec.tenant),
        )  # fmt: skip
        return self.launch(run_id, run_task(plan, fx, context))

    async def _child_event(self, event: Event) -> None:
        """An event of a task's agent step (its own run, linked by parent_run_id)."""
        self.writer.write(event)

    def _task_effects(
        self, run_id: str, on_event: EventSink | None, recorded: Sequence[Event]
    ) -> Effects:
        log = EventLog(
            run_id,
            scrubber=Scrubber.default(),
            sink=on_event,
            recorder=self.writer,
            recorded=recorded,
        )
        live = LiveEffects(log, gates=self.gates)
        return replaying(live, recorded)

    # --- any run -------------------------------------------------------------------------

    async def cancel(self, record: RunRecord) -> bool:
        """Cancel a run executing in this process; it ends `cancelled` with its partial work."""
        handle = self.handles.get(record.run_id)
        if handle is None or handle.done:
            return False
        handle.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await handle.task
        return True

    def held_elsewhere(self, run_id: str) -> bool:
        """True while another process executes the run (it holds an unexpired lease)."""
        lease = self.store.lease(run_id)
        return (
            lease is not None
            and lease.owner != self.leases.owner
            and lease.expires_at > time.time()
        )

    async def approve(
        self, record: RunRecord, gate_id: str, approved: bool, decided_by: str, reason: str
    ) -> Delivery:
        """The gate does not wait here: leave the decision in the store for the process
        that executes the run (its GateBroker polls for it), or for a run that ended
        `waiting`, for its resume."""
        executing = record.status == "running" and self.held_elsewhere(record.run_id)
        if not executing and not await asyncio.to_thread(waits_for_resume, self.store, record):
            raise UsageError(
                f"run {record.run_id} is {record.status}: no other process is running it to "
                f"take the decision (resume it with `loopwright runs resume {record.run_id}`, "
                "then decide)"
            )
        stored = join_decider(decided_by, reason)
        if not self.store.post_gate_decision(record.run_id, gate_id, approved, stored):
            raise UsageError(f"gate {gate_id} already has a decision, not yet taken by its run")
        return "store"

    def executes_here(self, run_id: str) -> bool:
        """True while this process executes the run (started or resumed here, or a
        sub-agent's run under this process's lease): its writer stores the run's events."""
        handle = self.handles.get(run_id)
        return (handle is not None and not handle.done) or run_id in self.leases.held

    def executes(self, record: RunRecord) -> bool:
        return self.executes_here(record.run_id)

    def liveness(self, run_id: str) -> Callable[[], Awaitable[bool]]:
        """The run is live while it executes here, or while a process holds its lease
        (one that stops stores its last event before it lets the lease go)."""

        async def live() -> bool:
            if self.executes_here(run_id):
                return True
            lease = await asyncio.to_thread(self.store.lease, run_id)
            return (
                lease is not None
                and lease.expires_at > time.time()
                and not owner_is_gone(lease.owner)
            )

        return live

    async def aclose(self) -> None:
        self.close()

    def close(self) -> None:
        """Store what is queued, release every lease (an unfinished run shows interrupted)."""
        self.writer.close()
        self.leases.close()
