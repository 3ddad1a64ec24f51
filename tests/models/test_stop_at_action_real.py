"""A reply cut after its first action, for real: llama-cpp-python's OpenAI-compatible
server on 127.0.0.1 stops generating when the client closes the stream. CPU heavy: marked
`model`. The reply cut after its first action, on the embedded model and through the
server, is asserted in the runs of the chain in test_real_local_model.py."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import httpx
import pytest

from model_server import LlamaServer

sys.path.insert(0, str(Path(__file__).parent))
from test_real_local_model import CALL_LIMIT_S

pytestmark = pytest.mark.model
IDLE_LIMIT_S = 300
"""How long the server may take to go quiet after the client left (on a loaded machine)."""


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
