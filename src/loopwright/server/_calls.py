"""A recorded model call as the dashboard shows it: the reply, its tokens and duration
(from the log), and the request sent (rebuilt from the log: runtime/_requests.py)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse

from loopwright.errors import UsageError
from loopwright.events import ModelResponseEvent
from loopwright.runtime._requests import rebuild_request
from loopwright.server._auth import tenant_of
from loopwright.server._http import ApiError, json_response, seq_text
from loopwright.server._runs import config_of, owned_run


async def model_call(request: Request) -> JSONResponse:
    """GET /api/runs/{run_id}/model_calls/{seq}: the model call recorded at event `seq`."""
    config = config_of(request)
    record = owned_run(config, request.path_params["run_id"], tenant_of(request, config.tokens))
    raw_seq = request.path_params["seq"]
    seq = seq_text(raw_seq, "seq", "an event's seq")
    missing = ApiError(404, f"run {record.run_id} has no model call at event {raw_seq[:40]}")
    if seq is None:  # beyond any seq a store holds
        raise missing
    store = config.runtime.store
    found = [e for e in store.events(record.run_id, after=seq - 1)[:1] if e.seq == seq]
    if not found or not isinstance(found[0], ModelResponseEvent):
        raise missing
    event = found[0]
    try:
        rebuilt = await rebuild_request(store, record.run_id, seq)
    except UsageError as exc:
        raise ApiError(404, str(exc)) from None
    return json_response({
        "run_id": record.run_id,
        "seq": seq,
        "iteration_number": event.iteration_number,
        "duration_ms": event.duration_ms,
        "reply": event.response,
        "request_digest": event.request_digest,
        "request": rebuilt.request,
        "request_problem": rebuilt.problem,
    })  # fmt: skip
