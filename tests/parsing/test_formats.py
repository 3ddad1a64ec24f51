"""Every reply format the parser chain reads, as emitted by real local and hosted models."""

from __future__ import annotations

from typing import Any

import pytest

from loopwright.messages import ModelResponse, ToolCall
from loopwright.parsing import ParsedAction, ParsedFinal, ParseFailure, parse_reply


def read(text: str) -> dict[str, Any]:
    return parse_reply(ModelResponse(text=text)).to_dict()


def action(tool: str, arguments: dict[str, Any], thought: str | None = None) -> dict[str, Any]:
    return {
        "kind": "action",
        "thought": thought,
        "actions": [{"tool": tool, "arguments": arguments}],
    }


def final(answer: str, thought: str | None = None) -> dict[str, Any]:
    return {"kind": "final", "thought": thought, "answer": answer}


CASES: list[tuple[str, str, dict[str, Any]]] = [
    # seed 000 / 002 ReAct JSON
    ("seed action", '{"thought": "read it", "action": "read", "action_input": {"path": "a.txt"}, "is_final": false}',
     action("read", {"path": "a.txt"}, "read it")),
    ("seed final", '{"thought": "done", "final_answer": "All good", "is_final": true}', final("All good", "done")),
    ("final decided from the action", '{"thought": "t", "action": "Final Answer", "action_input": "42"}', final("42", "t")),
    ("final_answer action with object", '{"action": "final_answer", "action_input": {"answer": "ok"}}', final("ok")),
    ("is_final true but an action given", '{"action": "add", "action_input": {"a": 1}, "is_final": true}', action("add", {"a": 1})),
    ("action_input as JSON string", '{"action": "add", "action_input": "{\\"a\\": 2}"}', action("add", {"a": 2})),
    ("action_input as plain string", '{"action": "search", "action_input": "cats"}', action("search", {"input": "cats"})),
    # name/arguments shapes
    ("qwen/hermes name+arguments", '{"name": "add", "arguments": {"a": 1, "b": 2}}', action("add", {"a": 1, "b": 2})),
    ("llama 3.x name+parameters", '{"name": "add", "parameters": {"a": 1, "b": 2}}', action("add", {"a": 1, "b": 2})),
    ("llama python_tag", '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Oslo"}}', action("get_weather", {"city": "Oslo"})),
    ("openai function object in text", '{"type": "function", "function": {"name": "add", "arguments": "{\\"a\\": 1}"}}', action("add", {"a": 1})),
    ("tool/args keys", '{"tool": "echo", "args": {"text": "hi"}}', action("echo", {"text": "hi"})),
    # fences and prose
    ("json fence", 'Sure!\n```json\n{"action": "echo", "action_input": {"text": "x"}}\n```\n', action("echo", {"text": "x"})),
    ("bare fence", '```\n{"name": "echo", "arguments": {"text": "y"}}\n```', action("echo", {"text": "y"})),
    ("prose around json", 'I will call the tool now: {"name": "echo", "arguments": {"text": "z"}} and then wait.', action("echo", {"text": "z"})),
    # repair
    ("single quotes", "{'action': 'add', 'action_input': {'a': 1, 'b': 2}}", action("add", {"a": 1, "b": 2})),
    ("trailing commas", '{"action": "add", "action_input": {"a": 1, "b": 2,},}', action("add", {"a": 1, "b": 2})),
    ("comments", '{"action": "add", // the tool\n "action_input": {"a": 1}}', action("add", {"a": 1})),
    ("python literals", '{"action": "flag", "action_input": {"on": True, "why": None}}', action("flag", {"on": True, "why": None})),
    ("truncated", '{"thought": "x", "action": "add", "action_input": {"a": 1, "b": 2', action("add", {"a": 1, "b": 2}, "x")),
    # mistral arrays
    ("mistral TOOL_CALLS", '[TOOL_CALLS] [{"name": "add", "arguments": {"a": 1}}, {"name": "echo", "arguments": {"text": "q"}}]',
     {"kind": "action", "thought": None, "actions": [{"tool": "add", "arguments": {"a": 1}}, {"tool": "echo", "arguments": {"text": "q"}}]}),
    ("tool_calls key", '{"tool_calls": [{"name": "echo", "arguments": {"text": "w"}}]}', action("echo", {"text": "w"})),
    # <tool_call> tags (Qwen, Hermes)
    ("tool_call tag", '<tool_call>\n{"name": "add", "arguments": {"a": 5}}\n</tool_call>', action("add", {"a": 5})),
    ("tool_call after think", '<think>\nI need to add.\n</think>\n<tool_call>{"name": "add", "arguments": {"a": 6}}</tool_call>',
     action("add", {"a": 6}, "I need to add.")),
    ("unclosed tool_call", '<tool_call>{"name": "add", "arguments": {"a": 7}}', action("add", {"a": 7})),
    ("two tool_calls", '<tool_call>{"name": "a", "arguments": {}}</tool_call>\n<tool_call>{"name": "b", "arguments": {"x": 1}}</tool_call>',
     {"kind": "action", "thought": None, "actions": [{"tool": "a", "arguments": {}}, {"tool": "b", "arguments": {"x": 1}}]}),
    ("function tag", "<function=get_weather>{\"city\": \"Lima\"}</function>", action("get_weather", {"city": "Lima"})),
    # ReAct text
    ("react text", "Thought: I should add.\nAction: add\nAction Input: {\"a\": 1, \"b\": 2}", action("add", {"a": 1, "b": 2}, "I should add.")),
    ("react text stops at hallucinated observation",
     "Thought: look it up\nAction: search\nAction Input: cats\nObservation: cats are great\nFinal Answer: cats",
     action("search", {"input": "cats"}, "look it up")),
    ("react final", "Thought: I know it.\nFinal Answer: Paris", final("Paris", "I know it.")),
    ("react action named final answer", "Action: Final Answer\nAction Input: 7", final("7")),
    ("react input with name key stays arguments", 'Action: lookup\nAction Input: {"name": "Ada"}', action("lookup", {"name": "Ada"})),
    # pythonic calls (Llama 3.2, Gemma)
    ("pythonic list", "[add(a=1, b=2)]", action("add", {"a": 1, "b": 2})),
    ("gemma tool_code", "```tool_code\nget_weather(city='Paris')\n```", action("get_weather", {"city": "Paris"})),
    # plain text and think
    ("plain text is the final answer", "The capital of France is Paris.", final("The capital of France is Paris.")),
    ("json data that is not a call is an answer", '{"temperature": 21}', final('{"temperature": 21}')),
    ("think then answer", "<think>simple</think>\nIt is 4.", final("It is 4.", "simple")),
    ("prose with braces is not repaired into a call", "Use {curly} braces in templates.", final("Use {curly} braces in templates.")),
]  # fmt: skip


