"""Conversations: a follow-up turn in the same context. Each turn is a run of its own,
linked to the one before (`run_started.after_run_id`); the history it sends is the turn
before's transcript as the model saw it (a byte-identical prefix of its requests), built
from the store, scrubbed, fitted to the context window; a follow-up that cannot be made is
refused in one line before anything starts. ScriptedModel and real SQLite."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conversation_tools import conversions, convert

from loopwright import AgentExecutor, AgentOptions, ExecutionResult
from loopwright.errors import FollowUpError, RunNotFound, UsageError
from loopwright.events import Event, RunStartedEvent
from loopwright.messages import ModelRequest
from loopwright.models import ModelRegistry
from loopwright.runtime import RunSpec, Runtime, replay_run
from loopwright.store import SqliteRunStore, conversation_turns
from loopwright.testing import ScriptedModel

TOOLS = Path(__file__).with_name("conversation_tools.py")


def act(name: str, **arguments: Any) -> str:
    return json.dumps({"thought": "convert it", "action": name, "action_input": arguments})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


TURNS = [
    ("What is 12 USD in GBP?", [act("convert", amount=12, currency="GBP"), final("9.60 GBP")]),
    ("and in EUR?", [act("convert", amount=12, currency="EUR"), final("11.04 EUR")]),
    ("and in yen?", [act("convert", amount=12, currency="JPY"), final("1800 JPY")]),
]


def replies(turns: int = 3) -> list[str]:
    return [reply for _, script in TURNS[:turns] for reply in script]


def sent(request: ModelRequest) -> list[dict[str, Any]]:
    return [message.to_dict() for message in request.messages]


def first_requests(model: ScriptedModel) -> list[int]:
    """The index in `model.requests` of each turn's first request (iteration 1)."""
    return [i for i, r in enumerate(model.requests) if "[Iteration 1 of" in r.messages[-1].content]


def assert_each_turn_extends_the_one_before(model: ScriptedModel) -> None:
    """Turn N's first request starts with turn N-1's last request, byte for byte, then
    that turn's final reply, then the new request: a prompt cache reuses all of it."""
    firsts = first_requests(model)
    assert len(firsts) >= 2
    for first in firsts[1:]:
        before, now = sent(model.requests[first - 1]), sent(model.requests[first])
        assert now[: len(before)] == before
        assert now[len(before)]["role"] == "assistant"
        assert json.loads(now[len(before)]["content"])["final_answer"]
        assert now[len(before) + 1]["role"] == "user" and len(now) == len(before) + 2


@pytest.fixture
def store(tmp_path: Path) -> SqliteRunStore:
    return SqliteRunStore(tmp_path / "runs.db")


async def test_a_follow_up_in_memory_sends_the_turn_before_as_its_prefix(tmp_path: Path) -> None:
    model = ScriptedModel(replies(2), strict=False)
    agent = AgentExecutor(model, [convert], workspace=tmp_path)
    first = await agent.run(TURNS[0][0])
    events: list[Event] = []
    second = await agent.run(TURNS[1][0], after=first, on_event=events.append)
    assert (first.answer, second.answer) == ("9.60 GBP", "11.04 EUR")
    assert_each_turn_extends_the_one_before(model)
    started = events[0]
    assert isinstance(started, RunStartedEvent) and started.after_run_id == first.run_id
    assert started.parent_run_id is None and started.fork_of is None
    assert conversions(tmp_path) == ["GBP", "EUR"]  # turn 1's call is history, not run again


async def test_each_turn_is_a_run_of_its_own_linked_to_the_one_before(
    store: SqliteRunStore, tmp_path: Path
) -> None:
    model = ScriptedModel(replies(), strict=False)
    runtime = Runtime(store)
    chat = runtime.conversation(AgentExecutor(model, [convert], workspace=tmp_path))
    results = [await chat.send(request) for request, _ in TURNS]
    runtime.close()
    assert [r.answer for r in results] == ["9.60 GBP", "11.04 EUR", "1800 JPY"]
    ids = [r.run_id for r in results]
    rows = [store.get_run(run_id) for run_id in ids]
    assert [(r.after_run_id, r.parent_run_id, r.status) for r in rows if r] == [
        (None, None, "completed"),
        (ids[0], None, "completed"),
        (ids[1], None, "completed"),
    ]
    for run_id in ids:  # the conversation as one thread, from any of its turns
        assert [r.run_id for r in conversation_turns(store, run_id)] == ids
    assert [r.run_id for r in chat.turns()] == ids == [r.run_id for r in runtime.turns(ids[0])]
    assert_each_turn_extends_the_one_before(model)  # built from the store: the same bytes
    assert conversions(tmp_path) == ["GBP", "EUR", "JPY"]


