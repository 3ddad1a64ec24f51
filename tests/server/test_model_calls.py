"""GET /api/runs/{id}/model_calls/{seq}: a recorded model call's reply, tokens and
latency from the log, and the request it was sent, rebuilt from the log and checked
against the request's recorded fingerprint."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_helpers import (
    ACME,
    GLOBEX,
    TOKENS,
    HeldModel,
    LiveServer,
    echo_script,
    live_server,
    make_config,
    start_run,
    wait_finished,
)

from loopwright import AgentExecutor
from loopwright.events import Event, ModelResponseEvent
from loopwright.models import ModelRegistry
from loopwright.runtime import Runtime
from loopwright.testing import InMemoryRunStore, ScriptedModel
from loopwright.tools import BUILTIN_TOOLS


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    with live_server(make_config(tmp_path)) as live:
        yield live


def model_calls(
    server: LiveServer, run_id: str, headers: dict[str, str] | None = None
) -> list[Any]:
    events = httpx.get(f"{server.url}/api/runs/{run_id}/events", headers=headers or {}).json()
    return [
        httpx.get(f"{server.url}/api/runs/{run_id}/model_calls/{e['seq']}", headers=headers or {})
        for e in events["events"]
        if e["type"] == "model_response"
    ]


def model_call(server: LiveServer, run_id: str, seq: int) -> Any:
    """The model call at event `seq`, as GET /api/runs/{id}/model_calls/{seq} shows it."""
    response = httpx.get(f"{server.url}/api/runs/{run_id}/model_calls/{seq}")
    assert response.status_code == 200, response.text
    return response.json()


def test_each_call_shows_the_messages_sent_and_the_reply(
    server: LiveServer, tmp_path: Path
) -> None:
    spec = echo_script(tmp_path / "s.json", 2, answer="echoed twice")
    run_id = start_run(server, {"prompt": "echo two lines", "model": spec, "tools": ["echo"]})[
        "run_id"
    ]
    wait_finished(server, run_id)
    first, second, last = (response.json() for response in model_calls(server, run_id))
    assert first["request_problem"] is None
    roles = [m["role"] for m in first["request"]["messages"]]
    assert roles == ["system", "user"]
    assert (
        "- echo(text: string): Repeat the given text back"
        in first["request"]["messages"][0]["content"]
    )
    assert first["request"]["messages"][1]["content"].startswith("echo two lines")
    assert json.loads(first["reply"]["text"])["action_input"] == {"text": "hi 0"}
    assert first["duration_ms"] >= 0 and first["iteration_number"] == 1
    assert first["reply"]["usage"]["output_tokens"] > 0
    # each request holds the conversation so far: the earlier replies and observations
    assert len(second["request"]["messages"]) == 4
    sent = [m["content"] for m in last["request"]["messages"]]
    assert sent[2] == first["reply"]["text"] and sent[4] == second["reply"]["text"]
    assert sent[3].startswith("Observation from echo (repeat the given text back, unchanged): hi 0")
    assert json.loads(last["reply"]["text"])["final_answer"] == "echoed twice"


def test_a_seq_that_is_not_a_model_call(server: LiveServer, tmp_path: Path) -> None:
    spec = echo_script(tmp_path / "s.json", 0)
    run_id = start_run(server, {"prompt": "p", "model": spec, "tools": ["echo"]})["run_id"]
    wait_finished(server, run_id)
    url = f"{server.url}/api/runs/{run_id}/model_calls"
    not_a_call = httpx.get(f"{url}/1")
    assert not_a_call.status_code == 404
    assert not_a_call.json()["error"]["message"] == f"run {run_id} has no model call at event 1"
    assert httpx.get(f"{url}/999").status_code == 404
    bad = httpx.get(f"{url}/first")
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "seq"
    assert httpx.get(f"{server.url}/api/runs/run_nope/model_calls/3").status_code == 404


def test_another_tenants_calls_are_not_found(tmp_path: Path) -> None:
    with live_server(make_config(tmp_path, tokens=TOKENS)) as server:
        spec = echo_script(tmp_path / "s.json", 1)
        run_id = start_run(server, {"prompt": "p", "model": spec, "tools": ["echo"]}, ACME)[
            "run_id"
        ]
        wait_finished(server, run_id, ACME)
        [mine, _] = model_calls(server, run_id, ACME)
        assert mine.status_code == 200 and mine.json()["request"] is not None
        theirs = httpx.get(f"{server.url}/api/runs/{run_id}/model_calls/3", headers=GLOBEX)
        assert theirs.status_code == 404


def recorded_run(runtime: Runtime, agent: AgentExecutor) -> list[Event]:
    async def run() -> str:
        handle = runtime.start_agent(agent, "count to two")
        await handle.wait()
        return handle.run_id

    run_id = asyncio.run(run())
    return runtime.store.events(run_id)


def test_a_request_this_code_would_not_send_is_refused(tmp_path: Path) -> None:
    """A run whose recorded fingerprint does not match the rebuilt request (it ran under
    other code) gets no request, and says why: a wrong request is never shown."""
    store = InMemoryRunStore()
    spec = echo_script(tmp_path / "s.json", 1)
    with live_server(make_config(tmp_path, store=store)) as server:
        run_id = start_run(server, {"prompt": "p", "model": spec, "tools": ["echo"]})["run_id"]
        wait_finished(server, run_id)
    events = store.events(run_id)
    [first, _] = [e for e in events if isinstance(e, ModelResponseEvent)]
    altered = InMemoryRunStore()
    for event in events:
        altered.append(
            dataclasses.replace(first, request_digest="0" * 16) if event is first else event
        )
    with live_server(make_config(tmp_path, store=altered)) as server:
        rebuilt = model_call(server, run_id, first.seq)
    assert rebuilt["request"] is None
    assert "fingerprint differs" in rebuilt["request_problem"]
    with live_server(make_config(tmp_path, store=store)) as server:
        assert model_call(server, run_id, first.seq)["request"] is not None


def test_a_run_started_from_code_has_no_spec_to_rebuild_from(tmp_path: Path) -> None:
    store = InMemoryRunStore()
    runtime = Runtime(store)
    agent = AgentExecutor(
        ScriptedModel(['{"thought": "t", "final_answer": "two"}']), [BUILTIN_TOOLS["echo"]]
    )
    try:
        events = recorded_run(runtime, agent)
    finally:
        runtime.close()
    [call] = [e for e in events if isinstance(e, ModelResponseEvent)]
    with live_server(make_config(tmp_path, store=store)) as server:
        rebuilt = model_call(server, call.run_id, call.seq)
    assert rebuilt["request"] is None
    assert "started from code" in rebuilt["request_problem"]


def test_a_live_run_calls_are_rebuilt_without_calling_anything(tmp_path: Path) -> None:
    """While the run waits for its third reply, its second call's request is rebuilt from
    the log: the model is not called again and the run goes on undisturbed."""
    held = HeldModel(calls=2)
    models = ModelRegistry().with_factory("held", lambda _name, _url: held)
    config = make_config(tmp_path, models=models, allow_models=frozenset({"held:*"}))
    with live_server(config) as server:
        body = {"prompt": "echo lines", "model": "held:x", "tools": ["echo"]}
        run_id = start_run(server, body)["run_id"]
        held.release(2)
        events = events_until(server, run_id, lambda evs: count(evs, "tool_call") == 2)
        second = [e for e in events if e["type"] == "model_response"][1]
        made = held.made
        call = httpx.get(f"{server.url}/api/runs/{run_id}/model_calls/{second['seq']}").json()
        assert held.made == made == 2
        messages = call["request"]["messages"]
        assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
        assert messages[2]["tool_calls"] == [
            {"id": "c1", "name": "echo", "arguments": {"text": "line 1"}}
        ]
        assert messages[3]["content"] == "line 1\n\n[Iteration 2 of at most 10]"
        assert call["request"]["tools"] == ["echo"]  # offered natively
        assert call["reply"]["tool_calls"][0]["arguments"] == {"text": "line 2"}
        held.release(1)
        assert wait_finished(server, run_id)["answer"] == "all lines echoed"


def count(events: list[dict[str, Any]], kind: str) -> int:
    return sum(1 for e in events if e["type"] == kind)


def events_until(server: LiveServer, run_id: str, ready: Any) -> list[dict[str, Any]]:
    """The run's stored events once `ready(events)` holds (a polled condition, 20 s)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        events: list[dict[str, Any]] = httpx.get(f"{server.url}/api/runs/{run_id}/events").json()[
            "events"
        ]
        if ready(events):
            return events
        time.sleep(0.02)
    raise AssertionError(f"run {run_id} never got there")
