"""What a web page on another site must not do: drive this server through the user's browser.

Two checks, for HTTP and WebSocket alike (browsers do not apply CORS to WebSockets), and
no framing (FrameGuard):
- `Origin`: a browser names the page that makes a request; one from another origin is
  refused (cross-site request forgery, cross-site WebSocket hijacking). Clients that are
  not browsers send no Origin and are not affected.
- `Host`: on loopback the server answers only to loopback names, so a site whose DNS name
  is rebound to 127.0.0.1 cannot pass as same-origin.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

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


FRAME_ANCESTORS = "frame-ancestors 'none'"


class FrameGuard:
    """No page may show this server in a frame (a one-click Approve under an invisible
    frame): every HTTP response, the API, static files and errors included, carries
    `X-Frame-Options: DENY` and `Content-Security-Policy: frame-ancestors 'none'` (added to
    a policy the response already has, in place of any `frame-ancestors` in it)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_framed(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": framed_headers(message.get("headers", []))}
            await send(message)

        await self.app(scope, receive, send_framed)


def framed_headers(headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """`headers` with X-Frame-Options DENY and frame-ancestors 'none' in the CSP."""
    kept: list[tuple[bytes, bytes]] = []
    policies: list[str] = []
    for name, value in headers:
        lowered = name.lower()
        if lowered == b"content-security-policy":
            policies.append(value.decode("latin-1"))
        elif lowered != b"x-frame-options":
            kept.append((name, value))
    directives = [
        part.strip()
        for policy in policies
        for part in policy.split(";")
        if part.strip() and not part.strip().lower().startswith("frame-ancestors")
    ]
    policy = "; ".join([*directives, FRAME_ANCESTORS])
    kept.append((b"x-frame-options", b"DENY"))
    kept.append((b"content-security-policy", policy.encode("latin-1")))
    return kept
