"""Runtime: owns every run's life in this process: start, resume, cancel, approve, subscribe.

It builds a run from its typed spec (model through its ModelRegistry, tools, MCP sessions,
verifier, secrets), takes the run's lease, gives the run an EventLog whose recorder is the
store's writer thread, and fans stored events out to subscribers. The CLI and the server
only call it.

A subscriber that joins late (or reconnects) gives the last `seq` it saw: it gets the
stored events after it, then live ones, with nothing missed and nothing twice.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Coroutine, Iterable, Mapping, Sequence
from typing import Any, Literal

from loopwright.agent import AgentExecutor, ExecutionResult, new_run_id
from loopwright.effects import (
    Effects,
    EventLog,
    EventSink,
    Gatekeeper,
    LiveEffects,
    replaying,
    send_event,
)
from loopwright.errors import RunNotFound, StoreError, UsageError
from loopwright.events import (
    Event,
    ModelResponseEvent,
    ModelTextDeltaEvent,
    RunFinishedEvent,
    RunStartedEvent,
)
from loopwright.models import Model, ModelRegistry, ResumesScript
from loopwright.run_context import RunContext
from loopwright.runtime._handles import RunHandle, fan_out, subscription, wake_subscribers
from loopwright.runtime._lease import DEFAULT_LEASE_TTL_S, LeaseKeeper
from loopwright.runtime._resume import agent_spec, check_resumable, mcp_tools
from loopwright.runtime._spec import RunSpec, build_agent
from loopwright.runtime._writer import StoreWriter
from loopwright.safety.operations import SnapshotHook
from loopwright.safety.scrub import Scrubber
from loopwright.store import RunRecord, RunStore
from loopwright.store._memory import InMemoryRunStore
from loopwright.tasks import (
    GateBroker,
    StateFileExporter,
    TaskPlan,
    TaskRunState,
    TaskSpec,
    join_decider,
    prepare_task,
    recorded_task_spec,
    rollback_task_run,
    run_task,
)


class Runtime:
    """The runs of one process, the store they are logged to, and who decides their gates."""

    def __init__(
        self,
        store: RunStore | None = None,
        *,
        models: ModelRegistry | None = None,
        gates: Gatekeeper | None = None,
        lease_ttl_s: float = DEFAULT_LEASE_TTL_S,
    ) -> None:
        self.store: RunStore = store if store is not None else InMemoryRunStore()
        self.models = models or ModelRegistry()
        self.gates: Gatekeeper = gates if gates is not None else GateBroker(self.store)
        """Decides every run's gates: in this process (`approve`), or from the store."""
        self.handles: dict[str, RunHandle] = {}
        self.leases = LeaseKeeper(self.store, ttl_s=lease_ttl_s)
        self.writer = StoreWriter(self.store, on_stored=self._fan_out)

    # --- agent runs ----------------------------------------------------------------------

    def start(
        self,
        spec: RunSpec,
        *,
        run_id: str | None = None,
        parent_run_id: str | None = None,
        secrets: Iterable[str] = (),
        on_event: EventSink | None = None,
        model: Model | None = None,
    ) -> RunHandle:
        """Start an agent run from its spec; its events are stored, then sent on."""
        model = model or self.models.resolve(spec.model, base_url=spec.base_url)
        run_id = run_id or new_run_id()
        body = self._agent_body(spec, model, run_id, parent_run_id, list(secrets), on_event, ())
        return self._launch(run_id, body)

    def start_agent(
        self,
        agent: AgentExecutor,
        request: str,
        *,
        tenant: str = "default",
        run_id: str | None = None,
        parent_run_id: str | None = None,
        on_event: EventSink | None = None,
    ) -> RunHandle:
        """Start a run of an agent built in code (it has no spec: it cannot be resumed
        from the store alone, only from code with `agent.run(recorded=...)`)."""
        run_id = run_id or new_run_id()

        async def body() -> ExecutionResult:
            context = self._context(agent, run_id, tenant, parent_run_id, on_event, ())
            setup = agent.setup(request, context)
            return await agent.run_with(self._effects(agent, context, on_event), setup)

        return self._launch(run_id, body())

    async def resume(
        self,
        run_id: str,
        *,
        secrets: Iterable[str] = (),
        on_event: EventSink | None = None,
        model: Model | None = None,
    ) -> RunHandle:
        """Continue an interrupted run from its log: done model and tool calls are reused.

        ResumeConflict if another live process holds the run."""
        record = self.find(run_id)
        events = await asyncio.to_thread(self.store.events, run_id)
        check_resumable(record)
        if record.kind == "task":
            task = self._task_plan(recorded_task_spec(events), model)
            return self._launch(
                run_id, run_task(task, self._task_effects(run_id, on_event, events))
            )
        spec = agent_spec(record, events)
        if model is None:
            model = self.models.resolve(spec.model, base_url=spec.base_url)
            if isinstance(model, ResumesScript):
                model.resume_after(sum(isinstance(e, ModelResponseEvent) for e in events))
        body = self._agent_body(
            spec, model, run_id, record.parent_run_id, list(secrets), on_event, events
        )
        return self._launch(run_id, body)

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
        async with mcp_tools(spec.mcp) as servers_tools:
            agent = build_agent(spec, model, servers_tools)
            if secrets:
                agent.scrubber = agent.scrubber.with_secrets(secrets)
            context = self._context(agent, run_id, spec.tenant, parent_run_id, on_event, recorded)
            setup = agent.setup(spec.request, context, spec=spec.to_dict())
            return await agent.run_with(self._effects(agent, context, on_event), setup)

    def _context(
        self,
        agent: AgentExecutor,
        run_id: str,
        tenant: str,
        parent_run_id: str | None,
        on_event: EventSink | None,
        recorded: Sequence[Event],
    ) -> RunContext:
        """A run's context: its gates decided here, its events stored by the writer and
        sent to the subscribers, its sub-agents' runs under leases of their own."""
        return agent.run_context(
            run_id,
            tenant=tenant,
            parent_run_id=parent_run_id,
            gates=self.gates,
            sink=self._live_sink(run_id, on_event),
            recorder=self.writer,
            recorded=recorded,
            store=self.store,
            leases=self.leases,
        )

    def _effects(
        self, agent: AgentExecutor, context: RunContext, on_event: EventSink | None
    ) -> Effects:
        run_id = context.run_id

        def listened() -> bool:  # stream a reply only while someone follows the run
            return on_event is not None or self._subscribed(run_id)

        return agent.effects(context, listened=listened)

    def _live_sink(self, run_id: str, on_event: EventSink | None) -> EventSink:
        """The run's sink: token deltas (live only, never stored) go straight to the
        subscribers; every event to `on_event`."""

        async def sink(event: Event) -> None:
            if isinstance(event, ModelTextDeltaEvent):
                self._fan_out((event,))
            if on_event is not None:
                await send_event(on_event, event)

        return sink

    def _subscribed(self, run_id: str) -> bool:
        handle = self.handles.get(run_id)
        return handle is not None and bool(handle.subscribers)

    def _launch(self, run_id: str, body: Coroutine[Any, Any, Any]) -> RunHandle:
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
        handle = RunHandle(run_id, task)
        self.handles[run_id] = handle
        task.add_done_callback(lambda _: wake_subscribers(handle))
        return handle

    # --- task runs -----------------------------------------------------------------------

    def start_task(
        self,
        spec: TaskSpec,
        *,
        run_id: str | None = None,
        on_event: EventSink | None = None,
        model: Model | None = None,
    ) -> RunHandle:
        """Start a task run from its spec; its gates are decided through `approve`."""
        plan = self._task_plan(spec, model)
        run_id = run_id or new_run_id()
        return self._launch(run_id, run_task(plan, self._task_effects(run_id, on_event, ())))

    def rollback(
        self,
        state: TaskRunState,
        *,
        snapshot_hooks: Mapping[str, SnapshotHook] | None = None,
        exporter: StateFileExporter | None = None,
        on_event: EventSink | None = None,
    ) -> RunHandle:
        """Undo a finished task run's changes, newest first, as a task run of its own (its
        parent the original); the handle's result is the rollback's status."""
        run_id = new_run_id()

        async def body() -> str:
            status = "failed"
            async for event in rollback_task_run(
                state, sink=on_event, snapshot_hooks=snapshot_hooks, exporter=exporter,
                run_id=run_id, recorder=self.writer,
            ):  # fmt: skip
                if isinstance(event, RunFinishedEvent):
                    status = event.status
            return status

        return self._launch(run_id, body())

    def _task_plan(self, spec: TaskSpec, model: Model | None) -> TaskPlan:
        if model is None and spec.model:
            model = self.models.resolve(spec.model, base_url=spec.base_url)
        return prepare_task(spec, model=model, agent_events=self._child_event)

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

    def find(self, run_id: str, *, tenant: str | None = None) -> RunRecord:
        """The stored run (RunNotFound if it is not there, or is another tenant's)."""
        record = self.store.get_run(run_id, tenant=tenant)
        if record is None:
            raise RunNotFound(run_id, str(getattr(self.store, "path", "")))
        return record

    async def cancel(self, run_id: str) -> bool:
        """Cancel a run executing in this process; it ends `cancelled` with its partial work."""
        handle = self.handles.get(run_id)
        if handle is None or handle.done:
            return False
        handle.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await handle.task
        return True

    def approve(
        self, run_id: str, request_id: str, approved: bool, decided_by: str, reason: str = ""
    ) -> Literal["process", "store"]:
        """Decide a gate: in this process if the run waits here, else through the store
        (the process executing the run polls for it). UsageError if nobody can take it.
        `reason` (optional) reaches the run: a denied tool call's observation quotes it."""
        if self.gates.resolve(request_id, approved, decided_by, reason):
            return "process"
        stored = join_decider(decided_by, reason)
        if not self.store.post_gate_decision(run_id, request_id, approved, stored):
            raise UsageError(f"gate {request_id!r} of run {run_id} already has a decision")
        return "store"

    async def subscribe(self, run_id: str, *, after: int = 0) -> AsyncGenerator[Event, None]:
        """Events of `run_id` with seq > after: stored ones, then live ones until it ends."""
        async for event in subscription(self.store, self.handles.get(run_id), run_id, after):
            yield event

    def _fan_out(self, batch: Sequence[Event]) -> None:
        """A batch is stored: now subscribers may see it (runs on the event loop)."""
        fan_out(self.handles, batch)

    async def publish(self, event: Event) -> None:
        """Store an event built outside an EventLog, with the run's lease (runs driven by
        hand; every run this Runtime starts, resumes or rolls back logs through its own)."""
        started = isinstance(event, RunStartedEvent) and event.run_id not in self.leases.held
        if started:
            self.leases.hold(event.run_id)
        self.writer.write(event)
        try:
            await self.writer.flush()
        except StoreError:
            if started:
                self.leases.release(event.run_id)
            raise
        if isinstance(event, RunFinishedEvent):
            self.leases.release(event.run_id)

    def close(self) -> None:
        """Store what is queued, release every lease (an unfinished run shows interrupted)."""
        self.writer.close()
        self.leases.close()
