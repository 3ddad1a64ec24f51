"""An agent's tool call waits for approval in the dashboard (a real Chromium): the gate
card, a rejection with a reason typed in it, the reason in the timeline and in the log;
and an approval through the HTTP API for a second run."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from server_helpers import LiveServer, live_server, make_config, start_run, write_script

pytestmark = pytest.mark.browser
TIMEOUT_MS = 20_000


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    with live_server(make_config(tmp_path)) as live:
        yield live


def _script(tmp_path: Path) -> str:
    replies = [
        {"thought": "write it", "action": "write_file",
         "action_input": {"path": "NOTES.md", "content": "hello"}},
        {"thought": "done", "final_answer": "handled"},
    ]  # fmt: skip
    return write_script(tmp_path / "script.json", [json.dumps(r) for r in replies])


def _body(tmp_path: Path) -> dict[str, object]:
    return {"prompt": "write notes", "model": _script(tmp_path), "tools": ["write_file"],
            "approve": ["write"]}  # fmt: skip


def test_reject_with_a_reason_in_the_dashboard(
    browser: Browser, server: LiveServer, tmp_path: Path
) -> None:
    run_id = start_run(server, _body(tmp_path))["run_id"]
    page: Page = browser.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{server.url}/#/runs/{run_id}")
    card = page.locator(".gate-card")
    expect(card).to_contain_text("Allow the agent to call write_file")
    expect(card).to_contain_text("the call is not run")
    page.fill(".gate-card .gate-reason", "not in this folder")
    page.click(".gate-card button.reject")
    expect(page.locator("[data-field=status]")).to_have_text("completed")
    rejected = page.locator("li", has_text="Rejected by api:default: not in this folder")
    expect(rejected).to_have_count(1)
    assert page.locator(".gate-card").count() == 0
    page.close()
    assert errors == []
    assert not (tmp_path / "ws" / "NOTES.md").exists()
    events = httpx.get(f"{server.url}/api/runs/{run_id}/events").json()["events"]
    [decided] = [e for e in events if e["type"] == "gate_decision"]
    assert (decided["approved"], decided["reason"]) == (False, "not in this folder")


def _poll(client: httpx.Client, run_id: str, ready: Any) -> dict[str, Any]:
    """The run's view once `ready(view)` holds (polling a condition with a deadline)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        view: dict[str, Any] = client.get(f"/api/runs/{run_id}").json()
        if ready(view):
            return view
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} never got there: {view}")


def test_approve_through_the_http_api(server: LiveServer, tmp_path: Path) -> None:
    run_id = start_run(server, _body(tmp_path))["run_id"]
    with httpx.Client(base_url=server.url, timeout=10) as client:
        view = _poll(client, run_id, lambda v: v.get("pending_gates"))
        gate_id = view["pending_gates"][0]["request_id"]
        decided = client.post(f"/api/runs/{run_id}/gates/{gate_id}", json={"approve": True})
        assert decided.status_code == 200, decided.text
        _poll(client, run_id, lambda v: v["status"] == "completed")
    assert (tmp_path / "ws" / "NOTES.md").read_text() == "hello"
