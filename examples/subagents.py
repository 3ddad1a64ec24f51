"""Sub-agents: a lead agent hands a research question to a researcher agent.

    python examples/subagents.py                      # prints the nested timeline
    loopwright run "How tall is Mont Blanc?" --model scripted:examples/subagents_lead.json \\
        --tools examples/subagents.py:research        # the same from the CLI, live view nested

`researcher.as_tool("research", ...)` is a tool of the lead. Each call is a run of its own
(its id derived from the lead's run and the call), linked by `parent_run_id` and
`parent_call_id`; its tokens count against the lead's budget, and it is shown nested under
the call. Both agents use scripted models here, so the example runs without a model.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from loopwright import AgentExecutor, tool
from loopwright.events import Event, RunStartedEvent, ToolCallEvent
from loopwright.testing import ScriptedModel


@tool(effect="read")
def encyclopedia(topic: str) -> str:
    """Look a topic up in the encyclopedia.

    Args:
        topic: what to look up
    """
    return {"mont blanc": "Mont Blanc: 4,805.59 m (2021 survey)"}.get(topic.lower(), "no entry")


def _reply(data: dict[str, object]) -> str:
    return json.dumps(data)


researcher = AgentExecutor(
    ScriptedModel(
        [
            _reply({"thought": "look it up", "action": "encyclopedia",
                    "action_input": {"topic": "Mont Blanc"}}),
            _reply({"thought": "found it", "final_answer": "4,805.59 m (2021 survey)"}),
        ],
        strict=False,
    ),
    [encyclopedia],
)  # fmt: skip
research = researcher.as_tool("research", "Research a factual question; returns the answer.")
LEAD_SCRIPT = Path(__file__).with_name("subagents_lead.json")


async def main() -> None:
    lead = AgentExecutor(ScriptedModel.from_file(str(LEAD_SCRIPT)), [research])
    depth: dict[str, int] = {}

    async def show(event: Event) -> None:
        if isinstance(event, RunStartedEvent):
            depth[event.run_id] = depth.get(event.parent_run_id or "", -1) + 1
            where = f" (for call {event.parent_call_id})" if event.parent_call_id else ""
            print("  " * depth[event.run_id] + f"run started: {event.request}{where}")
        elif isinstance(event, ToolCallEvent):
            print("  " * depth[event.run_id] + f"{event.tool_name} -> {event.result}")

    result = await lead.run("How tall is Mont Blanc?", on_event=show)
    print("answer:", result.answer)
    print("tokens (lead and researcher):", result.usage.output_tokens)


if __name__ == "__main__":
    asyncio.run(main())
