"""End to end on the embedded model, for real: llama.cpp in-process and llama.cpp's own
OpenAI-compatible server on 127.0.0.1. CPU heavy: pytest runs these one at a time, with
temperature 0 and a fixed thread count, so the greedy output is reproducible."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from inprocess_cli import CliRun
from loopwright import AgentExecutor, AgentOptions, ExecutionResult
from loopwright.events import Event, ModelResponseEvent, RunFinishedEvent
from loopwright.messages import ModelResponse
from loopwright.models import OpenAIModel, RetryPolicy
from loopwright.models._local import LocalModel, _load, resolve_local_path
from loopwright.models._local_spec import default_threads
from loopwright.parsing import ParsedAction, parse_reply
from model_server import LlamaServer

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
from tools import add, multiply

pytestmark = pytest.mark.model
CHAIN = "What is (123 + 456) * 7?"
CALL_LIMIT_S = 900
"""Generous: a 3-8 s call on an idle machine took minutes when other model work shared it."""


def calls_of(result: ExecutionResult) -> list[tuple[str, dict[str, Any]]]:
    return [(step.tool_name, step.arguments) for step in result.steps]


async def test_openai_compatible_server_runs_a_two_call_chain(llama_server: LlamaServer) -> None:
    model = OpenAIModel(
        "qwen", base_url=llama_server.url, retry=RetryPolicy(max_retries=0), timeout=CALL_LIMIT_S
    )
    result = await AgentExecutor(model, [add, multiply]).run(CHAIN)
    assert result.status == "completed", (result.reason, result.message)
    assert calls_of(result) == [("add", {"a": 123, "b": 456}), ("multiply", {"a": 579, "b": 7})]
    assert result.answer is not None and "4053" in result.answer
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0


async def test_openai_compatible_server_single_call(llama_server: LlamaServer) -> None:
    model = OpenAIModel(
        "qwen", base_url=llama_server.url, retry=RetryPolicy(max_retries=0), timeout=CALL_LIMIT_S
    )
    result = await AgentExecutor(model, [add, multiply]).run("What is 17 + 25?")
    assert result.status == "completed", (result.reason, result.message)
    assert calls_of(result) == [("add", {"a": 17, "b": 25})]
    assert result.answer is not None and "42" in result.answer


ADD_TOOL = {
    "type": "function",
    "function": {
        "name": "add",
        "description": "Add two numbers.",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
    },
}


def test_tools_with_tool_choice_auto_the_call_is_read_either_way(
    llama_server: LlamaServer,
) -> None:
    """The server is given the tool in `tools` (`tool_choice: "auto"`): whether it answers
    with `tool_calls` or writes the call in its text (this small model writes a fenced JSON
    block), loopwright reads the same call. (llama.cpp's own llama-server, built by `make
    eval-compare`, is held to the same in tests/models/test_llama_server.py.)"""
    body = {
        "model": "qwen",
        "messages": [{"role": "user", "content": "What is 17 + 25? Use the add tool."}],
        "tools": [ADD_TOOL],
        "tool_choice": "auto",
        "temperature": 0,
        "max_tokens": 120,
    }
    reply = httpx.post(f"{llama_server.url}/chat/completions", json=body, timeout=CALL_LIMIT_S)
    assert reply.status_code == 200, reply.text
    message = reply.json()["choices"][0]["message"]
    if message.get("tool_calls"):
        (call,) = message["tool_calls"]
        found = (call["function"]["name"], json.loads(call["function"]["arguments"]))
    else:
        outcome = parse_reply(ModelResponse(text=message["content"]))
        assert isinstance(outcome, ParsedAction), (outcome, message)
        found = (outcome.calls[0].name, outcome.calls[0].arguments)
    assert found == ("add", {"a": 17, "b": 25})


async def test_embedded_model_reuses_its_prompt_cache() -> None:
    """Each iteration evaluates only the tokens its prompt does not share with the previous
    one; the run's model_response events report it (`cached_input_tokens`)."""
    model = LocalModel(resolve_local_path(""), threads=default_threads())
    llm, lock = _load(model.path, model.threads, model.context)
    with lock:  # a cold cache: other tests in this process share the llama.cpp instance
        llm.reset()
    usages: list[dict[str, int]] = []
    new_tokens: list[int] = []  # tokens of each prompt past its common prefix with the last
    previous: list[int] = []
    events: list[Event] = []

    async def watch(event: Event) -> None:  # called before the loop goes on
        nonlocal previous
        events.append(event)
        if isinstance(event, ModelResponseEvent):
            usage = event.response["usage"]
            prompt = list(llm._input_ids)[: usage["input_tokens"]]
            new_tokens.append(len(prompt) - llm.longest_token_prefix(previous, prompt))
            usages.append(usage)
            previous = prompt

    agent = AgentExecutor(model, [add, multiply], options=AgentOptions(temperature=0.0))
    result = await agent.run(CHAIN, on_event=watch)
    assert calls_of(result) == [("add", {"a": 123, "b": 456}), ("multiply", {"a": 579, "b": 7})]
    totals = [u["input_tokens"] for u in usages]
    evaluated = [u["input_tokens"] - u.get("cached_input_tokens", 0) for u in usages]
    assert len(usages) >= 2, usages  # the model may make both calls in its first reply
    assert evaluated[0] == totals[0]  # a cold cache evaluates the whole prompt
    assert "cached_input_tokens" not in usages[0]  # written only when there is some
    # from the second iteration on, the system prompt and history are a cached prefix (the
    # iteration note sits in the newest message only): only the new turns are evaluated
    assert evaluated[1:] == new_tokens[1:], (evaluated, new_tokens, totals)
    for fresh, whole in zip(evaluated[1:], totals[1:], strict=True):
        assert 0 < fresh < whole * 0.4, (evaluated, totals)
    assert result.usage.cached_input_tokens == sum(totals) - sum(evaluated)
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert finished.usage["cached_input_tokens"] == sum(totals) - sum(evaluated)


def test_cli_default_model_streams_json_events(
    tmp_path: Path, run_cli: Callable[..., CliRun]
) -> None:
    """In this process: the embedded model is loaded once for all its tests (the user's
    environment is kept: the model is unpacked in the user's cache)."""
    tools = f"{ROOT}/examples/tools.py:add,{ROOT}/examples/tools.py:multiply"
    env = {**os.environ, "LOOPWRIGHT_STORE": str(tmp_path / "runs.db")}
    done = run_cli("run", CHAIN, "--tools", tools, "--json", env=env)
    assert done.code == 0, done.err
    lines = [json.loads(line) for line in done.out.splitlines()]
    deltas = [e for e in lines if e["type"] == "model_text_delta"]  # live only: no seq of their own
    events = [e for e in lines if e["type"] != "model_text_delta"]
    assert all(d["text"] for d in deltas)
    started = events[0]
    assert started["type"] == "run_started" and started["model"] == "local"
    tool_calls = [(e["tool_name"], e["arguments"]) for e in events if e["type"] == "tool_call"]
    assert tool_calls == [("add", {"a": 123, "b": 456}), ("multiply", {"a": 579, "b": 7})]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    finished = events[-1]
    assert finished["type"] == "run_finished" and finished["status"] == "completed"
    assert "4053" in finished["answer"]


async def test_skill_folder_runs_on_the_embedded_model(tmp_path: Path) -> None:
    from loopwright.models import resolve_model
    from loopwright.skills import AutonomousSkillExecutor, load_skill
    from loopwright.tools import BUILTIN_TOOLS, ToolRegistry

    skills = ROOT / "examples" / "skills"
    (tmp_path / "app.py").write_bytes((skills / "code-review-sample" / "app.py").read_bytes())
    executor = AutonomousSkillExecutor(
        load_skill(skills / "code-review"),
        ToolRegistry(BUILTIN_TOOLS.values()),
        model=resolve_model("local"),
        workspace=tmp_path,
    )
    result = await executor.execute_sync("app.py", task_id="review-1", session_id="s-1")
    assert result.status == "completed", (result.reason, result.message)
    reads = [step.arguments.get("path") for step in result.steps if step.tool_name == "read"]
    assert "app.py" in reads  # it looked at the code before judging it
    assert {step.tool_name for step in result.steps} <= {"read", "list_files", "grep"}
    # what the 1.5B model concludes is its own (it has called this file fine): the test
    # holds the engine to running the skill, its tools and its files, not the model's taste
    assert result.answer and "app.py" in result.answer
