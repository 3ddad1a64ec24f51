"""On the embedded model, a follow-up turn re-evaluates only the new turn: the history it
sends (built from the store) is a byte-identical prefix of what the model saw before, so
llama.cpp's prefix cache holds all of it. Two short turns without tools keep it cheap;
bench/conversation.py measures five turns with tool calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopwright import AgentExecutor, AgentOptions, ExecutionResult
from loopwright.events import ModelResponseEvent
from loopwright.models import resolve_model
from loopwright.runtime import Runtime
from loopwright.store import SqliteRunStore

pytestmark = pytest.mark.model


def usage_of(store: SqliteRunStore, result: ExecutionResult) -> list[tuple[int, int]]:
    """(prompt tokens sent, of them already in the cache) of each of the run's calls."""
    found = []
    for event in store.events(result.run_id):
        if isinstance(event, ModelResponseEvent):
            usage = event.response["usage"]
            found.append((int(usage["input_tokens"]), int(usage.get("cached_input_tokens", 0))))
    return found


async def test_a_follow_up_turn_evaluates_only_what_is_new(tmp_path: Path) -> None:
    model = resolve_model("local")  # as `--model local`
    options = AgentOptions(max_iterations=2, max_output_tokens=48, temperature=0.0)
    agent = AgentExecutor(model, options=options)
    store = SqliteRunStore(tmp_path / "runs.db")
    runtime = Runtime(store)
    chat = runtime.conversation(agent)
    first = await chat.send("Name one primary colour, in one word.")
    second = await chat.send("Now name another one, in one word.")
    runtime.close()
    assert first.status == second.status == "completed", (first, second)
    (*_, (sent_before, _)) = usage_of(store, first)
    (sent, cached), *_ = usage_of(store, second)
    new = sent - sent_before  # the first turn's answer and the new request
    assert 0 < new < sent / 2, (sent_before, sent)
    assert cached >= sent_before, f"the earlier turn was evaluated again: {cached}/{sent}"
    assert sent - cached <= new, (sent, cached, new)
