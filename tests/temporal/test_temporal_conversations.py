"""Conversations and forks on the Temporal engine: a follow-up turn runs on a worker with
its conversation's history (built from the Postgres store by the worker, sent by the
workflow: its recorded request fingerprints match the history rebuilt from the store), and
a fork serves its first steps from the old run's log (no tool runs again)."""

from __future__ import annotations

import json
from pathlib import Path

from temporal_helpers import TOOLS_FILE, Workers, action, final, model_call

from loopwright.engines.temporal import TemporalEngine
from loopwright.events import ModelResponseEvent, RunStartedEvent
from loopwright.runtime import RunSpec, Runtime
from loopwright.store import conversation_turns, open_store


def spec(folder: Path, name: str, request: str, replies: list[str]) -> RunSpec:
    script = folder / f"{name}.json"
    script.write_text(json.dumps(replies), encoding="utf-8")
    return RunSpec(
        request=request,
        model=f"scripted:{script}",
        tools=("echo", f"{TOOLS_FILE}:append_line"),
        workspace=str(folder),
    )


async def test_a_follow_up_and_a_fork_run_on_a_worker(workers: Workers, tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    workers.start()
    store = open_store(workers.store)
    runtime = Runtime(
        store, engine=TemporalEngine(workers.address, store, task_queue=workers.queue)
    )
    try:
        first = await runtime.start(
            spec(
                tmp_path,
                "one",
                "write one",
                [action("append_line", path=str(out), text="one"), final("wrote one")],
            )
        ).wait()
        second = await runtime.start(
            spec(
                tmp_path,
                "two",
                "and two",
                [action("append_line", path=str(out), text="two"), final("wrote two")],
            ),
            after=first.run_id,
        ).wait()
        forked = await runtime.fork(
            second.run_id, 1, model=f"scripted:{_script(tmp_path, 'fork', [final('forked')])}"
        ).wait()
    finally:
        await runtime.aclose()
    assert (first.answer, second.answer, forked.answer) == ("wrote one", "wrote two", "forked")
    assert out.read_text() == "one\ntwo\n", workers.logs()  # the fork's step 1 was served
    ids = [r.run_id for r in conversation_turns(store, second.run_id)]
    assert ids == [first.run_id, second.run_id]
    fork_record = store.get_run(forked.run_id)
    assert fork_record is not None and fork_record.engine == "temporal"
    assert fork_record.after_run_id == first.run_id
    started = store.events(forked.run_id)[0]
    assert isinstance(started, RunStartedEvent)
    assert started.fork_of == {"run_id": second.run_id, "step": 1}
    for run_id in (second.run_id, forked.run_id):  # sent with turn 1 before them
        events = store.events(run_id)
        call = next(e for e in events if isinstance(e, ModelResponseEvent))
        rebuilt = await model_call(store, run_id, call.seq)
        assert rebuilt["request_problem"] is None and rebuilt["request"] is not None, rebuilt
        texts = [m["content"] for m in rebuilt["request"]["messages"]]
        assert texts[1].startswith("write one") and texts[-1].startswith("and two")
        assert any("wrote one" in text for text in texts[2:-1])
    store.close()


def _script(folder: Path, name: str, replies: list[str]) -> Path:
    script = folder / f"{name}.json"
    script.write_text(json.dumps(replies), encoding="utf-8")
    return script
