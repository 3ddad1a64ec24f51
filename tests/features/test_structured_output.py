"""Structured output through the agent loop: validated values, retries with the errors,
the typed failure, the schema sent to backends that constrain, and resume."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypedDict

import pytest
from pydantic import BaseModel

from loopwright import AgentExecutor, AgentOptions
from loopwright.errors import ConfigurationError, OutputValidationError
from loopwright.events import Event, OutputInvalidEvent, RunErrorEvent
from loopwright.testing import ScriptedModel


class City(BaseModel):
    name: str
    population: int


@dataclass
class Point:
    x: int
    y: int


class Pair(TypedDict):
    left: str
    right: str


def final(value: Any) -> str:
    return json.dumps({"thought": "done", "final_answer": value})


async def test_pydantic_output_is_validated_and_typed() -> None:
    model = ScriptedModel([final({"name": "Lyon", "population": 520000})])
    result = await AgentExecutor(model, output_type=City).run("a city")
    city = result.output_as(City)
    assert city == City(name="Lyon", population=520000)
    assert json.loads(result.answer or "") == {"name": "Lyon", "population": 520000}
    request = model.requests[0]
    assert request.output_schema is not None
    wrapped = request.output_schema["properties"]["final_answer"]
    assert wrapped["required"] == ["name", "population"]
    assert "FINAL ANSWER FORMAT" in request.messages[0].content


async def test_dataclass_typeddict_and_json_schema_outputs() -> None:
    point = await AgentExecutor(ScriptedModel([final({"x": 1, "y": 2})]), output_type=Point).run(
        "p"
    )
    assert point.output_as(Point) == Point(1, 2)
    pair = await AgentExecutor(
        ScriptedModel([final({"left": "a", "right": "b"})]), output_type=Pair
    ).run("p")
    assert pair.output_as(Pair) == {"left": "a", "right": "b"}
    schema = {"type": "array", "items": {"type": "integer"}, "minItems": 2}
    numbers = await AgentExecutor(ScriptedModel([final([3, 4])]), output_type=schema).run("n")
    assert numbers.output == [3, 4]


async def test_invalid_answer_goes_back_with_errors_then_validates() -> None:
    model = ScriptedModel(
        [final({"name": "Lyon", "population": "many"}), final({"name": "Lyon", "population": 5})]
    )
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    result = await AgentExecutor(model, output_type=City).run("a city", on_event=sink)
    assert result.output == City(name="Lyon", population=5)
    invalid = [e for e in events if isinstance(e, OutputInvalidEvent)]
    assert len(invalid) == 1 and invalid[0].will_retry
    assert invalid[0].errors[0].startswith("final_answer.population:")
    feedback = model.requests[1].messages[-1].content
    assert "final_answer.population" in feedback and "does not match" in feedback


async def test_run_fails_with_typed_error_holding_the_last_answer() -> None:
    bad = [final({"name": "A"}), final({"name": "B"}), final({"name": "C"})]
    model = ScriptedModel(bad[:3])
    options = AgentOptions(output_retries=2)
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    result = await AgentExecutor(model, output_type=City, options=options).run("x", on_event=sink)
    assert result.status == "failed" and result.reason == "output_invalid"
    assert [e.will_retry for e in events if isinstance(e, OutputInvalidEvent)] == [
        True,
        True,
        False,
    ]
    assert any(
        isinstance(e, RunErrorEvent) and e.error_type == "OutputValidationError" for e in events
    )
    with pytest.raises(OutputValidationError) as caught:
        result.output_as(City)
    assert json.loads(caught.value.answer or "") == {"name": "C"}
    assert any("population" in error for error in caught.value.errors)


async def test_default_is_one_retry() -> None:
    model = ScriptedModel(["not json at all", final("still wrong")])
    result = await AgentExecutor(model, output_type=City).run("x")
    assert result.reason == "output_invalid"
    assert len(model.requests) == 2


async def test_tools_still_run_and_the_schema_allows_calls(add_tool: Any) -> None:
    model = ScriptedModel(
        [
            json.dumps({"thought": "add", "action": "add", "action_input": {"a": 2, "b": 3}}),
            final({"x": 5, "y": 0}),
        ]
    )
    agent = AgentExecutor(model, [add_tool], output_type=Point)
    result = await agent.run("add")
    assert result.output == Point(5, 0)
    schema = model.requests[0].output_schema or {}
    assert [alt["required"] for alt in schema["anyOf"]] == [
        ["thought", "action", "action_input"],
        ["thought", "final_answer"],
    ]
    assert schema["anyOf"][0]["properties"]["action"]["enum"] == ["add"]


async def test_unconstrained_sends_no_schema_but_validates() -> None:
    model = ScriptedModel([final({"x": 1, "y": 1})])
    options = AgentOptions(constrained_output=False)
    result = await AgentExecutor(model, output_type=Point, options=options).run("p")
    assert result.output == Point(1, 1) and model.requests[0].output_schema is None


def sent_schema(output_type: Any) -> dict[str, Any]:
    """The reply schema an agent with `output_type` sends its model."""
    model = ScriptedModel(['{"thought": "t", "final_answer": "?"}'])
    options = AgentOptions(output_retries=0, max_iterations=1)
    AgentExecutor(model, output_type=output_type, options=options).run_sync("x")
    schema = model.requests[0].output_schema
    assert schema is not None
    return schema


def test_nested_models_keep_their_definitions_at_the_root() -> None:
    class Country(BaseModel):
        capital: City
        cities: list[City]

    schema = sent_schema(Country)
    assert "City" in schema["$defs"]
    assert "$defs" not in schema["properties"]["final_answer"]


def test_bad_output_types_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="not a valid JSON Schema"):
        AgentExecutor(ScriptedModel([]), output_type={"type": "nonsense"})
    with pytest.raises(ConfigurationError, match="cannot be validated"):
        AgentExecutor(ScriptedModel([]), output_type=object())
    with pytest.raises(ConfigurationError, match="output_retries"):
        AgentOptions(output_retries=-1)


async def test_resume_serves_the_recorded_replies_and_validates_again() -> None:
    first = ScriptedModel(
        [final({"name": "X", "population": "?"}), final({"name": "X", "population": 3})]
    )
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    await AgentExecutor(first, output_type=City).run("x", on_event=sink)
    # the process "crashed" right after the invalid answer was logged
    cut = next(i for i, e in enumerate(events) if isinstance(e, OutputInvalidEvent)) + 1
    model = ScriptedModel(
        [final({"name": "X", "population": "?"}), final({"name": "X", "population": 3})]
    )  # the same script: it goes on after the reply the log served
    result = await AgentExecutor(model, output_type=City).run("x", recorded=events[:cut])
    assert result.output == City(name="X", population=3)
    assert len(model.requests) == 1  # the recorded, invalid reply was not asked again
    assert "population" in model.requests[0].messages[-1].content  # the errors went back


async def test_an_agent_without_tools_is_told_to_answer_at_once(add_tool: Any) -> None:
    alone = ScriptedModel([final({"x": 1, "y": 2})])
    await AgentExecutor(alone, output_type=Point).run("p")
    assert "You have no tools" in alone.requests[0].messages[0].content
    helped = ScriptedModel([final({"x": 1, "y": 2})])
    await AgentExecutor(helped, [add_tool], output_type=Point).run("p")
    assert "You have no tools" not in helped.requests[0].messages[0].content


async def test_without_tools_an_answer_after_invented_actions_is_taken() -> None:
    reply = '{"thought": "look it up", "action": "get_info", "action_input": {"q": "x"}}\n' + final(
        {"x": 3, "y": 4}
    )
    model = ScriptedModel([reply])
    result = await AgentExecutor(model, output_type=Point).run("p")
    assert result.output == Point(3, 4) and len(model.requests) == 1
