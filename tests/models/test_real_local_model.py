"""End to end on the embedded model, for real: llama.cpp in-process and llama.cpp's own
OpenAI-compatible server on 127.0.0.1. CPU heavy: pytest runs these one at a time, with
temperature 0 and a fixed thread count, so the greedy output is reproducible.

Each run costs tens of seconds on 2 cores, so one run of the chain on each backend shows
every property that needs its wire behaviour (the chain, streaming, stopping at the
action, and in process the prompt cache), each assertion naming the one it checks; what
does not need a real model is shown with ScriptedModel or a recorded reply elsewhere."""

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
from loopwright.events import Event, ModelResponseEvent, ModelTextDeltaEvent, RunFinishedEvent
from loopwright.messages import ModelResponse
from loopwright.models import OpenAIModel, RetryPolicy
from loopwright.models._local import LocalModel, _load
from loopwright.parsing import ParsedAction, parse_reply
from model_server import LlamaServer, model_threads, packaged_model

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
from tools import add, multiply

pytestmark = pytest.mark.model
CHAIN = "What is (123 + 456) * 7?"
CALLS = [("add", {"a": 123, "b": 456}), ("multiply", {"a": 579, "b": 7})]
CALL_LIMIT_S = 900
"""Generous: a 3-8 s call on an idle machine took minutes when other model work shared it."""


def calls_of(result: ExecutionResult) -> list[tuple[str, dict[str, Any]]]:
    return [(step.tool_name, step.arguments) for step in result.steps]


def replies_of(events: list[Event]) -> list[tuple[ModelResponseEvent, list[str]]]:
    """Each reply's model_response event, with the deltas that came before it."""
    replies: list[tuple[ModelResponseEvent, list[str]]] = []
    pieces: list[str] = []
    for event in events:
        if isinstance(event, ModelTextDeltaEvent):
            pieces.append(event.text)
        elif isinstance(event, ModelResponseEvent):
            replies.append((event, pieces))
            pieces = []
    return replies


def assert_cut_after_the_first_action(event: ModelResponseEvent) -> None:
    """The reply ended with its first action: `add`, nothing after its closing brace."""
    text = event.response["text"]
    assert event.ended == "action_complete", ("stop at the action", event.response)
    assert event.response["finish_reason"] == "action_complete", ("stop at the action", text)
    outcome = parse_reply(ModelResponse.from_dict(event.response))
    assert isinstance(outcome, ParsedAction), ("stop at the action: an action", text)
    calls = [(c.name, c.arguments) for c in outcome.calls]
    assert calls == [("add", {"a": 123, "b": 456})], ("stop at the action: one call", text)
    assert text.rstrip().endswith("}"), ("stop at the action: nothing after its brace", text)


def assert_streamed(replies: list[tuple[ModelResponseEvent, list[str]]]) -> None:
    """Each reply came as deltas, token by token, that add up to its text."""
    for event, pieces in replies:
        assert "".join(pieces) == event.response["text"], ("streaming", pieces, event.response)
    assert len(replies[0][1]) >= 2, ("streaming: the reply came whole", replies[0][1])


async def test_openai_compatible_server_runs_a_two_call_chain(llama_server: LlamaServer) -> None:
    """The chain through llama-cpp-python's OpenAI-compatible server. One run shows the
    server's wire behaviour for three properties, each assertion saying which:
    - the chain: `add`, then `multiply` on its result, the answer, the usage reported;
    - streaming: the server's stream reaches the run as deltas that add up to each reply;
    - stop at the action: the first reply ends with its first action (the client closes
      the stream there; that the server then stops generating is shown in
      test_stop_at_action_real.py)."""
    model = OpenAIModel(
        "qwen", base_url=llama_server.url, retry=RetryPolicy(max_retries=0), timeout=CALL_LIMIT_S
    )
    events: list[Event] = []
    result = await AgentExecutor(model, [add, multiply]).run(CHAIN, on_event=events.append)
    assert result.status == "completed", ("the chain", result.reason, result.message)
    assert calls_of(result) == CALLS, ("the chain", calls_of(result))
    assert result.answer is not None and "4053" in result.answer, ("the chain", result.answer)
    usage = result.usage
    assert usage.input_tokens > 0 and usage.output_tokens > 0, ("the chain: usage", usage)
    replies = replies_of(events)
    assert_streamed(replies)
    assert_cut_after_the_first_action(replies[0][0])
    assert events[-1].type == "run_finished", ("streaming: the run ends", events[-1])


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


