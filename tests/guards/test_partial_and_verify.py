"""Partial results of stopped runs, verification (pass / partial_pass / fail), follow-ups."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from guard_helpers import call, final

from loopwright.agent import (
    AgentExecutor,
    AgentOptions,
    CommandVerifier,
    VerificationResult,
    follow_up_request,
)
from loopwright.events import RunFinishedEvent, RunStartedEvent, VerificationEvent
from loopwright.testing import ScriptedModel
from loopwright.tools import ToolContext, tool


@tool
def write_file(ctx: ToolContext, path: str, text: str) -> str:
    """Write a text file in the workspace.

    Args:
        path: file path
        text: content
    """
    (ctx.workspace / path).write_text(text)
    ctx.record_write(path, None, str(hash(text)))
    return f"wrote {path}"


def module_checks(workspace: Path) -> dict[str, bool]:
    return {name: (workspace / f"{name}.py").exists() for name in ("alpha", "beta", "gamma")}


async def collect(agent: AgentExecutor, request: str) -> tuple[Any, list[Any]]:
    events: list[Any] = []

    async def sink(event: Any) -> None:
        events.append(event)

    return await agent.run(request, on_event=sink), events


async def test_stopped_run_keeps_steps_files_thought_and_reason(tmp_path: Path) -> None:
    replies = [call("write_file", path=f"{n}.py", text="x = 1") for n in ("alpha", "beta")]
    model = ScriptedModel([*replies, call("write_file", path="gamma.py", text="")], strict=False)
    agent = AgentExecutor(
        model,
        [write_file],
        options=AgentOptions(max_iterations=3),
        workspace=tmp_path,
        verifier=module_checks,
    )
    result, events = await collect(agent, "create alpha, beta and gamma")
    assert result.status == "stopped" and result.reason == "max_iterations"
    assert "3 iterations" in (result.message or "")  # the third, offered no tool, wrote nothing
    assert [s.arguments["path"] for s in result.steps] == ["alpha.py", "beta.py"]
    assert set(result.modified_files) == {"alpha.py", "beta.py"}
    assert result.last_thought == "use write_file"
    assert result.verification == VerificationResult("partial_pass", ("alpha", "beta"), ("gamma",))
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent) and finished.status == "stopped"
    assert finished.partial is not None and finished.partial["modified_files"]
    verification = next(e for e in events if isinstance(e, VerificationEvent))
    assert verification.outcome == "partial_pass" and verification.failed == ["gamma"]


async def test_follow_up_run_gets_the_remaining_work(tmp_path: Path) -> None:
    replies = [call("write_file", path="alpha.py", text="x = 1"), final("unused")]
    first_model = ScriptedModel(replies, strict=False)
    options = AgentOptions(max_iterations=1, last_turn=False)  # its one call may act
    first = await AgentExecutor(
        first_model, [write_file], options=options, workspace=tmp_path, verifier=module_checks
    ).run("create alpha, beta and gamma")
    assert first.status == "stopped"

    request = follow_up_request(first, "create alpha, beta and gamma")
    assert "create alpha, beta and gamma" in request
    assert "write_file" in request and "alpha.py" in request
    assert "beta, gamma" in request  # the checks still failing
    assert first.run_id in request

    replies = [call("write_file", path=f"{n}.py", text="y = 2") for n in ("beta", "gamma")]
    second_model = ScriptedModel([*replies, final("all three exist")])
    agent = AgentExecutor(second_model, [write_file], workspace=tmp_path, verifier=module_checks)
    events: list[Any] = []

    async def sink(event: Any) -> None:
        events.append(event)

    second = await agent.run(request, parent_run_id=first.run_id, on_event=sink)
    assert second.status == "completed"
    assert second.verification is not None and second.verification.outcome == "pass"
    assert isinstance(events[0], RunStartedEvent) and events[0].parent_run_id == first.run_id
    assert second_model.requests[0].messages[1].content.startswith(request)


async def test_parent_run_id_is_recorded(tmp_path: Path) -> None:
    agent = AgentExecutor(ScriptedModel([final("ok")]), workspace=tmp_path)
    events: list[Any] = []

    async def sink(event: Any) -> None:
        events.append(event)

    await agent.run("continue", parent_run_id="run_parent", on_event=sink)
    started = events[0]
    assert isinstance(started, RunStartedEvent) and started.parent_run_id == "run_parent"


async def test_completed_run_is_verified_too(tmp_path: Path) -> None:
    agent = AgentExecutor(
        ScriptedModel([final("nothing to do")]), workspace=tmp_path, verifier=module_checks
    )
    result = await agent.run("check")
    assert result.status == "completed"
    assert result.verification is not None and result.verification.outcome == "fail"
    assert result.verification.failed == ("alpha", "beta", "gamma")


@pytest.mark.subprocess
async def test_command_verifier_named_checks(tmp_path: Path) -> None:
    (tmp_path / "ok.txt").write_text("yes")
    verifier = CommandVerifier({"has ok": "test -f ok.txt", "has missing": "test -f missing.txt"})
    result = await verifier(tmp_path)
    assert result.outcome == "partial_pass"
    assert (result.passed, result.failed) == (("has ok",), ("has missing",))
    assert (await CommandVerifier("true")(tmp_path)).outcome == "pass"
    assert (await CommandVerifier("exit 3")(tmp_path)).outcome == "fail"


@pytest.mark.subprocess
async def test_command_verifier_reads_pytest_results(tmp_path: Path) -> None:
    (tmp_path / "test_sample.py").write_text(
        "def test_done():\n    assert True\n\ndef test_remaining():\n    assert False\n"
    )
    command = f"{sys.executable} -m pytest -q -rA -p no:cacheprovider test_sample.py"
    result = await CommandVerifier(command)(tmp_path)
    assert result.outcome == "partial_pass"
    assert result.passed == ("test_sample.py::test_done",)
    assert result.failed == ("test_sample.py::test_remaining",)
    assert "1 failed, 1 passed" in result.output


@pytest.mark.subprocess
async def test_command_verifier_times_out_as_a_failed_check(tmp_path: Path) -> None:
    result = await CommandVerifier("sleep 5", timeout_s=0.05)(tmp_path)
    assert result.outcome == "fail" and "timed out" in result.output


async def test_a_verifier_function_that_raises_fails_the_check_not_the_run(
    tmp_path: Path,
) -> None:
    def broken(workspace: Path) -> bool:
        raise RuntimeError("checker crashed")

    def fine(workspace: Path) -> bool:
        return True

    crashed = await AgentExecutor(
        ScriptedModel([final("done")]), workspace=tmp_path, verifier=broken
    ).run("check")
    assert crashed.status == "completed" and crashed.verification is not None
    assert crashed.verification.outcome == "fail" and crashed.verification.failed == ("broken",)
    assert "checker crashed" in crashed.verification.output
    passed = await AgentExecutor(
        ScriptedModel([final("done")]), workspace=tmp_path, verifier=fine
    ).run("check")
    assert passed.verification is not None and passed.verification.outcome == "pass"


@pytest.mark.subprocess
async def test_a_command_printing_tap_counts_each_test(tmp_path: Path) -> None:
    result = await CommandVerifier("printf 'ok 1 - parses\\nnot ok 2 - writes\\nok 3 - reads\\n'")(
        tmp_path
    )
    assert (result.outcome, result.passed, result.failed) == (
        "partial_pass",
        ("parses", "reads"),
        ("writes",),
    )
