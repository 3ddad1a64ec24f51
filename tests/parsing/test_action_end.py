"""ActionEnd: where a streamed reply's first complete action ends (the adapters stop
generating there). Each case is fed whole, a character at a time and in random pieces:
the end must not depend on how the reply arrives."""

from __future__ import annotations

import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_properties import JSON_VALUES, JSONISH

from loopwright.messages import ModelResponse
from loopwright.parsing import ActionEnd, ParsedAction, ParsedFinal, action_text, parse_reply
from loopwright.parsing._shapes import outcome_from_value, outcome_kind

README_FIRST_REPLY = (  # the embedded model's first reply to the README's question, verbatim
    '{\n    "thought": "I need to add 123 and 456 first.",\n    "action": "add",\n'
    '    "action_input": {"a": 123, "b": 456}\n}\n{\n    "thought": "I have the sum of 123 '
    'and 456.",\n    "final_answer": "123 + 456 = 579"\n}\n{\n    "thought": "Now I need to '
    'multiply the result by 7.",\n    "action": "multiply",\n    "action_input": {"a": 579, '
    '"b": 7}\n}\n{\n    "thought": "I have the final answer.",\n    "final_answer": "579 * 7 '
    '= 4053"\n}'
)

# (reply, the text up to the end of its first complete action)
CUT = [
    (README_FIRST_REPLY, README_FIRST_REPLY[: README_FIRST_REPLY.index("}\n{") + 1]),
    ('{"final_answer": "4053"}\n{"action": "x"}', '{"final_answer": "4053"}'),
    ('I will add.\n```json\n{"name": "add", "arguments": {"a": 1}}\n```\nObservation: 1',
     'I will add.\n```json\n{"name": "add", "arguments": {"a": 1}}'),
    ('{"tool_calls": [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]} and',
     '{"tool_calls": [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]}'),
    ('[{"name": "a", "arguments": {"s": "}]{"}}]\n[{"name": "b"}]',
     '[{"name": "a", "arguments": {"s": "}]{"}}]'),
    ("{'action': 'add', 'action_input': {'a': 1}} then", "{'action': 'add', 'action_input': {'a': 1}}"),
    ('<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>\nObservation: 3',
     '<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>'),
    ('<tool_call>{"name": "a", "arguments": {}}</tool_call>\n\n<tool_call>{"name": "b", '
     '"arguments": {}}</tool_call>{"final_answer": 1}',
     '<tool_call>{"name": "a", "arguments": {}}</tool_call>\n\n<tool_call>{"name": "b", '
     '"arguments": {}}</tool_call>'),
    ('<function=add>{"a": 1}</function> done', '<function=add>{"a": 1}</function>'),
    ('<think>\n{"name": "x", "arguments": {}}\n</think>\n{"name": "y", "arguments": {}}\n{"z": 1}',
     '<think>\n{"name": "x", "arguments": {}}\n</think>\n{"name": "y", "arguments": {}}'),
    ('Thought: sum\nAction: add\nAction Input: {"a": 2,\n "b": 3}\nObservation: 5\nFinal Answer: 5',
     'Thought: sum\nAction: add\nAction Input: {"a": 2,\n "b": 3}'),
    ("Action: search\nAction Input: cats and dogs\nObservation: none",
     "Action: search\nAction Input: cats and dogs"),
    ('Action: add\nAction Input:\n```json\n{"a": 1}\n```\nObservation', 'Action: add\nAction Input:\n```json\n{"a": 1}'),
    ("Action: get_time\nObservation: noon\n", "Action: get_time\n"),  # (read at its newline)
]  # fmt: skip

# (reply, the text up to where it ends: before the comma of a key that adds nothing)
CUT_BEFORE_A_KEY = [
    ('{"thought": "add first", "action": "add", "action_input": {"a": 1, "b": 2}, '
     '"is_final": false}', '{"thought": "add first", "action": "add", "action_input": {"a": 1, "b": 2}'),
    ('{"action_input": {"a": 1}, "action": "add", "thought": "args first"}',
     '{"action_input": {"a": 1}, "action": "add"'),
    ('{"thought": "done", "final_answer": "4053", "is_final": true}\n{"action": "x"}',
     '{"thought": "done", "final_answer": "4053"'),
    ('{"name": "add", "arguments": {"s": "a, b}"}, "id": 1}', '{"name": "add", "arguments": {"s": "a, b}"}'),
    ('{"tool_calls": [{"name": "a", "arguments": {}}], "note": "x"}',
     '{"tool_calls": [{"name": "a", "arguments": {}}]'),
    ('{"thought": "x", "action": "final_answer", "action_input": "42", "is_final": true}',
     '{"thought": "x", "action": "final_answer", "action_input": "42"'),
    ('{"action": "add", "action_input" : {"a": 1}, "is_final": false}',
     '{"action": "add", "action_input" : {"a": 1}'),
]  # fmt: skip

