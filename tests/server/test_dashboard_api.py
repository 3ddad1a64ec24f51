"""What the dashboard reads from the API besides the runs' events: whether a running run
waits for approval (listed and single), the models the server offers, the favicon, and a
task gate's decision reason in the log."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_helpers import LiveServer, live_server, make_config, start_run, tasks_folder

from loopwright.store import open_store


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    config = make_config(
        tmp_path,
        store=open_store(tmp_path / "runs.db"),
        tasks_dir=tasks_folder(tmp_path),
        allow_models=frozenset({"ollama:*", "ollama:qwen3:8b"}),
    )
    with live_server(config) as live:
        yield live


def until(server: LiveServer, run_id: str, ready: Any) -> dict[str, Any]:
    """The run as GET shows it, once `ready(run)` holds (a polled condition, 20 s)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        run: dict[str, Any] = httpx.get(f"{server.url}/api/runs/{run_id}").json()
        if ready(run):
            return run
        time.sleep(0.02)
    raise AssertionError(f"run {run_id} never got there")


def listed(server: LiveServer, run_id: str) -> dict[str, Any]:
    runs = httpx.get(f"{server.url}/api/runs").json()["runs"]
    [run] = [r for r in runs if r["run_id"] == run_id]
    return dict(run)


def test_a_run_at_its_gate_is_waiting_for_approval(server: LiveServer) -> None:
    run_id = start_run(server, {"task": "publish-notes", "inputs": {"title": "T"}})["run_id"]
    run = until(server, run_id, lambda r: r["pending_gates"])
    assert run["waiting_for_approval"] is True and run["status"] == "running"
    assert listed(server, run_id)["waiting_for_approval"] is True
    gate = run["pending_gates"][0]["request_id"]
    decided = httpx.post(
        f"{server.url}/api/runs/{run_id}/gates/{gate}",
        json={"approve": False, "reason": "wrong title"},
    )
    assert decided.status_code == 200
    run = until(server, run_id, lambda r: r["status"] != "running")
    assert run["waiting_for_approval"] is False
    assert listed(server, run_id)["waiting_for_approval"] is False
    events = httpx.get(f"{server.url}/api/runs/{run_id}/events").json()["events"]
    [decision] = [e for e in events if e["type"] == "gate_decision"]
    assert (decision["approved"], decision["reason"]) == (False, "wrong title")


def test_info_offers_the_servers_models_but_no_scripted_file(server: LiveServer) -> None:
    info = httpx.get(f"{server.url}/api/info").json()
    assert info["models"] == ["local", "ollama:*", "ollama:qwen3:8b"]  # not scripted:/...


def test_the_favicon_is_served(server: LiveServer) -> None:
    icon = httpx.get(f"{server.url}/favicon.ico")
    assert icon.status_code == 200
    assert icon.headers["content-type"] == "image/x-icon"
    assert icon.content[:4] == b"\x00\x00\x01\x00"  # an ICO file
    assert 'rel="icon" href="/favicon.ico"' in httpx.get(server.url + "/").text
