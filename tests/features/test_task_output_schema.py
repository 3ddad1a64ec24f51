"""Task agent steps with an output schema: the step's result is the validated value, and
later steps read its fields; a bad schema is a file:line problem."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tasks"))
from task_helpers import load, make_executor

from loopwright.errors import TaskParseError
from loopwright.events import Event, FunctionResultEvent, OutputInvalidEvent, StepCompleteEvent
from loopwright.testing import ScriptedModel

TASK = """
name: triage
steps:
  - name: classify
    type: agent
    description: "Classify the bug report."
    output_schema:
      type: object
      properties:
        severity: {type: string, enum: [low, high]}
        title: {type: string}
      required: [severity, title]
  - name: loud
    type: tool
    tool: shout
    args_from: {text: results.classify.title}
"""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


async def test_agent_step_result_is_the_validated_value(tmp_path: Path, workspace: Path) -> None:
    model = ScriptedModel(
        [
            '{"thought": "t", "final_answer": {"severity": "urgent", "title": "crash"}}',
            '{"thought": "t", "final_answer": {"severity": "high", "title": "crash on save"}}',
        ]
    )
    loaded = load(tmp_path, TASK)
    executor, sink, _ = make_executor(loaded, workspace, model=model)
    events: list[Event] = [e async for e in executor.execute(loaded.definition, "triage it")]
    [classified] = [e for e in events if isinstance(e, StepCompleteEvent) and e.step == "classify"]
    assert classified.result == {"severity": "high", "title": "crash on save"}
    assert [e.result for e in events if isinstance(e, FunctionResultEvent)][-1] == "CRASH ON SAVE"
    assert any(isinstance(e, OutputInvalidEvent) for e in sink.events)  # the agent's own run
    assert model.requests[0].output_schema is not None


def test_a_bad_output_schema_names_the_line(tmp_path: Path) -> None:
    bad = TASK.replace("type: object", "type: nonsense")
    with pytest.raises(TaskParseError) as caught:
        load(tmp_path, bad)
    assert "not a valid JSON Schema" in str(caught.value) and "task.yaml:6:" in str(
        caught.value
    )  # output_schema:
    on_tool = TASK.replace(
        "    tool: shout\n", "    tool: shout\n    output_schema: {type: object}\n"
    )
    with pytest.raises(TaskParseError, match="on agent steps"):
        load(tmp_path, on_tool)
