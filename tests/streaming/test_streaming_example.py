"""examples/streaming.py runs as a program against a real streaming server on loopback."""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
from stream_server import openai_sse, stream_server

from loopwright._ports import server_port

ROOT = Path(__file__).parents[2]
ANSWER = '{"thought": "six sevens", "final_answer": "6 * 7 = 42"}'


@pytest.mark.subprocess
def test_streaming_example_prints_the_reply_as_it_comes() -> None:
    pieces = [ANSWER[i : i + 3] for i in range(0, len(ANSWER), 3)]
    with stream_server() as server:
        server.replies.append(openai_sse(pieces))
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OPENAI_BASE_URL": f"{server.url}/v1"}
        done = subprocess.run(
            [sys.executable, str(ROOT / "examples" / "streaming.py"), "What is 6 * 7?"],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == ANSWER  # the deltas, printed one after the other
    assert lines[1].startswith("[reply complete: ") and lines[1] != "[reply complete: 0 deltas]"
    assert lines[2] == "answer: 6 * 7 = 42"


def run_example(
    env: dict[str, str], *before: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """The example as a program; `before` runs first in its interpreter."""
    code = "; ".join(
        [
            *before,
            "import runpy",
            "sys.argv[:] = sys.argv[1:]",
            "runpy.run_path(sys.argv[0], run_name='__main__')",
        ]
    )
    return subprocess.run(
        [sys.executable, "-c", f"import sys; {code}", str(ROOT / "examples" / "streaming.py")],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**env, "PYTHONPATH": str(ROOT / "src")},
        check=False,
    )


def closed_port() -> int:
    """A port nobody listens on: drawn where no other program's port-0 listener lands."""
    return server_port()


@pytest.mark.subprocess
def test_with_no_server_at_its_url_the_example_says_so_in_one_line() -> None:
    env = {**os.environ, "OPENAI_BASE_URL": f"http://127.0.0.1:{closed_port()}/v1"}
    done = run_example(env)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("streaming.py: openai at http://127.0.0.1:")
    assert "could not be reached" in line
    assert line.endswith("start it, or unset OPENAI_BASE_URL to use the embedded model")


@pytest.mark.subprocess
def test_with_no_server_and_no_embedded_model_the_example_says_what_it_needs() -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_BASE_URL"}
    done = run_example(env, "sys.modules['llama_cpp'] = None")  # as without the local extra
    assert done.returncode == 2 and done.stdout == ""
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert "pip install 'loopwright[local]'" in line
    assert "OPENAI_BASE_URL=http://127.0.0.1:8080/v1 (llama.cpp: llama-server" in line


@pytest.mark.model
def test_without_a_server_the_example_streams_the_embedded_model(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The example as a program, in this process: the embedded model is loaded once for
    all its tests (the tests above run it in a process of its own)."""
    pytest.importorskip("llama_cpp")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    example = str(ROOT / "examples" / "streaming.py")
    monkeypatch.setattr(sys, "argv", [example])
    with pytest.raises(SystemExit) as exited:
        runpy.run_path(example, run_name="__main__")
    out = capsys.readouterr().out
    assert exited.value.code == 0, out
    complete = [line for line in out.splitlines() if line.startswith("[reply complete")]
    assert complete and complete[0] != "[reply complete: 0 deltas]", out
