"""`loopwright parse`: one JSON object on stdout, exit 0 for an outcome, 1 for an error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from loopwright.cli import main

REPLIES = Path(__file__).parents[1] / "fixtures" / "replies"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    code = main(["parse", *args])
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # exactly one JSON object
    return code, json.loads(out)


def test_text_reply_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run([str(REPLIES / "qwen3_tool_call.txt")], capsys)
    assert code == 0
    assert out == {
        "kind": "action",
        "thought": "The user wants weather.",
        "actions": [{"tool": "get_weather", "arguments": {"city": "Paris"}}],
        "layer": "tagged",
        "repaired": False,
    }


def test_react_text_ignores_hallucinated_observation(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run([str(REPLIES / "react_hallucinated_observation.txt")], capsys)
    assert code == 0 and out["kind"] == "action"
    assert out["actions"] == [{"tool": "add", "arguments": {"a": 2, "b": 3}}]


@pytest.mark.parametrize(
    "name, tool, arguments",
    [
        ("openai_message.json", "add", {"a": 1, "b": 2}),
        ("ollama_response.json", "add", {"a": 4, "b": 5}),
        ("anthropic_message.json", "add", {"a": 6, "b": 7}),
    ],
)
def test_message_shapes(
    name: str, tool: str, arguments: dict[str, int], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(["--message", str(REPLIES / name)], capsys)
    assert code == 0
    assert out["actions"] == [{"tool": tool, "arguments": arguments}]


def test_bad_message_is_an_error_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}')
    code, out = run(["--message", str(bad)], capsys)
    assert code == 1 and out["kind"] == "error"
    assert "tool call 0 has no name" in str(out["message"])


def test_not_json_message_is_an_error_object(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    code, out = run(["--message", str(bad)], capsys)
    assert code == 1 and "not JSON" in str(out["message"])


def test_missing_file_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "/no/such/reply.txt"]) == 2
    assert "cannot read /no/such/reply.txt" in capsys.readouterr().err


@pytest.mark.subprocess
def test_stdin_through_a_real_process() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "loopwright", "parse", "-"],
        input="", capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert json.loads(done.stdout)["kind"] == "error"
    done = subprocess.run(
        [sys.executable, "-m", "loopwright", "parse"],
        input="Final Answer: 42", capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0
    assert json.loads(done.stdout) == {"kind": "final", "thought": None, "answer": "42",
                                       "layer": "react", "repaired": False}  # fmt: skip


def test_it_says_which_layer_read_the_reply_and_whether_json_was_repaired(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reply = tmp_path / "reply.txt"
    reply.write_text('Sure: {"thought": "add", "action": "add", "action_input": {"a": 1, "b": 2,}}')
    code, out = run([str(reply)], capsys)
    assert code == 0 and (out["layer"], out["repaired"]) == ("json", True)
    assert out["actions"] == [{"tool": "add", "arguments": {"a": 1, "b": 2}}]
    reply.write_text('{"thought": "add", "action": "add", "action_input": {"a": 1, "b": 2}}')
    assert run([str(reply)], capsys)[1]["repaired"] is False
    reply.write_text("The answer is 4.")
    code, out = run([str(reply)], capsys)
    assert (out["kind"], out["layer"], out["repaired"]) == ("final", "text", False)
