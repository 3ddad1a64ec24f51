"""Follow-up runs: continue a stopped run with the remaining work as the new request.

    result = await agent.run(request)
    if result.status == "stopped":
        follow_up = await agent.run(
            follow_up_request(result, request), parent_run_id=result.run_id
        )

The new run starts fresh (its own budget and iterations) but knows what was done, which
files changed, what the model last thought, why the run stopped and, when a verifier ran,
which checks still fail. `run_started.parent_run_id` links the two runs in the log.
"""

from __future__ import annotations

import json

from loopwright.agent._result import ExecutionResult

MAX_STEPS_LISTED = 20
MAX_RESULT_CHARS = 200


def follow_up_request(result: ExecutionResult, request: str) -> str:
    """The request for a run that finishes what `result` (a run of `request`) left undone."""
    lines = [
        "Continue an unfinished task. The original request was:",
        "",
        request,
        "",
        f"A previous run ({result.run_id}) stopped before finishing: "
        f"{result.message or result.reason or result.status}",
    ]
    if result.steps:
        lines += ["", f"Work already done ({len(result.steps)} tool calls; do not repeat it):"]
        for step in result.steps[-MAX_STEPS_LISTED:]:
            arguments = json.dumps(step.arguments, ensure_ascii=False, sort_keys=True)
            outcome = "error" if step.is_error else "ok"
            lines.append(f"- {step.tool_name}({arguments}) -> {outcome}: {_short(step.result)}")
    if result.modified_files:
        lines += ["", "Files already modified: " + ", ".join(result.modified_files)]
    if result.last_thought:
        lines += ["", f"The last thought was: {result.last_thought}"]
    verification = result.verification
    if verification is not None and verification.failed:
        remaining = ", ".join(verification.failed)
        lines += ["", f"Checks still failing (the remaining work): {remaining}"]
        if verification.passed:
            lines.append("Checks already passing: " + ", ".join(verification.passed))
    lines += ["", "Finish the remaining work, then give your final answer."]
    return "\n".join(lines)


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_RESULT_CHARS else flat[: MAX_RESULT_CHARS - 1] + "…"
