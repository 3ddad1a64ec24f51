"""Kill trials at the narrowest point: a tool's result is committed to the content store,
but its worker has not told Temporal yet (its link to the server is held, then it is
SIGKILLed). The other worker does not run the tool again: the retry (idempotent tool) or
the outcome activity (a tool that is not idempotent) returns the committed result, so each
key has one effect and one attempt, and the transcript equals the embedded engine's
exactly, for both kinds of tool."""

from __future__ import annotations

import asyncio
import functools
import signal
import subprocess
from pathlib import Path
from typing import Any

from temporal_helpers import TemporalRuns, Workers, replay_all, shape
from temporalio.client import WorkflowHandle
from trial_helpers import HeldLink, Trial, run_embedded, until

from loopwright.engines.temporal import EngineSettings
from loopwright.engines.temporal._content import ContentStore
from loopwright.engines.temporal._sandbox import replayer
from loopwright.engines.temporal._workflow import AgentRunWorkflow
from loopwright.events import event_to_dict
from loopwright.store import open_store

KINDS = ("once", "idempotent")
TRIALS = 8
FAST = EngineSettings(heartbeat_timeout_s=5.0)
MODE = {"LOOPWRIGHT_TEST_KILL_ONCE": "after-commit"}


def killed_key(trial: Trial, run_id: str) -> str:
    """The idempotency key of the trial's killed call (call ids are the same on both
    engines: the embedded run's)."""
    calls = [e for e in trial.embedded if e["type"] == "tool_call" and e["tool_name"] != "echo"]
    return f"{run_id}:{calls[trial.at - 1]['call_id']}"


def committed(content: ContentStore, keys: list[str]) -> bool:
    return all((found := content.tool_call(key)) is not None and found[0] == "done"
               for key in keys)  # fmt: skip


async def kill_after_commit(
    first: list[subprocess.Popen[bytes]],
    links: list[HeldLink],
    trials: list[Trial],
    handles: dict[int, WorkflowHandle[Any, Any]],
    workers: Workers,
) -> None:
    """For each first worker holding trials (most first): hold its link to Temporal, let
    its tools return, wait until their results are committed, SIGKILL it; the runs must
    finish on another worker."""
    content = ContentStore(workers.store)
    try:
        order = sorted(range(2), key=lambda i: -sum(t.pid == first[i].pid for t in trials))
        for index in order:
            victim, mine = first[index], [t for t in trials if t.pid == first[index].pid]
            if not mine:
                continue
            if not [p for p in workers.procs if p.poll() is None and p is not victim]:
                workers.start(**MODE)
            links[index].hold()
            for trial in mine:
                Path(f"{trial.out}.go").write_text("go")
            keys = [killed_key(t, handles[t.number].id) for t in mine]
            await until(functools.partial(committed, content, keys), workers.logs, 60)
            victim.send_signal(signal.SIGKILL)
            victim.wait()
            await links[index].cut()
            results = (handles[t.number].result() for t in mine)
            outcomes = await asyncio.wait_for(asyncio.gather(*results), 180)
            assert all(o["status"] == "completed" for o in outcomes), outcomes
    finally:
        content.close()


async def test_a_worker_killed_after_the_commit_never_runs_the_tool_again(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    trials = []
    for number in range(TRIALS):
        folder = tmp_path / f"trial{number:02d}"
        folder.mkdir()
        trials.append(Trial(number, KINDS[number % 2], number // 2 % 3 + 1, folder))
    await run_embedded(trials, "http://127.0.0.1:9/v1")  # scripted: no provider
    links = [HeldLink(workers.address) for _ in range(2)]
    first: list[subprocess.Popen[bytes]] = []
    try:
        vias = [await link.start() for link in links]
        first += [workers.start(via=via, **MODE) for via in vias]
        polling = lambda: all("polling" in workers.log_of(i) for i in range(2))  # noqa: E731
        await until(polling, workers.logs, 60)
        handles: dict[int, WorkflowHandle[Any, Any]] = {}
        for trial in trials:
            handles[trial.number] = await runs.start(trial.spec(""), settings=FAST)
        await until(lambda: all(t.hung_in() is not None for t in trials), workers.logs, 90)
        for trial in trials:
            trial.pid = trial.hung_in()
        await kill_after_commit(first, links, trials, handles, workers)
    finally:
        for proc in first:  # a first worker that outlived the kills stops while its link
            if proc.poll() is None:  # passes its shutdown's calls (this loop serves it)
                proc.terminate()
                await asyncio.to_thread(proc.wait, 30)
        for link in links:
            await link.close()

    store, content = open_store(workers.store), ContentStore(workers.store)
    try:
        for trial in trials:
            run_id = handles[trial.number].id
            events = [event_to_dict(e) for e in store.events(run_id)]
            assert trial.out.read_text().splitlines() == trial.lines()  # one effect per key
            assert sorted(trial.attempts()) == sorted(trial.lines())  # none run again
            assert shape(events) == shape(trial.embedded), trial  # exactly the same
            found = content.tool_call(killed_key(trial, run_id))
            assert found is not None and found[0] == "done"
            if trial.kind == "idempotent":  # a retry claimed it and found it committed
                assert found[2] >= 2
            else:  # one attempt; the outcome activity read the committed result
                assert found[2] == 1
    finally:
        content.close()
        store.close()
    # each history, with its lost attempt, replays
    assert await replay_all(replayer(AgentRunWorkflow), list(handles.values())) == {}
