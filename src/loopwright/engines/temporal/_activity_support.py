"""What every activity of the Temporal engine shares: heartbeats, how loopwright's errors
and a provider's failures become Temporal's, the uncertain outcome of a tool call, the
run's lease in the store, and the scrubbing of what leaves a worker with the worker's own
secrets."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from datetime import timedelta
from typing import Any, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor

from loopwright.errors import (
    LoopwrightError,
    ModelError,
    ModelUnavailableError,
    StoreUnavailableError,
)
from loopwright.messages import ToolCall, ToolResult
from loopwright.models import Model
from loopwright.safety.scrub import Scrubber, secret_env_values

HEARTBEAT_EVERY_S = 1.0
"""How often an activity heartbeats (more often when its heartbeat timeout is short)."""
_BEATING: ContextVar[bool] = ContextVar("loopwright_heartbeating", default=False)
"""Set while an activity's heartbeats are already being sent (the worker interceptor's,
for the whole activity): what it awaits meanwhile needs no heartbeats of its own."""
WORKER_STOPPED = "WorkerStopped"
"""The type of an attempt's failure when its worker stopped before it ended (SIGTERM,
then the graceful shutdown timeout passed): retried elsewhere where its policy allows."""
UNCERTAIN = (
    "The outcome of this call is unknown: the worker running it stopped before its result "
    "was recorded. It was not run again (it is not idempotent); check its effect before "
    "calling it again."
)
STORE_OUTAGE_S = 40.0
"""How long an activity waits out a store that cannot be reached (a dropped connection, a
server restarting) before its attempt fails; the attempt's failure is retryable, so the
activity's own policy applies after that."""
LEASE_OWNER = "temporal-engine"
LEASE_TTL_S = 900.0
"""Each activity renews the run's lease in the store, so `runs list` shows a run that is
executing on workers as running (and one no activity touched for this long: interrupted)."""
T = TypeVar("T")
log = logging.getLogger("loopwright.temporal")


class RunLocks:
    """A lock per run, held while its events are appended: a slow append of one run never
    holds up another run's, and an activity waiting for its run's lock heartbeats (a wait
    is not a lost worker). A run's lock is dropped when nobody holds or waits for it."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def held(self, run_id: str) -> AsyncIterator[None]:
        lock, users = self._locks.get(run_id, (asyncio.Lock(), 0))
        self._locks[run_id] = (lock, users + 1)
        try:
            await _heartbeating(lock.acquire())
            try:
                yield
            finally:
                lock.release()
        finally:
            lock, users = self._locks[run_id]
            if users == 1:
                del self._locks[run_id]
            else:
                self._locks[run_id] = (lock, users - 1)


def uncertain_result(call: ToolCall) -> ToolResult:
    return ToolResult(call.id, call.name, UNCERTAIN, is_error=True)


async def _heartbeating(work: Awaitable[T]) -> T:
    """Await `work` while heartbeating, so a lost worker and a cancel are seen quickly
    (outside an activity: just await it)."""
    if not activity.in_activity() or _BEATING.get():
        return await work
    every = _heartbeat_every(activity.info().heartbeat_timeout)

    async def beat() -> None:
        while True:  # the first after `every`: an activity that ends sooner sends none
            await asyncio.sleep(every)
            activity.heartbeat()

    beating = _BEATING.set(True)
    beater = asyncio.create_task(beat())
    try:
        return await work
    finally:
        _BEATING.reset(beating)
        beater.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beater


def _heartbeat_every(timeout: timedelta | None) -> float:
    """Seconds between heartbeats: HEARTBEAT_EVERY_S, or a third of a shorter heartbeat
    timeout (so the first comes well within it)."""
    if timeout is None or not timeout.total_seconds():
        return HEARTBEAT_EVERY_S
    return min(HEARTBEAT_EVERY_S, timeout.total_seconds() / 3)


class Heartbeats(Interceptor):
    """Every activity heartbeats from its start to its end, whatever it waits for (the
    store, a lock, a model, a tool): each is scheduled with a heartbeat timeout, so a
    killed worker's attempt is retried elsewhere within that bound, never after its
    whole start-to-close timeout."""

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _HeartbeatingActivity(next)


class _HeartbeatingActivity(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        return await _heartbeating(super().execute_activity(input))


async def retrying(attempt: Callable[[], Awaitable[T]]) -> T:
    """`attempt()`, made again while the store is unavailable, with backoff, for up to
    STORE_OUTAGE_S (heartbeating, so the wait does not look like a lost worker). Only for
    store work that is safe to repeat (reads, first-writer-wins writes, an append that
    skips what is stored)."""
    deadline = time.monotonic() + STORE_OUTAGE_S
    delay = 0.25
    while True:
        try:
            return await _heartbeating(attempt())
        except StoreUnavailableError as exc:
            if time.monotonic() + delay > deadline:
                raise
            log.warning("%s; trying again in %.2gs", exc, delay)
            await _heartbeating(asyncio.sleep(delay))
            delay = min(delay * 2, 4.0)


async def store_call(work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`work(*args, **kwargs)` (a store method: blocking) in a thread, `retrying`."""
    return await retrying(lambda: asyncio.to_thread(work, *args, **kwargs))


