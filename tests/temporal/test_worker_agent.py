"""`--agent module:attribute` on Temporal: `loopwright run --agent REF --engine temporal`
records the reference in the run's spec (nothing is imported by the client), and a worker
started with `--agent REF` runs it from its own agent: its tools and its model, whatever
the client's flags say. A worker started without that same reference (none, another
attribute, the same file by another path) never imports what the spec names: the run fails
at once with one line naming the flag to add."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from temporal_helpers import TemporalRuns, Workers, client_env, loopwright_env, serving

from inprocess_cli import CliRun
from loopwright.engines.temporal import WorkerAllows
from loopwright.errors import ConfigurationError
from loopwright.events import RunStartedEvent, ToolCallEvent
from loopwright.runtime import RunSpec
from loopwright.store import open_store

AGENT_MODULE = '''
import asyncio
import json
from pathlib import Path

from loopwright import AgentExecutor, tool
from loopwright.testing import ScriptedModel

Path(__file__).with_name("imported-by-" + str(__import__("os").getpid())).touch()


@tool(effect="read")
def shout(text: str) -> str:
    """Say a text louder.

    Args:
        text: what to say
    """
    return text.upper() + "!"


@tool(effect="read")
async def wait_for_go(text: str) -> str:
    """Wait until a file named go is beside this module.

    Args:
        text: what to say then
    """
    Path(__file__).with_name("waiting").touch()
    while not Path(__file__).with_name("go").exists():
        await asyncio.sleep(0.05)
    return text


def support() -> AgentExecutor:
    replies = json.loads(Path(__file__).with_name("replies.json").read_text())
    model = ScriptedModel([json.dumps(r) for r in replies], name="the-workers-model")
    return AgentExecutor(model, [shout, wait_for_go])


other = support
'''


SSE = "text/event-stream"
SHOUT: list[dict[str, object]] = [
    {"action": "shout", "action_input": {"text": "hi"}},
    {"final_answer": "I shouted hi"},
]


def agent_file(folder: Path, replies: list[dict[str, object]] = SHOUT) -> Path:
    """The module of the agents (their model's script beside it): each process that
    imports it leaves a file behind."""
    (folder / "replies.json").write_text(json.dumps(replies))
    path = folder / "agents.py"
    path.write_text(AGENT_MODULE)
    return path


def run_on_temporal(
    run_cli: Callable[..., CliRun], workers: Workers, home: Path, *argv: str
) -> CliRun:
    return run_cli(
        "run", "shout hi", *argv, "--engine", "temporal", "--temporal", workers.address,
        "--task-queue", workers.queue, "--store", workers.store,
        env=client_env(home),
    )  # fmt: skip


def test_a_run_of_an_agent_completes_on_a_worker_started_with_it(
    workers: Workers, tmp_path: Path, run_cli: Callable[..., CliRun]
) -> None:
    ref = f"{agent_file(tmp_path)}:support"
    workers.start("--agent", ref)
    # the client's --model is not the run's: the worker's agent's model is
    done = run_on_temporal(run_cli, workers, tmp_path / "home", "--agent", ref,
                           "--model", "scripted:/no/such/script.json")  # fmt: skip
    assert done.code == 0, done.out + done.err
    assert "I shouted hi" in done.out
    store = open_store(workers.store)
    try:
        (record,) = store.list_runs()
        events = store.events(record.run_id)
    finally:
        store.close()
    assert record.status == "completed" and record.answer == "I shouted hi"
    assert record.model == "the-workers-model"
    started = events[0]
    assert isinstance(started, RunStartedEvent) and started.spec is not None
    assert started.spec["agent"] == ref and started.spec["version"] == 10
    assert started.model == "the-workers-model"
    results = [e.result for e in events if isinstance(e, ToolCallEvent)]
    assert results == ["HI!"]  # the worker's agent's tool ran
    imported_by = sorted(p.name for p in tmp_path.glob("imported-by-*"))
    assert imported_by == [f"imported-by-{workers.procs[0].pid}"]  # the worker, not the client
    said = next(line for line in workers.logs().splitlines() if "runs may use:" in line)
    assert said.endswith(f", the agent {ref}"), said


@pytest.mark.parametrize("worker_has", ["none", "another attribute", "another path"])
def test_a_worker_not_started_with_the_agent_fails_the_run_naming_the_flag(
    workers: Workers, tmp_path: Path, run_cli: Callable[..., CliRun], worker_has: str
) -> None:
    path = agent_file(tmp_path)
    (tmp_path / "sub").mkdir()
    asked = {
        "none": f"{path}:support",
        "another attribute": f"{path}:support",
        "another path": f"{tmp_path}/sub/../agents.py:support",  # the same file, not the ref
    }[worker_has]
    own = {"none": (), "another attribute": ("--agent", f"{path}:other"),
           "another path": ("--agent", f"{path}:support")}[worker_has]  # fmt: skip
    workers.start(*own)
    done = run_on_temporal(run_cli, workers, tmp_path / "home", "--agent", asked)
    assert done.code == 1, done.out + done.err
    refused = f"asks for what this worker does not allow: the agent '{asked}' (--agent {asked})"
    assert refused in done.err, done.err
    line = next(line for line in done.err.splitlines() if refused in line)
    assert "Start the worker with the flag named" in line
    store = open_store(workers.store)
    try:
        (record,) = store.list_runs()
    finally:
        store.close()
    assert record.status == "failed"
    pids = {p.name for p in tmp_path.glob("imported-by-*")}
    expected = set() if worker_has == "none" else {f"imported-by-{workers.procs[0].pid}"}
    assert pids == expected  # only what the worker's operator named was ever imported


def test_a_follow_up_runs_the_workers_agent_again(
    workers: Workers, tmp_path: Path, run_cli: Callable[..., CliRun]
) -> None:
    """`--after` a run of the workers' agent, without --agent: the turn before names it.
    The worker's one ScriptedModel serves its runs in order: two replies for the first
    turn, one for the second."""
    ref = f"{agent_file(tmp_path, [*SHOUT, {'final_answer': 'you said hi before'}])}:support"
    workers.start("--agent", ref)
    home = tmp_path / "home"
    first = run_on_temporal(run_cli, workers, home, "--agent", ref)
    assert first.code == 0, first.out + first.err
    store = open_store(workers.store)
    try:
        (before,) = store.list_runs()
        second = run_cli(
            "run", "what did I say?", "--after", before.run_id, "--engine", "temporal",
            "--temporal", workers.address, "--task-queue", workers.queue, "--store",
            workers.store, env=client_env(home),
        )  # fmt: skip
        assert second.code == 0, second.out + second.err
        (turn,) = [r for r in store.list_runs() if r.run_id != before.run_id]
        started = store.events(turn.run_id)[0]
    finally:
        store.close()
    assert turn.answer == "you said hi before" and turn.after_run_id == before.run_id
    assert isinstance(started, RunStartedEvent) and started.spec is not None
    assert started.spec["agent"] == ref


async def test_serve_with_the_workers_agent_starts_its_runs_on_them(
    workers: Workers, tmp_path: Path
) -> None:
    """`serve --agent REF --engine temporal`: a request gives only its text; the run names
    the workers' agent, and a request naming a model or tools is refused."""
    ref = f"{agent_file(tmp_path)}:support"
    workers.start("--agent", ref)
    command = [sys.executable, "-m", "loopwright", "serve", "--port", "0", "--store",
               workers.store, "--engine", "temporal", "--temporal", workers.address,
               "--task-queue", workers.queue, "--agent", ref]  # fmt: skip
    with serving(command, tmp_path / "serve.log", loopwright_env(HOME=str(tmp_path))) as url:
        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            refused = await http.post("/api/runs", json={"request": "hi", "tools": ["echo"]})
            created = await http.post("/api/runs", json={"request": "shout hi"})
            assert created.status_code == 201, created.text
            run_id = created.json()["run_id"]
            events = f"/api/runs/{run_id}/events"
            async with http.stream("GET", events, headers={"Accept": SSE}) as stream:
                async for line in stream.aiter_lines():  # until the run's end
                    if line.startswith("data: ") and '"type": "run_finished"' in line:
                        break
            shown = (await http.get(f"/api/runs/{run_id}")).json()
    assert refused.status_code == 422 and "runs its own agent" in refused.text
    assert shown["status"] == "completed" and shown["answer"] == "I shouted hi"
    assert shown["model"] == "the-workers-model"
    store = open_store(workers.store)
    try:
        started = store.events(run_id)[0]
    finally:
        store.close()
    assert isinstance(started, RunStartedEvent) and started.spec is not None
    assert started.spec["agent"] == ref
    assert not list(tmp_path.glob(f"imported-by-{os.getpid()}"))


def test_a_spec_naming_the_agent_is_still_checked_for_what_else_it_asks() -> None:
    """A spec's other fields are not used for a run of the worker's agent; asking for more
    than the worker allows beside it is refused all the same, and the agent is compared
    letter for letter (nothing is resolved or imported)."""
    allows = WorkerAllows.of(agent=" my_agents:support ")
    allows.check_run("run_ok", RunSpec(request="hi", agent="my_agents:support"))
    asking = RunSpec(request="hi", agent="my_agents:support", tools=("run_command",),
                     verify="id", mcp=("python server.py",))  # fmt: skip
    with pytest.raises(ConfigurationError) as refused:
        allows.check_run("run_more", asking)
    message = str(refused.value)
    for flag in ("(--allow-commands)", "(--allow-verify)", "(--allow-mcp 'python server.py')"):
        assert flag in message
    assert "the agent" not in message
    for other in ("./my_agents:support", "my_agents:other", "MY_AGENTS:support"):
        with pytest.raises(ConfigurationError, match=f"the agent '{re.escape(other)}' \\(--agent"):
            allows.check_run("run_other", RunSpec(request="hi", agent=other))
    assert WorkerAllows.of().describe().endswith("MCP servers or agents built in Python")


async def test_a_run_of_the_workers_agent_resumes_on_a_new_worker(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    """Its workflow terminated mid-call: `runs resume` (no --agent: the spec names it) goes
    on with it on a worker started with the agent, its first reply served from its log;
    given `--agent` again, the CLI refuses in one line before importing anything."""
    replies: list[dict[str, object]] = [
        {"action": "wait_for_go", "action_input": {"text": "went"}},
        {"final_answer": "I went"},
    ]
    ref = f"{agent_file(tmp_path, replies)}:support"
    workers.start("--agent", ref)
    handle = await runs.start(RunSpec(request="go when told", agent=ref))
    deadline = time.monotonic() + 120
    while not (tmp_path / "waiting").exists():  # its tool call runs on the worker
        assert time.monotonic() < deadline, workers.logs()
        await asyncio.sleep(0.1)
    await handle.terminate("the test stops it")
    workers.stop_all()
    (tmp_path / "go").touch()
    workers.start("--agent", ref)
    given_again = subprocess.run(
        [sys.executable, "-m", "loopwright", "runs", "resume", handle.id, "--agent", ref,
         "--temporal", workers.address, "--store", workers.store],
        capture_output=True, text=True, env=loopwright_env(), timeout=180,
    )  # fmt: skip
    assert given_again.returncode == 2, given_again.stderr
    assert "whose workers run their own --agent: resume it without --agent" in given_again.stderr
    assert "Traceback" not in given_again.stderr
    resumed = subprocess.run(
        [sys.executable, "-m", "loopwright", "runs", "resume", handle.id, "--temporal",
         workers.address, "--task-queue", workers.queue, "--store", workers.store],
        capture_output=True, text=True, env=loopwright_env(), timeout=180,
    )  # fmt: skip
    assert resumed.returncode == 0, f"{resumed.stderr}\n{workers.logs()}"
    store = open_store(workers.store)
    try:
        record = store.get_run(handle.id)
        events = store.events(handle.id)
    finally:
        store.close()
    assert record is not None and (record.status, record.answer) == ("completed", "I went")
    assert sum(isinstance(e, RunStartedEvent) for e in events) == 1
    assert record.model == "the-workers-model"


def test_a_chat_with_the_workers_agent(
    workers: Workers, tmp_path: Path, run_cli: Callable[..., CliRun]
) -> None:
    """`chat --agent REF --engine temporal`: each line a run of the workers' agent, the
    second one a follow-up of the first."""
    ref = f"{agent_file(tmp_path, [*SHOUT, {'final_answer': 'you said hi before'}])}:support"
    workers.start("--agent", ref)
    done = run_cli(
        "chat", "--agent", ref, "--engine", "temporal", "--temporal", workers.address,
        "--task-queue", workers.queue, "--store", workers.store,
        env=client_env(tmp_path / "home"), stdin="shout hi\nwhat did I say?\n",
    )  # fmt: skip
    assert done.code == 0, done.out + done.err
    store = open_store(workers.store)
    try:
        first, second = sorted(store.list_runs(), key=lambda r: r.created_at)
        specs = [store.events(r.run_id)[0] for r in (first, second)]
    finally:
        store.close()
    assert (first.answer, second.answer) == ("I shouted hi", "you said hi before")
    assert second.after_run_id == first.run_id
    for started in specs:
        assert isinstance(started, RunStartedEvent) and started.spec is not None
        assert started.spec["agent"] == ref
