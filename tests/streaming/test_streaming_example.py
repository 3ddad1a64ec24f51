"""examples/streaming.py runs as a program against a real streaming server on loopback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from stream_server import openai_sse, stream_server

ROOT = Path(__file__).parents[2]
ANSWER = '{"thought": "six sevens", "final_answer": "6 * 7 = 42"}'


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
