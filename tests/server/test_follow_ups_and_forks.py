"""Follow-ups (`POST /api/runs` with `after`) and forks (`POST /api/runs/{id}/fork`) over
real HTTP against uvicorn: each turn a run of its own, linked; the refusals, one line each."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_helpers import (
    ACME,
    GLOBEX,
    TOKENS,
    LiveServer,
    echo_script,
    live_server,
    make_config,
    start_run,
    tasks_folder,
    wait_finished,
    write_script,
)

from loopwright.events import event_from_dict, event_to_dict
from loopwright.runtime import RunSpec, Runtime
from loopwright.store import open_store


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    with live_server(make_config(tmp_path, store=open_store(tmp_path / "runs.db"))) as live:
        yield live


def post(server: LiveServer, path: str, body: dict[str, Any], **kw: Any) -> httpx.Response:
    return httpx.post(f"{server.url}{path}", json=body, timeout=20, **kw)


def error_of(response: httpx.Response) -> dict[str, Any]:
    error: dict[str, Any] = response.json()["error"]
    assert "\n" not in error["message"]  # one line
    return error


def sent_messages(server: LiveServer, run_id: str) -> list[dict[str, Any]]:
    """The messages of the run's first model call (as the API rebuilds them)."""
    events = httpx.get(f"{server.url}/api/runs/{run_id}/events", params={"after": 0}).json()
    first = next(e for e in events["events"] if e["type"] == "model_response")
    call = httpx.get(f"{server.url}/api/runs/{run_id}/model_calls/{first['seq']}").json()
    messages: list[dict[str, Any]] = call["request"]["messages"]
    return messages


def test_a_follow_up_is_a_run_after_the_turn_before(server: LiveServer, tmp_path: Path) -> None:
    script = echo_script(tmp_path / "s.json", 1, answer="echoed once")
    first = start_run(server, {"request": "echo once", "model": script, "tools": ["echo"]})
    assert wait_finished(server, first["run_id"])["status"] == "completed"

    # no agent named: the turn before's (its model, tools), with the earlier turn as history
    second = start_run(server, {"request": "and now again", "after": first["run_id"]})
    done = wait_finished(server, second["run_id"])
    assert done["status"] == "completed"
    assert done["after_run_id"] == first["run_id"]
    assert (done["model"], done["tools"]) == (script, ["echo"])
    texts = [str(m.get("content")) for m in sent_messages(server, second["run_id"])]
    assert any("echo once" in t for t in texts)  # the first turn's request
    assert any("echoed once" in t for t in texts)  # and its answer
    assert "and now again" in texts[-1]

    # the conversation, from either turn: oldest first
    for run_id in (first["run_id"], second["run_id"]):
        view = httpx.get(f"{server.url}/api/runs/{run_id}").json()
        assert [t["run_id"] for t in view["turns"]] == [first["run_id"], second["run_id"]]
    assert view["turns"][0]["answer"] == "echoed once"


def test_prompt_is_the_older_name_of_request(server: LiveServer, tmp_path: Path) -> None:
    script = echo_script(tmp_path / "s.json", 0)
    run = start_run(server, {"prompt": "the old name", "model": script})
    assert run["request"] == "the old name"
    both = post(server, "/api/runs", {"prompt": "a", "request": "b", "model": script})
    assert both.status_code == 422
    assert error_of(both)["field"] == "prompt"
    neither = post(server, "/api/runs", {"model": script})
    assert neither.status_code == 422
    assert "'request'" in error_of(neither)["message"]


def test_a_follow_up_names_its_own_agent(server: LiveServer, tmp_path: Path) -> None:
    first = start_run(server, {"request": "one", "model": echo_script(tmp_path / "a.json", 0)})
    wait_finished(server, first["run_id"])
    other = echo_script(tmp_path / "b.json", 0, answer="from b")
    second = start_run(server, {"request": "two", "after": first["run_id"], "model": other})
    assert wait_finished(server, second["run_id"])["answer"] == "from b"


