"""Runs recorded before issue 34 keep their behaviour: a RunSpec of version 1 to 3 reads
`AgentOptions.revision` 1 (the system prompt without `is_final` or the token-limit rule,
the iteration limit that counted iterations only, the wall clock by declared effect), so it
resumes and replays as it ran (tests/store/test_spec_versions.py replays the frozen ones).
"""

from __future__ import annotations

import json

import pytest

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.errors import ConfigurationError
from loopwright.runtime import RunSpec
from loopwright.testing import ScriptedModel
from loopwright.tools import tool


@tool(effect="read")
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def call(key: str) -> str:
    return json.dumps({"thought": "look", "action": "lookup", "action_input": {"key": key}})


@pytest.mark.parametrize(
    ("version", "revision"), [(1, 1), (2, 1), (3, 1), (4, 2), (5, 3), (6, 4), (7, 5), (8, 6)]
)
def test_a_spec_reads_the_revision_its_runs_had(version: int, revision: int) -> None:
    spec = RunSpec.from_dict({"request": "r", "version": version})
    assert spec.options.revision == revision
    assert RunSpec.from_dict(spec.to_dict()).options.revision == revision  # kept on a round trip
    assert RunSpec(request="r").options.revision == 9


async def test_revision_1_has_the_prompt_limit_and_wall_clock_it_had() -> None:
    model = ScriptedModel([call("k")] * 4)
    options = AgentOptions(max_iterations=3, revision=1)
    agent = AgentExecutor(model, [lookup], options=options)
    assert agent.options.timeout_s == 600  # a read-only run: 10 min, as revision 1 ruled
    result = await agent.run("find k")
    system = model.requests[0].messages[0].content
    assert '"is_final"' not in system and "Mind the token limit" not in system
    # three calls run, then the last turn after the repetition stop, past the limit
    assert len(model.requests) == 4 and len(result.steps) == 3
    assert "Do not call a tool again" in model.requests[3].messages[-1].content


def test_an_unknown_revision_is_refused_by_name() -> None:
    with pytest.raises(
        ConfigurationError, match=r"unknown revision 10 \(use one of: 1, 2, .*, 9\)"
    ):
        AgentOptions(revision=10)
