"""HTTP plumbing shared by the routes: the API's error type and JSON responses."""

from __future__ import annotations

import json
import logging
import math
from typing import Any

from starlette.requests import ClientDisconnect, Request
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


class SafeJSONResponse(JSONResponse):
    """JSON that no stored value can break: a NaN or an infinity (which strict JSON has no
    form for) becomes null, and a lone surrogate its `\\uXXXX` escape, instead of a 500 on
    every listing that includes it."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:  # a lone surrogate (a model's text can hold one): escaped
            text = json.dumps(finite(content), allow_nan=False, separators=(",", ":"))
            return text.encode("ascii")
        except ValueError:  # allow_nan=False refused a non-finite float
            return super().render(finite(content))


def finite(value: Any) -> Any:
    """`value` with every NaN and infinity replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value


def json_response(data: Any, status: int = 200) -> JSONResponse:
    return SafeJSONResponse(data, status_code=status)


def error_response(error: ApiError) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if error.status == 401 else None
    return JSONResponse(error.to_dict(), status_code=error.status, headers=headers)


MAX_BODY_BYTES = 1_000_000
MAX_JSON_DEPTH = 64
"""How deeply a request body may nest (a run request needs 3 levels)."""
log = logging.getLogger("loopwright.server")


async def json_body(request: Request) -> dict[str, Any]:
    """The request's body as a JSON object, or a 4xx that says what is wrong with it:
    not JSON, not an object, NaN/Infinity (422), nested deeper than MAX_JSON_DEPTH or a
    lone surrogate (400). A client that goes away mid-body costs one log line."""
    raw = await _read_body(request)
    if not raw.strip():
        raise ApiError(400, "request body is empty: expected a JSON object")
    data = parse_json(raw, "request body")
    if not isinstance(data, dict):
        raise ApiError(400, f"request body must be a JSON object, not {type(data).__name__}")
    return data


def parse_json(raw: bytes | str, what: str) -> Any:
    """JSON from a client (a request body, a WebSocket message) with the same limits:
    at most MAX_BODY_BYTES, no NaN/Infinity (422), no nesting deeper than MAX_JSON_DEPTH,
    no lone surrogate, no integer JSON here cannot take (400), each naming `what`."""
    if len(raw) > MAX_BODY_BYTES:
        raise ApiError(413, f"{what} is larger than {MAX_BODY_BYTES:,} bytes")
    try:
        data = json.loads(raw, parse_constant=_non_finite, parse_float=_finite_float)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"{what} is not valid JSON: {exc}") from None
    except RecursionError:
        raise ApiError(400, f"{what} nests deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as exc:  # an integer with too many digits
        raise ApiError(400, f"{what} has a number JSON here cannot take: {exc}") from None
    _check_shape(data, what)
    return data


async def _read_body(request: Request) -> bytes:
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise ApiError(413, f"request body is larger than {MAX_BODY_BYTES:,} bytes")
            chunks.append(chunk)
    except ClientDisconnect:
        log.warning(
            "client went away during the body of %s %s after %d bytes",
            request.method,
            request.url.path,
            size,
        )
        raise ApiError(400, "the client closed the connection before the body ended") from None
    return b"".join(chunks)


def _non_finite(name: str) -> Any:
    raise ApiError(422, f"{name} is not a number a request may carry (JSON has no {name})")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ApiError(422, f"{text} is too large a number (it would be infinite)")
    return value


def _check_shape(data: Any, what: str) -> None:
    """No nesting deeper than MAX_JSON_DEPTH, no string that is not valid Unicode."""
    todo: list[tuple[Any, int, str]] = [(data, 1, "")]
    while todo:
        value, depth, where = todo.pop()
        if depth > MAX_JSON_DEPTH:
            raise ApiError(400, f"{what} nests deeper than {MAX_JSON_DEPTH} levels")
        if isinstance(value, dict):
            for key, item in value.items():
                _check_text(key, where or "body")
                todo.append((item, depth + 1, f"{where}.{key}" if where else key))
        elif isinstance(value, list):
            todo.extend((item, depth + 1, f"{where}[{i}]") for i, item in enumerate(value))
        elif isinstance(value, str):
            _check_text(value, where)


def _check_text(text: str, where: str) -> None:
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = f"\\u{ord(text[exc.start]):04x}"
        raise ApiError(
            400, f"contains a lone surrogate ({bad}): not a Unicode character", field=where
        ) from None


MAX_SEQ = 2**53
"""The largest event seq a client may name (a store's integers go no further)."""


def seq_text(raw: str, field: str, what: str = "the seq of an event") -> int | None:
    """A seq a client wrote (a path part, a header): its value when it is ASCII digits, or
    a 422 naming `field`; None when it is beyond MAX_SEQ (no event has it)."""
    if not (raw.isascii() and raw.isdigit()):
        raise ApiError(422, f"must be {what} (an integer), got {raw[:40]!r}", field=field)
    value = int(raw) if len(raw) <= 20 else MAX_SEQ + 1
    return value if value <= MAX_SEQ else None


def seq_param(raw: str, field: str) -> int:
    """A seq to start after (a header, a WebSocket's `after`): 0 to MAX_SEQ, or a 422."""
    value = seq_text(raw, field)
    if value is None:
        raise ApiError(422, f"must be between 0 and {MAX_SEQ}, got {raw[:40]}", field=field)
    return value


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
