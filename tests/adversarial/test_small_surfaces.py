"""Smaller holes: an MCP server cannot pass its tools off as loopwright's own (`run_command`,
`read`) nor offer names no model could call; a gate decision's reason is bounded (a
900 KB one was stored and sent to the model); the live view does not say "completed" for a
run whose last store write failed (the store says interrupted)."""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from pathlib import Path

import httpx
import pytest
from cli_run import loopwright, script
from test_http_attacks import ACME, TOKENS, Served

from loopwright.run_context import MAX_REASON_CHARS, GateVerdict
from loopwright.runtime import Runtime
from loopwright.server import ServerConfig
from loopwright.testing import InMemoryRunStore

HOSTILE_MCP = f"{sys.executable} {Path(__file__).parent / 'hostile_mcp_server.py'}"


@pytest.mark.subprocess
def test_mcp_tools_cannot_take_builtin_names_or_invalid_ones(tmp_path: Path) -> None:
    model = script(
        tmp_path / "s.json",
        [
            {"thought": "t", "action": "read", "action_input": {"path": "notes.txt"}},
            {"thought": "t", "final_answer": "done"},
        ],
    )
    (tmp_path / "notes.txt").write_text("the real file")
    done = loopwright("run", "go", "--model", model, "--tools", "read", "--mcp", HOSTILE_MCP,
                      "--json", home=tmp_path)  # fmt: skip
    assert done.code == 0, done.both
    events = [json.loads(line) for line in done.out.splitlines()]
    tools = events[0]["tools"]
    assert "read" in tools and "hostile__read" in tools and "hostile__run_command" in tools
    assert "run_command" not in tools
    assert not any(" " in name or "\n" in name or len(name) > 80 for name in tools)
    [call] = [e for e in events if e["type"] == "tool_call"]
    assert call["result"] == "the real file"  # the built-in read, not the server's
    assert "tool 'two words' left out" in done.err and "'line\\nbreak'" in done.err


def test_a_gate_reason_is_bounded(tmp_path: Path) -> None:
    long = "why " * 225_000  # 900 KB
    verdict = GateVerdict("rejected", "api:acme", long)
    assert len(verdict.reason) < MAX_REASON_CHARS + 40 and verdict.reason.endswith("cut]")

    allowed = tmp_path / "allowed"
    allowed.mkdir()
    model = script(
        allowed / "s.json",
        [
            {"thought": "t", "action": "echo", "action_input": {"text": "hi"}},
            {"thought": "t", "final_answer": "done"},
        ],
    )
    config = ServerConfig(
        runtime=Runtime(InMemoryRunStore()), tokens=TOKENS, workspace=str(tmp_path),
        allowed_models=frozenset({f"scripted:{allowed}/*"}),
    )  # fmt: skip
    server = Served(config)
    try:
        body = {"prompt": "p", "model": model, "tools": ["echo"], "approve": ["echo"]}
        run_id = httpx.post(f"{server.url}/api/runs", headers=ACME, json=body).json()["run_id"]
        gate = None
        deadline = time.monotonic() + 20
        while gate is None and time.monotonic() < deadline:
            page = httpx.get(f"{server.url}/api/runs/{run_id}/events", headers=ACME).json()
            asked = [e for e in page["events"] if e["type"] == "confirmation_required"]
            gate = asked[0]["request_id"] if asked else None
        url = f"{server.url}/api/runs/{run_id}/gates/{gate}"
        refused = httpx.post(url, headers=ACME, json={"approve": False, "reason": long})
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["field"] == "reason"
        decided = httpx.post(url, headers=ACME, json={"approve": False, "reason": "too risky"})
        assert decided.status_code in (200, 202), decided.text
    finally:
        server.stop()

    cli_reason = "why " * 25_000  # 100 KB: one command-line argument can hold it
    done = loopwright("runs", "approve", "run_0000000000000000", "--reject", "--reason",
                      cli_reason, home=tmp_path)  # fmt: skip
    assert done.code == 2 and f"--reason: at most {MAX_REASON_CHARS:,} characters" in done.err


def test_the_view_never_says_completed_when_the_last_write_failed(tmp_path: Path) -> None:
    model = script(tmp_path / "s.json", [{"thought": "t", "final_answer": "all done"}])
    store = tmp_path / "runs.db"
    first = loopwright("run", "warm up", "--model", model, home=tmp_path)  # creates the store
    assert first.code == 0, first.both
    with sqlite3.connect(store) as db:  # a real failure of the real store, at the last write
        db.execute(
            "CREATE TRIGGER refuse_the_end BEFORE INSERT ON events WHEN NEW.type = "
            "'run_finished' BEGIN SELECT RAISE(ABORT, 'disk I/O error (injected)'); END"
        )
    done = loopwright("run", "the real run", "--model", model, home=tmp_path)
    assert done.code == 1, done.both
    assert "completed" not in done.out and "Final Answer" not in done.out
    assert "run failed" in done.err and "injected" in done.err
    listed = loopwright("runs", "list", "--json", home=tmp_path)
    [record] = [r for r in json.loads(listed.out) if r["request"] == "the real run"]
    assert record["status"] == "interrupted"
