"""A multi-turn BFCL question (multi_turn_base): the user's turns one after the other, each
call run on BFCL's own backends (the file system, the trading bot, the travel API, ... of
bfcl_eval/eval_checker/multi_turn_eval/func_source_code, in the worker process, their state
kept across the turns of one question), scored by BFCL's state and response checkers.

Through loopwright, each backend method is a tool (BFCL's function docs as its schema) and
each user turn is a follow-up run in the same conversation: `agent.run(turn,
after=previous)` when the engine has conversations; until then the harness carries the
history itself, in the request (`carried_request`). Through the native format, the
conversation is the chat template's messages, with `tool_calls` and `tool` results, up to
BFCL's 20 steps a turn. What is scored, per turn and per model reply: the calls that reached
the backends, written as BFCL's Qwen FC handler reads them.
"""

from __future__ import annotations

import inspect
import json
import time
from typing import Any

from bfcl_harness.client import Bfcl, Question, tool_call_text
from bfcl_harness.loopwright_mode import question_tools
from bfcl_harness.native_mode import NativeChat

from loopwright import AgentExecutor
from loopwright.agent import AgentOptions, ExecutionResult
from loopwright.models import Model

MAX_STEPS_A_TURN = 20
"""BFCL's own limit (MAXIMUM_STEP_LIMIT) on the native format's replies a turn."""
RESULT_CHARS = 300


def turn_text(turn: list[dict[str, str]]) -> str:
    return "\n".join(m["content"] for m in turn if m.get("role") == "user")


def has_conversations(agent: AgentExecutor[Any, Any]) -> bool:
    """Does the engine take `run(..., after=result)` (a follow-up in the same conversation)?"""
    return "after" in inspect.signature(agent.run).parameters


def carried_request(earlier: list[tuple[str, ExecutionResult[Any]]], request: str) -> str:
    """A turn's request with the conversation so far written out (what the model needs until
    the engine carries the history: each earlier request, its calls and results, its answer)."""
    lines = ["Earlier in this conversation (the tools' state is as these calls left it):"]
    for asked, result in earlier:
        lines.append(f"User: {asked}")
        for step in result.steps:
            arguments = json.dumps(step.arguments, ensure_ascii=False)
            output = " ".join(step.result.split())[:RESULT_CHARS]
            lines.append(f"You called {step.tool_name}({arguments}) -> {output}")
        if result.answer:
            lines.append(f"You answered: {result.answer}")
    lines += ["", "Now the user asks:", request]
    return "\n".join(lines)


def steps_by_reply(result: ExecutionResult[Any]) -> list[str]:
    """Per model reply of a run, its calls that reached the backends, as scored text."""
    replies: dict[int, list[dict[str, Any]]] = {}
    for step in result.steps:
        if not step.is_error:  # refused by loopwright (unknown tool, arguments): never ran
            replies.setdefault(step.iteration, []).append(
                {"name": step.tool_name, "arguments": step.arguments}
            )
    return [tool_call_text(calls) for _, calls in sorted(replies.items())]


async def loopwright_multi_turn(
    model: Model, bfcl: Bfcl, question: Question, tag: str, options: AgentOptions | None = None
) -> dict[str, Any]:
    def backend(name: str) -> Any:
        def call(**arguments: Any) -> str:
            return bfcl.execute(tag, question.id, [{"name": name, "arguments": arguments}])[0]

        return call

    tools = question_tools(question.tools, backend, effect="write")
    agent = AgentExecutor(model, tools, options=options)
    follow_ups = has_conversations(agent)
    turns: list[list[str]] = []
    earlier: list[tuple[str, ExecutionResult[Any]]] = []
    seconds = 0.0
    output_tokens = model_calls = 0
    previous: ExecutionResult[Any] | None = None
    for turn in question.turns:
        asked = turn_text(turn)
        started = time.perf_counter()
        if follow_ups and previous is not None:
            result = await agent.run(asked, after=previous)
        else:
            result = await agent.run(asked if follow_ups else carried_request(earlier, asked))
        seconds += time.perf_counter() - started
        output_tokens += result.usage.output_tokens
        model_calls += result.iterations
        turns.append(steps_by_reply(result))
        earlier.append((asked, result))
        previous = result
    return {
        "result": turns,
        "seconds": round(seconds, 2),
        "output_tokens": output_tokens,
        "model_calls": model_calls,
        "history": "conversation (after=)" if follow_ups else "carried in the request",
        "answers": [r.answer for _, r in earlier],
    }


async def native_multi_turn(
    chat: NativeChat, bfcl: Bfcl, question: Question, tag: str
) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    turns: list[list[str]] = []
    seconds = 0.0
    output_tokens = model_calls = 0
    for turn in question.turns:
        messages.extend(turn)
        steps: list[str] = []
        for _ in range(MAX_STEPS_A_TURN):
            reply = await chat.reply(messages, question.tools)
            seconds += reply.seconds
            output_tokens += reply.output_tokens
            model_calls += 1
            if not reply.calls:
                messages.append({"role": "assistant", "content": reply.text})
                break
            results = bfcl.execute(tag, question.id, reply.calls)
            steps.append(tool_call_text(reply.calls))
            messages.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "type": "function",
                            "function": {"name": c["name"], "arguments": c["arguments"]},
                        }
                        for c in reply.calls
                    ],
                }
            )
            messages.extend({"role": "tool", "content": r} for r in results)
        turns.append(steps)
    return {
        "result": turns,
        "seconds": round(seconds, 2),
        "output_tokens": output_tokens,
        "model_calls": model_calls,
    }
