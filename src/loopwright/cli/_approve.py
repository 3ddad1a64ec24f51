"""Gates across processes from the command line.

`loopwright task approve RUN_ID [GATE_ID] [--reject]` leaves a decision in the run store for
the process that runs the task (a `loopwright task run` with no terminal, or a
`loopwright serve`), which polls the store while its gate waits. `waiting_line` is what
such a `task run` prints (to stderr) when a gate starts waiting.
"""

from __future__ import annotations

import argparse
import datetime
import getpass

from loopwright.cli._options import add_options, opt
from loopwright.cli._runs import add_store_argument, store_from_args
from loopwright.errors import RunNotFound, UsageError
from loopwright.events import ConfirmationRequiredEvent
from loopwright.tasks._gates import pending_gates


def register_approve(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    approve = sub.add_parser(
        "approve",
        help="approve (or --reject) a task run's pending gate, through the run store",
        description="Leave a decision in the run store for the process running the task; "
        "it takes it within a second. GATE_ID may be left out when one gate is pending.",
    )
    approve.add_argument("run_id", help="the task run's id")
    approve.add_argument(
        "gate_id", nargs="?", default=None, help="the gate's request id (default: the one pending)"
    )
    add_options(
        approve,
        [
            opt("--reject", help="reject instead of approving", group="task", action="store_true"),
            opt("--by", help="who decides", group="task", default_text="cli:<user name>"),
        ],
        None,
    )
    add_store_argument(approve, "task")
    approve.set_defaults(handler=approve_command)


def waiting_line(event: ConfirmationRequiredEvent) -> str:
    """The gate waits for a decision from another process, until when."""
    until = datetime.datetime.fromtimestamp(event.ts + event.timeout_s).astimezone()
    return (
        f"gate {event.request_id} ({event.step}) waits for approval from `loopwright serve` "
        f"(the dashboard or POST /api/runs/{event.run_id}/gates/{event.request_id}) or "
        f"`loopwright task approve {event.run_id}`, until {until.isoformat(timespec='seconds')} "
        f"({event.timeout_s:g}s); then the task stops"
    )


def _user() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


def approve_command(args: argparse.Namespace) -> int:
    store = store_from_args(args)
    try:
        record = store.get_run(args.run_id)
        if record is None:
            raise RunNotFound(args.run_id, store.path)
        pending = [g["request_id"] for g in pending_gates(store.events(record.run_id))]
        if not pending:
            raise UsageError(f"run {record.run_id} has no pending gate (status {record.status})")
        gate_id = args.gate_id
        if gate_id is None:
            if len(pending) > 1:
                raise UsageError(f"run {record.run_id} has several pending gates: name one of "
                                 f"{', '.join(pending)}")  # fmt: skip
            gate_id = pending[0]
        elif gate_id not in pending:
            raise UsageError(f"run {record.run_id} has no pending gate {gate_id!r} "
                             f"(pending: {', '.join(pending)})")  # fmt: skip
        if record.status != "running":
            raise UsageError(
                f"run {record.run_id} is {record.status}: no process runs it to take a decision"
            )
        approved = not args.reject
        if not store.post_gate_decision(record.run_id, gate_id, approved, args.by or _user()):
            raise UsageError(f"gate {gate_id} already has a decision, not yet taken by its run")
    finally:
        store.close()
    verdict = "approved" if approved else "rejected"
    print(f"{verdict} gate {gate_id} of run {record.run_id} (left in the store for its process)")
    return 0
