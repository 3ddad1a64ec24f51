"""A skill too big for a model served by llama.cpp's llama-server: the server says its
context size at GET /props, and the run is refused before any chat request is sent."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from loopwright.cli import main
from loopwright.models import OpenAIModel


@contextmanager
def llama_like_server(n_ctx: int | None) -> Iterator[tuple[str, list[str]]]:
    """A loopback server answering GET /props as llama-server does (or 404 without
    `n_ctx`); it records every request path."""
    paths: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return None

        def answer(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            paths.append(self.path)
            if self.path == "/props" and n_ctx is not None:
                self.answer(200, {"default_generation_settings": {"n_ctx": n_ctx}})
            else:
                self.answer(404, {"error": "not found"})

        def do_POST(self) -> None:
            paths.append(self.path)
            self.answer(500, {"error": "this test expects no chat request"})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", paths
    finally:
        server.shutdown()
        server.server_close()


def test_llama_server_reports_its_context_and_is_asked_once() -> None:
    with llama_like_server(4096) as (url, paths):
        model = OpenAIModel("qwen", base_url=url)
        assert model.context_window() == 4096
        assert model.context_window() == 4096
    assert paths == ["/props"]


def test_a_server_without_props_reports_nothing() -> None:
    with llama_like_server(None) as (url, _paths):
        assert OpenAIModel("qwen", base_url=url).context_window() is None


def test_a_skill_too_big_for_the_servers_context_is_refused_before_a_chat(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "big"
    folder.mkdir()
    body = "Apply the rule to each line of the input and report it. " * 400  # ~22 KB
    (folder / "SKILL.md").write_text(f"---\nname: big\ndescription: d\n---\n{body}\n")
    with llama_like_server(4096) as (url, paths):
        code = main(["run", "x", "--skill", str(folder), "--model", "openai:qwen",
                     "--base-url", url, "--json"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert "the skill is too big for the model" in err
    assert "the model reads at most 4,096 tokens" in err
    assert paths == ["/props"]  # no chat request
