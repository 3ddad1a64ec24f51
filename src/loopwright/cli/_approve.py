"""Gates across processes from the command line.

`loopwright task approve RUN_ID [GATE_ID] [--reject]` leaves a decision in the run store for
the process that runs the task (a `loopwright task run` with no terminal, or a
`loopwright serve`), which polls the store while its gate waits. `waiting_line` is what
such a `task run` prints (to stderr) when a gate starts waiting.
"""

from __future__ import annotations

import argparse
import datetime

from loopwright.cli._runs_approve import add_decision_arguments
from loopwright.events import ConfirmationRequiredEvent


def register_approve(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    approve = sub.add_parser(
        "approve",
        help="approve (or --reject) a task run's pending gate, through the run store",
        description="Leave a decision in the run store for the process running the task; "
        "it takes it within a second. GATE_ID may be left out when one gate is pending.",
    )
    add_decision_arguments(approve, "task")  # the same decision as `loopwright runs approve`


def waiting_line(event: ConfirmationRequiredEvent) -> str:
    """The gate waits for a decision from another process, until when."""
    until = datetime.datetime.fromtimestamp(event.ts + event.timeout_s).astimezone()
    return (
        f"gate {event.request_id} ({event.step}) waits for approval from `loopwright serve` "
        f"(the dashboard or POST /api/runs/{event.run_id}/gates/{event.request_id}) or "
        f"`loopwright task approve {event.run_id}`, until {until.isoformat(timespec='seconds')} "
        f"({event.timeout_s:g}s); then the task stops"
    )