def test_a_follow_up_of_a_run_still_running_is_refused(server: LiveServer, tmp_path: Path) -> None:
    gated = start_run(
        server,
        {"request": "wait", "model": echo_script(tmp_path / "s.json", 1), "tools": ["echo"],
         "approve": ["echo"]},
    )  # fmt: skip
    run_id = gated["run_id"]
    response = post(server, "/api/runs", {"request": "next", "after": run_id})
    assert response.status_code == 409
    error = error_of(response)
    assert error["field"] == "after"
    assert f"run {run_id} is still running" in error["message"]
    listed = httpx.get(f"{server.url}/api/runs").json()["runs"]
    assert [r["run_id"] for r in listed] == [run_id]  # nothing started
    httpx.post(f"{server.url}/api/runs/{run_id}/cancel", timeout=20)


def test_a_follow_up_of_a_missing_run_is_not_found(server: LiveServer) -> None:
    response = post(server, "/api/runs", {"request": "next", "after": "no-such-run"})
    assert response.status_code == 404
    assert error_of(response) == {
        "status": 404, "message": "after: no run 'no-such-run'", "field": "after"
    }  # fmt: skip
    bad = post(server, "/api/runs", {"request": "next", "after": 12})
    assert (bad.status_code, error_of(bad)["field"]) == (422, "after")


def test_another_tenants_runs_cannot_be_followed_up_or_forked(tmp_path: Path) -> None:
    config = make_config(tmp_path, tokens=TOKENS)
    with live_server(config) as server:
        script = echo_script(tmp_path / "s.json", 1)
        theirs = start_run(server, {"request": "secret", "model": script, "tools": ["echo"]}, ACME)
        wait_finished(server, theirs["run_id"], ACME)
        follow = post(server, "/api/runs", {"request": "tell me", "after": theirs["run_id"]},
                      headers=GLOBEX)  # fmt: skip
        fork = post(server, f"/api/runs/{theirs['run_id']}/fork", {"at": 1}, headers=GLOBEX)
        for response in (follow, fork):
            assert response.status_code == 404  # as for a run that does not exist
            assert "secret" not in response.text
        listed = httpx.get(f"{server.url}/api/runs", headers=GLOBEX).json()["runs"]
        assert listed == []


def test_a_follow_up_takes_no_agent_this_server_does_not_offer(tmp_path: Path) -> None:
    """A run stored by another process (its agent with a tool the server does not offer):
    a follow-up through the API does not run that agent."""
    store = open_store(tmp_path / "runs.db")
    config = make_config(tmp_path, store=store)
    script = echo_script(tmp_path / "s.json", 0)
    spec = RunSpec("list it", model=script, tools=("echo", "write_file"),
                   workspace=config.workspace)  # fmt: skip
    config.allowed_tools = frozenset({"echo"})
    runtime = Runtime(store)

    async def run_elsewhere() -> str:
        result = await runtime.start(spec).wait()
        return str(result.run_id)

    run_id = asyncio.run(run_elsewhere())
    runtime.close()
    with live_server(config) as server:
        for path, body in (("/api/runs", {"request": "go on", "after": run_id}),
                           (f"/api/runs/{run_id}/fork", {"at": 0})):  # fmt: skip
            response = post(server, path, body)
            assert response.status_code == 422
            assert "tool 'write_file'" in error_of(response)["message"]
        assert [r["run_id"] for r in httpx.get(f"{server.url}/api/runs").json()["runs"]] == [run_id]


def test_a_run_of_the_workers_agent_is_followed_up_only_by_a_server_serving_it(
    tmp_path: Path,
) -> None:
    """A run whose spec names an agent built in Python (started for Temporal workers
    started with `--agent`): a server not started with that --agent neither follows it up
    nor forks it (it would run an agent its operator did not name)."""
    script = echo_script(tmp_path / "s.json", 0)
    elsewhere = Runtime(open_store(tmp_path / "elsewhere.db"))

    async def run_elsewhere() -> str:
        result = await elsewhere.start(RunSpec("list it", model=script, tools=("echo",))).wait()
        return str(result.run_id)

    run_id = asyncio.run(run_elsewhere())
    events = [event_to_dict(e) for e in elsewhere.store.events(run_id)]
    elsewhere.close()
    events[0]["spec"] = {**events[0]["spec"], "agent": "agents.py:support"}
    store = open_store(tmp_path / "runs.db")
    store.append_many([event_from_dict(e) for e in events])
    with live_server(make_config(tmp_path, store=store)) as server:
        for path, body in (("/api/runs", {"request": "go on", "after": run_id}),
                           (f"/api/runs/{run_id}/fork", {"at": 0})):  # fmt: skip
            response = post(server, path, body)
            assert response.status_code == 422, response.text
            assert "the agent 'agents.py:support' (serve --agent)" in error_of(response)["message"]
        assert [r["run_id"] for r in httpx.get(f"{server.url}/api/runs").json()["runs"]] == [run_id]


