"""The kill trials (issue 17, test 1): 24 runs at once on two worker processes, each run's
worker SIGKILLed once, inside a side-effecting tool after its effect (8 runs of a tool that
is not idempotent, 8 of an idempotent one) or in the middle of a model call (8 runs). The
other worker finishes every run; each idempotency key has exactly one effect; the final
transcript (the events without ids and times) equals the same scripted run on the embedded
engine, except, for the tool that is not idempotent, the killed call's result: the model is
told its outcome is unknown (it is never run again).

How: both workers start; all 24 runs start and each hangs once at its kill point (the tool
writes OUT.hung with its pid; the provider records the connection of the call it holds).
The worker holding the most is killed: its runs finish on the other; if both held some,
a third worker starts before the second is killed and finishes its runs. No run is killed
anywhere but at its kill point."""

from __future__ import annotations

import asyncio
import signal
import subprocess
from pathlib import Path
from typing import Any

from temporal_helpers import TemporalRuns, Workers, replay_all, shape
from temporalio.client import WorkflowHandle
from trial_helpers import (
    LINES,
    ScriptProvider,
    Trial,
    run_embedded,
    script_provider,
    socket_owner,
    until,
)

from loopwright.engines.temporal import EngineSettings
from loopwright.engines.temporal._activities import UNCERTAIN
from loopwright.engines.temporal._content import ContentStore
from loopwright.engines.temporal._sandbox import replayer
from loopwright.engines.temporal._workflow import AgentRunWorkflow
from loopwright.events import event_to_dict
from loopwright.prompts._turn_notes import summarize
from loopwright.store import open_store

SUMMARY_CHARS = 160
"""The length of an event's result_summary (agent/_replies.py)."""
KINDS = ("once", "idempotent", "model")
PER_KIND = 8
FAST = EngineSettings(heartbeat_timeout_s=5.0)
"""A killed worker is noticed within 5 s (it beats every second; not shorter, so a worker
starved of CPU on a loaded machine does not look dead)."""


def make_trials(root: Path) -> list[Trial]:
    trials = []
    for number in range(len(KINDS) * PER_KIND):
        kind = KINDS[number % len(KINDS)]
        at = number // len(KINDS) % (len(LINES) + (2 if kind == "model" else 0)) + 1
        folder = root / f"trial{number:02d}"
        folder.mkdir()
        trials.append(Trial(number, kind, at, folder))
    return trials


def locate(trials: list[Trial], provider: ScriptProvider, pids: list[int]) -> bool:
    """Record, for each trial not located yet, the worker inside its kill point."""
    for trial in trials:
        if trial.pid is None and trial.kind != "model":
            trial.pid = trial.hung_in()
        elif trial.pid is None and trial.key in provider.hung:
            trial.pid = socket_owner(provider.hung[trial.key], pids)
    return all(t.pid is not None for t in trials)


def _killed_call(events: list[dict[str, Any]], trial: Trial) -> int:
    """The index of the tool_call event of the killed call (kind once)."""
    calls = [i for i, e in enumerate(events) if e["type"] == "tool_call"]
    return calls[trial.at]  # the first call is echo


