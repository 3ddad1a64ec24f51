"""A run's result has a short repr at any length (asyncio.run builds it at every CLI run's
end: restoring the SIGINT handler reprs the main task, its result included)."""

from __future__ import annotations

from loopwright import AgentExecutor, AgentOptions, ExecutionResult, ModelResponse, ToolCall, tool
from loopwright.testing import ScriptedModel

STEPS = 300
OUTPUT_CHARS = 5_000


@tool
def page(n: int) -> str:
    """A long page of text."""
    return f"page {n} " + "x" * OUTPUT_CHARS


def long_run() -> ExecutionResult:
    replies = [
        ModelResponse(tool_calls=(ToolCall(f"c{i}", "page", {"n": i}),)) for i in range(STEPS)
    ]
    model = ScriptedModel([*replies, ModelResponse(text="read them all")], tool_mode="native")
    options = AgentOptions(max_iterations=STEPS + 1, no_progress_limit=STEPS + 1)
    return AgentExecutor(model, [page], options=options).run_sync("read every page")


def test_the_repr_counts_the_steps_instead_of_showing_them() -> None:
    result = long_run()
    assert len(result.steps) == STEPS
    assert sum(len(step.result) for step in result.steps) > STEPS * OUTPUT_CHARS
    text = repr(result)
    assert len(text) < 1_000
    assert f"steps=<{STEPS} steps>" in text
    assert "status='completed'" in text and "answer='read them all'" in text


def test_a_long_answer_is_cut_in_the_repr() -> None:
    result = ExecutionResult("run_1", "completed", answer="a" * 50_000)
    text = repr(result)
    assert len(text) < 1_000
    assert text.startswith("ExecutionResult(run_id='run_1', status='completed', answer='aaa")
