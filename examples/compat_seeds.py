"""Code written against the seed specs, running on loopwright through `loopwright.compat`.

    python examples/compat_seeds.py

Three seeds' contracts in one offline run (a ScriptedModel stands in for the LLM):
seed 001's `AgentExecutor.run(prompt) -> str` with its history, seed 002's prompt
builder, and seed 004's `TaskExecutor(ai_engine, settings)` streaming plain dicts, with
a gate approved the seed's way (by setting its `_event`).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from types import SimpleNamespace

from loopwright.compat import (
    AgentExecutor,
    PromptBuilder,
    Settings,
    StepDefinition,
    TaskDefinition,
    TaskExecutor,
)
from loopwright.testing import ScriptedModel
from loopwright.tools import tool


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def count_devices(site: str) -> dict[str, object]:
    """Count the devices at a site."""
    return {"site": site, "count": 3}


async def seed_001() -> None:
    llm = ScriptedModel(
        [
            '{"thought": "add them", "action": "add", "action_input": {"a": 17, "b": 25}}',
            '{"thought": "done", "final_answer": "42"}',
        ]
    )
    agent = AgentExecutor(llm, [add], max_steps=5)
    answer = await agent.run("What is 17 + 25?")
    print(f"seed 001: run() -> {answer!r}")
    for step in agent.history:
        print(f"  {step.action.tool}({step.action.tool_input}) -> {step.observation.output}")


def seed_002() -> None:
    builder = PromptBuilder()
    tools = builder.format_tool_descriptions([add])
    prompt = builder.build_system_prompt(
        skill=SimpleNamespace(metadata=SimpleNamespace(name="calc"), content="Add numbers."),
        tool_descriptions=tools,
        available_files_section="",
        iteration=1,
        max_iterations=15,
    )
    line = next(line for line in prompt.splitlines() if line.startswith("Current iteration"))
    print(f"seed 002: {line}")


async def seed_004(data_dir: Path) -> None:
    task = TaskDefinition(
        "inventory",
        steps=(
            StepDefinition("confirm", "gate", message_template="Count devices at {inputs.site}?"),
            StepDefinition(
                "count", "tool", tool="count_devices", args_from={"site": "inputs.site"}
            ),
        ),
    )
    settings = Settings(data_dir=data_dir, tools={"count_devices": count_devices})
    executor = TaskExecutor(None, settings)
    async for event in executor.execute(task, "count hq", {"site": "hq"}, "acme"):
        shown = {k: v for k, v in event.items() if k != "_event"}
        print(f"seed 004: {json.dumps(shown)}")
        if event["type"] == "confirmation_required":
            event["_event"].set()  # what the seed's WebSocket handler does on "confirm"
    state = executor.state_path("acme", executor.task_id or "")
    print(f"seed 004: state in {state.relative_to(data_dir)}")


async def main() -> None:
    await seed_001()
    seed_002()
    with tempfile.TemporaryDirectory() as folder:
        await seed_004(Path(folder))


if __name__ == "__main__":
    asyncio.run(main())
