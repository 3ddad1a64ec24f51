"""Run routes: start, list, get, cancel, resume a run, and decide its gates."""

from __future__ import annotations

import asyncio
from typing import Any, get_args

from starlette.requests import Request
from starlette.responses import JSONResponse

from loopwright.errors import ConfigurationError, GateNotFound, ResumeConflict, UsageError
from loopwright.run_context import MAX_REASON_CHARS
from loopwright.runtime import GateDecided, RunHandle, Runtime
from loopwright.server._auth import tenant_of
from loopwright.server._config import ServerConfig
from loopwright.server._gates import pending_gates, waits_for_decision
from loopwright.server._http import (
    ApiError,
    int_param,
    json_body,
    json_response,
    log,
    not_found,
)
from loopwright.server._turns import lineage_view, resume_here, start_agent_run
from loopwright.server._validate import TaskRequest, parse_gate_decision, parse_run_request
from loopwright.store import RunRecord
from loopwright.store._base import StoredStatus

STATUSES = frozenset(get_args(StoredStatus))
FIRST_EVENT_TIMEOUT_S = 30.0
FIRST_EVENT_POLL_S = 0.02


def config_of(request: Request) -> ServerConfig:
    config: ServerConfig = request.app.state.config
    return config


def run_view(config: ServerConfig, record: RunRecord, *, detail: bool = False) -> dict[str, Any]:
    """A run as the API shows it: the stored row, whether it is live (executing here, or
    on the workers of its engine), its gates."""
    data = record.to_dict()
    data["live"] = config.runtime.live(record)
    if detail:
        events = config.runtime.store.events(record.run_id)
        data["pending_gates"] = pending_gates(events)
        data.update(lineage_view(config, record, events))
    data["waiting_for_approval"] = (
        bool(data["pending_gates"]) and record.status == "running"
        if detail
        else waits_for_decision(config.runtime.store, record)
    )
    return data


def owned_run(config: ServerConfig, run_id: str, tenant: str) -> RunRecord:
    """The caller's run, or 404 (also for another tenant's run: ids can't be probed)."""
    record = config.runtime.store.get_run(run_id, tenant=tenant)
    if record is None:
        raise not_found(run_id)
    return record


async def create_run(request: Request) -> JSONResponse:
    config = config_of(request)
    tenant = tenant_of(request, config.tokens)
    parsed = parse_run_request(await json_body(request), config)
    runtime = config.runtime
    try:
        if isinstance(parsed, TaskRequest):
            if config.tasks is None:
                message = "this server offers no tasks (serve with --tasks DIR)"
                raise ApiError(422, message, field="task")
            handle = config.tasks.start_task(
                runtime, parsed.task, parsed.inputs, tenant=tenant, model=parsed.model
            )
        else:
            handle = start_agent_run(config, parsed, tenant)
    except ConfigurationError as exc:  # what the engine cannot run (its model, an option)
        raise ApiError(422, str(exc)) from None
    return await respond_started(config, handle, tenant)


async def respond_started(config: ServerConfig, handle: RunHandle, tenant: str) -> JSONResponse:
    """201 and the new run, once it is stored."""
    report_failure(handle)
    record = await _first_record(config.runtime, handle, tenant)
    return json_response(run_view(config, record, detail=True), 201)


def report_failure(handle: RunHandle) -> None:
    """A run that ends in an error nobody awaits here (its store failed, so it could not
    record it) is reported in the server's log, in one line."""

    def report(_: object) -> None:
        error = None if handle.task.cancelled() else handle.task.exception()
        if error is not None:
            log.error("run %s failed: %s", handle.run_id, error)

    handle.task.add_done_callback(report)


async def _first_record(runtime: Runtime, handle: RunHandle, tenant: str) -> RunRecord:
    """Wait until the new run is stored (its `run_started`, or its row as a queued run of
    another engine), so GET finds it at once."""
    deadline = asyncio.get_running_loop().time() + FIRST_EVENT_TIMEOUT_S
    while True:
        record = await asyncio.to_thread(runtime.store.get_run, handle.run_id, tenant=tenant)
        if record is not None and (record.last_seq or record.status == "queued"):
            return record
        if handle.done and not handle.task.cancelled() and handle.task.exception() is not None:
            error = handle.task.exception()
            status = 422 if isinstance(error, UsageError) else 500
            raise ApiError(status, f"the run could not start: {error}")
        if asyncio.get_running_loop().time() > deadline:
            raise ApiError(
                500, f"run {handle.run_id} did not start within {FIRST_EVENT_TIMEOUT_S:g}s"
            )
        await asyncio.wait({handle.task}, timeout=FIRST_EVENT_POLL_S)


