"""No other site can show the dashboard in a frame (a one-click Approve under an invisible
frame): every response says `X-Frame-Options: DENY` and `Content-Security-Policy:
frame-ancestors 'none'`, and a real Chromium refuses to load the dashboard in a frame of
a page served from another origin."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from server_helpers import LiveServer, live_server, make_config
from starlette.requests import Request
from starlette.responses import Response

from loopwright.server._guard import framed_headers


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    with live_server(make_config(tmp_path)) as live:

        async def boom(request: Request) -> Response:
            raise RuntimeError("a bug")

        live.app.add_route("/boom", boom)  # an unexpected failure: the app's own 500
        yield live


ROUTES = [
    ("GET", "/", 200),
    ("GET", "/static/app.js", 200),
    ("GET", "/favicon.ico", 200),
    ("GET", "/api/info", 200),
    ("GET", "/api/runs", 200),
    ("GET", "/api/openapi.json", 200),
    ("GET", "/api/runs/run_0123456789abcdef", 404),
    ("GET", "/static/no-such-file.js", 404),
    ("GET", "/no/such/page", 404),
    ("DELETE", "/api/runs", 405),
    ("POST", "/api/runs", 400),
    ("GET", "/boom", 500),
]


def test_every_response_refuses_framing(server: LiveServer) -> None:
    for method, route, status in ROUTES:
        response = httpx.request(method, f"{server.url}{route}", content=b"{")
        assert response.status_code == status, (route, response.text)
        assert response.headers["x-frame-options"] == "DENY", route
        assert response.headers["content-security-policy"] == "frame-ancestors 'none'", route
    cross_site = httpx.get(f"{server.url}/api/runs", headers={"Origin": "http://evil.example"})
    assert cross_site.status_code == 403
    assert cross_site.headers["x-frame-options"] == "DENY"


def test_a_policy_a_response_has_is_kept_and_its_frame_ancestors_replaced() -> None:
    headers = framed_headers(
        [
            (b"content-type", b"text/html"),
            (b"Content-Security-Policy", b"default-src 'self'; frame-ancestors *"),
            (b"X-Frame-Options", b"ALLOWALL"),
        ]
    )
    assert headers == [
        (b"content-type", b"text/html"),
        (b"x-frame-options", b"DENY"),
        (b"content-security-policy", b"default-src 'self'; frame-ancestors 'none'"),
    ]


@pytest.fixture
def framing_site(server: LiveServer) -> Iterator[str]:
    """Another origin (another port, another host name) whose page frames the dashboard."""
    page = (
        f'<!doctype html><title>evil</title><iframe id="victim" src="{server.url}/" '
        'width="800" height="600"></iframe>'
    ).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, format: str, *args: object) -> None:
            pass

    site = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    yield f"http://localhost:{site.server_address[1]}/"
    site.shutdown()
    site.server_close()
    thread.join(timeout=10)


@pytest.mark.browser
def test_chromium_refuses_the_dashboard_in_a_cross_origin_frame(
    browser: object, server: LiveServer, framing_site: str
) -> None:
    from playwright.sync_api import Browser

    assert isinstance(browser, Browser)
    context = browser.new_context()
    try:
        page = context.new_page()
        refusals: list[str] = []
        page.on("console", lambda message: refusals.append(message.text))
        page.goto(framing_site, wait_until="load", timeout=20_000)  # the frame is loaded too
        title = re.search(r"<title>(.*?)</title>", httpx.get(f"{server.url}/").text)
        assert title is not None
        [frame] = page.main_frame.child_frames
        assert not frame.url.startswith(server.url), frame.url  # Chromium's error page
        assert frame.evaluate("document.title") != title.group(1)
        assert any("frame-ancestors 'none'" in text for text in refusals), refusals
    finally:
        context.close()
