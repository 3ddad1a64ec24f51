"""A scripted model's file: replies written as ReAct objects run as the model's text would,
and an object of neither known form is refused with the forms it may take."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_replies_written_as_react_objects_call_the_tool_and_finish(tmp_path: Path) -> None:
    script = tmp_path / "sum.json"
    replies = [
        {"thought": "add them", "action": "add", "action_input": {"a": 17, "b": 25}},
        {"thought": "the tool said 42", "final_answer": "17 + 25 = 42"},
    ]
    script.write_text(json.dumps(replies), encoding="utf-8")
    tools = f"{EXAMPLES / 'tools.py'}:add"
    result = cli("run", "17 + 25?", "--model", f"scripted:{script}", "--tools", tools,
                 "--json", home=tmp_path)  # fmt: skip
    assert result.code == 0, result.err
    events = [json.loads(line) for line in result.out.splitlines()]
    [call] = [e for e in events if e["type"] == "tool_call"]
    assert (call["arguments"], call["result"]) == ({"a": 17, "b": 25}, "42")
    assert (events[-1]["status"], events[-1]["answer"]) == ("completed", "17 + 25 = 42")


def test_an_object_of_no_known_form_is_refused_naming_the_file_and_the_forms(
    tmp_path: Path,
) -> None:
    script = tmp_path / "odd.json"
    script.write_text(json.dumps(["plain text", {"text": "hi"}]), encoding="utf-8")
    result = cli("run", "hi", "--model", f"scripted:{script}", home=tmp_path)
    assert result.code == 2
    [line] = result.err.strip().splitlines()
    assert line.startswith(f"loopwright: error: {script}: reply 2 is an object with text: ")
    assert '{"thought": "...", "final_answer": "..."}' in line
    assert '{"content": "...", "tool_calls": [...]}' in line
    assert "Traceback" not in result.err
