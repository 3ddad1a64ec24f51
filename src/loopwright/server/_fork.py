"""`POST /api/runs/{id}/fork`: a new run whose first `at` steps are the run's, served from its
log, then live (server/_turns.py says which agent it runs)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from loopwright.events import RunStartedEvent
from loopwright.runtime._spec import recorded_spec
from loopwright.server._auth import tenant_of
from loopwright.server._config import ServerConfig
from loopwright.server._http import ApiError, json_body
from loopwright.server._runs import config_of, respond_started
from loopwright.server._turns import WAITING_TO_END, check_offered, link_errors, owned
from loopwright.server._validate import check_model, request_text

FORK_FIELDS = frozenset({"at", "request", "model"})


async def fork_run(request: Request) -> JSONResponse:
    """`POST /api/runs/{id}/fork`: a new run whose first `at` steps are the run's, served
    from its log (nothing made again), then live, with another `request` or `model`."""
    config = config_of(request)
    tenant = tenant_of(request, config.tokens)
    record = owned(config, request.path_params["run_id"], tenant, "run_id")
    body = await json_body(request)
    at, text, model = _fork_fields(body, config)
    if record.kind != "agent":
        raise ApiError(422, f"run {record.run_id} is a task run: only an agent run is forked")
    if record.status in WAITING_TO_END:
        raise ApiError(409, f"run {record.run_id} is still {record.status}: fork it once it ends")
    runtime = config.runtime
    events = runtime.store.events(record.run_id, after=0)[:1]
    spec = recorded_spec(events)
    with link_errors("run_id"):
        if spec is not None:
            check_offered(spec, config, record.run_id)
            handle = runtime.fork(record.run_id, at, request=text, model=model, tenant=tenant)
        elif config.agent is None:
            raise ApiError(
                409,
                f"run {record.run_id} runs an agent built in code: fork it from that code "
                "(Runtime.start_agent with fork_of), or serve with --agent MODULE:ATTRIBUTE",
            )
        elif model is not None:
            raise ApiError(422, "this server runs its own agent (serve --agent)", field="model")
        else:
            started = events[0] if events else None
            original = started.request if isinstance(started, RunStartedEvent) else ""
            handle = runtime.start_agent(
                config.agent, text or original, tenant=tenant, fork_of=(record.run_id, at)
            )
    return await respond_started(config, handle, tenant)


def _fork_fields(body: dict[str, Any], config: ServerConfig) -> tuple[int, str | None, str | None]:
    for name in body:
        if name not in FORK_FIELDS:
            raise ApiError(422, "unknown field (expected at, request, model)", field=name)
    at = body.get("at")
    if isinstance(at, bool) or not isinstance(at, int) or at < 0:
        raise ApiError(422, "required: the number of steps to keep (0 or more)", field="at")
    text = request_text(body, "request") if "request" in body else None
    model = check_model(body["model"], config) if body.get("model") is not None else None
    return at, text, model
