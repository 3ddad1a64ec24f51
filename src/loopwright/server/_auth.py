"""Who is asking: a Bearer token (or `access_token` query parameter) maps to a tenant."""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from starlette.requests import HTTPConnection

from loopwright.server._config import DEFAULT_TENANT
from loopwright.server._http import ApiError


def tenant_of(connection: HTTPConnection, tokens: Mapping[str, str] | None) -> str:
    """The caller's tenant, or a 401. Browsers' EventSource and WebSocket cannot set
    headers, so `?access_token=` is accepted too."""
    if tokens is None:
        return DEFAULT_TENANT
    token = _presented_token(connection)
    if token is None:
        raise ApiError(401, "missing token: send 'Authorization: Bearer <token>'")
    tenant = None
    for known, known_tenant in tokens.items():
        if hmac.compare_digest(known.encode(), token.encode()):
            tenant = known_tenant
    if tenant is None:
        raise ApiError(401, "unknown token")
    return tenant


def _presented_token(connection: HTTPConnection) -> str | None:
    header = connection.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    query = connection.query_params.get("access_token")
    return query or None
