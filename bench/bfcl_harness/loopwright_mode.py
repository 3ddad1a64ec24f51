"""A single-turn BFCL question as a loopwright run.

The run's tools are the question's functions (name, description, BFCL's JSON Schema), and
none of them is ever executed. Two mappings:

- `stop` (the default): every call loopwright would run needs approval, and the agent has
  `on_pending="wait"`, so the run ends `waiting` at the first such call, before it runs (the
  engine's own door for stopping at a call). A call loopwright would not run (a tool that
  does not exist, arguments that do not fit the schema, a reply it cannot read) goes back to
  the model as in any run, and the model goes on. The answer scored: the calls of the reply
  the run stopped at that it runs, up to the first it would not (where a reply of several
  calls ends); none when the run ends with a final answer (right on irrelevance).
- `run`: every call is answered with the same neutral observation (`NEUTRAL_RESULT`), and
  the run goes on until the model answers or a guard stops it. The answer scored: every
  call that ran, in order. Without `max_calls_per_reply` prompted mode asks for one call a
  reply, so a question that needs several calls (parallel) is answered only this way.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from loopwright import AgentExecutor
from loopwright.agent import AgentOptions
from loopwright.events import Event, ModelResponseEvent, ParseErrorEvent
from loopwright.messages import ToolCall
from loopwright.models import Model
from loopwright.tools import Tool
from loopwright.tools._tool import Effect

Mapping = Literal["stop", "run"]
NEUTRAL_RESULT = "ok"
"""What a call gets back in the `run` mapping (BFCL's single-turn questions have no results)."""


@dataclass
class RunRecord:
    """What one question's run did: the calls scored and what the failure classes need."""

    calls: list[dict[str, Any]]
    status: str
    answer: str | None
    seconds: float
    output_tokens: int
    model_calls: int
    attempted: list[dict[str, Any]] = field(default_factory=list)
    """Every call the model wrote, read by loopwright, in order (run or not)."""
    parse_errors: int = 0
    texts: list[str] = field(default_factory=list)
    """Each model reply's text as the model wrote it (what a failure's cause is read from)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "status": self.status,
            "answer": self.answer,
            "seconds": round(self.seconds, 2),
            "output_tokens": self.output_tokens,
            "model_calls": self.model_calls,
            "attempted": self.attempted,
            "parse_errors": self.parse_errors,
            "texts": self.texts,
        }


def _never_run(**arguments: Any) -> str:
    raise AssertionError("a BFCL function was executed in the stop mapping")


def _neutral(**arguments: Any) -> str:
    return NEUTRAL_RESULT


def question_tools(
    schemas: list[dict[str, Any]],
    function_for: Callable[[str], Callable[..., str]],
    effect: Effect = "unknown",
) -> list[Tool]:
    """The question's functions as loopwright tools, each calling `function_for(name)`."""
    return [
        Tool(
            name=s["name"],
            description=s["description"],
            parameters=s["parameters"],
            function=function_for(s["name"]),
            effect=effect,
        )
        for s in schemas
    ]


def would_run(tools: list[Tool]) -> Callable[[ToolCall], bool]:
    """The approval check of the stop mapping: a call of a known tool whose arguments fit
    its schema (what the executor would run)."""
    by_name = {t.name: t for t in tools}

    def check(call: ToolCall) -> bool:
        tool = by_name.get(call.name)
        return tool is not None and tool.check_arguments(call.arguments) is None

    return check


def calls_run(
    reply: list[dict[str, Any]], runs: Callable[[ToolCall], bool], *, batch_ends: bool
) -> list[dict[str, Any]]:
    """The calls of the reply a run stopped at that it runs, in order: those it would run
    (a known tool, arguments that fit), and with `batch_ends` (several calls a reply) only
    up to the first it would not, where such a reply's batch ends."""
    kept: list[dict[str, Any]] = []
    for index, call in enumerate(reply):
        if runs(ToolCall(f"call_{index}", call["name"], call["arguments"])):
            kept.append(call)
        elif batch_ends and kept:
            break
    return kept


class Watch:
    """The run's events as they come: each model reply's calls, parse errors."""

    def __init__(self) -> None:
        self.replies: list[list[dict[str, Any]]] = []
        self.texts: list[str] = []
        self.parse_errors = 0

    async def see(self, event: Event) -> None:
        if isinstance(event, ModelResponseEvent):
            self.replies.append(
                [{"name": a["tool"], "arguments": a["arguments"]} for a in event.actions]
            )
            self.texts.append(str(event.response.get("text") or ""))
        elif isinstance(event, ParseErrorEvent):
            self.parse_errors += 1


async def run_question(
    model: Model,
    request: str,
    schemas: list[dict[str, Any]],
    mapping: Mapping = "stop",
    options: AgentOptions | None = None,
) -> RunRecord:
    """One single-turn question through loopwright; the calls it made (see the module)."""
    if mapping == "stop":
        tools = question_tools(schemas, lambda name: _never_run)
        agent = AgentExecutor(
            model, tools, options=options, approve=would_run(tools), on_pending="wait"
        )
    else:
        tools = question_tools(schemas, lambda name: _neutral)
        agent = AgentExecutor(model, tools, options=options)
    watch = Watch()
    started = time.perf_counter()
    result = await agent.run(request, on_event=watch.see)
    seconds = time.perf_counter() - started
    if mapping == "stop":
        stopped_at = watch.replies[-1] if result.status == "waiting" and watch.replies else []
        several = options is not None and (options.max_calls_per_reply or 1) > 1
        calls = calls_run(stopped_at, would_run(tools), batch_ends=several)
    else:
        calls = [
            {"name": s.tool_name, "arguments": s.arguments} for s in result.steps if not s.is_error
        ]
    return RunRecord(
        calls=calls,
        status=result.status,
        answer=result.answer,
        seconds=seconds,
        output_tokens=result.usage.output_tokens,
        model_calls=len(watch.replies),
        attempted=[c for reply in watch.replies for c in reply],
        parse_errors=watch.parse_errors,
        texts=watch.texts,
    )