@contextlib.asynccontextmanager
async def _as_application_errors() -> AsyncIterator[None]:
    """loopwright's deterministic errors fail the step at once; an unavailable model or
    store is retried (within the policy's maximum_attempts). An attempt its stopping worker cancels
    (past the graceful shutdown timeout) is handed back as a retryable failure, never as
    the run's cancellation."""
    try:
        yield
    except asyncio.CancelledError:
        if not _worker_stopping():
            raise
        raise ApplicationError(
            "the worker stopped before this attempt ended (its graceful shutdown timeout "
            "passed): handed back to another worker",
            type=WORKER_STOPPED,
        ) from None
    except (ModelUnavailableError, StoreUnavailableError) as exc:
        raise ApplicationError(str(exc), type=type(exc).__name__) from exc
    except LoopwrightError as exc:
        raise ApplicationError(str(exc), type=type(exc).__name__, non_retryable=True) from exc


def _worker_stopping() -> bool:
    """Whether the current activity is cancelled because its worker is shutting down
    (and not because its run was cancelled)."""
    details = activity.cancellation_details()
    return details is not None and details.worker_shutdown and not details.cancel_requested


def _without_client_retries(model: Model) -> Model:
    """Retries are Temporal's (the activity's policy): the provider client tries once."""
    client = getattr(model, "client", None)
    if client is None:  # a model without a provider client (scripted, embedded)
        return model
    from loopwright.models._http import HttpClient  # (httpx) imported by a model that has one

    if isinstance(client, HttpClient):
        client.retry = dataclasses.replace(client.retry, max_retries=0)
    return model


def _model_failure(exc: ModelError) -> ApplicationError:
    """A failed provider call as Temporal sees it: 408/409/429/5xx, a timeout or a dropped
    connection are retried (after the server's `Retry-After` when it sent one); any other
    failure (a 400, a refused key) fails the call at once."""
    import httpx  # here: a worker whose runs use no HTTP model never needs it

    from loopwright.models._http import Transient

    cause = exc.__context__
    if isinstance(cause, Transient):
        delay = None if cause.retry_after is None else timedelta(seconds=cause.retry_after)
        return ApplicationError(str(exc), type="ModelError", next_retry_delay=delay)
    if isinstance(cause, httpx.TimeoutException | httpx.TransportError):
        return ApplicationError(str(exc), type="ModelError")
    return ApplicationError(str(exc), type=type(exc).__name__, non_retryable=True)


class WorkerSecrets:
    """A worker's own secrets (`loopwright worker --secret/--secrets-file`, and the values
    of its environment variables whose names look secret): the exact values are scrubbed
    from everything its activities give the workflow or the store, so they never reach
    Temporal's history or the event log. They never come from a run's spec (which travels
    through Temporal), and the workflow never reads them (its replays on other workers
    must make the same events)."""

    def __init__(
        self, secrets: Sequence[str] = (), *, environ: Mapping[str, str] | None = None
    ) -> None:
        self.values = tuple(s for s in secrets if s)
        env = secret_env_values(environ)
        self._exact = (
            Scrubber(self.values, env_secrets=env, detectors=()) if self.values or env else None
        )

    def scrub(self, value: Any) -> Any:
        return value if self._exact is None else self._exact.scrub_value(value)
