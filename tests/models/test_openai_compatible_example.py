"""examples/openai_compatible.py, run as a program against a small OpenAI-compatible server
on loopback that answers with recorded chat completions (prompted mode, as llama.cpp's
server is used: the call and the answer sit in the content)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
REPLIES = [
    {"thought": "first add", "action": "add", "action_input": {"a": 17, "b": 25}},
    {"thought": "then double", "action": "multiply", "action_input": {"a": 42, "b": 2}},
    {"thought": "done", "final_answer": "84"},
]


class _Server(ThreadingHTTPServer):
    bodies: list[dict[str, Any]]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.bodies.append({"path": self.path, **body})
        content = json.dumps(REPLIES[len(self.server.bodies) - 1])
        reply = {
            "id": f"chatcmpl-{len(self.server.bodies)}",
            "object": "chat.completion",
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[_Server]:
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.bodies = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join()


@pytest.mark.subprocess
def test_example_runs_an_agent_on_an_openai_compatible_server(server: _Server) -> None:
    port = server.server_address[1]
    env = {k: v for k, v in os.environ.items() if k not in {"OPENAI_API_KEY", "TOOL_MODE"}}
    env.update(OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", MODEL="qwen")
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "openai_compatible.py"), "What is (17 + 25) * 2?"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        'tool: add {"a": 17, "b": 25} -> 42',
        'tool: multiply {"a": 42, "b": 2} -> 84',
        "completed: 84",
        "tokens: 300 in, 60 out",
    ]
    assert [b["path"] for b in server.bodies] == ["/v1/chat/completions"] * 3
    assert all(b["model"] == "qwen" and "tools" not in b for b in server.bodies)
    assert all(m["content"] is not None for b in server.bodies for m in b["messages"])
    assert (
        "Observation from multiply (multiply two integers): 84"
        in server.bodies[2]["messages"][-1]["content"]
    )
