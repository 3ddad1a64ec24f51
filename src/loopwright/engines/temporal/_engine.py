"""TemporalEngine: the RunEngine whose runs are Temporal workflows on workers.

    runtime = Runtime(store, engine=TemporalEngine("temporal:7233", store))
    handle = runtime.start(spec)          # a workflow; a worker picks it up

The Runtime calls it for the runs recorded under `temporal` (`RunRecord.engine`): this
process starts, resumes, cancels and decides them through the Temporal frontend and reads
their events from the shared store, where the workers append them. A run is registered in
the store (listed `queued`) before its workflow starts; when no worker has taken it within
`untaken_after_s`, `notice` says whether any worker polls its task queue. A decision on a
gate while no worker polls is stored (the run store and the workflow's history, as a
Signal) and taken by the run when a worker comes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.exceptions import FailureError
from temporalio.service import RPCError

from loopwright.effects._log import EventSink, send_event
from loopwright.engines.temporal._approvals import DECIDE_LATER, GateDecision, decide
from loopwright.engines.temporal._client import connect, start_agent_run, start_task_run
from loopwright.engines.temporal._effects import EngineSettings
from loopwright.engines.temporal._pollers import (
    last_poll_s_ago,
    stored_decision_notice,
    unpolled_cancel_notice,
    untaken_notice,
    workflow_queue,
)
from loopwright.engines.temporal._resume import resume_stored_run
from loopwright.engines.temporal._task_activities import check_task_spec
from loopwright.engines.temporal._workflow import TASK_QUEUE
from loopwright.errors import ConfigurationError, RunError, UsageError
from loopwright.models import Model
from loopwright.runtime import RunHandle, RunSpec, task_state
from loopwright.runtime._engine import Delivery
from loopwright.runtime._follow import stored_result
from loopwright.runtime._tail import tail_while
from loopwright.safety.scrub import Scrubber
from loopwright.store import RunRecord, RunStore
from loopwright.tasks import TaskSpec, prepare_task
from loopwright.tasks._gates import join_decider

UNTAKEN_AFTER_S = 5.0
"""A run no worker has taken (no event stored) this long after its start gets a notice."""
APPROVE_WAIT_S = 30.0
"""How long a decision waits for a polling worker to take it (a worker that did not run the
workflow last first replays it) before it is stored for the next worker instead."""
CANCEL_WAIT_S = 30.0

log = logging.getLogger("loopwright.engines.temporal")


class TemporalEngine:
    """Runs as workflows on the workers of one task queue; one client, made on first use.
    New runs go to `task_queue` (by default `loopwright`); a resumed run goes back to the
    queue its last workflow ran on (Temporal's record of it), unless `task_queue` is given."""

    name = "temporal"

    def __init__(
        self,
        address: str,
        store: RunStore,
        *,
        task_queue: str | None = None,
        settings: EngineSettings | None = None,
        notice: Callable[[str], None] | None = None,
        untaken_after_s: float = UNTAKEN_AFTER_S,
        approve_wait_s: float = APPROVE_WAIT_S,
    ) -> None:
        self.address = address
        self.store = store
        self.task_queue = task_queue or TASK_QUEUE
        self.queue_named = task_queue is not None
        """Whether the user named the queue: then a resumed run goes there too."""
        self.settings = settings
        self.notice = notice or log.warning
        """Tells the user what waits on workers (a CLI prints it; by default, a log warning)."""
        self.untaken_after_s = untaken_after_s
        self.approve_wait_s = approve_wait_s
        """How long a decision waits for a polling worker before it is stored instead."""
        self.handles: dict[str, RunHandle] = {}
        self._client: Client | None = None
        self._connecting: asyncio.Lock | None = None

    async def client(self) -> Client:
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            if self._client is None:
                self._client = await connect(self.address)
            return self._client

    # --- starting and resuming -------------------------------------------------------------

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
        _refuse_local(secrets, model)
        now = time.time()
        record = RunRecord(
            run_id=run_id, tenant=spec.tenant, kind="agent", status="queued",
            request=_scrubbed(spec.request), model=spec.model, created_at=now, updated_at=now,
            last_seq=0, parent_run_id=parent_run_id, tools=tuple(spec.tools), engine=self.name,
            after_run_id=spec.after,
        )  # fmt: skip

        async def begin(client: Client) -> WorkflowHandle[Any, Any]:
            return await start_agent_run(
                client, spec, run_id=run_id, parent_run_id=parent_run_id,
                settings=self.settings, task_queue=self.task_queue,
            )  # fmt: skip

        return self._launch(record, self._started(record, begin, on_event))

    def start_task(
        self,
        spec: TaskSpec,
        *,
        run_id: str,
        on_event: EventSink | None = None,
        model: Model | None = None,
    ) -> RunHandle:
        _refuse_local((), model)
        check_task_spec(spec)  # as `task run` does: the file, its tools, its inputs, at once
        prepare_task(spec, model=None)
        now = time.time()
        record = RunRecord(
            run_id=run_id, tenant=spec.tenant, kind="task", status="queued",
            request=_scrubbed(spec.request), model=spec.model or "", created_at=now,
            updated_at=now,
            last_seq=0, engine=self.name,
        )  # fmt: skip

        async def begin(client: Client) -> WorkflowHandle[Any, Any]:
            return await start_task_run(
                client, spec, run_id=run_id, settings=self.settings, task_queue=self.task_queue
            )

        return self._launch(record, self._started(record, begin, on_event))

    async def resume(
        self,
        record: RunRecord,
        *,
        secrets: Sequence[str] = (),
        on_event: EventSink | None = None,
        model: Model | None = None,
    ) -> RunHandle:
        """A new workflow (the same id) replays the run's log and goes on live."""
        _refuse_local(secrets, model)
        client = await self.client()
        workflow, after = await resume_stored_run(
            client, self.store, record.run_id, settings=self.settings,
            task_queue=self.task_queue if self.queue_named else None,
        )  # fmt: skip
        return self._launch(record, self._watched(record, workflow, on_event, after))

    def _launch(self, record: RunRecord, body: Awaitable[Any]) -> RunHandle:
        task = asyncio.get_running_loop().create_task(_as_coroutine(body), name=record.run_id)
        return RunHandle(record.run_id, task).held_in(self.handles)

    async def _started(
        self,
        record: RunRecord,
        begin: Callable[[Client], Awaitable[WorkflowHandle[Any, Any]]],
        on_event: EventSink | None,
    ) -> Any:
        """Register the run (listed `queued`), start its workflow, watch it to its end."""
        await asyncio.to_thread(self.store.register_run, record)
        try:
            workflow = await begin(await self.client())
        except BaseException:
            await asyncio.to_thread(self.store.set_status, record.run_id, "failed")
            raise
        return await self._watched(record, workflow, on_event, 0)

    async def _watched(
        self,
        record: RunRecord,
        workflow: WorkflowHandle[Any, Any],
        on_event: EventSink | None,
        after: int,
    ) -> Any:
        """Wait for the workflow's end (a notice if no worker takes it); its run's result,
        rebuilt from the store. Cancelled: the run is cancelled on its worker too."""
        watch = asyncio.ensure_future(self._untaken_notice(record.run_id, after))
        relay = None
        if on_event is not None:
            relay = asyncio.ensure_future(self._relay(record.run_id, on_event, after))
        try:
            await workflow.result()
        except WorkflowFailureError as exc:
            current = await asyncio.to_thread(self.store.get_run, record.run_id)
            if current is not None and current.status == "queued":  # it never started
                await asyncio.to_thread(self.store.set_status, record.run_id, "failed")
            raise RunError(f"run {record.run_id} failed on Temporal: {_why(exc)}") from None
        except asyncio.CancelledError:
            await self.cancel(record)
            raise
        finally:
            watch.cancel()
            if relay is not None:
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await asyncio.wait_for(relay, CANCEL_WAIT_S)
        if record.kind == "task":
            return await asyncio.to_thread(task_state, self.store, record.run_id)
        return stored_result(await asyncio.to_thread(self.store.events, record.run_id))

    async def _relay(self, run_id: str, on_event: EventSink, after: int) -> None:
        """The run's events (its sub-agents' too) to `on_event`, as the workers store them."""
        live = self.liveness(run_id)
        async for event, _ in tail_while(self.store, run_id, after=after, live=live):
            await send_event(on_event, event)

    async def _untaken_notice(self, run_id: str, after: int) -> None:
        """Say so when no worker has stored anything of the run `untaken_after_s` after it
        was started or resumed."""
        if await self.store.wait_for_events(run_id, after=after, timeout=self.untaken_after_s):
            return
        queue = await self.queue_of(run_id)
        polled = await self.polled_s_ago(queue)
        self.notice(untaken_notice(run_id, self.address, queue, polled, self.untaken_after_s))

    async def queue_of(self, run_id: str) -> str:
        """The task queue the run's workflow is on (this engine's when it has none)."""
        return await workflow_queue(await self.client(), run_id, self.task_queue)

    async def polled_s_ago(self, task_queue: str) -> float | None:
        """How long ago a worker last polled the task queue's workflow tasks (None: no
        worker did lately)."""
        return await last_poll_s_ago(await self.client(), task_queue)

    # --- cancel, approve, liveness ------------------------------------------------------------

    async def cancel(self, record: RunRecord) -> bool:
        """Ask the run's workflow to cancel and wait (bounded) until its end is stored. A run
        still queued (no worker took it: nothing ran) is terminated and stored cancelled.
        While no worker polls the run's queue, the cancel is recorded in its workflow and
        nothing is waited for: the notice says so at once (False: the run has not ended)."""
        client = await self.client()
        workflow = client.get_workflow_handle(record.run_id)
        current = await asyncio.to_thread(self.store.get_run, record.run_id)
        try:
            if current is not None and current.status == "queued":
                await workflow.terminate("cancelled before a worker took it")
                await asyncio.to_thread(self.store.set_status, record.run_id, "cancelled")
                return True
            await workflow.cancel()
            queue = await self.queue_of(record.run_id)
            if await self.polled_s_ago(queue) is None:
                self.notice(unpolled_cancel_notice(record.run_id, self.address, queue))
                return False
        except RPCError:
            return False
        deadline = time.monotonic() + CANCEL_WAIT_S
        while time.monotonic() < deadline:
            current = await asyncio.to_thread(self.store.get_run, record.run_id)
            if current is None or current.status != "running":
                break
            await self.store.wait_for_events(record.run_id, after=current.last_seq, timeout=1.0)
        return True

    async def approve(
        self, record: RunRecord, gate_id: str, approved: bool, decided_by: str, reason: str
    ) -> Delivery:
        """The workflow's Update `approve` when a worker polls; else the decision is stored
        (the run store, and the workflow's history as a Signal) for the next worker."""
        client = await self.client()
        workflow = client.get_workflow_handle(record.run_id)
        try:
            queue = (await workflow.describe()).task_queue
        except RPCError as exc:
            why = f"run {record.run_id} takes no decision on Temporal: {exc.message}"
            raise UsageError(why) from None
        decision = GateDecision(gate_id, approved, decided_by, reason)
        if await self.polled_s_ago(queue) is not None:
            try:
                await asyncio.wait_for(decide(client, record.run_id, decision), self.approve_wait_s)
                return "engine"
            except (TimeoutError, WorkflowUpdateRPCTimeoutOrCancelledError):
                pass  # the worker did not answer: store it for the next one
        stored = join_decider(decided_by, reason)
        if not self.store.post_gate_decision(record.run_id, gate_id, approved, stored):
            raise UsageError(f"gate {gate_id} already has a decision, waiting for a worker")
        try:
            await workflow.signal(DECIDE_LATER, decision.to_wire())
        except RPCError as exc:
            why = f"run {record.run_id} takes no decision on Temporal: {exc.message}"
            raise UsageError(why) from None
        self.notice(stored_decision_notice(record.run_id, gate_id, self.address, queue))
        return "queued"

    def executes(self, record: RunRecord) -> bool:
        """A run queued for the workers or running on one (the store's record says)."""
        return record.status in ("queued", "running")

    def liveness(self, run_id: str) -> Callable[[], Awaitable[bool]]:
        """Is the run's workflow running? (Asked of Temporal at most every few seconds.)"""
        checked = {"at": -1e18, "live": True}

        async def live() -> bool:
            handle = self.handles.get(run_id)
            if handle is not None and not handle.done:
                return True
            if time.monotonic() - checked["at"] >= 2.0:
                checked["at"], checked["live"] = time.monotonic(), await self._running(run_id)
            return bool(checked["live"])

        return live

    async def _running(self, run_id: str) -> bool:
        client = await self.client()
        try:
            described = await client.get_workflow_handle(run_id).describe()
        except RPCError:
            return False
        return described.status == WorkflowExecutionStatus.RUNNING

    async def aclose(self) -> None:
        self._client = None


def _refuse_local(secrets: Sequence[str], model: Model | None) -> None:
    if secrets:
        raise ConfigurationError(
            "secrets are not taken with the Temporal engine (they would travel through "
            "Temporal): give them to the workers: loopwright worker --secrets-file PATH"
        )
    if model is not None:
        raise ConfigurationError(
            "a model object cannot travel to Temporal workers: name it in the spec's model"
        )


def _scrubbed(request: str) -> str:
    """A run's request as its row keeps it (the run's events scrub theirs the same way)."""
    return Scrubber.default().scrub(request).text


def _why(failure: WorkflowFailureError) -> str:
    """The innermost cause's message: what failed (a refused spec, a bad model), not the
    wrappers around it ("Activity task failed")."""
    cause: BaseException | None = failure.cause or failure
    while isinstance(cause, FailureError) and cause.cause is not None:
        cause = cause.cause
    return getattr(cause, "message", None) or str(cause)


async def _as_coroutine(awaitable: Awaitable[Any]) -> Any:
    return await awaitable
