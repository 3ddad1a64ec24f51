"""Property-based tests: no input makes the parsers raise; they always return an outcome."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from loopwright.messages import ModelResponse
from loopwright.parsing import ParsedAction, ParsedFinal, ParseFailure, parse_reply
from loopwright.parsing.messages import response_from_message

OUTCOMES = (ParsedAction, ParsedFinal, ParseFailure)
FRAGMENTS = st.sampled_from(
    ['{', '}', '[', ']', '"', "'", ":", ",", "action", "action_input", "name", "arguments",
     "final_answer", "<tool_call>", "</tool_call>", "<think>", "</think>", "Action:",
     "Action Input:", "Final Answer:", "Observation:", "```json\n", "```", "[TOOL_CALLS]",
     "<|python_tag|>", "add(a=1)", "True", "None", "\n", " ", "\\", "0", "-1e999"]
)  # fmt: skip
JSONISH = st.lists(st.one_of(FRAGMENTS, st.text(max_size=8)), max_size=40).map("".join)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "name",
                    "arguments",
                    "action",
                    "action_input",
                    "final_answer",
                    "thought",
                    "tool_calls",
                    "function",
                    "x",
                ]
            )
            | st.text(max_size=5),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_any_text_gives_an_outcome(text: str) -> None:
    assert isinstance(parse_reply(ModelResponse(text=text)), OUTCOMES)


@settings(max_examples=400, deadline=None)
@given(JSONISH)
def test_any_jsonish_text_gives_an_outcome(text: str) -> None:
    outcome = parse_reply(ModelResponse(text=text))
    assert isinstance(outcome, OUTCOMES)
    if isinstance(outcome, ParsedAction):
        assert all(isinstance(c.arguments, dict) and c.name for c in outcome.calls)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_any_json_value_gives_an_outcome(value: Any) -> None:
    assert isinstance(parse_reply(ModelResponse(text=json.dumps(value))), OUTCOMES)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_any_message_dict_gives_a_response_or_a_reason(value: Any) -> None:
    message = {"role": "assistant", "content": value, "tool_calls": value}
    for candidate in (value, message, {"message": message}):
        result = response_from_message(candidate)
        assert isinstance(result, ModelResponse | str)
        if isinstance(result, ModelResponse):
            assert isinstance(parse_reply(result), OUTCOMES)