async def test_another_runtime_on_the_same_store_takes_the_conversation_up(
    tmp_path: Path,
) -> None:
    """The history comes from the store alone: a new Runtime, a new agent and a new model
    object (as after a restart) continue the conversation with the same bytes."""
    path = tmp_path / "runs.db"
    first_model = ScriptedModel(replies(1))
    runtime = Runtime(SqliteRunStore(path))
    agent = AgentExecutor(first_model, [convert], workspace=tmp_path)
    first = await runtime.conversation(agent).send(TURNS[0][0])
    runtime.close()
    second_model = ScriptedModel(TURNS[1][1])
    later = Runtime(SqliteRunStore(path))
    agent = AgentExecutor(second_model, [convert], workspace=tmp_path)
    chat = later.conversation(agent, after=first.run_id)
    second = await chat.send(TURNS[1][0])
    later.close()
    assert second.answer == "11.04 EUR"
    before, now = sent(first_model.requests[-1]), sent(second_model.requests[0])
    assert now[: len(before)] == before and now[len(before)]["content"] == TURNS[0][1][-1]
    assert now[-1]["content"].startswith("and in EUR?")


async def test_the_history_is_scrubbed_as_every_observation_is(store: SqliteRunStore) -> None:
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    model = ScriptedModel([final(f"your key is {key}"), final("noted")], strict=False)
    runtime = Runtime(store)
    chat = runtime.conversation(AgentExecutor(model, [convert]))
    first = await chat.send("what is my key?")
    await chat.send("thanks")
    runtime.close()
    assert first.answer == "your key is [REDACTED:openai_key]"
    history = json.dumps(sent(model.requests[1]))
    assert key not in history and "[REDACTED:openai_key]" in history


async def test_the_history_is_fitted_to_the_context_window(store: SqliteRunStore) -> None:
    """An earlier turn's long observation is shortened as it would be within a run; the
    newest messages stay whole."""

    def fetch(page: str) -> str:
        """Fetch a page.

        Args:
            page: its name
        """
        return f"{page}: " + "lorem ipsum dolor " * 600

    script = [act("fetch", page="a"), final("read a"), act("fetch", page="b"), final("read b")]
    model = ScriptedModel(script, strict=False)
    options = AgentOptions(context_window=2500)
    runtime = Runtime(store)
    chat = runtime.conversation(AgentExecutor(model, [fetch], options=options))
    await chat.send("read page a")
    await chat.send("now read page b")
    runtime.close()
    follow_up = sent(model.requests[2])
    observation = next(m["content"] for m in follow_up if "a: lorem" in m["content"])
    assert "characters cut to fit the context window" in observation
    newest = sent(model.requests[3])[-1]["content"]
    assert "b: lorem" in newest and "characters cut" not in newest


async def test_a_follow_up_to_a_run_still_running_is_refused_and_nothing_starts(
    store: SqliteRunStore,
) -> None:
    entered, release = asyncio.Event(), asyncio.Event()

    async def wait_here() -> str:
        """Wait for a signal."""
        entered.set()
        await release.wait()
        return "released"

    runtime = Runtime(store)
    busy = AgentExecutor(ScriptedModel([act("wait_here"), final("done")]), [wait_here])
    handle = runtime.start_agent(busy, "wait")
    await entered.wait()
    agent = AgentExecutor(ScriptedModel([]), [convert])
    with pytest.raises(FollowUpError, match=r"^run \S+ is still running: follow it up once"):
        runtime.start_agent(agent, "and then?", after=handle.run_id)
    with pytest.raises(FollowUpError, match="still running"):
        await runtime.conversation(agent, after=handle.run_id).send("and then?")
    assert [r.run_id for r in store.list_runs()] == [handle.run_id]  # nothing else started
    release.set()
    assert (await handle.wait()).answer == "done"
    runtime.close()


