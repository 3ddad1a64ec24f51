"""The live view's lines: what one event of a run says to a person (rich markup, every text
of the run escaped so its control characters show), given what the view knows of the run."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from loopwright.events import (
    ConfirmationRequiredEvent,
    GateDecisionEvent,
    RunFinishedEvent,
    RunStartedEvent,
    RunStoppedEvent,
    StepCompleteEvent,
    StepStartEvent,
    TaskCompleteEvent,
)
from loopwright.safety.terminal import markup as escape  # shows control characters

HOOK_KINDS = ("pre-task", "post-task")


@dataclass
class RunSeen:
    """What the view knows of one run (the one shown, or a sub-agent's) from its events."""

    run_id: str
    depth: int = 0
    kind: str = "agent"
    request: str = ""
    model: str = ""
    tools: list[str] = field(default_factory=list)
    limits: dict[str, Any] = field(default_factory=dict)
    tokens: int = 0
    tools_run: int = 0
    """Task runs: the tool steps that ran (a skipped or rejected step did not)."""
    hook_tools_run: int = 0
    """Task runs: those of `tools_run` that were a hook's steps."""
    total_steps: int = 0
    gate_steps: set[str] = field(default_factory=set)
    decided: set[str] = field(default_factory=set)
    """Gate steps whose decision was shown (their step's end says nothing more)."""
    failure_shown: tuple[str, str] | None = None
    """Task runs: the failed step and its error, once shown (no later line repeats it)."""
    events: int = 0


def plural(count: int, word: str) -> str:
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"


def duration_text(ms: float) -> str:
    """`13 ms` under a second, `10.01 s` from one: as the dashboard writes a duration."""
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def as_json(value: Any) -> str:
    """A step's value as JSON (what the task file and `--json` use), not a Python repr."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def header(event: RunStartedEvent) -> str:
    """`▶ request` and the run's model, tools and id."""
    parts = [f"model {escape(event.model)}"] if event.model else []
    parts.append(f"tools {escape(', '.join(event.tools) or 'none')}")
    parts.append(f"run {event.run_id}")
    return f"[bold]▶ {escape(event.request)}[/]\n  [dim]{' · '.join(parts)}[/]"


def resumed_header(run: RunSeen) -> str:
    """The first lines of a resumed run's view: which run, and where it stands."""
    parts = [f"model {escape(run.model)}"] if run.model else []
    parts.append(f"tools {escape(', '.join(run.tools) or 'none')}")
    parts.append(f"{plural(run.events, 'event')} recorded")
    if run.kind == "agent" or run.tokens:
        parts.append(f"{run.tokens:,} tokens so far")
    return (
        f"[bold]↻ Resuming run {run.run_id}: {escape(run.request)}[/]\n"
        f"  [dim]{' · '.join(parts)}[/]"
    )


def budget(run: RunSeen) -> str:
    """Budget used so far, against the run's limits: `1,200/5,000 tokens · 30s limit`."""
    limits = run.limits
    limit = limits.get("max_tokens_total")
    parts = [f"{run.tokens:,}/{limit:,} tokens" if limit else f"{run.tokens:,} tokens"]
    if limits.get("max_cost"):
        parts.append(f"max ${limits['max_cost']:g}")
    if limits.get("timeout_s"):
        parts.append(f"{limits['timeout_s']:g}s limit")
    return " · ".join(parts)


NEXT_STEP = {
    "timeout": "raise --timeout{limit}",
    "iteration_timeout": "raise --iteration-timeout, or use a faster model",
    "max_iterations": "raise --max-iterations (or --tier complex)",
    "budget": "raise --max-tokens-total or --max-cost",
    "repetition": "rephrase the request or raise --repetition-threshold",
    "no_progress": "raise --no-progress-limit",
}


def stopped(event: RunStoppedEvent, run: RunSeen, flags: str) -> str:
    """`■ Stopped (reason): why` and, for the run shown, what to do next: the limit to
    raise, or a follow-up run that carries on from where it stopped."""
    why = event.message.removeprefix("Stopped: ").removeprefix("Stopped ")
    line = f"[yellow]■ Stopped ({escape(event.reason)}): {escape(why)}[/]"
    if run.depth or run.kind != "agent":
        return line  # a sub-agent's stop is its lead's to handle
    limit = run.limits.get("timeout_s")
    change = NEXT_STEP.get(event.reason, "").format(limit=f" (it was {limit:g}s)" if limit else "")
    carry_on = f"loopwright run --continue {run.run_id}{flags}"
    next_step = f"{change}, or carry on: {carry_on}" if change else f"carry on: {carry_on}"
    return f"{line}\n  [dim]next: {escape(next_step)}[/]"


def asked(event: ConfirmationRequiredEvent) -> str:
    return f"[bold yellow]? {escape(event.message)}[/]"


def decided(event: GateDecisionEvent) -> str:
    """Who decided a gate, and how; a reason given with a refusal."""
    if event.decided_by == "timeout":
        return "  [yellow]✗ no decision in time: not approved[/]"
    who = escape(event.decided_by)
    if event.approved:
        return f"  [green]✓ approved by {who}[/]"
    reason = f": {escape(event.reason)}" if event.reason else ""
    return f"  [red]✗ rejected by {who}{reason}[/]"


def step_started(event: StepStartEvent, run: RunSeen) -> str:
    """`Step 2/4: approve (gate)`; a hook's steps are named as the hook's, not numbered."""
    kind, sep, name = event.step.partition(":")
    if sep and kind in HOOK_KINDS:
        return f"[cyan]{kind} hook: {escape(name)}[/] [dim]({escape(event.step_type)})[/]"
    total = f"/{run.total_steps}" if run.total_steps else ""
    number = f"Step {event.step_index + 1}{total}"
    return f"[cyan]{number}: {escape(event.step)}[/] [dim]({escape(event.step_type)})[/]"


def step_ended(event: StepCompleteEvent, run: RunSeen) -> str | None:
    """A step that did not complete, and why; None when its gate's decision or its tool's
    failed result said it."""
    if event.status == "completed" or event.step in run.decided:
        return None
    failure = (event.step, event.error or "")
    if event.status in ("failed", "timed_out"):
        if failure == run.failure_shown:
            return None
        run.failure_shown = failure
    why = event.error or (as_json(event.result) if event.result is not None else "")
    colour = "dim" if event.status == "skipped" else "yellow"
    return f"  [{colour}]{event.status}{': ' + escape(why) if why else ''}[/]"


def task_ended(event: TaskCompleteEvent, run: RunSeen, flags: str = "") -> str:
    """`Task NAME STATUS: summary`; a failure shown above is named by its step only, and
    the rollback command reaches the run's store (`flags`)."""
    colour = "green" if event.status == "completed" else "yellow"
    text = event.summary
    if run.failure_shown is not None:
        step, error = run.failure_shown
        stopped_at = f"stopped at step {step!r}"
        text = text.replace(f"step {step!r} failed: {error}", stopped_at, 1)
        if error and text.startswith(error):  # a gate's timeout: the summary is its error
            text = stopped_at + text[len(error) :]
    rollback = f"loopwright task rollback {event.run_id}"
    if flags and text.endswith(rollback):
        text += flags
    summary = f": {escape(text)}" if text else ""
    return f"[bold {colour}]Task {escape(event.task_name)} {escape(event.status)}[/]{summary}"


def finished(event: RunFinishedEvent, run: RunSeen) -> str:
    """The run's footer (status, the tool calls that ran, tokens, cost); an agent's final
    answer above it. A task's outcome is its `Task ...` line: no answer is repeated."""
    usage = event.usage
    tokens = usage.get("input_tokens", 0) + usage.get("output_tokens", 0)
    reason = f" ({event.reason})" if event.reason and event.reason != event.status else ""
    parts = [f"{event.status}{reason}"]
    if run.kind == "task":
        hooks = f" ({run.hook_tools_run:,} by hooks)" if run.hook_tools_run else ""
        parts.append(f"{plural(run.tools_run, 'tool call')} run{hooks}")
    else:
        parts.append(plural(event.steps, "tool call"))
    if tokens or run.kind == "agent":
        parts.append(f"{tokens:,} tokens")
    if event.cost:
        parts.append(f"${event.cost:.4f}")
    footer = f"[dim]{' · '.join(parts)}[/]"
    if event.answer is None or run.kind != "agent":
        return footer
    if event.status == "completed":
        return f"[bold green]✓ Final Answer:[/] {escape(event.answer)}\n{footer}"
    return f"[yellow]Last answer ({event.status}):[/] {escape(event.answer)}\n{footer}"


PHASES = (
    ("load_ms", "loading the model"),
    ("wait_ms", "waiting for the model"),
    ("prompt_ms", "evaluating the prompt"),
    ("generate_ms", "generating"),
)


def call_phases(response: dict[str, Any]) -> str:
    """` [evaluating the prompt 2.1 s · generating 3.4 s, 2 threads]`: where a model call's
    time went, when the model said (the embedded model's `timings`, in its reply)."""
    timings = response.get("timings") or {}
    parts = [
        f"{name} {timings[key] / 1000:.1f} s"
        for key, name in PHASES
        if timings.get(key, 0) >= 50  # a phase of no consequence is not named
    ]
    if not parts:
        return ""
    threads = timings.get("threads")
    on = f", {threads} thread{'s' if threads != 1 else ''}" if threads else ""
    return f" [{' · '.join(parts)}{on}]"
