"""The ASGI app: the API under /api, the dashboard at / (static files, no build step)."""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from loopwright.errors import StoreError, UsageError
from loopwright.server._auth import tenant_of
from loopwright.server._calls import model_call
from loopwright.server._config import ServerConfig
from loopwright.server._fork import fork_run
from loopwright.server._guard import BrowserGuard, FrameGuard
from loopwright.server._http import ApiError, error_response, json_response, log
from loopwright.server._live import run_events, run_websocket
from loopwright.server._openapi import openapi_schema
from loopwright.server._runs import (
    cancel_run,
    config_of,
    create_run,
    decide_gate,
    get_run,
    list_runs,
    resume_run,
)

STATIC = Path(__file__).parent / "static"


async def index(request: Request) -> Response:
    return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


async def favicon(request: Request) -> Response:
    return FileResponse(STATIC / "favicon.ico", media_type="image/x-icon")


async def openapi(request: Request) -> JSONResponse:
    return json_response(openapi_schema())


async def info(request: Request) -> JSONResponse:
    config = config_of(request)
    tenant = tenant_of(request, config.tokens)
    return json_response(
        {
            "tenant": tenant,
            "auth": config.tokens is not None,
            "tools": sorted(config.allowed_tools),
            "default_model": config.default_model,
            "models": config.offered_models(),
            "tasks": config.tasks.describe() if config.tasks is not None else [],
        }
    )


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error_response(exc)


async def _usage_error(request: Request, exc: Exception) -> Response:
    return error_response(ApiError(422, str(exc)))


async def _store_error(request: Request, exc: Exception) -> Response:
    """The run store failed (damaged, full, unreachable): a JSON error naming it, not a
    plain-text 500 (a StoreError's message names the store, never its password)."""
    log.error("%s %s: %s", request.method, request.url.path, exc)
    return error_response(ApiError(503, str(exc)))


async def _internal_error(request: Request, exc: Exception) -> Response:
    """Anything else: logged with its traceback; the client gets JSON, no details."""
    log.exception("%s %s failed", request.method, request.url.path, exc_info=exc)
    return error_response(ApiError(500, f"internal error ({type(exc).__name__})"))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return error_response(ApiError(exc.status_code, str(exc.detail)))


class _Framed(Starlette):
    """Starlette whose every response, a 500 made by its outermost error handler too,
    goes through FrameGuard."""

    def build_middleware_stack(self) -> ASGIApp:
        return FrameGuard(super().build_middleware_stack())


def create_app(config: ServerConfig | None = None) -> Starlette:
    """The API and the dashboard over one Runtime (and its RunStore)."""
    routes = [
        Route("/", index),
        Route("/favicon.ico", favicon),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
        Route("/api/openapi.json", openapi),
        Route("/api/info", info),
        Route("/api/runs", create_run, methods=["POST"]),
        Route("/api/runs", list_runs, methods=["GET"]),
        Route("/api/runs/{run_id}", get_run, methods=["GET"]),
        Route("/api/runs/{run_id}/events", run_events, methods=["GET"]),
        Route("/api/runs/{run_id}/model_calls/{seq}", model_call, methods=["GET"]),
        WebSocketRoute("/api/runs/{run_id}/ws", run_websocket),
        Route("/api/runs/{run_id}/cancel", cancel_run, methods=["POST"]),
        Route("/api/runs/{run_id}/gates/{gate_id}", decide_gate, methods=["POST"]),
        Route("/api/runs/{run_id}/resume", resume_run, methods=["POST"]),
        Route("/api/runs/{run_id}/fork", fork_run, methods=["POST"]),
    ]
    config = config or ServerConfig()
    app = _Framed(
        routes=routes,
        middleware=[Middleware(BrowserGuard, allowed_hosts=config.allowed_hosts)],
        exception_handlers={
            ApiError: _api_error,
            UsageError: _usage_error,
            StoreError: _store_error,
            HTTPException: _http_error,
            Exception: _internal_error,
        },
    )
    app.state.config = config
    return app
