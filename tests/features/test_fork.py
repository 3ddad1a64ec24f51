"""Fork a run: a new run whose first STEP steps (iterations) are served from the old run's
log, none made again (no model call, tool call or approval), then live, with another model
or request when asked; `run_started.fork_of` names the run and the step. ScriptedModel,
real SQLite, and a tool that leaves a line in the workspace each time it really runs."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from conversation_tools import conversions, convert

from loopwright import AgentExecutor, AgentOptions, ExecutionResult
from loopwright.agent import ForkPoint
from loopwright.cli import main
from loopwright.effects import GateRequest, GateVerdict
from loopwright.errors import ForkError
from loopwright.events import Event, GateDecisionEvent, RunStartedEvent, ToolCallEvent
from loopwright.models import ModelRegistry
from loopwright.runtime import RunSpec, Runtime, replay_run
from loopwright.store import SqliteRunStore
from loopwright.testing import ScriptedModel

TOOLS = Path(__file__).with_name("conversation_tools.py")
REQUEST = "What is 12 USD in GBP, then in EUR?"


def act(currency: str) -> str:
    arguments = {"amount": 12, "currency": currency}
    return json.dumps({"thought": "convert", "action": "convert", "action_input": arguments})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


ORIGINAL = [act("GBP"), act("EUR"), final("9.60 GBP and 11.04 EUR")]
"""Three steps: GBP, EUR, the answer."""


def spec(workspace: Path, model: str = "shared:original") -> RunSpec:
    return RunSpec(
        request=REQUEST, model=model, tools=(f"{TOOLS}:convert",), workspace=str(workspace)
    )


def registry(**models: ScriptedModel) -> ModelRegistry:
    """`shared:NAME` resolves to models[NAME] (one object, its script shared by the runs)."""
    return ModelRegistry().with_factory("shared", lambda name, _base_url: models[name])


def contents(model: ScriptedModel, call: int) -> list[str]:
    return [m.content for m in model.requests[call].messages]


async def original_run(tmp_path: Path, store: SqliteRunStore) -> str:
    runtime = Runtime(store, models=registry(original=ScriptedModel(ORIGINAL)))
    result: ExecutionResult = await runtime.start(spec(tmp_path)).wait()
    runtime.close()
    assert result.answer == "9.60 GBP and 11.04 EUR"
    assert conversions(tmp_path) == ["GBP", "EUR"]
    return result.run_id


async def test_a_fork_serves_the_first_steps_then_runs_live_with_another_model(
    tmp_path: Path,
) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    old = await original_run(tmp_path, store)
    other = ScriptedModel([act("JPY"), final("9.60 GBP and 1800 JPY")])
    runtime = Runtime(store, models=registry(other=other))
    forked = await runtime.fork(old, 1, model="shared:other").wait()
    runtime.close()
    assert forked.answer == "9.60 GBP and 1800 JPY"
    assert conversions(tmp_path) == ["GBP", "EUR", "JPY"]  # step 1 (GBP) was not run again
    assert len(other.requests) == 2  # the new model answers from step 2 on
    first_live = "\n".join(contents(other, 0))
    assert "9.60 GBP" in first_live and "EUR" not in first_live.split(REQUEST)[-1]
    events = store.events(forked.run_id)
    started = events[0]
    assert isinstance(started, RunStartedEvent)
    assert started.fork_of == {"run_id": old, "step": 1}
    assert started.spec is not None and started.spec["fork_of"] == started.fork_of
    assert started.spec["model"] == "shared:other"
    calls = [e.arguments["currency"] for e in events if isinstance(e, ToolCallEvent)]
    assert calls == ["GBP", "JPY"]  # the served step is in the fork's own log
    report = await replay_run(store, forked.run_id)
    assert report.ok, report.describe()


async def test_a_fork_with_another_request_asks_it_from_the_first_message(
    tmp_path: Path,
) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    old = await original_run(tmp_path, store)
    other = ScriptedModel([final("9.60 GBP")])
    runtime = Runtime(store, models=registry(other=other))
    forked = await runtime.fork(old, 1, request="Only GBP, please.", model="shared:other").wait()
    runtime.close()
    assert forked.answer == "9.60 GBP" and conversions(tmp_path) == ["GBP", "EUR"]
    assert contents(other, 0)[1].startswith("Only GBP, please.")
    record = store.get_run(forked.run_id)
    assert record is not None and record.request == "Only GBP, please."


async def test_a_fork_at_step_0_keeps_nothing_and_past_the_last_step_is_refused(
    tmp_path: Path,
) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    old = await original_run(tmp_path, store)
    runtime = Runtime(store, models=registry(original=ScriptedModel(ORIGINAL)))
    with pytest.raises(ForkError, match=rf"^cannot fork run {old} at step 4: it has 3 step\(s\), "):
        runtime.fork(old, 4)
    with pytest.raises(ForkError, match="at step -1"):
        runtime.fork(old, -1)
    assert len(store.list_runs()) == 1  # nothing started
    again = await runtime.fork(old, 0).wait()
    runtime.close()
    assert again.answer == "9.60 GBP and 11.04 EUR"
    assert conversions(tmp_path) == ["GBP", "EUR", "GBP", "EUR"]  # all live again


async def test_a_fork_at_the_last_step_serves_the_whole_run(tmp_path: Path) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    old = await original_run(tmp_path, store)
    never = ScriptedModel([])
    runtime = Runtime(store, models=registry(never=never))
    copy = await runtime.fork(old, 3, model="shared:never").wait()
    runtime.close()
    assert copy.answer == "9.60 GBP and 11.04 EUR" and never.requests == []
    assert conversions(tmp_path) == ["GBP", "EUR"]


async def test_a_run_started_from_code_is_forked_from_code(tmp_path: Path) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    runtime = Runtime(store)
    agent = AgentExecutor(ScriptedModel(ORIGINAL), [convert], workspace=tmp_path)
    old = await runtime.start_agent(agent, REQUEST).wait()
    with pytest.raises(ForkError, match=r"started from code.*fork_of=\("):
        runtime.fork(old.run_id, 1)
    other = AgentExecutor(ScriptedModel([final("only GBP")]), [convert], workspace=tmp_path)
    forked = await runtime.start_agent(other, REQUEST, fork_of=(old, 1)).wait()
    runtime.close()
    assert forked.answer == "only GBP" and conversions(tmp_path) == ["GBP", "EUR"]
    started = store.events(forked.run_id)[0]
    assert isinstance(started, RunStartedEvent) and started.fork_of == {
        "run_id": old.run_id,
        "step": 1,
    }


async def test_a_fork_in_memory_takes_the_result_of_this_process(tmp_path: Path) -> None:
    agent = AgentExecutor(ScriptedModel(ORIGINAL), [convert], workspace=tmp_path)
    old = await agent.run(REQUEST)
    model = ScriptedModel([act("JPY"), final("done")])
    other = AgentExecutor(model, [convert], workspace=tmp_path)
    events: list[Event] = []
    forked = await other.run(REQUEST, fork_of=(old, 2), on_event=events.append)
    assert forked.answer == "done" and forked.iterations == 4
    assert conversions(tmp_path) == ["GBP", "EUR", "JPY"]
    started = events[0]
    assert isinstance(started, RunStartedEvent) and started.fork_of == {
        "run_id": old.run_id,
        "step": 2,
    }
    with pytest.raises(ForkError, match="it has 3 step"):
        await other.run(REQUEST, fork_of=(old, 9))


class Decide:
    """A gatekeeper that answers every gate with `approved` and counts the questions."""

    def __init__(self, approved: bool) -> None:
        self.approved = approved
        self.asked: list[str] = []

    async def decide(self, run_id: str, request: GateRequest) -> GateVerdict:
        self.asked.append(request.step)
        return GateVerdict("approved" if self.approved else "rejected", "alice")

    def resolve(self, request_id: str, approved: bool, decided_by: str, reason: str = "") -> bool:
        return False


async def test_a_forked_step_keeps_its_approval_and_is_not_asked_again(tmp_path: Path) -> None:
    agent = AgentExecutor(
        ScriptedModel(ORIGINAL), [convert], workspace=tmp_path, approve=["convert"]
    )
    alice = Decide(approved=True)
    old = await agent.run(REQUEST, gates=alice)
    assert alice.asked == ["convert", "convert"]
    model = ScriptedModel([final("GBP only")])
    other = AgentExecutor(model, [convert], workspace=tmp_path, approve=["convert"])
    nobody = Decide(approved=False)  # would refuse: the fork must not ask
    events: list[Event] = []
    forked = await other.run(REQUEST, fork_of=(old, 1), gates=nobody, on_event=events.append)
    assert forked.answer == "GBP only" and nobody.asked == []
    assert conversions(tmp_path) == ["GBP", "EUR"]
    decisions = [e for e in events if isinstance(e, GateDecisionEvent)]
    assert [(d.approved, d.decided_by) for d in decisions] == [(True, "alice")]


async def test_a_fork_of_a_follow_up_follows_the_same_turn(tmp_path: Path) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    first_model = ScriptedModel([act("GBP"), final("9.60 GBP")])
    runtime = Runtime(store, models=registry(first=first_model))
    first = await runtime.start(spec(tmp_path, "shared:first")).wait()
    second_model = ScriptedModel([act("EUR"), final("11.04 EUR")])
    runtime = Runtime(store, models=registry(second=second_model))
    second_spec = RunSpec(**{**spec(tmp_path, "shared:second").__dict__, "request": "and in EUR?"})
    second = await runtime.start(second_spec, after=first).wait()
    fork_model = ScriptedModel([final("11.04 EUR, as said")])
    runtime = Runtime(store, models=registry(second=fork_model))
    forked = await runtime.fork(second.run_id, 1).wait()
    runtime.close()
    assert forked.answer == "11.04 EUR, as said"
    record = store.get_run(forked.run_id)
    assert record is not None and record.after_run_id == first.run_id
    texts = contents(fork_model, 0)
    assert texts[1].startswith(REQUEST) and "9.60 GBP" in "\n".join(texts)  # turn 1
    assert texts[-1].startswith("Observation from convert") and "11.04 EUR" in texts[-1]
    assert conversions(tmp_path) == ["GBP", "EUR"]


async def test_an_interrupted_fork_resumes_from_its_own_log_then_the_old_one(
    tmp_path: Path,
) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    old = await original_run(tmp_path, store)
    never = ScriptedModel([], strict=False)
    runtime = Runtime(store, models=registry(never=never))
    whole = await runtime.fork(old, 3, model="shared:never").wait()
    runtime.close()
    events = store.events(whole.run_id)
    cut = SqliteRunStore(tmp_path / "cut.db")
    cut.append_many(store.events(old))
    cut.append_many(events[:6])  # the fork's process died after its first served step
    again = Runtime(cut, models=registry(never=ScriptedModel([], strict=False)))
    resumed = await (await again.resume(whole.run_id)).wait()
    again.close()
    assert resumed.answer == "9.60 GBP and 11.04 EUR"
    assert conversions(tmp_path) == ["GBP", "EUR"]  # steps 2 and 3 came from the old log
    assert [e.type for e in cut.events(whole.run_id)] == [e.type for e in events]


async def test_a_running_run_cannot_be_forked(tmp_path: Path) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    events: list[Any] = []
    agent = AgentExecutor(ScriptedModel(ORIGINAL), [convert], workspace=tmp_path)
    await agent.run(REQUEST, on_event=events.append)
    store.append_many(events[:3])
    store.acquire_lease(events[0].run_id, "another-process", 60.0)  # it runs elsewhere
    runtime = Runtime(store)
    with pytest.raises(ForkError, match="is still running: fork it once it has ended"):
        runtime.start_agent(agent, REQUEST, fork_of=(events[0].run_id, 1))
    runtime.close()


async def test_a_stored_forked_step_keeps_its_approval(tmp_path: Path) -> None:
    """A fork of a stored run gets the old step's decision under its own gate id: asked
    again, the Runtime's gate would wait (and time out) instead."""
    options = AgentOptions(approval_timeout_s=0.2)

    def gated(model: ScriptedModel) -> AgentExecutor:
        return AgentExecutor(
            model, [convert], workspace=tmp_path, approve=["convert"], options=options
        )

    events: list[Event] = []
    old = await gated(ScriptedModel(ORIGINAL)).run(
        REQUEST, gates=Decide(approved=True), on_event=events.append
    )
    store = SqliteRunStore(tmp_path / "runs.db")
    store.append_many(events)
    runtime = Runtime(store)
    forked = await runtime.start_agent(
        gated(ScriptedModel([final("GBP only")])), REQUEST, fork_of=(old.run_id, 1)
    ).wait()
    runtime.close()
    assert forked.answer == "GBP only" and conversions(tmp_path) == ["GBP", "EUR"]
    decisions = [e for e in store.events(forked.run_id) if isinstance(e, GateDecisionEvent)]
    assert [(d.approved, d.decided_by) for d in decisions] == [(True, "alice")]
    assert decisions[0].request_id != next(
        e.request_id for e in events if isinstance(e, GateDecisionEvent)
    )  # the fork's own gate id, for the same call


