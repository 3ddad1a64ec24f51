"""A reply cut after its first action, for real: the embedded model (llama.cpp in this
process) and llama-cpp-python's OpenAI-compatible server on 127.0.0.1, which stops
generating when the client closes the stream. CPU heavy: marked `model`."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import httpx
import pytest

from loopwright import AgentExecutor
from loopwright.events import Event, ModelResponseEvent
from loopwright.messages import ModelResponse
from loopwright.models import OpenAIModel, RetryPolicy
from loopwright.models._local import LocalModel, _load, resolve_local_path
from loopwright.models._local_spec import default_threads
from loopwright.parsing import ParsedAction, parse_reply
from model_server import LlamaServer

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(Path(__file__).parent))
from test_real_local_model import (
    CALL_LIMIT_S,
    CHAIN,
)

from tools import add, multiply

pytestmark = pytest.mark.model
IDLE_LIMIT_S = 300
"""How long the server may take to go quiet after the client left (on a loaded machine)."""


def first_response(events: list[Event]) -> ModelResponseEvent:
    return next(e for e in events if isinstance(e, ModelResponseEvent))


def assert_cut_after_the_first_action(event: ModelResponseEvent) -> None:
    text = event.response["text"]
    assert event.ended == "action_complete", event.response
    assert event.response["finish_reason"] == "action_complete"
    outcome = parse_reply(ModelResponse.from_dict(event.response))
    assert isinstance(outcome, ParsedAction), text
    assert [(c.name, c.arguments) for c in outcome.calls] == [("add", {"a": 123, "b": 456})]
    assert text.rstrip().endswith("}"), text  # nothing after the action's closing brace


async def test_the_embedded_model_stops_at_the_end_of_its_first_action() -> None:
    """The 1.5B model writes a whole invented chain after its first call when let go on
    (168 tokens for a 40-token call); cut, its tokens are those of the action."""
    model = LocalModel(resolve_local_path(""), threads=default_threads())
    events: list[Event] = []
    result = await AgentExecutor(model, [add, multiply]).run(CHAIN, on_event=events.append)
    assert result.status == "completed" and result.answer and "4053" in result.answer
    first = first_response(events)
    assert_cut_after_the_first_action(first)
    llm, lock = _load(model.path, model.threads, model.context)
    with lock:
        text_tokens = len(llm.tokenize(first.response["text"].encode(), add_bos=False))
    generated = first.response["usage"]["output_tokens"]
    assert abs(generated - text_tokens) <= 2, (generated, text_tokens)


async def test_through_the_server_the_reply_ends_after_its_first_action(
    llama_server: LlamaServer,
) -> None:
    url = llama_server.url
    model = OpenAIModel(
        "qwen", base_url=url, retry=RetryPolicy(max_retries=0), timeout=CALL_LIMIT_S
    )
    events: list[Event] = []
    result = await AgentExecutor(model, [add, multiply]).run(CHAIN, on_event=events.append)
    assert result.status == "completed" and result.answer and "4053" in result.answer
    assert_cut_after_the_first_action(first_response(events))


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, all its threads (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_when_quiet(pid: int) -> float:
    """The process's CPU time once it has used less than 50 ms of CPU in a second."""
    deadline = time.monotonic() + IDLE_LIMIT_S
    before = cpu_seconds(pid)
    while time.monotonic() < deadline:
        time.sleep(1.0)  # sampling CPU use over a second, until a deadline
        now = cpu_seconds(pid)
        if now - before < 0.05:
            return now
        before = now
    raise AssertionError(f"the server was still busy {IDLE_LIMIT_S} s after the client left")


PIECES_READ = 30


def test_the_server_stops_generating_when_the_stream_is_closed(
    llama_server: LlamaServer,
) -> None:
    """Ask for ~1,500 tokens, read 30, close the stream: the server's CPU use after the
    close is that of a few tokens, not of the ~1,470 it was asked for."""
    url, pid = llama_server.url, llama_server.pid
    body = {
        "model": "qwen",
        "messages": [{"role": "user", "content": "Count from 1 to 500, one number a line."}],
        "temperature": 0,
        "max_tokens": 1500,
        "stream": True,
    }
    cpu_quiet = cpu_when_quiet(pid)
    pieces: list[float] = []  # the server's CPU time at each piece of text
    with httpx.stream("POST", f"{url}/chat/completions", json=body, timeout=CALL_LIMIT_S) as reply:
        for line in reply.iter_lines():
            if not line.startswith("data: {"):
                continue
            delta = json.loads(line[6:])["choices"][0].get("delta") or {}
            if delta.get("content"):
                pieces.append(cpu_seconds(pid))
            if len(pieces) == PIECES_READ:
                break  # leaving the block closes the connection
    closed = cpu_seconds(pid)
    after = cpu_when_quiet(pid)
    per_token = (pieces[-1] - pieces[0]) / (len(pieces) - 1)
    assert per_token > 0 and pieces[0] > cpu_quiet
    extra_tokens = (after - closed) / per_token
    assert extra_tokens < 20, (after - closed, per_token)  # asked for ~1,470 more
