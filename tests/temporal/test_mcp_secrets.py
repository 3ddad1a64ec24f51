"""MCP tools and secrets on Temporal workers: a run whose spec names an MCP server (a real
server process) runs on a worker, which opens the server once for the run, keeps the
session for its calls and closes it when the run ends; the worker's own secret (its
--secrets-file) never appears in the workflow history nor in Postgres."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import psycopg
from temporal_helpers import TemporalRuns, Workers, action, decrypted_history, final

from loopwright.engines.temporal import WorkerAllows
from loopwright.engines.temporal._activities import RunActivities
from loopwright.engines.temporal._payloads import PrepareInput
from loopwright.events import RunFinishedEvent, RunStartedEvent, ToolCallEvent, event_to_dict
from loopwright.runtime import RunSpec
from loopwright.store import open_store

SERVER = Path(__file__).with_name("mcp_vault_server.py")
SECRET = "vq7Rk2mXw9Lp4Tz8"  # no known format: only the worker's secrets file names it


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _postgres_text(url: str) -> str:
    """Every row of the run store and the content store, as text."""
    with psycopg.connect(url) as conn:
        tables = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_schema IN ('loopwright', 'loopwright_temporal')"
        ).fetchall()
        assert len(tables) >= 5, tables
        rows = [
            str(row)
            for schema, table in tables
            for row in conn.execute(f'SELECT t::text FROM "{schema}"."{table}" t').fetchall()
        ]
    return "\n".join(rows)


async def test_an_mcp_run_on_a_worker_keeps_its_session_and_leaks_no_secret(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    token, pids = tmp_path / "token.txt", tmp_path / "pids"
    token.write_text(SECRET)
    pids.mkdir()
    secrets = tmp_path / "worker-secrets.env"
    secrets.write_text(f"VAULT={SECRET}\n")
    script = tmp_path / "script.json"
    replies = [action("add_note", text="one"), action("read_token"),
               action("add_note", text="two"), final(f"the token is {SECRET}")]  # fmt: skip
    script.write_text(json.dumps(replies))
    spec = RunSpec(
        request="read the vault's token",
        model=f"scripted:{script}",
        tools=(),
        mcp=(f"python {SERVER} {token} {pids}",),
        workspace=str(tmp_path),
    )
    workers.start("--secrets-file", str(secrets), "--allow-mcp", spec.mcp[0])
    handle = await runs.start(spec)
    outcome = await handle.result()
    assert outcome["status"] == "completed", f"{outcome}\n{workers.logs()}"

    store = open_store(workers.store)
    try:
        events = store.events(handle.id)
    finally:
        store.close()
    results = [e.result for e in events if isinstance(e, ToolCallEvent)]
    # one session for the whole run: the second note is the session's second
    assert results[0] == "stored note 1" and results[2] == "stored note 2", results
    assert results[1].startswith("the vault holds [REDACTED"), results[1]
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent) and finished.answer is not None
    assert finished.answer.startswith("the token is [REDACTED"), finished.answer

    history = await decrypted_history(handle)
    assert "read_token" in history and "stored note 2" in history  # the run is in it
    assert SECRET not in history
    stored = _postgres_text(workers.store)
    assert "stored note 2" in stored and SECRET not in stored
    assert all(SECRET not in json.dumps(event_to_dict(e)) for e in events)

    started = [int(p.name) for p in pids.iterdir()]
    assert len(started) == 1, started  # opened once, on the worker, for the run
    await _until_dead(started[0])  # closed when the run ended, the worker still running
    assert workers.procs[0].poll() is None


async def test_a_worker_closes_the_sessions_of_runs_that_ended_elsewhere(
    pg_url: str, tmp_path: Path
) -> None:
    """A worker that opened a run's MCP server, but did not store the run's end (another
    worker did), closes it before it opens another run's; stopping closes the rest."""
    token, pids = tmp_path / "token.txt", tmp_path / "pids"
    token.write_text("t")
    pids.mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps([final("nothing to do")]))
    spec = RunSpec(
        request="use the vault",
        model=f"scripted:{script}",
        mcp=(f"python {SERVER} {token} {pids}",),
        workspace=str(tmp_path),
    )
    activities = RunActivities(pg_url, allows=WorkerAllows.of(mcp=spec.mcp))
    try:
        plan = await activities.prepare(PrepareInput("run_ended_elsewhere", spec.to_dict()))
        assert [d["name"] for d in plan.mcp_tools or ()] == ["read_token", "add_note"]
        first = [int(p.name) for p in pids.iterdir()]
        store = open_store(pg_url)
        try:  # the run ends on another worker: its events are stored there
            store.append_many(
                [
                    RunStartedEvent(
                        run_id="run_ended_elsewhere",
                        seq=1,
                        ts=0.0,
                        kind="agent",
                        request="x",
                        model="m",
                        tools=[],
                        options={},
                        tenant="default",
                    ),
                    RunFinishedEvent(
                        run_id="run_ended_elsewhere",
                        seq=2,
                        ts=1.0,
                        status="completed",
                        answer="ok",
                        reason=None,
                        usage={},
                        cost=0.0,
                        steps=0,
                        partial=None,
                    ),
                ]
            )
        finally:
            store.close()
        assert len(first) == 1 and _alive(first[0])
        await activities.prepare(PrepareInput("run_next", spec.to_dict()))
        second = [int(p.name) for p in pids.iterdir() if int(p.name) not in first]
        assert len(second) == 1 and _alive(second[0])
        await _until_dead(first[0])
        assert activities.mcp.open_runs() == ["run_next"]
    finally:
        await activities.aclose()
    await _until_dead(second[0])


async def _until_dead(pid: int) -> None:
    deadline = time.monotonic() + 15
    while _alive(pid):
        assert time.monotonic() < deadline, f"MCP server {pid} still running"
        await asyncio.sleep(0.1)
