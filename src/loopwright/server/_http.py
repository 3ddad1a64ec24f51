"""HTTP plumbing shared by the routes: the API's error type and JSON responses."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from loopwright.errors import UsageError


class ApiError(UsageError):
    """A request the API refuses: an HTTP status, a message and the field at fault."""

    def __init__(self, status: int, message: str, *, field: str | None = None) -> None:
        self.status = status
        self.message = message
        self.field = field
        super().__init__(f"{field}: {message}" if field else message)

    def to_dict(self) -> dict[str, Any]:
        error: dict[str, Any] = {"status": self.status, "message": str(self)}
        if self.field is not None:
            error["field"] = self.field
        return {"error": error}


def not_found(run_id: str) -> ApiError:
    """The same answer for a run that does not exist and one of another tenant."""
    return ApiError(404, f"no run {run_id!r}")


def json_response(data: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status)


def error_response(error: ApiError) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if error.status == 401 else None
    return JSONResponse(error.to_dict(), status_code=error.status, headers=headers)


MAX_BODY_BYTES = 1_000_000


async def json_body(request: Request) -> dict[str, Any]:
    """The request's body as a JSON object, or a 400 that says what is wrong with it."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise ApiError(413, f"request body is larger than {MAX_BODY_BYTES:,} bytes")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        raise ApiError(400, "request body is empty: expected a JSON object")
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"request body is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ApiError(400, f"request body must be a JSON object, not {type(data).__name__}")
    return data


def int_param(request: Request, name: str, default: int, *, low: int = 0, high: int) -> int:
    """An integer query parameter within [low, high], or a 422 naming it."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(422, f"must be an integer, got {raw!r}", field=name) from None
    if not low <= value <= high:
        raise ApiError(422, f"must be between {low} and {high}, got {value}", field=name)
    return value
