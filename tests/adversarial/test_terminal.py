"""What a model, a tool or a task file writes reaches the operator's terminal as text:
control sequences (clear the screen, erase a line, OSC 52 clipboard, OSC 8 hyperlinks, a
bare carriage return, bidi overrides) are shown as visible escapes, rich markup and
`:emoji:` codes stay literal, in the live view, `runs show`, `runs list` and the task view.

The commands print to a pipe, where rich adds no styling of its own: any control
character in the output came from the run's content."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cli_run import loopwright, script

from loopwright.safety.terminal import markup, visible

CLEAR = "\x1b[2J\x1b[H"
ERASE_LINE = "\x1b[1A\x1b[2K"
CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07"
LINK = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"
HOSTILE = f"{CLEAR}wiped{ERASE_LINE}{CLIPBOARD}{LINK} over\rwrite \u202eevil\u202c :x: [red]red[/]"
ACTING = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What a terminal would act on (newline and tab are plain text)."""


def _assert_shown_not_acted(out: str) -> None:
    assert ACTING.search(out) is None, repr(ACTING.search(out))
    assert "\\x1b[2J" in out and "\\x1b]52;c;" in out and "\\x07" in out and "\\u202e" in out
    assert ":x:" in out and "❌" not in out


def test_visible_shows_each_control_character_and_keeps_lines() -> None:
    assert visible("a\x1b[2Jb\tc\nd") == "a\\x1b[2Jb\tc\nd"
    assert visible("over\rwrite\r\n") == "over\\rwrite\n"
    assert visible("\x9b31m\u202e\x00\x7f") == "\\x9b31m\\u202e\\x00\\x7f"
    assert markup("[bold]\x07") == "\\[bold]\\x07"
    text = "plain text, ünïcode, 日本語, emoji 🙂"
    assert visible(text) is text


def test_the_live_view_and_runs_show_show_control_characters(tmp_path: Path) -> None:
    model = script(
        tmp_path / "s.json",
        [
            {"thought": f"thinking {HOSTILE}", "action": "echo", "action_input": {"text": HOSTILE}},
            {"thought": "done", "final_answer": f"answer {HOSTILE}"},
        ],
    )
    run = loopwright("run", f"do it {HOSTILE}", "--model", model, "--tools", "echo", home=tmp_path)
    assert run.code == 0, run.both
    _assert_shown_not_acted(run.both)
    assert "answer \\x1b[2J" in run.out and "[red]red[/]" in run.out

    listed = loopwright("runs", "list", home=tmp_path)
    run_id = listed.out.splitlines()[1].split("\t")[0]
    assert ACTING.search(listed.both) is None and "\\x1b[2J" in listed.out
    shown = loopwright("runs", "show", run_id, home=tmp_path)
    assert shown.code == 0, shown.both
    _assert_shown_not_acted(shown.both)


def test_the_task_view_shows_control_characters(tmp_path: Path) -> None:
    task = tmp_path / "t.yaml"
    steps = [
        {"name": f"ask {HOSTILE}", "type": "gate", "message_template": f"go? {HOSTILE}"},
        {"name": "say", "type": "tool", "tool": "echo", "args": {"text": HOSTILE}},
    ]
    task.write_text(
        json.dumps({"name": "hostile", "tools": ["echo"], "steps": steps}), encoding="utf-8"
    )
    done = loopwright("task", "run", str(task), "--yes", home=tmp_path)
    assert done.code == 0, done.both
    _assert_shown_not_acted(done.both)
    assert "go? \\x1b[2J" in done.out
