"""Seed 001 (ReAct agent loop engine): its verification plan as tests, on the compat
AgentExecutor, with the LLM mocked by ScriptedModel and real tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopwright.compat import (
    AgentAction,
    AgentExecutor,
    AgentFinish,
    AgentObservation,
    AgentStep,
    BaseParser,
    MaxStepsExceeded,
    ParseError,
    ReActJsonParser,
)
from loopwright.errors import RunError
from loopwright.testing import ScriptedModel
from loopwright.tools import Tool, tool

FIXTURES = Path(__file__).parent / "fixtures"
SECRET = "AKIAIOSFODNN7EXAMPLE"


@tool
def echo(text: str) -> str:
    """Repeat the given text back."""
    return text


@tool
def leak() -> str:
    """Return a config with a secret in it."""
    return f"aws_access_key_id = {SECRET}"


def action(name: str, thought: str = "", **args: object) -> str:
    return json.dumps({"thought": thought, "action": name, "action_input": args})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


# --- test_parser.py: valid/invalid JSON and text --------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (action("echo", "say it", text="hi"), AgentAction("echo", {"text": "hi"}, "say it")),
        (
            '```json\n{"action": "echo", "action_input": {"text": "x"}}\n```',
            AgentAction("echo", {"text": "x"}),
        ),
        (
            'Thought: think\nAction: echo\nAction Input: {"text": "z"}',
            AgentAction("echo", {"text": "z"}, "think"),
        ),
        (final("42"), AgentFinish("42", "done")),
        ("Thought: sure\nFinal Answer: 42", AgentFinish("42", "sure")),
    ],
)
def test_react_json_parser_reads_actions_and_answers(text: str, expected: object) -> None:
    assert ReActJsonParser().parse(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "<think>only thinking</think>",
        "{'action': 'echo', 'action_input': {'text': 'y'},}",  # broken JSON (issue 34, item 6)
        "The answer is 42.",  # plain text is not an answer to this parser (item 6)
    ],
)
def test_react_json_parser_raises_a_parse_error_for_nothing(text: str) -> None:
    with pytest.raises(ParseError):
        ReActJsonParser().parse(text)


def test_base_parser_is_abstract() -> None:
    with pytest.raises(TypeError):
        BaseParser()  # type: ignore[abstract]


# --- test_executor.py: runs N times and stops; max_steps raises -----------------------------
async def test_run_returns_the_final_answer_and_keeps_history() -> None:
    model = ScriptedModel(
        [action("echo", "first echo", text="one"), action("echo", text="two"), final("done twice")]
    )
    agent = AgentExecutor(model, [echo], max_steps=5)
    assert agent.history == []
    answer = await agent.run("echo one then two")
    assert answer == "done twice"
    assert isinstance(answer, str)
    assert agent.history == [
        AgentStep(
            AgentAction("echo", {"text": "one"}, "first echo"),
            AgentObservation("echo", "one", False),
        ),
        AgentStep(
            AgentAction("echo", {"text": "two"}, None), AgentObservation("echo", "two", False)
        ),
    ]
    assert len(model.requests) == 3


async def test_max_steps_raises_max_steps_exceeded_with_the_history_kept() -> None:
    model = ScriptedModel([action("echo", text=str(n)) for n in range(3)])
    agent = AgentExecutor(model, [echo], max_steps=3)
    with pytest.raises(MaxStepsExceeded) as raised:
        await agent.run("never finish")
    assert raised.value.max_steps == 3
    assert [s.observation.output for s in agent.history] == ["0", "1", "2"]
    assert len(model.requests) == 3


async def test_observations_are_scrubbed_before_history_and_the_model() -> None:
    model = ScriptedModel([action("leak"), final("ok")])
    agent = AgentExecutor(model, [leak])
    assert await agent.run("show the config") == "ok"
    observation = agent.history[0].observation.output
    assert SECRET not in observation and "aws_access_key_id" in observation
    assert all(SECRET not in m.content for m in model.requests[1].messages)


async def test_a_failing_tool_is_an_error_observation_not_a_crash() -> None:
    @tool
    def broken(path: str) -> str:
        """Always fails."""
        raise FileNotFoundError(path)

    agent = AgentExecutor(ScriptedModel([action("broken", path="x"), final("gave up")]), [broken])
    assert await agent.run("try") == "gave up"
    step = agent.history[0]
    assert step.observation.is_error and "FileNotFoundError" in step.observation.output


async def test_other_stops_raise_the_matching_run_error() -> None:
    same = action("echo", text="again")
    agent = AgentExecutor(ScriptedModel([same, same, same]), [echo], max_steps=10)
    with pytest.raises(RunError, match="same call") as raised:
        await agent.run("loop")
    assert not isinstance(raised.value, MaxStepsExceeded)


async def test_a_custom_parser_plugs_into_the_chain() -> None:
    class Shouting(BaseParser):
        """`ECHO <text>` is a call, `DONE <answer>` the end; nothing else is readable."""

        def parse(self, text: str) -> AgentAction | AgentFinish:
            verb, _, rest = text.partition(" ")
            if verb == "ECHO":
                return AgentAction("echo", {"text": rest}, "shouting")
            if verb == "DONE":
                return AgentFinish(rest)
            raise ParseError(f"expected ECHO or DONE, got {verb!r}")

    model = ScriptedModel(["ECHO hello", "mumble", "DONE said hello"])
    agent = AgentExecutor(model, [echo], parser=Shouting())
    assert await agent.run("shout") == "said hello"
    assert agent.history[0].action == AgentAction("echo", {"text": "hello"}, "shouting")
    correction = model.requests[2].messages[-1].content
    assert "expected ECHO or DONE, got 'mumble'" in correction


async def test_a_parser_returning_something_else_is_a_parse_error() -> None:
    class Wrong(BaseParser):
        def parse(self, text: str) -> AgentAction | AgentFinish:
            return text  # type: ignore[return-value]

    agent = AgentExecutor(ScriptedModel(["a", "b"]), [echo], parser=Wrong())
    with pytest.raises(RunError, match="returned str, not AgentAction or AgentFinish"):
        await agent.run("x")


async def test_native_tool_calls_still_work_with_a_seed_parser() -> None:
    reply = {
        "content": "",
        "tool_calls": [{"function": {"name": "echo", "arguments": {"text": "n"}}}],
    }
    model = ScriptedModel([reply, "DONE"], tool_mode="native")

    class Done(BaseParser):
        def parse(self, text: str) -> AgentAction | AgentFinish:
            return AgentFinish(text)

    agent = AgentExecutor(model, [echo], parser=Done())
    assert await agent.run("x") == "DONE"
    assert agent.history[0].observation.output == "n"


def test_tools_may_be_tools_or_plain_functions() -> None:
    def shout(text: str) -> str:
        """Upper-case the text."""
        return text.upper()

    agent = AgentExecutor(ScriptedModel([]), [echo, shout])
    assert agent.tools.names() == ["echo", "shout"]
    assert all(isinstance(t, Tool) for t in agent.tools)


# --- test_replays.py: a recorded conversation, the expected next step -----------------------
async def test_replay_of_a_recorded_conversation_gives_the_expected_next_step() -> None:
    replay = json.loads((FIXTURES / "seed001_replay.json").read_text(encoding="utf-8"))
    model = ScriptedModel(replay["replies"])
    agent = AgentExecutor(model, [echo], max_steps=len(replay["replies"]))
    assert await agent.run(replay["prompt"]) == replay["expected_answer"]
    assert [s.action.tool for s in agent.history] == replay["expected_tools"]
