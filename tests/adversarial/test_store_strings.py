"""Every string a model (or an API client) can produce is stored and read back exactly by
both stores: a NUL (`\\u0000`, which PostgreSQL's text cannot hold) and a lone surrogate
(`\\ud800`, which a provider's JSON can carry and no UTF-8 driver encodes), in a final
answer, a thought, tool arguments, a request and a gate decision's reason; and `store
copy` round-trips such runs both ways. The PostgreSQL server is a real one (initdb on a
free loopback port, as tests/store does)."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from pathlib import Path

import httpx
import pytest
from cli_run import loopwright, script
from test_http_attacks import ACME, TOKENS, Served

from loopwright.events import RunFinishedEvent, ToolCallEvent, encode_event
from loopwright.runtime import RunSpec, Runtime
from loopwright.server import ServerConfig
from loopwright.store import LocalPostgres, PersistentStore, open_store

ODD = "nul[\x00] surrogate[\ud800] low[\udfff] escaped-looking[\ufdd0{}] end"


def _database(server: LocalPostgres) -> str:
    url = server.create_database(f"t_{uuid.uuid4().hex[:12]}")
    open_store(url, migrate=True).close()
    return url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "runs.db")
    return _database(request.getfixturevalue("pg_server"))


def _odd_run(store: PersistentStore, folder: Path) -> str:
    model = script(
        folder / "odd.json",
        [
            {"thought": f"think {ODD}", "action": "echo", "action_input": {"text": ODD}},
            {"thought": "done", "final_answer": f"answer {ODD}"},
        ],
    )

    async def go() -> str:
        runtime = Runtime(store)
        try:
            handle = runtime.start(RunSpec(request=f"ask {ODD}", model=model, tools=("echo",)))
            result = await handle.wait()
            assert result.success and result.answer == f"answer {ODD}"
            return handle.run_id
        finally:
            runtime.close()

    return asyncio.run(go())


def test_every_string_is_stored_and_read_back(location: str, tmp_path: Path) -> None:
    store = open_store(location)
    try:
        run_id = _odd_run(store, tmp_path)
        record = store.get_run(run_id)
        assert record is not None and record.status == "completed"
        assert record.request == f"ask {ODD}" and record.answer == f"answer {ODD}"
        events = store.events(run_id)
        [call] = [e for e in events if isinstance(e, ToolCallEvent)]
        assert call.result == ODD
        [finished] = [e for e in events if isinstance(e, RunFinishedEvent)]
        assert finished.answer == f"answer {ODD}"
        assert store.post_gate_decision(run_id, "gate-1", False, f"api:acme\n{ODD}")
        decision = store.gate_decision(run_id, "gate-1")
        assert decision is not None and decision.decided_by == f"api:acme\n{ODD}"
    finally:
        store.close()


def test_store_copy_round_trips_them_both_ways(pg_server: LocalPostgres, tmp_path: Path) -> None:
    first = tmp_path / "first.db"
    store = open_store(first)
    try:
        run_id = _odd_run(store, tmp_path)
        before = [encode_event(e) for e in store.events(run_id)]
        row = store.get_run(run_id)
    finally:
        store.close()
    pg = _database(pg_server)
    back = tmp_path / "back.db"
    for source, target in ((str(first), pg), (pg, str(back))):
        done = loopwright("store", "copy", source, target, home=tmp_path)
        assert done.code == 0 and "copied 1 run(s)" in done.out, done.both
    for where in (pg, str(back)):
        copy = open_store(where)
        try:
            assert [encode_event(e) for e in copy.events(run_id)] == before
            assert copy.get_run(run_id) == row
        finally:
            copy.close()


def test_an_api_prompt_with_a_nul_starts_a_stored_run(
    pg_server: LocalPostgres, tmp_path: Path
) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    model = script(allowed / "s.json", [{"thought": "ok", "final_answer": f"done {ODD}"}])
    store = open_store(_database(pg_server))
    config = ServerConfig(
        runtime=Runtime(store), tokens=TOKENS, workspace=str(tmp_path),
        allowed_models=frozenset({f"scripted:{allowed}/*"}),
    )  # fmt: skip
    server = Served(config)
    try:
        prompt = "fix it\x00 please"
        response = httpx.post(f"{server.url}/api/runs", headers=ACME, timeout=10,
                              json={"prompt": prompt, "model": model})  # fmt: skip
        assert response.status_code == 201, response.text
        run_id = response.json()["run_id"]
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            run = httpx.get(f"{server.url}/api/runs/{run_id}", headers=ACME, timeout=10).json()
            if run["status"] == "completed":
                break
            time.sleep(0.05)
        assert run["status"] == "completed" and run["request"] == prompt
        assert run["answer"] == f"done {ODD}"  # the lone surrogates as JSON escapes, not a 500
        page = httpx.get(f"{server.url}/api/runs/{run_id}/events", headers=ACME, timeout=10)
        assert page.status_code == 200 and f"done {ODD}" in page.json()["events"][-1]["answer"]
    finally:
        server.stop()
        store.close()


def test_the_command_line_shows_and_prints_them(tmp_path: Path) -> None:
    model = script(tmp_path / "s.json", [{"thought": f"t {ODD}", "final_answer": ODD}])
    live = loopwright("run", "q", "--model", model, home=tmp_path)
    assert live.code == 0 and "Traceback" not in live.both, live.both
    assert "surrogate[\\ud800] low[\\udfff]" in live.out and "nul[\\x00]" in live.out
    lines = loopwright("run", "q", "--model", model, "--json", home=tmp_path)
    assert lines.code == 0, lines.both
    assert json.loads(lines.out.splitlines()[-1])["answer"] == ODD
    run_id = json.loads(lines.out.splitlines()[-1])["run_id"]
    shown = loopwright("runs", "show", run_id, home=tmp_path)
    assert shown.code == 0 and "\\ud800" in shown.out, shown.both