async def test_a_follow_up_to_another_tenants_run_is_not_found(store: SqliteRunStore) -> None:
    runtime = Runtime(store)
    first = await runtime.start_agent(
        AgentExecutor(ScriptedModel([final("hi")])), "hello", tenant="acme"
    ).wait()
    agent = AgentExecutor(ScriptedModel([]))
    with pytest.raises(RunNotFound, match=first.run_id):
        runtime.start_agent(agent, "and?", tenant="globex", after=first.run_id)
    spec = RunSpec(request="and?", model="scripted:none.json", tenant="globex")
    with pytest.raises(RunNotFound):
        runtime.start(spec, after=first.run_id)
    runtime.close()
    assert len(store.list_runs()) == 1


async def test_a_follow_up_to_an_interrupted_run_says_to_resume_it_first(
    store: SqliteRunStore, tmp_path: Path
) -> None:
    events: list[Event] = []
    agent = AgentExecutor(ScriptedModel(replies(1)), [convert], workspace=tmp_path)
    await agent.run(TURNS[0][0], on_event=events.append)
    store.append_many(events[:4])  # its process died during the tool call
    runtime = Runtime(store)
    with pytest.raises(FollowUpError, match=r"was interrupted: resume it first \(`loopwright"):
        runtime.start_agent(AgentExecutor(ScriptedModel([])), "and?", after=events[0].run_id)
    runtime.close()


async def test_a_task_run_cannot_be_followed_up(store: SqliteRunStore) -> None:
    task = RunStartedEvent(
        run_id="run_task", seq=1, ts=1.0, kind="task", request="rotate keys", model="",
        tools=[], options={}, tenant="default",
    )  # fmt: skip
    store.append(task)
    store.set_status("run_task", "completed")
    runtime = Runtime(store)
    with pytest.raises(FollowUpError, match="is a task run: only an agent run"):
        runtime.start_agent(AgentExecutor(ScriptedModel([])), "and?", after="run_task")
    runtime.close()


async def test_agent_run_takes_a_result_and_names_the_runtime_for_a_run_id() -> None:
    agent = AgentExecutor(ScriptedModel([]))
    with pytest.raises(FollowUpError, match=r"agent.run takes the result itself.*Runtime"):
        await agent.run("and?", after="run_123")  # type: ignore[arg-type]
    stored = ExecutionResult(run_id="run_123", status="completed", answer="hi")
    with pytest.raises(FollowUpError, match="read back from a store"):
        await agent.run("and?", after=stored)
    with pytest.raises(UsageError, match="not both"):
        await agent.run("and?", after=stored, fork_of=(stored, 1))


def spec_of(workspace: Path, request: str, after: str | None = None) -> RunSpec:
    """A spec of the conversion agent; its model, `shared:`, is the test's (`shared`)."""
    return RunSpec(
        request=request,
        model="shared:conversions",
        tools=(f"{TOOLS}:convert",),
        workspace=str(workspace),
        after=after,
    )


def shared(model: ScriptedModel) -> ModelRegistry:
    """A registry whose `shared:` specs all resolve to `model` (one script for the turns)."""
    return ModelRegistry().with_factory("shared", lambda _name, _base_url: model)


async def test_an_interrupted_follow_up_resumes_with_its_history(tmp_path: Path) -> None:
    """Turn 2 (from a spec) stops during its tool call; resumed in a new Runtime, it
    rebuilds its history from the store, replays its own log without a divergence, and
    makes only the model call it had not made."""
    whole = SqliteRunStore(tmp_path / "whole.db")
    model = ScriptedModel(replies(2), strict=False)
    runtime = Runtime(whole, models=shared(model))
    first = await runtime.start(spec_of(tmp_path, TURNS[0][0])).wait()
    second = await runtime.start(spec_of(tmp_path, TURNS[1][0]), after=first).wait()
    runtime.close()
    cut = SqliteRunStore(tmp_path / "cut.db")
    cut.append_many(whole.events(first.run_id))
    events = whole.events(second.run_id)
    cut.append_many(events[:5])  # up to the tool call's result: its process died there
    assert [e.type for e in events[3:5]] == ["tool_call_started", "tool_call"]
    assert isinstance(events[0], RunStartedEvent) and events[0].after_run_id == first.run_id
    rest = ScriptedModel(TURNS[1][1])  # the turn's script: resumed after its first reply
    again = Runtime(cut, models=shared(rest))
    resumed = await (await again.resume(second.run_id)).wait()
    again.close()
    assert resumed.answer == "11.04 EUR"
    assert conversions(tmp_path) == ["GBP", "EUR"]  # nothing ran again
    assert sent(rest.requests[0]) == sent(model.requests[-1])  # the same request as before
    report = await replay_run(cut, second.run_id)
    assert report.ok, report.describe()


