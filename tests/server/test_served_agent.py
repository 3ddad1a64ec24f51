"""A server given an agent built in code (`ServerConfig.agent`, `serve --agent`), over real
HTTP: its runs run that agent; one that ends `waiting` shows so, its gate is decided and it is
resumed; follow-ups and forks of its runs run it too."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from dashboard_scene import wait_for
from server_helpers import LiveServer, live_server, make_config

from loopwright import AgentExecutor, tool
from loopwright.testing import ScriptedModel

ARCHIVED: list[str] = []


@tool(effect="write")
def archive(name: str) -> str:
    """Move a note to the archive.

    Args:
        name: the note's file name
    """
    ARCHIVED.append(name)
    return f"archived {name}"


def archiving_agent(*answers: str) -> AgentExecutor[Any, Any]:
    """A call that waits for approval, then `answers` (one per run after it)."""
    replies = [{"thought": "archive it", "action": "archive", "action_input": {"name": "a.txt"}}]
    replies += [{"thought": "done", "final_answer": answer} for answer in answers]
    model = ScriptedModel([json.dumps(r) for r in replies], strict=False)
    return AgentExecutor(model, [archive], approve=["archive"], on_pending="wait")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[LiveServer]:
    ARCHIVED.clear()
    config = make_config(tmp_path)
    config.agent = archiving_agent("Archived a.txt.", "It is in the archive.", "Forked.")
    with live_server(config) as live:
        yield live


def post(server: LiveServer, path: str, body: dict[str, Any] | None = None) -> httpx.Response:
    return httpx.post(f"{server.url}{path}", json=body or {}, timeout=20)


def ended(view: dict[str, Any]) -> bool:
    return view["status"] not in ("queued", "running")


def waiting_run(server: LiveServer) -> dict[str, Any]:
    created = post(server, "/api/runs", {"request": "archive the old note"})
    assert created.status_code == 201, created.text
    return wait_for(server, created.json()["run_id"], ended)


def test_a_run_that_ends_waiting_is_decided_and_resumed(served: LiveServer) -> None:
    run = waiting_run(served)
    assert run["status"] == "waiting"
    assert run["model"] == "scripted"  # the server's agent, not a model of the request
    [gate] = run["pending_gates"]
    assert ARCHIVED == []  # nothing ran without a decision

    decided = post(served, f"/api/runs/{run['run_id']}/gates/{gate['request_id']}",
                   {"approve": True})  # fmt: skip
    assert decided.status_code == 202
    assert decided.json()["delivered"] == "store"  # kept for the resume
    resumed = post(served, f"/api/runs/{run['run_id']}/resume")
    assert resumed.status_code == 202, resumed.text
    done = wait_for(served, run["run_id"], lambda v: v["status"] == "completed")
    assert done["answer"] == "Archived a.txt."
    assert done["pending_gates"] == []
    assert ARCHIVED == ["a.txt"]  # once


def test_a_request_names_no_agent_of_its_own(served: LiveServer, tmp_path: Path) -> None:
    response = post(served, "/api/runs", {"request": "r", "model": "local", "tools": ["echo"]})
    assert response.status_code == 422
    assert "runs its own agent (serve --agent)" in response.json()["error"]["message"]
    assert httpx.get(f"{served.url}/api/runs").json()["runs"] == []


def test_follow_ups_and_forks_run_the_servers_agent(served: LiveServer) -> None:
    run = waiting_run(served)
    gate = run["pending_gates"][0]["request_id"]
    post(served, f"/api/runs/{run['run_id']}/gates/{gate}", {"approve": True})
    post(served, f"/api/runs/{run['run_id']}/resume")
    wait_for(served, run["run_id"], lambda v: v["status"] == "completed")

    created = post(served, "/api/runs", {"request": "where is it?", "after": run["run_id"]})
    assert created.status_code == 201, created.text
    turn = wait_for(served, created.json()["run_id"], ended)
    assert (turn["status"], turn["answer"]) == ("completed", "It is in the archive.")
    assert [t["run_id"] for t in turn["turns"]] == [run["run_id"], turn["run_id"]]

    forked = post(served, f"/api/runs/{run['run_id']}/fork", {"at": 1, "request": "again"})
    assert forked.status_code == 201, forked.text
    fork = wait_for(served, forked.json()["run_id"], ended)
    assert (fork["status"], fork["answer"]) == ("completed", "Forked.")
    assert fork["fork_of"] == {"run_id": run["run_id"], "step": 1}
    assert ARCHIVED == ["a.txt"]  # the fork's first step was served from the log
    model = post(served, f"/api/runs/{run['run_id']}/fork", {"at": 1, "model": "local"})
    assert (model.status_code, model.json()["error"]["field"]) == (422, "model")


def test_a_server_without_the_agent_says_how_to_resume_or_fork(tmp_path: Path) -> None:
    ARCHIVED.clear()
    config = make_config(tmp_path)
    config.agent = archiving_agent("done")
    with live_server(config) as server:
        run = waiting_run(server)
        config.agent = None  # as a server started without --agent on the same store
        for action, body in (("resume", {}), ("fork", {"at": 0})):
            response = post(server, f"/api/runs/{run['run_id']}/{action}", body)
            assert response.status_code == 409, action
            message = response.json()["error"]["message"]
            assert "serve with --agent MODULE:ATTRIBUTE" in message
            assert "\n" not in message
        assert len(httpx.get(f"{server.url}/api/runs").json()["runs"]) == 1  # no fork
    assert ARCHIVED == []


RELEASE = threading.Event()


@tool(effect="write")
def slow_archive(name: str) -> str:
    """Move a note to the archive, once the test lets it.

    Args:
        name: the note's file name
    """
    RELEASE.wait(timeout=30)
    ARCHIVED.append(name)
    return f"archived {name}"


def test_a_run_resumed_twice_runs_once(tmp_path: Path) -> None:
    """A second resume (a double click) while the resumed run executes is a 409: the call
    it approved runs once."""
    ARCHIVED.clear()
    RELEASE.clear()
    replies = [
        {"thought": "archive it", "action": "slow_archive", "action_input": {"name": "a.txt"}},
        {"thought": "done", "final_answer": "Archived."},
    ]
    config = make_config(tmp_path)
    config.agent = AgentExecutor(
        ScriptedModel([json.dumps(r) for r in replies], strict=False), [slow_archive],
        approve=["slow_archive"], on_pending="wait",
    )  # fmt: skip
    with live_server(config) as server:
        run = waiting_run(server)
        gate = run["pending_gates"][0]["request_id"]
        post(server, f"/api/runs/{run['run_id']}/gates/{gate}", {"approve": True})
        assert post(server, f"/api/runs/{run['run_id']}/resume").status_code == 202
        again = post(server, f"/api/runs/{run['run_id']}/resume")
        RELEASE.set()
        assert again.status_code == 409, again.text
        assert "already running" in again.json()["error"]["message"]
        done = wait_for(server, run["run_id"], lambda v: v["status"] == "completed")
    assert done["answer"] == "Archived."
    assert ARCHIVED == ["a.txt"]