@pytest.mark.subprocess
def test_the_example_forks_a_run_at_its_first_step() -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(root / "examples" / "fork.py")],
        capture_output=True, text=True, timeout=120, check=False,
        env={"PYTHONPATH": str(root / "src"), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ["run: 9.48 GBP and 11.04 EUR", "  converted: ['GBP', 'EUR']"]
    assert lines[2] == "fork at step 1: 9.48 GBP and 1815.60 JPY"
    assert lines[3].startswith("  converted: ['GBP', 'EUR', 'JPY']")
    assert "'step': 1}" in lines[4]
    assert lines[5].startswith("refused: cannot fork run") and "it has 3 step(s)" in lines[5]


async def test_continuing_a_stopped_fork_starts_a_run_that_is_no_fork(tmp_path: Path) -> None:
    """`run --continue` of a fork: a new run with the remaining work, not a second fork."""
    store = SqliteRunStore(tmp_path / "runs.db")
    old = await original_run(tmp_path, store)
    looping = ScriptedModel([act("JPY")] * 3, strict=False)
    runtime = Runtime(store, models=registry(looping=looping))
    fork_spec = dataclasses.replace(
        spec(tmp_path, "shared:looping"), options=AgentOptions(max_iterations=3, last_turn=False)
    )
    forked = await runtime.start(dataclasses.replace(fork_spec, fork_of=ForkPoint(old, 1))).wait()
    runtime.close()
    assert forked.status == "stopped"
    script = tmp_path / "answer.json"
    script.write_text(json.dumps([final("9.60 GBP and 1800 JPY")]))
    db = str(tmp_path / "runs.db")
    command = ["run", "--continue", forked.run_id, "--model", f"scripted:{script}",
               "--store", db, "--json"]  # fmt: skip
    assert await asyncio.to_thread(main, command) == 0  # the CLI, as a user runs it
    [again] = [r for r in store.list_runs() if r.run_id not in (old, forked.run_id)]
    started = store.events(again.run_id)[0]
    assert isinstance(started, RunStartedEvent) and started.fork_of is None
    assert again.after_run_id is None and again.status == "completed"
