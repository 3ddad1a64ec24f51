"""The reply grammar (opt-in, prompted mode): a backend that constrains its output gets a
schema whose choices are the run's tools, each with its own arguments, or a final answer."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest

from loopwright import AgentExecutor, AgentOptions
from loopwright.testing import ScriptedModel
from loopwright.tools import Tool

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from tools import add, multiply

GRAMMAR = AgentOptions(reply_grammar=True)


def reply(**fields: object) -> str:
    return json.dumps(fields)


def sent_schema(tools: list[Tool]) -> dict[str, object]:
    """The reply schema a prompted run with `tools` and the grammar sends its model."""
    model = ScriptedModel([reply(thought="ok", final_answer="5")], tool_mode="prompted")
    AgentExecutor(model, tools, options=GRAMMAR).run_sync("2 + 3?")
    schema = model.requests[0].output_schema
    assert schema is not None
    return schema


async def test_prompted_requests_carry_the_reply_schema() -> None:
    model = ScriptedModel(
        [
            reply(thought="add", action="add", action_input={"a": 2, "b": 3}),
            reply(thought="ok", final_answer="5"),
        ]
    )
    result = await AgentExecutor(model, [add, multiply], options=GRAMMAR).run("2 + 3?")
    assert result.answer == "5"
    schemas = [request.output_schema for request in model.requests]
    assert schemas[0] is not None and schemas == [schemas[0]] * 2  # the same on every call
    call = {"thought": "t", "action": "multiply", "action_input": {"a": 2, "b": 3}}
    jsonschema.validate(call, schemas[0])  # the run's tools: its choices
    assert all(not request.tools for request in model.requests)  # still prompted mode


async def test_off_by_default_and_in_native_mode() -> None:
    plain = ScriptedModel([reply(thought="ok", final_answer="5")])
    await AgentExecutor(plain, [add]).run("2 + 3?")
    native = ScriptedModel([{"content": "5"}], tool_mode="native")
    await AgentExecutor(native, [add], options=GRAMMAR).run("2 + 3?")
    assert plain.requests[0].output_schema is None
    assert native.requests[0].output_schema is None


def test_the_schema_admits_real_calls_and_answers_only() -> None:
    schema = sent_schema([add, multiply])
    jsonschema.validate({"thought": "t", "action": "add", "action_input": {"a": 1, "b": 2}}, schema)
    jsonschema.validate({"thought": "t", "final_answer": "3"}, schema)
    wrong = [
        {"thought": "t", "action": "calculate", "action_input": {"a": 1, "b": 2}},  # invented
        {"thought": "t", "action": "add", "action_input": {"x": 1, "y": 2}},  # wrong arguments
        {"thought": "t", "action": "add", "action_input": {"a": 1}},  # one missing
        {"thought": "t", "final_answer": 3},  # the answer is text
        {"action": "add", "action_input": {"a": 1, "b": 2}},  # no thought
    ]
    for value in wrong:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(value, schema)
