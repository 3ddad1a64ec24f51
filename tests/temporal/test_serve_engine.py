"""`loopwright serve --engine temporal`: the HTTP API submits agent and task runs as
workflows to a worker in another process; show, events (SSE), approve and cancel look as
they do with the embedded engine. Everything through real HTTP on loopback."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from task_files import gated_task
from temporal_helpers import Workers, action, final, loopwright_env, serving
from temporalio.client import WorkflowExecutionStatus

from loopwright.engines.temporal import connect
from loopwright.events import encode_event
from loopwright.store import open_store


@pytest.fixture
def server(workers: Workers, tmp_path: Path) -> Iterator[str]:
    """serve --engine temporal, with a scripted default model and a folder of one task."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps([action("echo", text="hi"), final("said hi")]))
    (tmp_path / "tasks").mkdir()
    gated_task(tmp_path / "tasks")
    command = [sys.executable, "-m", "loopwright", "serve", "--port", "0",
               "--store", workers.store, "--engine", "temporal", "--temporal", workers.address,
               "--task-queue", workers.queue, "--model", f"scripted:{script}",
               "--tasks", str(tmp_path / "tasks"), "--workspace", str(tmp_path)]  # fmt: skip
    env = loopwright_env(HOME=str(tmp_path))  # task backups under this test's folder
    with serving(command, tmp_path / "serve.log", env) as url:
        yield url


async def sse_until(http: httpx.AsyncClient, url: str, last: str) -> list[dict[str, Any]]:
    """The run's events over SSE, up to the first of type `last`."""
    events = []
    async with http.stream("GET", url, headers={"Accept": "text/event-stream"}) as stream:
        async for line in stream.aiter_lines():
            if line.startswith("data: ") and '"seq"' in line:
                events.append(json.loads(line.removeprefix("data: ")))
                if events[-1]["type"] == last:
                    break
    return events


def stored(store_url: str, run_id: str) -> list[dict[str, Any]]:
    store = open_store(store_url)
    try:
        return [json.loads(encode_event(e)) for e in store.events(run_id)]
    finally:
        store.close()


async def test_an_agent_run_submitted_over_http_runs_on_a_worker(
    workers: Workers, server: str
) -> None:
    workers.start()
    async with httpx.AsyncClient(base_url=server, timeout=60) as http:
        created = await http.post("/api/runs", json={"prompt": "say hi", "tools": ["echo"]})
        assert created.status_code == 201, created.text
        run_id = created.json()["run_id"]
        events = await sse_until(http, f"/api/runs/{run_id}/events", "run_finished")
        shown = (await http.get(f"/api/runs/{run_id}")).json()
        listed = (await http.get("/api/runs")).json()["runs"]
    assert events == stored(workers.store, run_id)
    assert [e["type"] for e in events if e["type"] == "tool_call"] == ["tool_call"]
    assert shown["status"] == "completed" and shown["answer"] == "said hi"
    assert [r["run_id"] for r in listed] == [run_id]
    client = await connect(workers.address)
    status = (await client.get_workflow_handle(run_id).describe()).status
    assert status == WorkflowExecutionStatus.COMPLETED  # it was a workflow


async def test_a_task_run_is_approved_and_another_cancelled_over_http(
    workers: Workers, server: str, tmp_path: Path
) -> None:
    workers.start()
    out = tmp_path / "out.txt"
    out.write_text("", encoding="utf-8")
    body = {"task": "gated-append", "inputs": {"out": str(out)}}
    async with httpx.AsyncClient(base_url=server, timeout=60) as http:
        created = await http.post("/api/runs", json=body)
        assert created.status_code == 201, created.text
        run_id = created.json()["run_id"]
        events_url = f"/api/runs/{run_id}/events"
        asked = (await sse_until(http, events_url, "confirmation_required"))[-1]
        shown = (await http.get(f"/api/runs/{run_id}")).json()
        assert shown["live"] is True and shown["status"] == "running"
        assert [g["request_id"] for g in shown["pending_gates"]] == [asked["request_id"]]
        gate_url = f"/api/runs/{run_id}/gates/{asked['request_id']}"
        approved = await http.post(gate_url, json={"approve": True})
        assert approved.status_code == 200, approved.text
        again = await http.post(gate_url, json={"approve": False})
        assert again.status_code == 409, again.text  # one decision per gate
        events = await sse_until(http, events_url, "run_finished")
        assert events[-1]["status"] == "completed"
        assert out.read_text() == "after-the-gate\n"

        second = (await http.post("/api/runs", json=body)).json()["run_id"]
        await sse_until(http, f"/api/runs/{second}/events", "confirmation_required")
        cancelled = await http.post(f"/api/runs/{second}/cancel")
        assert cancelled.status_code == 200, cancelled.text
        assert cancelled.json()["status"] == "cancelled"
        missing = await http.post("/api/runs", json={"task": "gated-append", "inputs": {"nope": 1}})
    assert out.read_text() == "after-the-gate\n"  # the cancelled run never wrote
    decision = next(e for e in stored(workers.store, run_id) if e["type"] == "gate_decision")
    assert decision["approved"] is True and decision["decided_by"].startswith("api:")
    assert missing.status_code == 422 and missing.json()["error"]["field"] == "inputs.nope"


async def test_a_terminated_task_run_is_resumed_over_http(
    workers: Workers, server: str, tmp_path: Path
) -> None:
    workers.start()
    out = tmp_path / "out.txt"
    out.write_text("", encoding="utf-8")
    body = {"task": "gated-append", "inputs": {"out": str(out)}}
    client = await connect(workers.address)
    async with httpx.AsyncClient(base_url=server, timeout=60) as http:
        run_id = (await http.post("/api/runs", json=body)).json()["run_id"]
        events_url = f"/api/runs/{run_id}/events"
        asked = (await sse_until(http, events_url, "confirmation_required"))[-1]
        await client.get_workflow_handle(run_id).terminate("lost")
        resumed = await http.post(f"/api/runs/{run_id}/resume")
        assert resumed.status_code == 202, resumed.text
        again = await http.post(f"/api/runs/{run_id}/resume")
        assert again.status_code == 409  # its new workflow runs
        gate_url = f"/api/runs/{run_id}/gates/{asked['request_id']}"
        deadline = time.monotonic() + 60
        while (decided := await http.post(gate_url, json={"approve": True})).status_code != 200:
            assert decided.status_code == 409 and time.monotonic() < deadline, decided.text
            await asyncio.sleep(0.2)  # until the resumed workflow has the gate open again
        events = await sse_until(http, events_url, "run_finished")
    assert events[-1]["status"] == "completed"
    assert out.read_text() == "after-the-gate\n"
    assert [e["type"] for e in events].count("confirmation_required") == 1
