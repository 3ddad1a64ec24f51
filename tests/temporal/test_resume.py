"""`loopwright runs resume RUN_ID --engine temporal` goes on with a run whose workflow was
terminated, on a new worker, without doing again what the run recorded; `run --continue
RUN_ID --engine temporal` follows up a stopped run."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
from temporal_helpers import (
    TOOLS_FILE,
    TemporalRuns,
    Workers,
    action,
    final,
    loopwright_env,
    write_script,
)
from test_serve_engine import server  # noqa: F401 (the fixture: serve --engine temporal)

from loopwright.agent import AgentOptions
from loopwright.engines.temporal import connect
from loopwright.errors import UsageError
from loopwright.events import RunFinishedEvent, RunStartedEvent, ToolCallEvent
from loopwright.runtime import RunSpec
from loopwright.store import open_store


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "loopwright", *args],
        capture_output=True, text=True, env=loopwright_env(), timeout=180,
    )  # fmt: skip


async def _until(check: object, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


async def test_a_terminated_run_resumes_on_another_worker(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    out = tmp_path / "out.txt"
    script = write_script(tmp_path, out, ["line1", "line2", "line3"])
    spec = RunSpec(
        request="echo hello, then write the lines",
        model=f"scripted:{script}",
        tools=("echo", f"{TOOLS_FILE}:append_line"),
        workspace=str(tmp_path),
    )
    workers.start(LOOPWRIGHT_TEST_HANG_AFTER="line2")
    handle = await runs.start(spec)
    await _until(lambda: "hanging after line2" in workers.log_of(0), "the tool's effect")
    await handle.terminate("the test stops it")
    workers.stop_all()

    workers.start()
    resumed = _cli("runs", "resume", handle.id, "--engine", "temporal",
                   "--temporal", workers.address, "--task-queue", workers.queue,
                   "--store", workers.store, "--json")  # fmt: skip
    assert resumed.returncode == 0, f"{resumed.stderr}\n{workers.logs()}"
    assert out.read_text() == "line1\nline2\nline3\n"  # each effect once

    shown = [json.loads(line) for line in resumed.stdout.splitlines() if line.startswith("{")]
    store = open_store(workers.store)
    try:
        events = store.events(handle.id)
        record = store.get_run(handle.id)
    finally:
        store.close()
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert sum(isinstance(e, RunStartedEvent) for e in events) == 1
    assert shown and shown[0]["seq"] > 1  # the command showed what came after the record
    assert [e["seq"] for e in shown] == [e.seq for e in events[shown[0]["seq"] - 1 :]]
    calls = {e.arguments.get("text"): e for e in events if isinstance(e, ToolCallEvent)}
    assert calls["line2"].is_error and "interrupted" in calls["line2"].result  # not run again
    assert not calls["line1"].is_error and not calls["line3"].is_error
    assert isinstance(events[-1], RunFinishedEvent) and events[-1].answer == "wrote 3 lines"
    assert record is not None and record.status == "completed"

    again = _cli("runs", "resume", handle.id, "--engine", "temporal",
                 "--temporal", workers.address, "--store", workers.store)  # fmt: skip
    assert again.returncode != 0 and "already ended (completed)" in again.stderr


async def test_a_run_resumed_while_its_approval_waits_waits_again(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    """Terminated while a tool call waits for approval: the resumed run asks again (the
    same gate) and the approved call runs once."""
    from test_agent_approvals import next_gate

    out = tmp_path / "out.txt"
    script = tmp_path / "script.json"
    replies = [action("append_line", path=str(out), text="gated"), final("wrote it")]
    script.write_text(json.dumps(replies))
    spec = RunSpec(
        request="write a line",
        model=f"scripted:{script}",
        tools=(f"{TOOLS_FILE}:append_line",),
        workspace=str(tmp_path),
        approve=("append_line",),
    )
    workers.start()
    handle = await runs.start(spec)
    gate = await next_gate(workers.store, handle.id, set())
    await handle.terminate("the test stops it")

    command = [sys.executable, "-m", "loopwright", "runs", "resume", handle.id,
               "--engine", "temporal", "--temporal", workers.address,
               "--task-queue", workers.queue, "--store", workers.store, "--json"]  # fmt: skip
    resumed = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=loopwright_env())  # fmt: skip
    try:
        decided = False
        deadline = time.monotonic() + 60
        while not decided:  # the resumed workflow's gate takes the decision once it waits
            assert time.monotonic() < deadline and resumed.poll() is None, "no gate again"
            try:
                await runs.decide(handle.id, gate, True, "ops")
                decided = True
            except UsageError:
                await asyncio.sleep(0.2)
        stdout, stderr = resumed.communicate(timeout=60)
    finally:
        if resumed.poll() is None:
            resumed.kill()
            resumed.communicate()  # reaps it and closes its pipes
    assert resumed.returncode == 0, f"{stderr}\n{workers.logs()}"
    assert out.read_text() == "gated\n"
    shown = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    assert [e["type"] for e in shown][-1] == "run_finished"
    assert any(e["type"] == "gate_decision" and e["approved"] for e in shown)


async def test_a_stopped_run_is_continued_on_temporal(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    script = tmp_path / "script.json"
    replies = [action("echo", text="one"), action("echo", text="two"), final("done")]
    script.write_text(json.dumps(replies))
    spec = RunSpec(
        request="echo twice",
        model=f"scripted:{script}",
        tools=("echo",),
        workspace=str(tmp_path),
        options=AgentOptions(max_iterations=1),
    )
    workers.start()
    first = await runs.start(spec)
    assert (await first.result())["status"] == "stopped"

    follow = tmp_path / "follow.json"
    follow.write_text(json.dumps([action("echo", text="two"), final("done")]))
    continued = _cli("run", "--continue", first.id, "--model", f"scripted:{follow}",
                     "--max-iterations", "5", "--engine", "temporal",
                     "--temporal", workers.address, "--task-queue", workers.queue,
                     "--store", workers.store, "--json")  # fmt: skip
    assert continued.returncode == 0, f"{continued.stderr}\n{workers.logs()}"
    shown = [json.loads(line) for line in continued.stdout.splitlines() if line.startswith("{")]
    assert shown[0]["type"] == "run_started" and shown[0]["parent_run_id"] == first.id
    assert shown[0]["run_id"] != first.id
    assert "echo" in shown[0]["request"]  # the follow-up request names the work done
    assert shown[-1]["type"] == "run_finished" and shown[-1]["status"] == "completed"


async def test_the_server_resumes_a_terminated_run(
    workers: Workers,
    server: str,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
    runs: TemporalRuns,
) -> None:
    """`POST /api/runs/{id}/resume` on `serve --engine temporal`: a new workflow resumes it."""
    mine = tmp_path / "mine"
    mine.mkdir()
    out = mine / "out.txt"
    script = write_script(mine, out, ["line1", "line2"])
    spec = RunSpec(
        request="echo hello, then write the lines",
        model=f"scripted:{script}",
        tools=("echo", f"{TOOLS_FILE}:append_line"),
        workspace=str(mine),
    )
    hung = workers.start(LOOPWRIGHT_TEST_HANG_AFTER="line1")
    client = await connect(workers.address)
    handle = await runs.start(spec)
    await _until(lambda: "hanging after line1" in workers.logs(), "the tool's effect")
    await handle.terminate("the test stops it")
    hung.terminate()
    hung.wait(timeout=20)
    workers.start()

    async with httpx.AsyncClient(base_url=server, timeout=30) as http:
        resumed = await http.post(f"/api/runs/{handle.id}/resume")
        assert resumed.status_code == 202, resumed.text
        outcome = await asyncio.wait_for(client.get_workflow_handle(handle.id).result(), 90)
        assert outcome["status"] == "completed", workers.logs()
        again = await http.post(f"/api/runs/{handle.id}/resume")
        assert again.status_code == 409 and "already ended" in again.text
    assert out.read_text() == "line1\nline2\n"  # each effect once