def transcript(trial: Trial, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Temporal run's events without ids and times; for the tool that is not
    idempotent, without the digests of the requests after the killed call (the requests
    hold its result, which differs by design: see expected_transcript)."""
    shown = shape(events)
    if trial.kind == "once":
        for event in shown[_killed_call(shown, trial) :]:
            event.pop("request_digest", None)
    return shown


async def kill_each(
    first: list[subprocess.Popen[bytes]],
    trials: list[Trial],
    handles: dict[int, WorkflowHandle[Any, Any]],
    workers: Workers,
) -> None:
    """SIGKILL each first worker that holds trials, the one with most first, while another
    worker lives (the other first one; a new one for the last); its runs must finish
    elsewhere. Temporal keeps a run's tasks on the worker that has its workflow cached, so
    how the trials split between the two varies (24:0 to 12:12)."""
    held = {p.pid: [handles[t.number] for t in trials if t.pid == p.pid] for p in first}
    for victim in sorted(first, key=lambda p: -len(held[p.pid])):
        if not held[victim.pid]:
            continue
        if not [p for p in workers.procs if p.poll() is None and p is not victim]:
            workers.start(LOOPWRIGHT_TEST_KILL_ONCE="1")
        others = [p for p in workers.procs if p.poll() is None and p is not victim]
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        mine = held[victim.pid]
        print(f"kill trials: SIGKILLed worker {victim.pid}, inside {len(mine)} runs")
        outcomes = await asyncio.wait_for(asyncio.gather(*(h.result() for h in mine)), 180)
        assert all(o["status"] == "completed" for o in outcomes), outcomes
        assert all(p.poll() is None for p in others)  # they finished the runs


def expected_transcript(trial: Trial) -> list[dict[str, Any]]:
    """The embedded run's events; for the tool that is not idempotent, the killed call's
    result is the uncertain outcome (the model is told; the call is never run again)."""
    expected = shape(trial.embedded)
    if trial.kind == "once":
        killed = _killed_call(expected, trial)
        summary = summarize(UNCERTAIN, SUMMARY_CHARS)
        expected[killed].update(result=UNCERTAIN, result_summary=summary, is_error=True)
        for event in expected[killed:]:
            event.pop("request_digest", None)
    return expected


def check_trial(trial: Trial, events: list[dict[str, Any]], content: ContentStore) -> None:
    assert trial.out.read_text().splitlines() == trial.lines(), trial  # one effect per key
    killed = trial.lines()[trial.at - 1] if trial.kind != "model" else None
    reruns = [killed] if trial.kind == "idempotent" and killed is not None else []
    assert sorted(trial.attempts()) == sorted([*trial.lines(), *reruns]), trial
    assert transcript(trial, events) == expected_transcript(trial), trial
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    run_id = str(events[0]["run_id"])
    for event in events:
        if event["type"] == "tool_call" and event["tool_name"] != "echo":
            state = content.tool_call(f"{run_id}:{event['call_id']}")
            assert state is not None
            if event["arguments"]["text"] != killed:
                assert (state[0], state[2]) == ("done", 1)
            elif trial.kind == "once":
                assert (state[0], state[2]) == ("started", 1)  # never run again
            else:  # idempotent: run again on the other worker, its result committed
                assert (state[0], state[2]) == ("done", 2)


def check_model_calls(trial: Trial, provider: ScriptProvider) -> None:
    """The killed model call was sent again, the same request (from the content store)."""
    bodies = provider.bodies[trial.key]
    assert len(bodies) == len(trial.replies()) + 1
    assert bodies[trial.at] == bodies[trial.at - 1]


async def test_24_killed_workers_each_run_finished_elsewhere_once_per_key(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    trials = make_trials(tmp_path)
    assert len(trials) >= 20
    with script_provider() as provider:
        url = f"http://127.0.0.1:{provider.server_address[1]}/v1"
        provider.scripts = {t.key: t.replies() for t in trials}
        await run_embedded(trials, url)
        provider.kill_at = {t.key: t.at for t in trials if t.kind == "model"}
        provider.armed = True

        first = [workers.start(LOOPWRIGHT_TEST_KILL_ONCE="1") for _ in range(2)]
        pids = [p.pid for p in first]
        polling = lambda: all("polling" in workers.log_of(i) for i in range(2))  # noqa: E731
        await until(polling, workers.logs, 60)  # both take runs from the start
        handles: dict[int, WorkflowHandle[Any, Any]] = {}
        for trial in trials:
            handle = await runs.start(trial.spec(url), settings=FAST)
            handles[trial.number] = handle
        await until(lambda: locate(trials, provider, pids), workers.logs, 120)

        await kill_each(first, trials, handles, workers)

    assert {t.pid for t in trials} <= set(pids)
    store, content = open_store(workers.store), ContentStore(workers.store)
    try:
        for trial in trials:
            events = [event_to_dict(e) for e in store.events(handles[trial.number].id)]
            check_trial(trial, events, content)
            if trial.kind == "model":
                check_model_calls(trial, provider)
    finally:
        content.close()
        store.close()
    # each history, with its lost attempt, replays
    assert await replay_all(replayer(AgentRunWorkflow), list(handles.values())) == {}