async def test_embedded_model_runs_a_two_call_chain(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The chain on llama.cpp in this process, from a cold cache. One run shows four
    properties, each assertion saying which:
    - the chain: `add`, then `multiply` on its result, the answer;
    - streaming: the tokens reach the run as deltas that add up to each reply;
    - stop at the action: the first reply ends with its first action, and no token is
      generated past it (let go on, the 1.5B model writes a whole invented chain after its
      first call: 168 tokens for a 40-token call);
    - the prompt cache: each iteration evaluates only the tokens its prompt does not share
      with the previous prompt and reply, which is all of them but the reply's last token
      or two; the model_response events report it
      (`cached_input_tokens`), and so does the run's usage."""
    monkeypatch.setenv("LOOPWRIGHT_PROMPT_CACHE", str(tmp_path))  # no system prompt on disk
    model = LocalModel(packaged_model(), threads=model_threads())
    llm, lock = _load(model.path, model.threads, model.context)
    with lock:  # a cold cache: other tests in this process share the llama.cpp instance
        llm.reset()
    usages: list[dict[str, int]] = []
    new_tokens: list[int] = []  # tokens of each prompt past its common prefix with the last
    previous: list[int] = []  # the last prompt and the reply generated after it
    reused: list[int] = []
    events: list[Event] = []

    async def watch(event: Event) -> None:  # called before the loop goes on
        nonlocal previous
        events.append(event)
        if isinstance(event, ModelResponseEvent):
            usage = event.response["usage"]
            held = list(llm._input_ids)
            prompt = held[: usage["input_tokens"]]
            shared = llm.longest_token_prefix(previous, prompt)
            new_tokens.append(len(prompt) - shared)
            reused.append(len(previous) - shared)  # of the last prompt and reply: not reused
            usages.append(usage)
            previous = held

    agent = AgentExecutor(model, [add, multiply], options=AgentOptions(temperature=0.0))
    result = await agent.run(CHAIN, on_event=watch)
    assert result.status == "completed", ("the chain", result.reason, result.message)
    assert calls_of(result) == CALLS, ("the chain", calls_of(result))
    assert result.answer is not None and "4053" in result.answer, ("the chain", result.answer)

    replies = replies_of(events)
    assert_streamed(replies)

    first = replies[0][0]
    assert_cut_after_the_first_action(first)
    with lock:
        text_tokens = len(llm.tokenize(first.response["text"].encode(), add_bos=False))
    generated = first.response["usage"]["output_tokens"]
    assert abs(generated - text_tokens) <= 2, ("stop at the action: tokens", generated, text_tokens)

    totals = [u["input_tokens"] for u in usages]
    evaluated = [u["input_tokens"] - u.get("cached_input_tokens", 0) for u in usages]
    cache = ("the prompt cache", evaluated, new_tokens, totals)
    assert len(usages) >= 2, cache
    assert evaluated[0] == totals[0], cache  # a cold cache evaluates the whole prompt
    assert "cached_input_tokens" not in usages[0], cache  # written only when there is some
    # from the second iteration on, the system prompt and history are a cached prefix (the
    # iteration note sits in the newest message only): only the new turns are evaluated
    assert evaluated[1:] == new_tokens[1:], cache
    for fresh, whole in zip(evaluated[1:], totals[1:], strict=True):
        assert 0 < fresh < whole * 0.4, cache
    # and since revision 5 (the notes stay in the conversation) the new turns start after
    # the whole last prompt and reply: at most its last token or two (a `}` the history
    # closes the reply with can merge with the one before it) is evaluated again
    assert all(0 <= lost <= 2 for lost in reused[1:]), ("the prompt cache: reused", reused)
    assert result.usage.cached_input_tokens == sum(totals) - sum(evaluated), cache
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent), ("the chain: the run ends", finished)
    assert finished.usage["cached_input_tokens"] == sum(totals) - sum(evaluated), cache


def test_cli_runs_a_skill_folder_on_the_default_model(
    tmp_path: Path, run_cli: Callable[..., CliRun]
) -> None:
    """docs/skills.md's command, `loopwright run app.py --skill examples/skills/code-review
    --tools read,list_files`, with `--json`, in this process (the embedded model is loaded
    once for all its tests; the user's environment is kept: the model is unpacked in the
    user's cache). One run shows two properties, each assertion saying which:
    - the CLI's default model is the embedded one, and its JSON events stream the reply's
      deltas and number every other event 1, 2, 3...;
    - a skill folder runs on the embedded model: its instructions, tools and files."""
    skills = ROOT / "examples" / "skills"
    (tmp_path / "app.py").write_bytes((skills / "code-review-sample" / "app.py").read_bytes())
    env = {**os.environ, "LOOPWRIGHT_STORE": str(tmp_path / "runs.db")}
    argv = ["run", "app.py", "--skill", str(skills / "code-review"), "--tools", "read,list_files"]
    done = run_cli(*argv, "--json", env=env, cwd=tmp_path)
    assert done.code == 0, done.err
    lines = [json.loads(line) for line in done.out.splitlines()]
    deltas = [e for e in lines if e["type"] == "model_text_delta"]  # live only: no seq of their own
    events = [e for e in lines if e["type"] != "model_text_delta"]
    cli = "the CLI's default model, JSON events"
    assert deltas and all(d["text"] for d in deltas), (cli, deltas)
    started = events[0]
    assert started["type"] == "run_started" and started["model"] == "local", (cli, started)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1)), (cli, events)
    finished = events[-1]
    assert finished["type"] == "run_finished", (cli, finished)
    assert finished["status"] == "completed", ("the skill", finished)
    calls = [(e["tool_name"], e["arguments"]) for e in events if e["type"] == "tool_call"]
    reads = [arguments.get("path") for name, arguments in calls if name == "read"]
    assert "app.py" in reads, ("the skill: it read the code before judging it", calls)
    assert {name for name, _ in calls} <= {"read", "list_files"}, ("the skill: its tools", calls)
    # what the 1.5B model concludes is its own (it has called this file fine): the test
    # holds the engine to running the skill, its tools and its files, not the model's taste
    assert finished["answer"] and "app.py" in finished["answer"], ("the skill", finished)
