"""Runtime: starts runs, appends every event to the store, then fans it out to subscribers.

A subscriber that joins late (or reconnects) gives the last `seq` it saw: it gets the
stored events after it, then live ones, with nothing missed and nothing twice.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

from loopwright.agent import AgentExecutor, ExecutionResult
from loopwright.agent._executor import new_run_id
from loopwright.events import Event, ModelResponded, RunFinished, RunStarted, ToolCallFinished
from loopwright.runtime._lease import LeaseKeeper
from loopwright.store import InMemoryRunStore, RunStore

EventSink = Callable[[Event], Awaitable[None]]
RunBody = Callable[[EventSink], Coroutine[Any, Any, Any]]
DEFERRED_EVENTS = (ModelResponded, ToolCallFinished)
"""Always followed by another event of the same run before the loop's next effect."""


@dataclass
class RunHandle:
    """A run in progress in this process."""

    run_id: str
    task: asyncio.Task[Any]
    subscribers: list[asyncio.Queue[Event | None]] = field(default_factory=list)
    """Live subscribers' queues; `None` is put in each when the run's task ends."""

    async def wait(self) -> Any:
        return await self.task

    @property
    def done(self) -> bool:
        return self.task.done()


class Runtime:
    """Owns the live runs of one process and the store they are logged to."""

    def __init__(self, store: RunStore | None = None) -> None:
        self.store: RunStore = store if store is not None else InMemoryRunStore()
        self.handles: dict[str, RunHandle] = {}
        self.leases = LeaseKeeper(self.store)
        self._pending: dict[str, list[Event]] = {}
        """Per run: replies and results waiting to be stored with the event after them."""
        """Leases of the runs executed here: taken at run_started, released at run_finished."""

    async def publish(self, event: Event) -> None:
        """Append to the store first; only then let subscribers see it.

        A model reply or a tool result is stored in one transaction with the event that
        follows it (the next iteration, tool call or the run's end), which always comes
        before the next effect starts: the log is durable before every model or tool call,
        at half the commits. Subscribers never see an event before it is stored.
        """
        run_id = event.run_id
        if isinstance(event, DEFERRED_EVENTS):
            self._pending.setdefault(run_id, []).append(event)
            return
        pending = self._pending.pop(run_id, None)
        batch: list[Event] = [*pending, event] if pending else [event]
        if isinstance(event, RunStarted) and run_id not in self.leases.held:
            self.leases.hold(run_id)
            try:
                self._store_batch(batch)
            except BaseException:
                self.leases.release(run_id)
                raise
        else:
            self._store_batch(batch)
        if isinstance(event, RunFinished):
            self.leases.release(run_id)
        handle = self.handles.get(run_id)
        if handle is not None:
            for queue in handle.subscribers:
                for stored in batch:
                    queue.put_nowait(stored)

    def _store_batch(self, batch: list[Event]) -> None:
        if len(batch) == 1:
            self.store.append(batch[0])
        else:
            self.store.append_many(batch)

    def start(self, run_id: str, body: RunBody) -> RunHandle:
        """Run `body(publish)` as a task; its events go through `publish`."""
        task = asyncio.get_running_loop().create_task(body(self.publish), name=run_id)
        handle = RunHandle(run_id, task)
        self.handles[run_id] = handle
        task.add_done_callback(lambda _: _wake_subscribers(handle))
        return handle

    def start_agent(
        self,
        agent: AgentExecutor,
        request: str,
        *,
        tenant: str = "default",
        run_id: str | None = None,
        recorded: Sequence[Event] = (),
        parent_run_id: str | None = None,
    ) -> RunHandle:
        run_id = run_id or (recorded[0].run_id if recorded else new_run_id())

        async def body(sink: EventSink) -> ExecutionResult:
            return await agent.run(
                request,
                run_id=run_id,
                tenant=tenant,
                on_event=sink,
                recorded=recorded,
                parent_run_id=parent_run_id,
            )

        return self.start(run_id, body)

    async def cancel(self, run_id: str) -> bool:
        handle = self.handles.get(run_id)
        if handle is None or handle.done:
            return False
        handle.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await handle.task
        return True

    async def subscribe(self, run_id: str, *, after: int = 0) -> AsyncGenerator[Event, None]:
        """Events of `run_id` with seq > after: stored ones, then live ones until it ends."""
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        handle = self.handles.get(run_id)
        live = handle is not None and not handle.done
        if handle is not None and live:
            handle.subscribers.append(queue)
        try:
            last = after
            for event in self.store.events(run_id, after=after):
                yield event
                last = event.seq
                if isinstance(event, RunFinished):
                    return
            while live:
                item = await queue.get()
                if item is None:  # the run's task ended (even without run_finished)
                    return
                if item.seq <= last:
                    continue
                yield item
                last = item.seq
                if isinstance(item, RunFinished):
                    return
        finally:
            if handle is not None and queue in handle.subscribers:
                handle.subscribers.remove(queue)


def _wake_subscribers(handle: RunHandle) -> None:
    """The run's task is over: subscribers still waiting must not wait forever."""
    for queue in handle.subscribers:
        queue.put_nowait(None)
