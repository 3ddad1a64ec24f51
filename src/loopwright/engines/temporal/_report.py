"""What a worker says about its work, one line each (`loopwright worker` prints them):

    took agent run run_3f2a…: "summarise the open issues"
    run run_3f2a… ended completed after 12.4s
    stopping: 2 calls in flight (run_3f2a… tool_call, run_9b1c… model_call), 30s to finish
    stopped: 1 in-flight call finished, 1 handed back to other workers (run_9b1c…)

A run is "taken" when this worker first executes one of its steps (its steps may move
between workers: each says so once); it "ends" on the worker that stores its
`run_finished`. The in-flight calls are counted by an activity interceptor: a call that
ends after the stop began finished here; one its stopping worker cancels is handed back
(retried on another worker where its policy allows).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

from loopwright.engines.temporal._activity_support import WORKER_STOPPED
from loopwright.safety.terminal import visible

REMEMBERED_RUNS = 4096
"""Runs a worker remembers having taken (so each is announced once while it runs here)."""
WHAT_CHARS = 80


def what_of(text: str) -> str:
    """A request or a task name as one short, terminal-safe quoted line."""
    line = " ".join(text.split())
    if len(line) > WHAT_CHARS:
        line = line[: WHAT_CHARS - 1] + "…"
    return f'"{visible(line)}"'


@dataclass
class WorkerReport:
    """The lines a worker says (`say`: print one), and its in-flight calls."""

    say: Callable[[str], None] = lambda line: None
    in_flight: dict[int, tuple[str, str]] = field(default_factory=dict)
    """Each running activity (by a key of its own): (run id, activity name)."""
    finished: list[tuple[str, str]] = field(default_factory=list)
    handed_back: list[tuple[str, str]] = field(default_factory=list)
    stopping: bool = False
    _taken: OrderedDict[str, None] = field(default_factory=OrderedDict)

    def took(self, run_id: str, kind: str, what: str) -> None:
        """This worker executes a step of the run for the first time (while it runs)."""
        if run_id in self._taken:
            return
        self._taken[run_id] = None
        while len(self._taken) > REMEMBERED_RUNS:
            self._taken.popitem(last=False)
        self.say(f"took {kind} run {run_id}: {what_of(what)}")

    def ended(self, run_id: str, status: str, seconds: float) -> None:
        """This worker stored the run's end (`seconds` since the run was started)."""
        self._taken.pop(run_id, None)
        self.say(f"run {run_id} ended {status} after {seconds:.1f}s")

    def stop(self, graceful_s: float) -> None:
        """The worker stops taking work: say what is in flight and for how long."""
        self.stopping = True
        calls = list(self.in_flight.values())
        if not calls:
            self.say("stopping: no call in flight")
            return
        named = ", ".join(f"{run} {name}" for run, name in calls)
        self.say(f"stopping: {_count(len(calls), 'call')} in flight ({named}), "
                 f"{graceful_s:g}s to finish")  # fmt: skip

    def stopped(self) -> None:
        """Every in-flight call ended: say which finished here and which went back."""
        runs = sorted({run for run, _ in self.handed_back})
        back = f" ({', '.join(runs)})" if runs else ""
        self.say(f"stopped: {_count(len(self.finished), 'in-flight call')} finished, "
                 f"{len(self.handed_back)} handed back to other workers{back}")  # fmt: skip

    def interceptor(self) -> Interceptor:
        return _Counting(self)


def _short(activity_type: str) -> str:
    """`loopwright.tool_call.v1` -> `tool_call`."""
    parts = activity_type.split(".")
    return parts[1] if len(parts) == 3 and parts[0] == "loopwright" else activity_type


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class _Counting(Interceptor):
    def __init__(self, report: WorkerReport) -> None:
        self.report = report

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _CountedActivity(next, self.report)


class _CountedActivity(ActivityInboundInterceptor):
    """Keeps each running activity in the report's `in_flight`; after the stop began, an
    activity that ends is `finished` or (cancelled by its stopping worker) `handed_back`."""

    def __init__(self, next: ActivityInboundInterceptor, report: WorkerReport) -> None:
        super().__init__(next)
        self.report = report

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        info = activity.info()
        key = id(input)
        call = (info.workflow_id or "?", _short(info.activity_type))
        report = self.report
        report.in_flight[key] = call
        try:
            result = await super().execute_activity(input)
        except ApplicationError as exc:
            if report.stopping and exc.type == WORKER_STOPPED:
                report.handed_back.append(call)
            elif report.stopping:
                report.finished.append(call)  # it ended here (failed: its policy decides)
            raise
        except BaseException:
            if report.stopping:
                report.handed_back.append(call)
            raise
        else:
            if report.stopping:
                report.finished.append(call)
            return result
        finally:
            report.in_flight.pop(key, None)
