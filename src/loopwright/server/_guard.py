"""What a web page on another site must not do: drive this server through the user's browser.

Two checks, for HTTP and WebSocket alike (browsers do not apply CORS to WebSockets):
- `Origin`: a browser names the page that makes a request; one from another origin is
  refused (cross-site request forgery, cross-site WebSocket hijacking). Clients that are
  not browsers send no Origin and are not affected.
- `Host`: on loopback the server answers only to loopback names, so a site whose DNS name
  is rebound to 127.0.0.1 cannot pass as same-origin.
"""

from __future__ import annotations

from collections.abc import Collection
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from loopwright.server._http import ApiError, error_response


def host_name(host: str) -> str:
    """`127.0.0.1:8765` -> `127.0.0.1`; `[::1]:8765` -> `::1`."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class BrowserGuard:
    def __init__(self, app: ASGIApp, allowed_hosts: Collection[str] | None) -> None:
        self.app = app
        self.allowed_hosts = None if allowed_hosts is None else {h.lower() for h in allowed_hosts}

    def problem(self, scope: Scope) -> str | None:
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if self.allowed_hosts is not None and host_name(host) not in self.allowed_hosts:
            return f"host {host!r} is not served here"
        origin = headers.get("origin")
        if origin is not None and urlsplit(origin).netloc.lower() != host.lower():
            return f"cross-site request from {origin!r} refused"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        problem = self.problem(scope) if scope["type"] in ("http", "websocket") else None
        if problem is None:
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 4403, "reason": problem})
        else:
            await error_response(ApiError(403, problem))(scope, receive, send)
