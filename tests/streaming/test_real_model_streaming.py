"""Token streaming from real models: llama.cpp's own OpenAI-compatible server on a free
loopback port streaming into an agent run, and the embedded model streaming tokens into a
task's agent step (seed 004's `stream` chunks). CPU heavy: marked `model`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
from test_real_local_model import CALL_LIMIT_S

from loopwright import AgentExecutor
from loopwright.compat import Settings, StepDefinition, TaskDefinition, TaskExecutor
from loopwright.events import Event, ModelResponseEvent, ModelTextDeltaEvent
from loopwright.models import OpenAIModel, RetryPolicy
from loopwright.models._local import LocalModel, resolve_local_path
from loopwright.models._local_spec import default_threads
from loopwright.tools import tool
from model_server import LlamaServer

pytestmark = pytest.mark.model


async def test_llama_cpp_server_streams_into_an_agent_run(llama_server: LlamaServer) -> None:
    model = OpenAIModel(
        "qwen", base_url=llama_server.url, retry=RetryPolicy(max_retries=0), timeout=CALL_LIMIT_S
    )
    events: list[Event] = [e async for e in AgentExecutor(model).stream("What is 2 + 2?")]
    deltas = [e for e in events if isinstance(e, ModelTextDeltaEvent)]
    replies = [e for e in events if isinstance(e, ModelResponseEvent)]
    assert len(deltas) >= 2, "the reply came whole, not token by token"
    streamed = "".join(d.text for d in deltas)
    assert streamed == "".join(r.response["text"] for r in replies)
    assert replies and events[-1].type == "run_finished"


@tool(effect="read")
def count_devices(site: str) -> dict[str, Any]:
    """Count the devices at a site."""
    return {"site": site, "count": 3}


async def test_embedded_model_streams_tokens_into_a_task_agent_step(tmp_path: Path) -> None:
    model = LocalModel(resolve_local_path(""), threads=default_threads())
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = Settings(data_dir=tmp_path / "data", workspace=workspace, tools=[count_devices])
    steps = [
        StepDefinition("count", "tool", "count devices", "count_devices", {"site": "inputs.site"}),
        StepDefinition("explain", "agent", "Say in one short sentence how many devices hq has."),
    ]
    definition = TaskDefinition("inventory", "analyst", ("inventory",), "low", steps, {})
    events = [
        e
        async for e in TaskExecutor(model, settings).execute(
            definition, "hq?", {"site": "hq"}, "acme"
        )
    ]
    chunks = [e["chunk"] for e in events if e["type"] == "stream"]
    assert len(chunks) >= 3, chunks  # the model's tokens, passed through as they came
    assert "3" in "".join(chunks) or "three" in "".join(chunks).lower()
    assert events[-1]["type"] == "task_complete" and events[-1]["status"] == "completed"
