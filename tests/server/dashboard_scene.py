"""A server with the runs a dashboard user meets, for the browser tests and the docs'
screenshots: an agent run whose model takes real time per call, a task waiting at its
gate, a lead run with a sub-agent run, a run of a long-named model stopped at its limit."""

from __future__ import annotations

import asyncio
import json
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx
from server_helpers import LiveServer, live_server, make_config, start_run, tasks_folder

from loopwright import AgentExecutor
from loopwright.messages import CHARS_PER_TOKEN, ModelRequest, ModelResponse, Usage
from loopwright.models import ModelRegistry
from loopwright.runtime import Runtime
from loopwright.store import SqliteRunStore
from loopwright.tools import tool

LONG_MODEL = "paced:/models/qwen2.5_coder_32b_instruct_q4_k_m_by_the_build_farm_gateway.gguf"
"""A model spec with no place to break a line (a file path): the list must not overflow."""
SECONDS_PER_CALL = (0.9, 0.35, 1.4, 0.5)
"""How long each model call of the paced run takes (real time: the waterfall shows it)."""


def act(thought: str, name: str, **arguments: Any) -> str:
    return json.dumps({"thought": thought, "action": name, "action_input": arguments})


def final(thought: str, answer: str) -> str:
    return json.dumps({"thought": thought, "final_answer": answer})


PACED_REPLIES = [
    act("List the workspace to see what is there.", "list_files"),
    act("Read the changelog for the release notes.", "read", path="CHANGES.txt"),
    act("Confirm the version line before answering.", "echo", text="version 1.4.0"),
    final("I have what I need.", "Release 1.4.0 adds dark mode and fixes the CSV export."),
]


class PacedModel:
    """Scripted replies, each after a real delay; usage counted from the text (~4 chars a
    token), as a server that reports usage would."""

    preferred_tool_mode: Literal["prompted"] = "prompted"

    def __init__(self, name: str, replies: list[str], seconds: tuple[float, ...]) -> None:
        self.name = name
        self.replies = list(replies)
        self.seconds = list(seconds)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(self.seconds.pop(0) if self.seconds else 0.2)
        text = self.replies.pop(0)
        sent = sum(len(message.content) for message in request.messages)
        usage = Usage(sent // CHARS_PER_TOKEN, len(text) // CHARS_PER_TOKEN)
        return ModelResponse(text=text, usage=usage, model=self.name, finish_reason="stop")


def paced_model(name: str, _url: str | None) -> PacedModel:
    if name == "release-notes":
        return PacedModel(f"paced:{name}", PACED_REPLIES, SECONDS_PER_CALL)
    replies = [act("Echo it once.", "echo", text="one"), act("And again.", "echo", text="one")]
    return PacedModel(f"paced:{name}", replies * 3, (0.05,) * 6)


@dataclass
class Scene:
    server: LiveServer
    paced: str
    """The agent run with real model latency (finished)."""
    waiting: str
    """The task run waiting at its gate."""
    lead: str
    child: str
    long_model: str
    """A run of a long-named model, stopped at its iteration limit."""


def wait_for(server: LiveServer, run_id: str, ready: Any) -> dict[str, Any]:
    """The run's view once `ready(view)` holds (a polled condition, 30 s at most)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        view: dict[str, Any] = httpx.get(f"{server.url}/api/runs/{run_id}").json()
        if ready(view):
            return view
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} never got there")


def _lead_and_child(path: Path) -> tuple[str, str]:
    """A lead run that hands a measurement to a sub-agent, run by another Runtime on the
    same SQLite file (as `loopwright run` in another process would)."""

    @tool(effect="read")
    def measure(what: str) -> str:
        """Measure something.

        Args:
            what: what to measure
        """
        return f"{what}: 42 cm"

    child_replies = [act("Measure it.", "measure", what="the table"),
                     final("Measured.", "the table is 42 cm")]  # fmt: skip
    child = AgentExecutor(PacedModel("paced:surveyor", child_replies, (0.4, 0.3)), [measure])
    lead_replies = [act("Ask the surveyor.", "surveyor", request="measure the table"),
                    final("The surveyor answered.", "42 cm, by survey")]  # fmt: skip
    lead = AgentExecutor(
        PacedModel("paced:lead", lead_replies, (0.6, 0.5)),
        [child.as_tool("surveyor", "Measures things.")],
    )

    async def execute() -> str:
        store = SqliteRunStore(path)
        runtime = Runtime(store)
        try:
            handle = runtime.start_agent(lead, "How long is the table?")
            await handle.wait()
            return handle.run_id
        finally:
            runtime.close()
            store.close()

    done: list[str] = []  # in a thread of its own: the caller may be inside an event loop
    worker = threading.Thread(target=lambda: done.append(asyncio.run(execute())))
    worker.start()
    worker.join(timeout=60)
    [lead_id] = done
    store = SqliteRunStore(path)
    try:
        [child_run] = [r for r in store.list_runs() if r.parent_run_id == lead_id]
    finally:
        store.close()
    return lead_id, child_run.run_id


@contextmanager
def dashboard_scene(tmp_path: Path) -> Iterator[Scene]:
    path = tmp_path / "runs.db"
    lead, child = _lead_and_child(path)
    models = ModelRegistry().with_factory("paced", paced_model)
    config = make_config(
        tmp_path,
        store=SqliteRunStore(path),
        tasks_dir=tasks_folder(tmp_path),
        models=models,
        allow_models=frozenset({"paced:release-notes", LONG_MODEL, "ollama:*"}),
    )
    (tmp_path / "ws" / "CHANGES.txt").write_text("1.4.0: dark mode; CSV export fixed\n")
    with live_server(config) as server:
        tools = ["list_files", "read", "echo"]
        body = {"prompt": "Write the release notes for 1.4", "model": "paced:release-notes",
                "tools": tools}  # fmt: skip
        paced = start_run(server, body)["run_id"]
        long_body = {"prompt": "Echo 'one' until told to stop", "model": LONG_MODEL,
                     "tools": ["echo"], "options": {"max_iterations": 2}}  # fmt: skip
        long_model = start_run(server, long_body)["run_id"]
        task = {"task": "publish-notes", "inputs": {"title": "Release 1.4"}}
        waiting = start_run(server, task)["run_id"]
        wait_for(server, waiting, lambda v: v["waiting_for_approval"])
        wait_for(server, paced, lambda v: v["status"] == "completed")
        wait_for(server, long_model, lambda v: v["status"] != "running")
        yield Scene(server, paced, waiting, lead, child, long_model)


def png_size(path: Path) -> tuple[int, int]:
    """A PNG's width and height, from its header (and that it is a PNG)."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", head[16:24])
    return width, height
