"""The ReAct loop driven by the ScriptedModel."""

from __future__ import annotations

import json
from typing import Any

import pytest

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.errors import MaxStepsExceeded, ScriptExhaustedError
from loopwright.events import (
    ModelResponseEvent,
    RunFinishedEvent,
    ToolCallEvent,
    ToolCallStartedEvent,
)
from loopwright.messages import ModelResponse, ToolCall
from loopwright.testing import ScriptedModel
from loopwright.tools import tool


def call(name: str, **args: Any) -> str:
    return json.dumps({"thought": f"use {name}", "action": name, "action_input": args})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


async def test_tool_then_final_answer(add_tool: Any) -> None:
    model = ScriptedModel([call("add", a=17, b=25), final("42")])
    result = await AgentExecutor(model, [add_tool]).run("What is 17 + 25?")
    assert result.status == "completed"
    assert result.answer == "42"
    assert [(s.tool_name, s.arguments, s.result) for s in result.steps] == [
        ("add", {"a": 17, "b": 25}, "42")
    ]
    second_request = model.requests[1].messages
    assert "Observation from add (add two integers): 42" in second_request[-1].content


async def test_events_have_gapless_seq_and_one_run_id(add_tool: Any) -> None:
    model = ScriptedModel([call("add", a=1, b=2), final("3")])
    events = [e async for e in AgentExecutor(model, [add_tool]).stream("1+2")]
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert len({e.run_id for e in events}) == 1
    types = [e.type for e in events]
    assert types[0] == "run_started" and types[-1] == "run_finished"
    assert "tool_call_started" in types and "tool_call" in types
    finished = next(e for e in events if isinstance(e, ToolCallEvent))
    assert finished.result == "3" and finished.iteration_number == 1


async def test_native_tool_calls_use_tool_messages(add_tool: Any) -> None:
    reply = ModelResponse(tool_calls=(ToolCall("c1", "add", {"a": 2, "b": 2}),))
    model = ScriptedModel([reply, "four"], tool_mode="native")
    result = await AgentExecutor(model, [add_tool]).run("2+2?")
    assert result.answer == "four"
    request = model.requests[1]
    assert [t.name for t in request.tools] == ["add"]
    tool_message = request.messages[-1]
    assert tool_message.role == "tool" and tool_message.tool_call_id == "c1"
    assert tool_message.content.startswith("4")


async def test_malformed_reply_gets_one_correction_then_succeeds() -> None:
    model = ScriptedModel(["", final("ok")])
    events = [e async for e in AgentExecutor(model).stream("hi")]
    parse_errors = [e for e in events if e.type == "parse_error"]
    assert len(parse_errors) == 1 and parse_errors[0].will_retry
    assert "could not be read" in model.requests[1].messages[-1].content
    assert isinstance(events[-1], RunFinishedEvent) and events[-1].answer == "ok"


@pytest.mark.parametrize("unreadable", ["", "```json\n```"])
async def test_a_native_runs_correction_asks_for_a_tool_call_or_a_plain_answer(
    add_tool: Any, unreadable: str
) -> None:
    """In native tool mode a reply is a tool call or text; asked for a JSON object instead,
    a model would write its call as JSON text."""
    model = ScriptedModel([unreadable, "5"], tool_mode="native")
    result = await AgentExecutor(model, [add_tool]).run("2 + 3?")
    assert result.answer == "5"
    correction = model.requests[1].messages[-1].content
    assert correction.startswith("Your last reply could not be read: the reply ")
    assert "call one of your tools, or give your final answer as plain text" in correction
    assert "JSON" not in correction and "{" not in correction


@pytest.mark.parametrize(("tool_mode", "revision"), [("native", 5), ("prompted", 6)])
async def test_prompted_runs_and_older_native_runs_are_asked_for_the_json_object(
    add_tool: Any, tool_mode: str, revision: int
) -> None:
    """Prompted mode's format is the JSON object; a native run recorded at an older
    revision is corrected as it was made (it replays with the same requests)."""
    model = ScriptedModel(["", final("5")], tool_mode=tool_mode)  # type: ignore[arg-type]
    options = AgentOptions(revision=revision)
    await AgentExecutor(model, [add_tool], options=options).run("2 + 3?")
    correction = model.requests[1].messages[-1].content
    assert "Reply again with exactly one JSON object" in correction


async def test_malformed_twice_stops_with_parse_error() -> None:
    model = ScriptedModel(["", "  "])
    result = await AgentExecutor(model).run("hi")
    assert result.status == "stopped" and result.reason == "parse_error"


async def test_tool_failure_becomes_observation_not_crash() -> None:
    @tool
    def explode(x: int) -> int:
        """Always fails."""
        raise RuntimeError("boom")

    model = ScriptedModel([call("explode", x=1), final("gave up")])
    result = await AgentExecutor(model, [explode]).run("try")
    assert result.success
    observation = result.steps[0].result
    assert "Tool 'explode' failed: RuntimeError: boom" in observation
    assert "if it names a wrong argument, fix it" in observation  # revision 6's advice


