"""`loopwright runs approve RUN_ID [GATE] [--reject] [--reason TEXT]`: decide a run's gate.

For agent runs (a tool call waiting for approval) and task runs alike: the decision is left
in the run store, where the process running the run takes it within a second (its gate
polls the store); for a run on Temporal workers it is sent to the run's workflow (the
Update `approve`, with --temporal HOST:PORT). GATE may be left out when the run has one
gate waiting.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass

from loopwright.cli._options import TEMPORAL, add_options, opt
from loopwright.engines._temporal_route import decide_on_temporal, on_temporal
from loopwright.errors import RunNotFound, UsageError
from loopwright.tasks import join_decider
from loopwright.tasks._gates import pending_gates


def register_runs_approve(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    approve = sub.add_parser(
        "approve",
        help="approve (or --reject) a run's waiting gate, e.g. an agent's tool call",
        description="Leave a decision in the run store for the process running the run; it "
        "takes it within a second. GATE may be left out when one gate is waiting.",
    )
    add_decision_arguments(approve, "run")


def add_decision_arguments(approve: argparse.ArgumentParser, kind: str) -> None:
    """RUN_ID [GATE] --reject --reason --by and the store: `runs approve`, `task approve`."""
    from loopwright.cli._runs import add_store_argument

    approve.add_argument("run_id", help=f"the {kind} run's id" if kind != "run" else "the run's id")
    approve.add_argument(
        "gate_id", nargs="?", default=None, help="the gate's request id (default: the one waiting)"
    )
    add_options(
        approve,
        [
            opt("--reject", help="reject instead of approving", group="task", action="store_true"),
            opt("--reason", help="why (the agent sees it when rejected)", group="task"),
            opt("--by", help="who decides", group="task", default_text="cli:<user name>"),
            TEMPORAL,
        ],
        None,
    )
    add_store_argument(approve, kind)
    approve.set_defaults(handler=runs_approve_command)


def _user() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


def _waiting_gate(pending: list[str], run_id: str, gate_id: str | None, status: str) -> str:
    if not pending:
        raise UsageError(f"run {run_id} has no gate waiting for a decision (status {status})")
    if gate_id is None:
        if len(pending) > 1:
            raise UsageError(f"run {run_id} has several gates waiting: name one of "
                             f"{', '.join(pending)}")  # fmt: skip
        return pending[0]
    if gate_id not in pending:
        raise UsageError(f"run {run_id} has no gate {gate_id!r} waiting "
                         f"(waiting: {', '.join(pending)})")  # fmt: skip
    return gate_id


def runs_approve_command(args: argparse.Namespace) -> int:
    from loopwright.cli._runs import store_from_args

    store = store_from_args(args)
    try:
        record = store.get_run(args.run_id)
        if record is None:
            raise RunNotFound(args.run_id, str(getattr(store, "path", "")))
        gates = pending_gates(store.events(record.run_id))
        pending = [g["request_id"] for g in gates]
        gate_id = _waiting_gate(pending, record.run_id, args.gate_id, record.status)
        if record.status != "running":
            raise UsageError(
                f"run {record.run_id} is {record.status}: no process runs it to take the "
                f"decision (resume it with `loopwright runs resume {record.run_id}`, then decide)"
            )
        approved = not args.reject
        if on_temporal(store, record.run_id):  # the workflow's Update `approve`
            by, why, run_id = args.by or _user(), args.reason or "", record.run_id
            asyncio.run(decide_on_temporal(args.temporal, run_id, gate_id, approved, by, why))
            where = "sent to its workflow on Temporal"
        else:
            decided_by = join_decider(args.by or _user(), args.reason or "")
            if not store.post_gate_decision(record.run_id, gate_id, approved, decided_by):
                raise UsageError(f"gate {gate_id} already has a decision, not yet taken by its run")
            where = "left in the store for its process"
    finally:
        store.close()
    verdict = "approved" if approved else "rejected"
    print(f"{verdict} gate {gate_id} of run {record.run_id} ({where})")
    return 0