@pytest.mark.parametrize(
    "reply, expected", [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES]
)
def test_reply_formats(reply: str, expected: dict[str, Any]) -> None:
    assert read(reply) == expected


@pytest.mark.parametrize("reply", ["", "   \n\t", "<think>only thinking</think>"])
def test_empty_or_thinking_only_is_a_parse_error(reply: str) -> None:
    outcome = parse_reply(ModelResponse(text=reply))
    assert isinstance(outcome, ParseFailure)
    assert '"final_answer"' in outcome.message  # tells the model the expected format


def test_native_tool_calls_win_and_keep_their_ids() -> None:
    calls = (ToolCall("abc", "add", {"a": 1}),)
    outcome = parse_reply(ModelResponse(text="Let me add.", tool_calls=calls))
    assert isinstance(outcome, ParsedAction)
    assert outcome.calls == calls and outcome.thought == "Let me add."


def test_first_json_that_means_something_wins() -> None:
    text = 'Data: {"x": 1}\nCall: {"name": "echo", "arguments": {"text": "hi"}}'
    outcome = parse_reply(ModelResponse(text=text))
    assert isinstance(outcome, ParsedAction) and outcome.calls[0].name == "echo"


def test_final_answer_object_values_become_text() -> None:
    outcome = parse_reply(ModelResponse(text='{"final_answer": {"total": 3}}'))
    assert isinstance(outcome, ParsedFinal) and outcome.answer == '{"total": 3}'


def test_action_line_without_a_tool_name_is_a_parse_error() -> None:
    outcome = parse_reply(ModelResponse(text='Thought: hmm\nAction: ""\nAction Input: {}'))
    assert isinstance(outcome, ParseFailure)
    assert "no tool name" in outcome.message


def test_json_nested_past_the_decoder_limit_is_prose_not_a_parser_crash() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    outcome = parse_reply(ModelResponse(text=f'{deep} {{"final_answer": "ok"}}'))
    assert outcome == ParsedFinal("ok", None)


def test_a_valid_object_after_a_broken_one_is_read() -> None:
    outcome = parse_reply(ModelResponse(text='Data: {"x": 1,, } then {"final_answer": "7"}'))
    assert outcome == ParsedFinal("7", None)