async def test_max_iterations_stops_and_keeps_partial_work(add_tool: Any) -> None:
    model = ScriptedModel([call("add", a=i, b=1) for i in range(3)], strict=False)
    result = await AgentExecutor(model, [add_tool], options=AgentOptions(max_iterations=3)).run("x")
    assert result.status == "stopped" and result.reason == "max_iterations"
    assert len(result.steps) == 2  # the third call, the last allowed, was offered no tool
    assert len(model.requests) == 3
    assert result.partial()["last_thought"] == "use add"
    with pytest.raises(MaxStepsExceeded):
        result.raise_for_status()


async def test_model_failure_is_failed_result_not_traceback() -> None:
    model = ScriptedModel([])
    result = await AgentExecutor(model).run("x")
    assert result.status == "failed"
    assert "ran out of replies" in (result.message or "")


async def test_scripted_model_fails_loudly_when_replies_left_over() -> None:
    model = ScriptedModel([final("a"), final("b")])
    with pytest.raises(ScriptExhaustedError, match="1 unused reply"):
        await AgentExecutor(model).run("x")


async def test_system_prompt_is_identical_across_iterations(add_tool: Any) -> None:
    model = ScriptedModel([call("add", a=1, b=1), call("add", a=2, b=2), final("done")])
    await AgentExecutor(model, [add_tool]).run("x")
    systems = {r.messages[0].content for r in model.requests}
    assert len(systems) == 1
    assert "iteration" not in next(iter(systems)).lower().split("rules")[0]
    newest = model.requests[2].messages[-1].content
    assert "[Iteration 3 of at most 10]\nTask: x\n" in newest
    # earlier messages carry no iteration note: the prompt prefix stays cacheable
    assert "[Iteration" not in model.requests[2].messages[2].content
    # and each request's history is the previous request's, plus the new turns
    first, third = model.requests[0].messages, model.requests[2].messages
    assert third[: len(first) - 1] == first[:-1]


async def test_prompted_note_restates_the_task_and_latest_results(add_tool: Any) -> None:
    replies = [call("add", a=n, b=1) for n in range(8)] + [final("done")]
    model = ScriptedModel(replies)
    await AgentExecutor(model, [add_tool], options=AgentOptions(max_iterations=20)).run("sum up")
    # the first request has no results to restate (and no "answer without tools" hint:
    # on the embedded model it made a code review answer without reading the code)
    assert model.requests[0].messages[-1].content.endswith("[Iteration 1 of at most 20]")
    note = model.requests[2].messages[-1].content.split("\n\n", 1)[1]
    assert note.splitlines() == [
        "[Iteration 3 of at most 20]",
        "Task: sum up",
        "Tool results so far:",
        '- add({"a": 0, "b": 1}) returned 1',
        '- add({"a": 1, "b": 1}) returned 2',
        "If a part of the task has no result yet, call a tool for it now; reply with "
        "final_answer only when these results answer every part of the task.",
    ]
    # bounded: only the last six results are restated, however long the run
    last = model.requests[8].messages[-1].content
    assert "- (2 earlier results in the conversation above)" in last
    assert '- add({"a": 1, "b": 1})' not in last and '- add({"a": 7, "b": 1})' in last


async def test_native_mode_note_has_no_recap(add_tool: Any) -> None:
    native = ModelResponse(text="", tool_calls=(ToolCall("c1", "add", {"a": 1, "b": 2}),))
    model = ScriptedModel([native, "3"])
    options = AgentOptions(tool_mode="native")
    await AgentExecutor(model, [add_tool], options=options).run("x")
    assert model.requests[1].messages[-1].content.endswith("[Iteration 2 of at most 10]")


async def test_history_keeps_only_the_action_taken(add_tool: Any) -> None:
    imagined_chain = call("add", a=1, b=2) + "\n" + final("3") + "\n" + call("add", a=3, b=3)
    model = ScriptedModel([imagined_chain, final("3")])
    result = await AgentExecutor(model, [add_tool]).run("1+2")
    assert [s.arguments for s in result.steps] == [{"a": 1, "b": 2}]
    remembered = model.requests[1].messages[-2]
    assert remembered.role == "assistant"
    assert json.loads(remembered.content) == {
        "thought": "use add",
        "action": "add",
        "action_input": {"a": 1, "b": 2},
    }


async def test_parsed_calls_get_stable_ids(add_tool: Any) -> None:
    model = ScriptedModel([call("add", a=1, b=1), final("2")])
    events = [e async for e in AgentExecutor(model, [add_tool]).stream("x")]
    started = [e for e in events if isinstance(e, ToolCallStartedEvent)]
    assert started[0].call_id == "call_1_0"
    responded = [e for e in events if isinstance(e, ModelResponseEvent)]
    assert responded[0].request_digest and responded[0].actions[0]["tool"] == "add"


def test_run_sync_wraps_run(add_tool: Any) -> None:
    result = AgentExecutor(ScriptedModel([final("hi")])).run_sync("x")
    assert result.answer == "hi"
