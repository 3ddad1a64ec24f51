"""`ToolThreads`: a bounded set of daemon threads for blocking (sync) tool functions.

Not asyncio's shared default executor: a sync tool stuck past its timeout keeps its
thread (Python cannot stop a thread), and a few of those must not starve everything
else that uses the default executor (DNS lookups, file I/O) nor other tenants. Each pool
has at most `max_workers` threads; calls beyond that wait in its queue (and time out
there if they must). The threads are daemons, so a process whose run has ended exits
even while a tool thread is stuck.

Which pool a call uses is its run's: `RunContext.tool_threads`, which the Runtime fills
in from its per-tenant chooser (`TenantToolThreads`: one pool per tenant), for every run
it starts or resumes, whoever asks; a call outside such a run uses the process default.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
DEFAULT_MAX_WORKERS = 8


class ToolThreads:
    """A bounded pool of daemon threads; `await pool.run(fn, *args, **kwargs)`."""

    def __init__(self, max_workers: int = DEFAULT_MAX_WORKERS, *, name: str = "tool") -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self.max_workers = max_workers
        self.name = name
        self._queue: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0

    @property
    def threads(self) -> int:
        """Threads started so far (never more than `max_workers`)."""
        return self._threads

    async def run(self, function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        context = contextvars.copy_context()
        self._queue.put((loop, future, context, function, args, kwargs))
        start = False
        with self._lock:
            if self._idle > 0:
                self._idle -= 1  # an idle thread will take it
            elif self._threads < self.max_workers:
                self._threads += 1
                start = True
        if start:
            number = self._threads
            threading.Thread(target=self._work, name=f"{self.name}-{number}", daemon=True).start()
        return await future

    def _work(self) -> None:
        while True:
            loop, future, context, function, args, kwargs = self._queue.get()
            if not future.cancelled():  # a call that timed out while queued is not started
                try:
                    result = context.run(function, *args, **kwargs)
                except BaseException as exc:  # delivered to the awaiting coroutine
                    _deliver(loop, _set_exception, future, exc)
                else:
                    _deliver(loop, _set_result, future, result)
            with self._lock:
                self._idle += 1


def _deliver(loop: asyncio.AbstractEventLoop, setter: Callable[..., None], *args: Any) -> None:
    with contextlib.suppress(RuntimeError):  # the loop closed: nobody is waiting any more
        loop.call_soon_threadsafe(setter, *args)


def _set_result(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():
        future.set_result(value)


def _set_exception(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)


DEFAULT_TOOL_THREADS = ToolThreads(name="loopwright-tool")
"""The pool of sync tools called outside a run of a Runtime (`agent.run()`, a bare call)."""


class TenantToolThreads:
    """One pool per tenant, made on first use: `threads(tenant)`. A Runtime gives each
    run its tenant's, so one tenant's stuck tools cannot starve another's."""

    def __init__(self, max_workers: int = DEFAULT_MAX_WORKERS) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self.max_workers = max_workers
        self._pools: dict[str, ToolThreads] = {}
        self._lock = threading.Lock()

    def __call__(self, tenant: str) -> ToolThreads:
        with self._lock:
            pool = self._pools.get(tenant)
            if pool is None:
                pool = ToolThreads(self.max_workers, name=f"tools-{tenant}")
                self._pools[tenant] = pool
            return pool
