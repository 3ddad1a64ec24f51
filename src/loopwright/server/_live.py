"""A run's events: as JSON, as Server-Sent Events, over a WebSocket.

Each starts after a `seq` the client gives (`?after=`, or SSE's `Last-Event-ID`): stored
events first, then live ones, nothing missed and nothing twice (Runtime.follow). Every
event is sent exactly as the events codec writes it (`encode_event`), `v` included.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.websockets import WebSocket, WebSocketDisconnect

from loopwright.events import Event, encode_event, event_to_dict
from loopwright.server._auth import tenant_of
from loopwright.server._config import ServerConfig
from loopwright.server._http import (
    MAX_SEQ,
    ApiError,
    int_param,
    json_response,
    parse_json,
    seq_param,
)
from loopwright.server._phases import RUN_PHASES
from loopwright.server._runs import config_of, deliver_gate_decision, owned_run

HEARTBEAT_S = 15.0


async def run_events(request: Request) -> Response:
    """GET /api/runs/{id}/events: a JSON page of events, or SSE with `Accept: text/event-stream`."""
    config = config_of(request)
    tenant = tenant_of(request, config.tokens)
    record = owned_run(config, request.path_params["run_id"], tenant)
    after = int_param(request, "after", 0, high=MAX_SEQ)
    if "text/event-stream" in request.headers.get("accept", ""):
        last_id = request.headers.get("last-event-id", "").strip()
        if last_id:
            after = max(after, seq_param(last_id, "Last-Event-ID"))
        return StreamingResponse(
            _sse(config, record.run_id, after, tenant),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )
    limit = int_param(request, "limit", 1000, low=1, high=10000)
    events = config.runtime.store.events(record.run_id, after=after)[:limit]
    record = owned_run(config, record.run_id, tenant)
    return _events_page(record.run_id, events, record.last_seq, record.status)


def _events_page(run_id: str, events: list[Event], last_seq: int, status: str) -> JSONResponse:
    return json_response(
        {
            "run_id": run_id,
            "events": [event_to_dict(e) for e in events],
            "last_seq": last_seq,
            "more": bool(events) and events[-1].seq < last_seq,
            "status": status,
        }
    )


async def _with_heartbeat(
    events: AsyncIterator[Event], interval: float
) -> AsyncIterator[Event | None]:
    """`events`, with a None whenever `interval` seconds pass without one."""
    queue: asyncio.Queue[Event | StopAsyncIteration | None] = asyncio.Queue()

    async def pump() -> None:
        try:
            async for event in events:
                await queue.put(event)
        finally:
            await queue.put(StopAsyncIteration())

    task = asyncio.create_task(pump())
    try:
        while True:
            try:
                async with asyncio.timeout(interval):
                    item = await queue.get()
            except TimeoutError:
                yield None
                continue
            if isinstance(item, StopAsyncIteration):
                return
            yield item
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _sse(config: ServerConfig, run_id: str, after: int, tenant: str) -> AsyncIterator[bytes]:
    yield b"retry: 2000\n\n"
    runtime = config.runtime
    following = runtime.follow(run_id, after=after, tenant=tenant, poll_s=config.follow_poll_s)
    async with contextlib.aclosing(following) as events:
        async for event in _with_heartbeat(events, HEARTBEAT_S):
            if event is None:
                yield b": keep-alive\n\n"
                continue
            if event.run_id != run_id:  # a sub-agent's: its seq is not the run's
                yield f"data: {encode_event(event)}\n\n".encode()
                continue
            yield f"id: {event.seq}\ndata: {encode_event(event)}\n\n".encode()
    record = runtime.store.get_run(run_id)
    end = {"run_id": run_id, "status": record.status if record else "unknown"}
    yield f"event: end\ndata: {json.dumps(end)}\n\n".encode()


async def run_websocket(websocket: WebSocket) -> None:
    """WS /api/runs/{id}/ws?after=SEQ: events as text frames; the client may send gate
    decisions (`{"type": "confirm", "request_id": ..., "approve": true}`, seed 004)."""
    await websocket.accept()
    config: ServerConfig = websocket.app.state.config
    try:
        tenant = tenant_of(websocket, config.tokens)
        record = owned_run(config, websocket.path_params["run_id"], tenant)
        raw_after = websocket.query_params.get("after") or "0"
        after = seq_param(raw_after, "after")
    except ApiError as exc:
        await websocket.close(code=4000 + exc.status, reason=str(exc)[:120])
        return
    sender = asyncio.create_task(_send_events(websocket, config, record.run_id, after, tenant))
    receiver = asyncio.create_task(_receive(websocket, config, record.run_id, tenant))
    await asyncio.wait({sender, receiver}, return_when=asyncio.FIRST_COMPLETED)
    finished = sender.done() and not sender.cancelled() and sender.exception() is None
    for task in (sender, receiver):
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, WebSocketDisconnect, OSError):
            await task  # a client that went away ends either task; nothing to report
    if finished:
        with contextlib.suppress(RuntimeError, WebSocketDisconnect, OSError):
            await websocket.close(code=1000, reason="end of the run's events")


async def _send_events(
    websocket: WebSocket, config: ServerConfig, run_id: str, after: int, tenant: str
) -> None:
    following = config.runtime.follow(
        run_id, after=after, tenant=tenant, poll_s=config.follow_poll_s
    )
    phases = RUN_PHASES.follow(run_id)
    sending_phases = asyncio.create_task(_send_phases(websocket, phases))
    try:
        async with contextlib.aclosing(following) as events:
            async for event in events:
                await websocket.send_text(encode_event(event))
    finally:
        RUN_PHASES.leave(run_id, phases)
        sending_phases.cancel()
        with contextlib.suppress(asyncio.CancelledError, WebSocketDisconnect, OSError):
            await sending_phases


async def _send_phases(websocket: WebSocket, phases: asyncio.Queue[dict[str, Any]]) -> None:
    """The run's embedded model phases, live (server/_phases.py): frames with no `seq`."""
    while True:
        await websocket.send_text(json.dumps(await phases.get()))


async def _receive(websocket: WebSocket, config: ServerConfig, run_id: str, tenant: str) -> None:
    """Gate decisions from the client; anything else gets an error frame (no `seq`)."""
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
        problem = await _confirm(config, run_id, tenant, message.get("text"))
        if problem is not None:
            await _ws_error(websocket, *problem)


async def _confirm(
    config: ServerConfig, run_id: str, tenant: str, text: str | None
) -> tuple[str, str | None] | None:
    """Decide the gate a `confirm` message names; (message, field) of what is wrong, if any."""
    try:  # the limits of a request body: size, depth, numbers, lone surrogates
        message = parse_json(text, "message") if text is not None else None
    except ApiError as exc:
        return exc.message, None
    if not isinstance(message, dict) or message.get("type") != "confirm":
        return "expected {'type': 'confirm', 'request_id': ..., 'approve': true}", None
    request_id, approve = message.get("request_id"), message.get("approve")
    if not isinstance(approve, bool):
        return "required, true or false", "approve"
    record = config.runtime.store.get_run(run_id, tenant=tenant)
    if not isinstance(request_id, str) or record is None:
        return f"no pending gate {request_id!r}", "request_id"
    try:
        await deliver_gate_decision(config, record, request_id, approve, f"ws:{tenant}")
    except ApiError as exc:
        return exc.message, "request_id"
    return None


async def _ws_error(websocket: WebSocket, message: str, field: str | None) -> None:
    error: dict[str, Any] = {"status": 422, "message": message}
    if field is not None:
        error["field"] = field
    await websocket.send_text(json.dumps({"type": "error", "error": error}))
