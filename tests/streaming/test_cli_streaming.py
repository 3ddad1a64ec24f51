"""The real `loopwright run` against a real streaming server on loopback: `--json` prints
the deltas as they come, the live view writes the reply out, the store keeps none."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from stream_server import openai_sse, stream_server

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from cli_helpers import cli, cli_tty

from loopwright.store import SqliteRunStore

ANSWER = '{"thought": "Adding the two numbers", "final_answer": "17 + 25 is 42."}'
PIECES = [ANSWER[i : i + 4] for i in range(0, len(ANSWER), 4)]


def test_json_prints_deltas_and_the_store_keeps_none(tmp_path: Path) -> None:
    with stream_server() as server:
        server.replies.append(openai_sse(PIECES))
        model = ["--model", "openai:m", "--base-url", f"{server.url}/v1"]
        done = cli("run", "What is 17 + 25?", *model, "--json", home=tmp_path)
    assert done.code == 0, done.err
    events = [json.loads(line) for line in done.out.splitlines()]
    deltas = [e for e in events if e["type"] == "model_text_delta"]
    assert deltas and "".join(d["text"] for d in deltas) == ANSWER
    assert server.bodies[0]["stream"] is True
    store = SqliteRunStore(tmp_path / "runs.db")
    try:
        stored = store.events(events[0]["run_id"])
    finally:
        store.close()
    assert [e.type for e in stored] == [e["type"] for e in events if e not in deltas]


@pytest.mark.subprocess
def test_live_view_writes_the_reply_as_it_comes(tmp_path: Path) -> None:
    with stream_server() as server:
        server.replies.append(openai_sse(PIECES))
        model = ["--model", "openai:m", "--base-url", f"{server.url}/v1"]
        done = cli_tty("run", "What is 17 + 25?", *model, home=tmp_path, columns=200)
    assert done.code == 0, done.out
    lines = done.out.splitlines()
    written = next(i for i, line in enumerate(lines) if line.strip() == ANSWER)
    iteration = next(i for i, line in enumerate(lines) if "Iteration 1/" in line)
    answer = next(i for i, line in enumerate(lines) if "Final Answer" in line)
    assert iteration < written < answer


ROOT = Path(__file__).resolve().parents[2]
ADD = '{"thought": "First the sum.", "action": "add", "action_input": {"a": 123, "b": 456}}'
INVENTED = '\n{"thought": "I have it.", "final_answer": "INVENTED 999"}'


@pytest.mark.subprocess
def test_live_view_shows_the_reply_up_to_its_action_not_the_invented_rest(tmp_path: Path) -> None:
    """The model goes on after its call with an invented answer: the reply ends at the call
    (the stream is closed there), and the live view never writes the invented answer."""
    with stream_server() as server:
        pieces = [(ADD + INVENTED)[i : i + 4] for i in range(0, len(ADD + INVENTED), 4)]
        final = '{"thought": "Done.", "final_answer": "579"}'
        server.replies += [openai_sse(pieces), openai_sse([final])]
        model = ["--model", "openai:m", "--base-url", f"{server.url}/v1"]
        tools = ["--tools", f"{ROOT}/examples/tools.py:add"]
        done = cli_tty("run", "What is 123 + 456?", *model, *tools, home=tmp_path, columns=200)
    assert done.code == 0, done.out
    assert '"action_input": {"a": 123, "b": 456}}' in done.out
    assert "INVENTED" not in done.out
    assert "Final Answer: 579" in done.out