async def list_runs(request: Request) -> JSONResponse:
    config = config_of(request)
    tenant = tenant_of(request, config.tokens)
    status = request.query_params.get("status") or None
    if status is not None and status not in STATUSES:
        known = ", ".join(sorted(STATUSES))
        raise ApiError(422, f"unknown status {status!r} (one of: {known})", field="status")
    limit = int_param(request, "limit", 100, low=1, high=1000)
    rows = config.runtime.store.list_runs(tenant=tenant, status=status, limit=limit)
    return json_response({"runs": [run_view(config, row) for row in rows]})


async def get_run(request: Request) -> JSONResponse:
    config = config_of(request)
    tenant = tenant_of(request, config.tokens)
    record = owned_run(config, request.path_params["run_id"], tenant)
    return json_response(run_view(config, record, detail=True))


async def cancel_run(request: Request) -> JSONResponse:
    config = config_of(request)
    tenant = tenant_of(request, config.tokens)
    record = owned_run(config, request.path_params["run_id"], tenant)
    try:
        cancelled = await config.runtime.cancel(record.run_id, tenant=tenant)
    except UsageError as exc:
        raise ApiError(409, str(exc)) from None
    if not cancelled:
        raise ApiError(409, f"run {record.run_id} is not running here (status {record.status})")
    record = owned_run(config, record.run_id, tenant)
    return json_response(run_view(config, record, detail=True))


async def decide_gate(request: Request) -> JSONResponse:
    config = config_of(request)
    tenant = tenant_of(request, config.tokens)
    record = owned_run(config, request.path_params["run_id"], tenant)
    gate_id = request.path_params["gate_id"]
    body = await json_body(request)
    reason = body.pop("reason", "") if isinstance(body, dict) else ""
    if not isinstance(reason, str):
        raise ApiError(422, "a string, optional", field="reason")
    if len(reason) > MAX_REASON_CHARS:
        raise ApiError(422, f"at most {MAX_REASON_CHARS:,} characters", field="reason")
    reviewer = reviewer_of(body, tenant)
    approve = parse_gate_decision(body)
    approval = await deliver_gate_decision(config, record, gate_id, approve, reviewer, reason)
    decided = {"run_id": record.run_id, "request_id": gate_id, "approved": approve}
    if approval.taken:
        return json_response(decided)
    return json_response({**decided, "delivered": approval.delivered}, 202)


MAX_REVIEWER_CHARS = 80


def reviewer_of(body: Any, tenant: str) -> str:
    """Who decides a gate through the API: `api:TENANT`, or `NAME (api:TENANT)` when the
    body names them (`by`); the name is the caller's word, the tenant is the token's."""
    by = body.pop("by", "") if isinstance(body, dict) else ""
    if not isinstance(by, str) or len(by) > MAX_REVIEWER_CHARS or not by.isprintable():
        raise ApiError(422, f"a name, at most {MAX_REVIEWER_CHARS} characters", field="by")
    return f"{by.strip()} (api:{tenant})" if by.strip() else f"api:{tenant}"


async def deliver_gate_decision(
    config: ServerConfig,
    record: RunRecord,
    gate_id: str,
    approve: bool,
    decided_by: str,
    reason: str = "",
) -> GateDecided:
    """Decide a gate through the Runtime (the one approval path: it checks the gate waits,
    then it goes here, to another process through the store, or to the run's engine): a
    404 for a gate the run never asked, a 409 when it does not wait or nobody can take it.
    `reason` (optional) is why: a refused agent tool call's observation quotes it."""
    try:
        return await config.runtime.approve(
            record.run_id, gate_id, approve, decided_by, reason, tenant=record.tenant
        )
    except GateNotFound as exc:
        raise ApiError(404, str(exc)) from None
    except UsageError as exc:
        raise ApiError(409, str(exc)) from None


async def resume_run(request: Request) -> JSONResponse:
    """Continue an interrupted run from its log, on its engine: done calls are reused."""
    config = config_of(request)
    tenant = tenant_of(request, config.tokens)
    record = owned_run(config, request.path_params["run_id"], tenant)
    try:
        handle = await resume_here(config, record)
    except (UsageError, ResumeConflict) as exc:  # running, ended, no spec, a lease held
        raise ApiError(409, str(exc)) from None
    report_failure(handle)
    return json_response(run_view(config, owned_run(config, record.run_id, tenant)), 202)