def test_a_fork_takes_the_first_steps_from_the_log(server: LiveServer, tmp_path: Path) -> None:
    old = start_run(
        server,
        {"request": "echo thrice", "model": echo_script(tmp_path / "s.json", 3), "tools": ["echo"]},
    )
    assert wait_finished(server, old["run_id"])["status"] == "completed"
    live_part = write_script(tmp_path / "f.json", [json.dumps({"final_answer": "forked"})])
    created = post(
        server, f"/api/runs/{old['run_id']}/fork",
        {"at": 2, "request": "echo twice, then stop", "model": live_part},
    )  # fmt: skip
    assert created.status_code == 201, created.text
    fork = wait_finished(server, created.json()["run_id"])
    assert (fork["status"], fork["answer"]) == ("completed", "forked")
    assert fork["fork_of"] == {"run_id": old["run_id"], "step": 2}
    assert fork["request"] == "echo twice, then stop"
    assert fork["steps"] == 3  # two served, one live
    events = httpx.get(f"{server.url}/api/runs/{fork['run_id']}/events").json()["events"]
    echoed = [e["arguments"]["text"] for e in events if e["type"] == "tool_call_started"]
    assert echoed == ["hi 0", "hi 1"]  # the old run's calls, served from its log


def test_a_fork_past_the_last_step_is_refused(server: LiveServer, tmp_path: Path) -> None:
    old = start_run(
        server,
        {"request": "r", "model": echo_script(tmp_path / "s.json", 2), "tools": ["echo"]},
    )
    wait_finished(server, old["run_id"])
    path = f"/api/runs/{old['run_id']}/fork"
    past = post(server, path, {"at": 9})
    assert past.status_code == 422
    error = error_of(past)
    assert error["field"] == "at"
    assert f"cannot fork run {old['run_id']} at step 9: it has 3 step(s)" in error["message"]
    for body, field in (
        ({}, "at"),
        ({"at": -1}, "at"),
        ({"at": True}, "at"),
        ({"at": 1, "tools": []}, "tools"),
        ({"at": 1, "request": ""}, "request"),
    ):
        response = post(server, path, body)  # fmt: skip
        assert (response.status_code, error_of(response)["field"]) == (422, field), body
    assert post(server, "/api/runs/nope/fork", {"at": 0}).status_code == 404
    assert len(httpx.get(f"{server.url}/api/runs").json()["runs"]) == 1  # nothing started


def test_a_running_run_is_not_forked(server: LiveServer, tmp_path: Path) -> None:
    gated = start_run(
        server,
        {"request": "wait", "model": echo_script(tmp_path / "s.json", 1), "tools": ["echo"],
         "approve": ["echo"]},
    )  # fmt: skip
    response = post(server, f"/api/runs/{gated['run_id']}/fork", {"at": 0})
    assert response.status_code == 409
    assert "still running" in error_of(response)["message"]
    httpx.post(f"{server.url}/api/runs/{gated['run_id']}/cancel", timeout=20)


def test_a_task_run_is_neither_followed_up_nor_forked(tmp_path: Path) -> None:
    config = make_config(tmp_path, tasks_dir=tasks_folder(tmp_path))
    with live_server(config) as server:
        task = start_run(server, {"task": "publish-notes", "inputs": {"title": "T"}})
        run_id = task["run_id"]
        follow = post(server, "/api/runs", {"request": "and then?", "after": run_id})
        assert follow.status_code == 409, follow.text
        assert f"run {run_id} is a task run" in error_of(follow)["message"]
        fork = post(server, f"/api/runs/{run_id}/fork", {"at": 0})
        assert fork.status_code == 422
        assert (
            error_of(fork)["message"] == f"run {run_id} is a task run: only an agent run is forked"
        )
        assert len(httpx.get(f"{server.url}/api/runs").json()["runs"]) == 1
        httpx.post(f"{server.url}/api/runs/{run_id}/cancel", timeout=20)
