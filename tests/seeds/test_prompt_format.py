"""The reply format and the few-shot examples of the native prompts (issue 34, item 5):
native-tools mode gets a worked example too, and the JSON format keeps `is_final`.

Seed lines held here:

- seed 003: "1. Build initial messages: system prompt (with tool instructions + few-shot
  examples) + task description + context"
- seed 003: "**Few-shot examples in system prompt** — Qwen3 8B benefits from concrete examples"
- seed 000 (Response Parsing): `"is_final": false` for an action, `"is_final": true` for
  the final answer; seed 002's EXECUTION FORMAT, the same
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.messages import ModelResponse
from loopwright.parsing import ParsedAction, ParsedFinal, parse_reply
from loopwright.testing import ScriptedModel
from loopwright.tools import tool


@tool(effect="read")
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


async def system_prompt(tool_mode: str, **options: object) -> str:
    model = ScriptedModel(["done"], tool_mode=tool_mode)  # type: ignore[arg-type]
    await AgentExecutor(model, [lookup], options=AgentOptions(**options)).run("find k")  # type: ignore[arg-type]
    return model.requests[0].messages[0].content


async def test_native_tools_mode_has_a_few_shot_example_in_its_system_prompt() -> None:
    """Seed 003: "system prompt (with tool instructions + few-shot examples)". The native
    prompt shows a call (as `name(arguments)`, which the parser reads as that call), its
    result, and a final answer that calls no tool."""
    system = await system_prompt("native")
    example = system[system.index("EXAMPLE (its read tool is an illustration") :]
    assert "(tool calls go through the tool-calling interface" in example.splitlines()[0]
    lines = example.splitlines()
    call = next(line for line in lines if line.startswith("Assistant, calling a tool: "))
    outcome = parse_reply(ModelResponse(text=call.removeprefix("Assistant, calling a tool: ")))
    assert isinstance(outcome, ParsedAction)
    # the run offers `lookup`, not `read`: the heading says read is an illustration
    assert (outcome.calls[0].name, outcome.calls[0].arguments) == ("read", {"path": "notes.txt"})
    assert "call only the tools listed below" in lines[0]  # the run's tools come last
    assert system.index("AVAILABLE TOOLS:") > system.index(example)
    assert "Tool result of read: buy milk" in lines
    assert "Assistant: notes.txt says: buy milk" in lines
    assert "it is the final answer" in example


async def test_the_json_format_keeps_is_final() -> None:
    """Seed 000: `"action": "tool_name", ... "is_final": false` and `"final_answer": ...,
    "is_final": true`. The prompted format and its example say it, and each example reply
    reads as what its `is_final` says. Since revision 3 each structure is on one line, as
    the model should reply; each line is a reply the parser reads as what it says."""
    system = await system_prompt("prompted")
    fmt = system[system.index("EXECUTION FORMAT:") : system.index("RULES:")]
    lines = [line for line in fmt.splitlines() if line.startswith("{")]
    assert [json.loads(line)["is_final"] for line in lines] == [False, True]
    formats = [parse_reply(ModelResponse(text=line)) for line in lines]
    assert isinstance(formats[0], ParsedAction) and isinstance(formats[1], ParsedFinal)
    example = system[system.index("EXAMPLE (its read tool") :]
    replies = [
        line.removeprefix("Assistant: ")
        for line in example.splitlines()
        if line.startswith("Assistant: ")
    ]
    flags = [json.loads(r)["is_final"] for r in replies]
    assert flags[-1] is True and not any(flags[:-1])  # the example's calls, then its answer
    outcomes = [parse_reply(ModelResponse(text=r)) for r in replies]
    assert all(isinstance(o, ParsedAction) for o in outcomes[:-1])
    assert isinstance(outcomes[-1], ParsedFinal)


async def test_revision_2_keeps_its_format_over_several_lines() -> None:
    """Runs recorded with RunSpec 4 replay with the format they were sent."""
    system = await system_prompt("prompted", revision=2)
    fmt = system[system.index("EXECUTION FORMAT:") : system.index("RULES:")]
    assert '"action_input": {"arg1": "value1", "arg2": "value2"},\n    "is_final": false' in fmt
    assert '"final_answer": "Your complete response to the user",\n    "is_final": true' in fmt
    assert "Parameters: {" in system  # and its tools as JSON Schema lines


@pytest.mark.parametrize(
    ("reply", "valid"),
    [
        (
            {"thought": "t", "action": "lookup", "action_input": {"key": "k"}, "is_final": False},
            True,
        ),
        ({"thought": "t", "action": "lookup", "action_input": {"key": "k"}}, True),
        (
            {"thought": "t", "action": "lookup", "action_input": {"key": "k"}, "is_final": True},
            False,
        ),
        ({"thought": "t", "final_answer": "v", "is_final": True}, True),
        ({"thought": "t", "final_answer": "v", "is_final": False}, False),
    ],
)
def test_the_reply_grammar_allows_is_final_only_as_the_format_says(
    reply: dict[str, object], valid: bool
) -> None:
    """A backend that constrains its output to the reply schema can write `is_final` as the
    prompt asks, and cannot contradict it (a call marked final, an answer marked not)."""
    model = ScriptedModel([json.dumps({"thought": "t", "final_answer": "v"})], tool_mode="prompted")
    AgentExecutor(model, [lookup], options=AgentOptions(reply_grammar=True)).run_sync("find k")
    schema = model.requests[0].output_schema
    assert schema is not None
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(reply))
    assert (not errors) is valid


@pytest.mark.parametrize(("revision", "shows_a_call"), [(3, False), (2, True)])
async def test_a_run_without_tools_is_shown_only_the_answer_format(
    revision: int, shows_a_call: bool
) -> None:
    """Shown a call's structure with no tool to call, the 1.5B model called a tool it made
    up; since revision 3 a run without tools is shown the answer's structure only."""
    model = ScriptedModel([json.dumps({"final_answer": "42"})], tool_mode="prompted")
    await AgentExecutor(model, options=AgentOptions(revision=revision)).run("What is 6 * 7?")
    system = model.requests[0].messages[0].content
    fmt = system[system.index("EXECUTION FORMAT:") : system.index("RULES:")]
    assert ('"action": "tool_name"' in fmt) is shows_a_call
    assert '"final_answer"' in fmt and '"is_final": true' in fmt


