"""The default wall clock: one rule, said the same way by the code, `--help` and the docs
(issue 34, item 4).

Seed 003's line held here: "Wall-clock timeout: from PIPE-02 (30min agentic, 10min simple)".
The rule: an agentic run is one offered any tool (1800 s); a simple run has none (600 s).
What a tool declares it changes does not matter.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.cli import build_parser
from loopwright.testing import ScriptedModel
from loopwright.tools import Tool, tool

DOCS = Path(__file__).parents[2] / "docs"
RULE = "1800 (30 min) for a run with tools, 600 (10 min) for a run without"
"""The rule in words, as `--help`, the config reference and the docs say it."""


@tool(effect="read")
def lookup(key: str) -> str:
    """Look a key up (changes nothing)."""
    return key


@tool(effect="destructive")
def drop(name: str) -> str:
    """Drop a table."""
    return name


@tool
def undeclared(key: str) -> str:
    """Declares no effect."""
    return key


@pytest.mark.parametrize(
    ("tools", "seconds"),
    [([], 600.0), ([lookup], 1800.0), ([undeclared], 1800.0), ([lookup, drop], 1800.0)],
)
def test_thirty_minutes_for_an_agentic_run_ten_for_a_simple_one(
    tools: list[Tool], seconds: float
) -> None:
    """Seed 003: "Wall-clock timeout: from PIPE-02 (30min agentic, 10min simple)"."""
    agent = AgentExecutor(ScriptedModel([]), tools)
    assert agent.options.timeout_s == seconds
    assert (
        AgentExecutor(ScriptedModel([]), tools, options=AgentOptions(timeout_s=5)).options.timeout_s
        == 5
    )


def test_help_and_docs_say_the_rule_the_code_has() -> None:
    """The words of the rule the code has (above), in `loopwright run --help`, the config
    reference, docs/guardrails.md and the seeds' conformance table."""
    simple = AgentExecutor(ScriptedModel([]), []).options.timeout_s
    agentic = AgentExecutor(ScriptedModel([]), [lookup]).options.timeout_s
    assert (agentic, simple) == (1800.0, 600.0)  # as RULE says them
    run = next(
        action.choices["run"]
        for action in build_parser()._actions
        if isinstance(action.choices, dict) and "run" in action.choices
    )
    flat = " ".join(run.format_help().split())
    assert f"(default: {RULE}; config: timeout)" in flat
    for page in ("cli.md", "guardrails.md", "notes/seeds-conformance.md"):
        text = " ".join((DOCS / page).read_text(encoding="utf-8").split())
        assert RULE in text, page
