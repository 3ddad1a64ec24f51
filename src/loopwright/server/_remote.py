"""Runs of a server whose engine executes them elsewhere (`serve --engine temporal`).

The server starts each run on its `RunEngine` and reads it from the shared store like a
run another process executes: list, show, events (SSE, WebSocket) need nothing of their
own. Starting waits for the run's first stored event (or its failure to start); cancel
asks the engine, then waits for the run to end; a gate decision goes to the engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses

from loopwright.engines._temporal_route import on_temporal
from loopwright.errors import LoopwrightError, UsageError
from loopwright.runtime import RunSpec
from loopwright.server._config import RunEngine, ServerConfig, StartedRun
from loopwright.server._http import ApiError
from loopwright.server._validate import TaskRequest
from loopwright.store import RunRecord

FIRST_EVENT_TIMEOUT_S = 30.0
CANCEL_WAIT_S = 30.0
POLL_S = 0.25


def remote_engine(config: ServerConfig, record: RunRecord) -> RunEngine | None:
    """The engine executing `record`'s run, when it is not this server's Runtime."""
    if config.engine is None or not on_temporal(config.runtime.store, record.run_id):
        return None
    return config.engine


async def start_remote(
    config: ServerConfig, engine: RunEngine, parsed: RunSpec | TaskRequest, tenant: str
) -> RunRecord:
    """Start the run on `engine`; its record once its first event is stored."""
    try:
        if isinstance(parsed, TaskRequest):
            if config.tasks is None:
                message = "this server offers no tasks (serve with --tasks DIR)"
                raise ApiError(422, message, field="task")
            spec = config.tasks.task_spec(
                parsed.task, parsed.inputs, tenant=tenant, model=parsed.model
            )
            started = await engine.start_task(spec)
        else:
            started = await engine.start_agent(dataclasses.replace(parsed, tenant=tenant))
    except ApiError:
        raise
    except LoopwrightError as exc:  # what the engine cannot run (a refused option)
        raise ApiError(422, str(exc)) from None
    return await _first_record(config, started, tenant)


async def _first_record(config: ServerConfig, started: StartedRun, tenant: str) -> RunRecord:
    store = config.runtime.store
    ended = asyncio.ensure_future(started.result())
    deadline = asyncio.get_running_loop().time() + FIRST_EVENT_TIMEOUT_S
    try:
        while True:
            record = await asyncio.to_thread(store.get_run, started.id, tenant=tenant)
            if record is not None:
                return record
            if ended.done() and ended.exception() is not None:
                error = ended.exception()
                why = getattr(error, "cause", None) or error
                raise ApiError(422, f"the run could not start: {why}")
            if asyncio.get_running_loop().time() > deadline:
                raise ApiError(
                    500, f"run {started.id} did not start within {FIRST_EVENT_TIMEOUT_S:g}s "
                    "(is a worker polling the task queue?)",
                )  # fmt: skip
            await asyncio.wait({ended}, timeout=POLL_S)
    finally:
        if not ended.done():
            ended.cancel()
            with contextlib.suppress(BaseException):
                await ended


async def cancel_remote(config: ServerConfig, engine: RunEngine, record: RunRecord) -> bool:
    """Cancel the run on its engine and wait (bounded) until it is stored as ended."""
    if record.status != "running" or not await engine.cancel(record.run_id):
        return False
    store = config.runtime.store
    deadline = asyncio.get_running_loop().time() + CANCEL_WAIT_S
    last = record.last_seq
    while asyncio.get_running_loop().time() < deadline:
        current = await asyncio.to_thread(store.get_run, record.run_id)
        if current is None or current.status != "running":
            break
        last = current.last_seq
        await store.wait_for_events(record.run_id, after=last, timeout=POLL_S * 4)
    return True


async def decide_remote(
    engine: RunEngine, record: RunRecord, gate_id: str, approve: bool, by: str, reason: str
) -> None:
    try:
        await engine.decide(record.run_id, gate_id, approve, by, reason)
    except UsageError as exc:
        raise ApiError(409, str(exc)) from None
