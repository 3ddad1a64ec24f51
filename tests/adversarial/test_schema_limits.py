"""JSON Schemas nobody vouches for run in bounded time: `--output-schema`, an API client's
`output_schema` and an MCP server's `inputSchema` with a catastrophic pattern
(`^(a+)+$` against 32 `a` and a `!`: minutes with a backtracking engine, each extra
character doubling it) are checked at once; the server answers other requests meanwhile;
a `$ref` is never fetched; a pattern that needs backtracking and a schema nested 500 deep
are refused with one clear line."""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from cli_run import loopwright, script
from test_http_attacks import ACME, TOKENS, Served

from loopwright.runtime import Runtime
from loopwright.server import ServerConfig
from loopwright.testing import InMemoryRunStore

CATASTROPHIC = {
    "type": "object",
    "properties": {"code": {"type": "string", "pattern": "^(a+)+$"}},
    "required": ["code"],
}
HOSTILE_ANSWER = "a" * 32 + "!"
REFUSED = 'does not match "^(a+)+$"'  # the pattern was run, and failed
HOSTILE_MCP = f"{sys.executable} {Path(__file__).parent / 'hostile_mcp_server.py'}"


def _answers(path: Path, count: int) -> str:
    return script(path, [{"thought": "t", "final_answer": {"code": HOSTILE_ANSWER}}] * count)


def test_an_output_schema_pattern_is_checked_within_the_timeout(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(CATASTROPHIC))
    model = _answers(tmp_path / "s.json", 3)
    done = loopwright("run", "answer", "--model", model, "--output-schema", str(schema),
                      "--timeout", "3", home=tmp_path)  # fmt: skip
    assert done.code == 1 and "Traceback" not in done.both, done.both
    assert REFUSED in done.err
    assert done.seconds < 15  # the run's own limit is 3 s; before: minutes past it


def test_the_server_answers_while_a_hostile_schema_is_validated(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    model = _answers(allowed / "s.json", 3)
    config = ServerConfig(
        runtime=Runtime(InMemoryRunStore()), tokens=TOKENS, workspace=str(tmp_path),
        allowed_models=frozenset({f"scripted:{allowed}/*"}),
    )  # fmt: skip
    server = Served(config)
    try:
        body = {"prompt": "p", "model": model, "output_schema": CATASTROPHIC}
        started = time.monotonic()
        response = httpx.post(f"{server.url}/api/runs", headers=ACME, json=body, timeout=60)
        assert response.status_code == 201, response.text
        run_id = response.json()["run_id"]
        slowest = 0.0
        status = "running"
        while status == "running" and time.monotonic() - started < 30:
            asked = time.monotonic()
            info = httpx.get(f"{server.url}/api/info", headers=ACME, timeout=30)
            slowest = max(slowest, time.monotonic() - asked)
            assert info.status_code == 200
            run = httpx.get(f"{server.url}/api/runs/{run_id}", headers=ACME, timeout=30)
            status = run.json()["status"]
        assert status == "failed", run.text
        page = httpx.get(f"{server.url}/api/runs/{run_id}/events", headers=ACME, timeout=30)
        invalid = [e for e in page.json()["events"] if e["type"] == "output_invalid"]
        assert invalid and all(REFUSED in " ".join(e["errors"]) for e in invalid)
        assert slowest < 2.0  # before: /api/info froze for as long as the match ran
        assert time.monotonic() - started < 15
    finally:
        server.stop()


@pytest.mark.subprocess
def test_an_mcp_input_schema_pattern_is_checked_at_once(tmp_path: Path) -> None:
    model = script(
        tmp_path / "s.json",
        [
            {"thought": "t", "action": "echo_text", "action_input": {"text": HOSTILE_ANSWER}},
            {"thought": "t", "final_answer": "done"},
        ],
    )
    done = loopwright("run", "go", "--model", model, "--mcp", HOSTILE_MCP, "--json",
                      "--timeout", "20", home=tmp_path)  # fmt: skip
    assert done.code == 0, done.both
    [call] = [json.loads(line) for line in done.out.splitlines() if '"tool_call"' in line]
    assert call["is_error"] and REFUSED in call["result"]
    assert done.seconds < 20


@pytest.mark.subprocess
def test_a_ref_is_never_fetched(tmp_path: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/schema.json"
    contacted: list[object] = []

    def watch() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not stop.is_set():
            try:
                contacted.append(listener.accept())
            except TimeoutError:
                continue

    stop = threading.Event()
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        schema = tmp_path / "schema.json"
        schema.write_text(json.dumps({"type": "object", "properties": {"a": {"$ref": url}}}))
        model = script(tmp_path / "s.json", [{"thought": "t", "final_answer": {"a": 1}}])
        done = loopwright("run", "x", "--model", model, "--output-schema", str(schema),
                          home=tmp_path)  # fmt: skip
        assert done.code == 2 and "output schema cannot be used" in done.err, done.both
        mcp_model = script(
            tmp_path / "m.json",
            [
                {"thought": "t", "action": "fetch_remote", "action_input": {"text": "x"}},
                {"thought": "t", "final_answer": "done"},
            ],
        )
        via_mcp = loopwright("run", "go", "--model", mcp_model, "--mcp",
                             f"{HOSTILE_MCP} {url}", "--json", home=tmp_path)  # fmt: skip
        assert via_mcp.code == 0, via_mcp.both
        assert "input schema cannot be used" in via_mcp.out
    finally:
        stop.set()
        watcher.join()
        listener.close()
    assert contacted == []


def test_patterns_that_need_backtracking_and_deep_schemas_are_refused(tmp_path: Path) -> None:
    model = script(tmp_path / "s.json", [{"thought": "t", "final_answer": "x"}])
    lookahead = tmp_path / "lookahead.json"
    lookahead.write_text(json.dumps({"type": "string", "pattern": "^(?=.*[0-9])(a+)+$"}))
    deep = tmp_path / "deep.json"
    nested: dict[str, object] = {"type": "string"}
    for _ in range(500):
        nested = {"type": "array", "items": nested}
    deep.write_text(json.dumps(nested))
    deeper = tmp_path / "deeper.json"  # past what Python's json module reads
    deeper.write_text('{"items": ' * 100_000 + "{}" + "}" * 100_000)
    for path, expected in (
        (lookahead, "without lookarounds (?=...) or backreferences"),
        (deep, "nested more than 64 levels deep"),
        (deeper, "nested too deeply to read (a schema may nest 64 levels)"),
    ):
        done = loopwright("run", "x", "--model", model, "--output-schema", str(path),
                          home=tmp_path)  # fmt: skip
        assert done.code == 2 and "Traceback" not in done.both, done.both
        assert f"--output-schema {path}: output schema cannot be used" in done.err
        assert expected in done.err
