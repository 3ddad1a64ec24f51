"""`on_event=` takes a plain function (`events.append`) as well as a coroutine function:
the same events, in order, either way; through `AgentExecutor.run` and the `Runtime`."""

from __future__ import annotations

from typing import Any

from loopwright import AgentExecutor, Event, Runtime, tool
from loopwright.testing import InMemoryRunStore, ScriptedModel

REPLIES = [
    '{"thought": "use the tool", "action": "add", "action_input": {"a": 17, "b": 25}}',
    '{"thought": "done", "final_answer": "42"}',
]


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def shape(events: list[Event]) -> list[tuple[int, str]]:
    return [(e.seq, e.type) for e in events]


async def test_a_plain_function_sees_every_event_a_coroutine_function_sees() -> None:
    plain: list[Event] = []
    result = await AgentExecutor(ScriptedModel(REPLIES), [add]).run(
        "17 + 25?", on_event=plain.append
    )
    assert result.status == "completed" and result.answer == "42"

    awaited: list[Event] = []

    async def remember(event: Event) -> None:
        awaited.append(event)

    await AgentExecutor(ScriptedModel(REPLIES), [add]).run("17 + 25?", on_event=remember)
    assert shape(plain) == shape(awaited)
    assert [seq for seq, _ in shape(plain)] == list(range(1, len(plain) + 1))
    assert plain[0].type == "run_started" and plain[-1].type == "run_finished"
    assert "tool_call" in {e.type for e in plain}


async def test_the_runtime_takes_a_plain_function_too() -> None:
    seen: list[Any] = []
    runtime = Runtime(InMemoryRunStore())
    agent = AgentExecutor(ScriptedModel(REPLIES), [add])
    handle = runtime.start_agent(agent, "17 + 25?", on_event=seen.append)
    result = await handle.wait()
    assert result.answer == "42"
    assert seen[0].type == "run_started" and seen[-1].type == "run_finished"
