"""An agent made without a prompt builder gets one of its own: a change to one agent's
builder (its `template` is public) does not reach the prompts of other agents."""

from __future__ import annotations

from loopwright.agent import AgentExecutor
from loopwright.testing import ScriptedModel
from loopwright.tools import tool


@tool
def echo(text: str) -> str:
    """Echo the text back."""
    return text


def test_one_agent_s_template_is_not_another_s() -> None:
    changed = AgentExecutor(ScriptedModel([]), [echo])
    other = AgentExecutor(ScriptedModel([]), [echo])
    before = other.system_prompt()
    changed.prompt_builder.template = "OWN TEMPLATE\n{tool_descriptions}"
    assert changed.system_prompt().startswith("OWN TEMPLATE\n")
    assert other.system_prompt() == before and "OWN TEMPLATE" not in before
