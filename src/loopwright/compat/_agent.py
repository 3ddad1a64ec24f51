"""Seed 001's agent contract: `AgentExecutor(llm, tools, parser=None, *, max_steps)` whose
`run(prompt)` returns the final answer as a string, with `history` and pluggable parsers.

A thin door onto the native `loopwright.AgentExecutor`: the same loop, the same tool
executor (so observations in `history` are scrubbed), the same stop policies. A seed
parser becomes one layer of the native parser chain, after native tool calls.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from loopwright.agent import AgentExecutor as NativeAgentExecutor
from loopwright.agent import AgentOptions, ExecutionResult
from loopwright.compat._react_json import read_react_json
from loopwright.errors import MaxStepsExceeded, ParseError
from loopwright.events import Event, ModelResponseEvent
from loopwright.messages import ModelResponse, ToolCall
from loopwright.models import Model
from loopwright.parsing import (
    DEFAULT_PARSERS,
    NativeToolCallParser,
    ParsedAction,
    ParsedFinal,
    ParseFailure,
    ReplyParser,
)
from loopwright.parsing._result import ParseOutcome
from loopwright.telemetry import EventLogger
from loopwright.tools import Tool, ToolRegistry

DEFAULT_MAX_STEPS = 10
STEPS_RAN_OUT = ("max_iterations", "repetition", "no_progress")
"""Stops that, at the last step, are the seed's "Raise `MaxStepsExceeded`"."""


@dataclass(frozen=True)
class AgentAction:
    """The model asks for one tool call."""

    tool: str
    tool_input: dict[str, Any] = field(default_factory=dict)
    thought: str | None = None


@dataclass(frozen=True)
class AgentFinish:
    """The model's final answer."""

    output: str
    thought: str | None = None


@dataclass(frozen=True)
class AgentObservation:
    """A tool's result as the model saw it (scrubbed, truncated)."""

    tool: str
    output: str
    is_error: bool = False


@dataclass(frozen=True)
class AgentStep:
    """One (action, observation) pair of a run's history."""

    action: AgentAction
    observation: AgentObservation


class BaseParser(abc.ABC):
    """Reads a model's text as an AgentAction or an AgentFinish.

    Raise `loopwright.errors.ParseError` for text that is neither (returning anything else
    is a parse error too): the model is told what was wrong and asked once more.
    """

    @abc.abstractmethod
    def parse(self, text: str) -> AgentAction | AgentFinish: ...


class ReActJsonParser(BaseParser):
    """The seed's default parser, strict: one JSON object with `action` and `action_input`,
    or `final_answer` (fenced or bare, prose around it allowed), or the ReAct lines
    `Action:` / `Action Input:` (JSON) and `Final Answer:`. Broken JSON and plain text raise
    ParseError: the executor sends the model a correction and asks once more."""

    def parse(self, text: str) -> AgentAction | AgentFinish:
        kind, tool, value, thought = read_react_json(text)
        if kind == "final":
            return AgentFinish(str(value), thought)
        return AgentAction(tool, dict(value) if isinstance(value, dict) else {}, thought)


def _tool_input(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except json.JSONDecodeError:
            return {"input": value}
        return decoded if isinstance(decoded, dict) else {"input": decoded}
    return {} if value is None else {"input": value}


class SeedParserLayer:
    """A seed `BaseParser` as one layer of the native parser chain."""

    name = "seed"

    def __init__(self, parser: BaseParser) -> None:
        self.parser = parser

    def parse(self, response: ModelResponse) -> ParseOutcome | None:
        try:
            outcome = self.parser.parse(response.text)
        except ParseError as exc:
            return ParseFailure(str(exc))
        if isinstance(outcome, AgentAction):
            call = ToolCall("call_0", outcome.tool, _tool_input(outcome.tool_input))
            return ParsedAction((call,), outcome.thought)
        if isinstance(outcome, AgentFinish):
            return ParsedFinal(str(outcome.output), outcome.thought)
        kind = type(outcome).__name__
        return ParseFailure(
            f"{type(self.parser).__name__}.parse returned {kind}, not AgentAction or AgentFinish"
        )


class AgentExecutor:
    """Seed 001's executor. `await run(prompt)` returns the final answer, or raises
    `MaxStepsExceeded` when `max_steps` iterations end without one (other stops raise the
    matching `RunError`). After a run, `history` holds its (action, observation) steps.
    With the `loopwright.trace` logger enabled for INFO, each run writes its trace there
    ("Thinking... Calling echo... Observing... Final Answer").
    `native` is the loopwright AgentExecutor underneath (events, `stream()`, options)."""

    def __init__(
        self,
        llm: Model,
        tools: ToolRegistry | Iterable[Tool | Callable[..., Any]] = (),
        parser: BaseParser | None = None,
        *,
        max_steps: int = DEFAULT_MAX_STEPS,
        **native_options: Any,
    ) -> None:
        self.llm = llm
        self.parser = parser
        self.max_steps = max_steps
        parsers: tuple[ReplyParser, ...] = DEFAULT_PARSERS
        if parser is not None:
            parsers = (NativeToolCallParser(), SeedParserLayer(parser))
        # the seed's loop offers tools at every step ("while steps < max_steps: ... If
        # Action -> Call Tool"): no last turn without tools unless `options=` asks for it
        options = native_options.pop("options", None) or AgentOptions(last_turn=False)
        options = AgentOptions.from_dict({**options.to_dict(), "max_iterations": max_steps})
        self.native = NativeAgentExecutor(
            llm, tools, options=options, parsers=parsers, **native_options
        )
        self.history: list[AgentStep] = []
        self.result: ExecutionResult | None = None

    @property
    def tools(self) -> ToolRegistry:
        return self.native.tools

    async def run(self, prompt: str) -> str:
        """The final answer; raises MaxStepsExceeded (or another RunError) otherwise."""
        thoughts: dict[int, str | None] = {}
        trace = EventLogger()
        traced = trace.enabled  # the seed's users watch "Thinking... Calling..." in the logs

        async def remember(event: Event) -> None:
            if isinstance(event, ModelResponseEvent) and event.actions:
                thoughts.setdefault(event.iteration_number, event.thought)
            if traced:
                trace(event)

        self.history = []
        result = await self.native.run(prompt, on_event=remember)
        self.result = result
        self.history = [
            AgentStep(
                AgentAction(step.tool_name, dict(step.arguments), thoughts.get(step.iteration)),
                AgentObservation(step.tool_name, step.result, step.is_error),
            )
            for step in result.steps
        ]
        ran_out = result.status == "stopped" and result.reason in STEPS_RAN_OUT
        if ran_out and result.iterations >= self.max_steps:  # a guard fired at the last step
            raise MaxStepsExceeded(self.max_steps, result.message)
        result.raise_for_status()
        return result.answer or ""