# --- seed 002: "Response format enforced (JSON with required fields)", in a run ------------
MISSING_FIELDS = json.dumps({"thought": "I looked", "result": "value of k"})
"""JSON of the format's shape, with neither `action` nor `final_answer`."""


async def test_with_the_reply_grammar_a_run_holds_the_backend_to_the_required_fields() -> None:
    """`reply_grammar` (prompted mode): every request carries the reply schema for a backend
    that constrains its output; a reply without the required fields does not match it.
    Without the option the backend is not held to it."""
    reply = json.dumps({"thought": "t", "final_answer": "found"})
    model = ScriptedModel([reply], tool_mode="prompted")
    agent = AgentExecutor(model, [lookup], options=AgentOptions(reply_grammar=True))
    assert (await agent.run("find k")).answer == "found"
    schema = model.requests[0].output_schema
    assert schema is not None
    check = jsonschema.Draft202012Validator(schema)
    assert check.is_valid(json.loads(reply))
    assert check.is_valid({"thought": "t", "action": "lookup", "action_input": {"key": "k"}})
    assert not check.is_valid(json.loads(MISSING_FIELDS))
    assert not check.is_valid({"thought": "t", "action": "lookup"})  # no action_input
    plain = ScriptedModel([reply], tool_mode="prompted")
    await AgentExecutor(plain, [lookup]).run("find k")
    assert plain.requests[0].output_schema is None


async def test_the_seeds_parser_corrects_json_without_the_required_fields() -> None:
    """With the compat `ReActJsonParser` (the seed's contract) such a reply is a parse
    error: the model is told which fields are missing and asked once more."""
    from loopwright.compat import AgentExecutor as SeedExecutor
    from loopwright.compat import ReActJsonParser

    answer = json.dumps({"thought": "done", "final_answer": "value of k", "is_final": True})
    model = ScriptedModel([MISSING_FIELDS, answer])
    agent = SeedExecutor(model, [lookup], parser=ReActJsonParser())
    assert await agent.run("find k") == "value of k"
    correction = model.requests[1].messages[-1].content
    assert 'no "action" and no "final_answer"' in correction


async def test_the_native_chain_takes_json_without_the_required_fields_as_the_answer() -> None:
    """The default chain does not enforce the fields: a reply with neither is text, and
    text with no action in it is the final answer (docs/parsing.md); no correction."""
    model = ScriptedModel([MISSING_FIELDS], tool_mode="prompted")
    result = await AgentExecutor(model, [lookup]).run("find k")
    assert (result.status, result.answer, len(model.requests)) == (
        "completed",
        MISSING_FIELDS,
        1,
    )