NOT_CUT = [
    '{"thought": "a, b", "action": "add", "is_final": false',  # no arguments yet
    '{"answer": "maybe", "action": "add", "action_input": {"a": 1}',  # a call may follow
    '<tool_call>{"name": "a", "arguments": {}, "id": 1}',  # a call tag ends at its tag
    "{'action': 'add', 'action_input': {'a': 1}, 'is_final': false",  # read when closed
    '{"action": "add", "action\\u005finput": {"a": 1}, "is_final": false',  # read when closed
    "The answer is 42.",
    "Final Answer: 42\nThought: done\n",
    'Final Answer: {"action": "add"} is what I would call\nmore',
    '{"thought": "let me think"}\nstill thinking',
    '<think>{"name": "a", "arguments": {}}</think>',
    '<tool_call>{"name": "a", "arguments": {}}</tool_call>',  # another call may follow
    '{"name": "a", "arguments": {"a": 1}',  # still inside its first action
    "[add(a=1, b=2)]",
    "Action: add\nAction Input: 1",  # the line may go on
    '{"a": [1}, {"action": "x"}',  # mismatched brackets
]


def pieces(text: str, seed: int) -> list[str]:
    rng = random.Random(seed)
    out, at = [], 0
    while at < len(text):
        size = rng.randint(1, 6)
        out.append(text[at : at + size])
        at += size
    return out


def action_end(text: str) -> int | None:
    return ActionEnd().feed(text)


def fed(parts: list[str]) -> int | None:
    watcher = ActionEnd()
    ends = [watcher.feed(part) for part in parts]
    first = next((i for i, end in enumerate(ends) if end is not None), None)
    if first is not None:  # once known, the end stays
        assert all(end == ends[first] for end in ends[first:])
    return ends[-1] if ends else None


@pytest.mark.parametrize(("reply", "used"), CUT)
def test_the_reply_ends_after_its_first_action(reply: str, used: str) -> None:
    assert action_end(reply) == len(used)
    assert fed(list(reply)) == len(used)
    for seed in range(5):
        assert fed(pieces(reply, seed)) == len(used)


@pytest.mark.parametrize(("reply", "used"), CUT)
def test_the_cut_reply_reads_as_an_action_or_an_answer(reply: str, used: str) -> None:
    outcome = parse_reply(ModelResponse(text=used))
    assert isinstance(outcome, ParsedAction | ParsedFinal), outcome


@pytest.mark.parametrize(("reply", "used"), CUT_BEFORE_A_KEY)
def test_the_reply_ends_before_a_key_that_adds_nothing(reply: str, used: str) -> None:
    assert action_end(reply) == len(used)
    assert fed(list(reply)) == len(used)
    for seed in range(5):
        assert fed(pieces(reply, seed)) == len(used)
    whole = parse_reply(ModelResponse(text=reply.split("\n")[0]))
    read = action_text(reply)
    assert read == used + "}"  # the object the engine reads is closed
    cut = parse_reply(ModelResponse(text=read))  # reads as the whole object (a thought
    assert what_it_does(cut) == what_it_does(whole)  # after the call is not read)


def what_it_does(outcome: object) -> object:
    if isinstance(outcome, ParsedAction):
        return outcome.calls
    assert isinstance(outcome, ParsedFinal), outcome
    return outcome.answer


def test_the_engine_reads_the_same_action_from_the_cut_reply() -> None:
    whole = parse_reply(ModelResponse(text=README_FIRST_REPLY))
    cut = parse_reply(ModelResponse(text=README_FIRST_REPLY[: action_end(README_FIRST_REPLY)]))
    assert isinstance(whole, ParsedAction) and cut == whole


@pytest.mark.parametrize("reply", NOT_CUT)
def test_no_end_without_a_complete_action(reply: str) -> None:
    assert action_end(reply) is None
    assert fed(list(reply)) is None


def test_the_text_it_was_fed_is_kept() -> None:
    watcher = ActionEnd()
    for part in pieces(README_FIRST_REPLY, 1):
        watcher.feed(part)
    assert watcher.text == README_FIRST_REPLY


@settings(max_examples=400, deadline=None)
@given(JSONISH, st.integers(0, 1000))
def test_the_end_does_not_depend_on_the_pieces(text: str, seed: int) -> None:
    whole = action_end(text)
    assert fed(pieces(text, seed)) == whole
    assert fed(list(text)) == whole
    if whole is not None:
        assert 0 < whole <= len(text)
        read = action_text(text)
        assert read is not None and read.startswith(text[:whole])
        assert isinstance(parse_reply(ModelResponse(text=read)), ParsedAction | ParsedFinal)


SHAPE_KEYS = st.sampled_from(
    ["name", "action", "function", "tool_calls", "arguments", "action_input", "final_answer",
     "answer", "response", "thought", "is_final"]
)  # fmt: skip
CALL_SHAPED = st.recursive(
    st.sampled_from(["add", " ", "Final Answer", "final", "", None, True, 0]) | JSON_VALUES,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(SHAPE_KEYS, children, max_size=4)
    ),
    max_leaves=10,
)


@settings(max_examples=1000, deadline=None)
@given(CALL_SHAPED)
@example([{"name": "add"}, {"name": "Final Answer", "arguments": {"input": 1}}])  # action
@example({"tool_calls": [{"action": "final"}, {"name": "add"}]})  # final
@example({"function": {"name": " "}, "final_answer": False})  # action (the nested name)
@example({"name": " ", "answer": None, "response": 0})  # final
@example([{"name": "add"}, 3])  # nothing
def test_a_closed_value_is_read_as_the_parser_reads_it(value: object) -> None:
    """ActionEnd asks `outcome_kind` what a closed JSON value reads as: the kind of what the
    JSON layer builds of it (`outcome_from_value`), a call list with a final answer in it too."""
    outcome = outcome_from_value(value)
    assert outcome_kind(value) == (None if outcome is None else outcome.kind)