async def test_a_conversation_of_a_spec_runs_each_turn_from_the_spec(tmp_path: Path) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    model = ScriptedModel(replies(2), strict=False)
    runtime = Runtime(store, models=shared(model))
    chat = runtime.conversation(spec_of(tmp_path, ""))
    answers = [(await chat.send(request)).answer for request, _ in TURNS[:2]]
    runtime.close()
    assert answers == ["9.60 GBP", "11.04 EUR"]
    first, second = (store.events(r.run_id) for r in chat.turns())
    started = second[0]
    assert isinstance(started, RunStartedEvent) and started.spec is not None
    assert started.spec["after"] == first[0].run_id == started.after_run_id
    assert_each_turn_extends_the_one_before(model)
    assert (await replay_run(store, started.run_id)).ok


@pytest.mark.subprocess
def test_a_conversation_survives_a_restart_of_the_process(tmp_path: Path) -> None:
    """Turn 1 in one process, turn 2 in another, against the same SQLite store: the second
    process builds the history from the store, and its model gets turn 1's last request,
    byte for byte, then turn 1's answer, then the new request."""
    script = Path(__file__).with_name("conversation_turn.py")
    store = str(tmp_path / "runs.db")

    def turn(request: str, script_replies: list[str], *after: str) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, str(script), store, str(tmp_path), request,
             json.dumps(script_replies), *after],
            capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        return dict(json.loads(done.stdout.splitlines()[-1]))

    first = turn(TURNS[0][0], TURNS[0][1])
    second = turn(TURNS[1][0], TURNS[1][1], first["run_id"])
    assert (first["answer"], second["answer"]) == ("9.60 GBP", "11.04 EUR")
    before, now = first["requests"][-1], second["requests"][0]
    assert now[: len(before)] == before
    assert now[len(before)]["content"] == TURNS[0][1][-1]
    assert now[-1]["content"].startswith("and in EUR?")
    assert conversions(tmp_path) == ["GBP", "EUR"]
    runs = SqliteRunStore(store)
    assert [r.run_id for r in conversation_turns(runs, second["run_id"])] == [
        first["run_id"],
        second["run_id"],
    ]


@pytest.mark.subprocess
def test_the_example_holds_a_conversation_in_memory_and_across_runtimes() -> None:
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(root / "examples" / "conversation.py")],
        capture_output=True, text=True, timeout=120, check=False,
        env={"PYTHONPATH": str(root / "src"), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "in memory: 12 USD is 9.48 GBP / and 11.04 EUR"
    assert lines[1].endswith("system user assistant user assistant user")
    assert lines[2] == "stored: 9.48 GBP / 1815.60 JPY"
    assert lines[3].endswith("the model saw the first turn again: True")
    first, second = lines[4].split()[1], lines[5].split()[1]
    assert lines[4].endswith("after None: 'What is 12 USD in GBP?'")
    assert lines[5].endswith(f"after {first}: 'and in yen?'") and second != first


async def test_a_follow_up_by_an_agent_with_other_tools_keeps_the_earlier_steps(
    store: SqliteRunStore, tmp_path: Path
) -> None:
    """The next turn's agent offers one more tool (its prompt differs): the turn before is
    made again step for step by it, and the model still gets that turn."""

    def round_to(value: float, digits: int) -> str:
        """Round a number.

        Args:
            value: the number
            digits: how many digits after the point
        """
        return f"{round(value, digits)}"

    runtime = Runtime(store)
    first_agent = AgentExecutor(ScriptedModel(replies(1)), [convert], workspace=tmp_path)
    first = await runtime.conversation(first_agent).send(TURNS[0][0])
    model = ScriptedModel([final("about 10 GBP")])
    wider = AgentExecutor(model, [convert, round_to], workspace=tmp_path)
    second = await runtime.conversation(wider, after=first).send("roughly?")
    assert second.answer == "about 10 GBP"
    texts = [m["content"] for m in sent(model.requests[0])]
    assert texts[1].startswith(TURNS[0][0]) and "9.60 GBP" in texts[3]
    narrow = AgentExecutor(ScriptedModel([]), [convert], options=AgentOptions(max_iterations=1))
    with pytest.raises(FollowUpError, match=r"cannot be followed up by this agent: replaying"):
        await runtime.conversation(narrow, after=first).send("again?")
    runtime.close()
