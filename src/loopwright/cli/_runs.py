"""`loopwright runs list|show|follow|resume|replay|approve|export` (`list|show`:
_runs_show.py; `export|fork|cancel`: _runs_more.py): the stored runs.

Every command takes `--store PATH` (default `$LOOPWRIGHT_STORE`, else ~/.loopwright/runs.db).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, get_args

from loopwright.cli._agent_ref import load_agent
from loopwright.cli._follow import show_run, waiting_again
from loopwright.cli._options import (
    AGENT_AGAIN,
    HEARTBEAT_TIMEOUT,
    JSON_EVENTS,
    MCP_TRUSTED,
    RESUME_ENGINE,
    SECRET,
    SECRETS_FILE,
    TASK_QUEUE,
    TEMPORAL,
    TEMPORAL_OF_RUN,
    Opt,
    add_options,
    opt,
)
from loopwright.cli._runs_more import export_command
from loopwright.cli._runs_more import register as register_more
from loopwright.cli._runs_show import list_command, show_command
from loopwright.cli._shared import (
    add_decision_arguments,
    add_store_argument,
    check_heartbeat,
    live_view,
    reach_flags,
    run_then_close,
    runtime_from_args,
    secrets_from_args,
    store_from_args,
    terminal_decider,
    whole_run_id,
)
from loopwright.cli._view import JsonLinesView, LiveView
from loopwright.errors import UsageError
from loopwright.safety.terminal import visible
from loopwright.store._base import StoredStatus, find_run

if TYPE_CHECKING:
    from loopwright.runtime import RunHandle, Runtime

STATUSES = get_args(StoredStatus)


LIST_OPTIONS = (
    opt("--status", help="only runs with this status", group="filters", choices=STATUSES),
    opt(
        "--tenant",
        help="only this tenant's (client's) runs",
        group="filters",
        default_text="every tenant",
    ),
    opt("--limit", help="at most this many runs", group="filters", type=int, default=50),
    opt("--json", help="print one JSON array", group="output", action="store_true"),
)
SHOW_OPTIONS = (
    opt("--json", help="print one JSON event per line", group="output", action="store_true"),
)
FOLLOW_OPTIONS = (
    JSON_EVENTS,
    opt("--after", help="show the events after this seq", group="output", type=int, default=0),
    TEMPORAL_OF_RUN,
)
RESUME_OPTIONS = (
    AGENT_AGAIN, JSON_EVENTS, SECRET, SECRETS_FILE, MCP_TRUSTED, RESUME_ENGINE, TEMPORAL,
    TASK_QUEUE, HEARTBEAT_TIMEOUT,
    opt("--yes", help="approve every gate the run waits at", group="task", action="store_true"),
)  # fmt: skip
REPLAY_OPTIONS = (
    opt("--json", help="print the report as one JSON object", group="output", action="store_true"),
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "runs",
        help="list, show, follow, resume, replay, approve, export, fork and cancel stored runs",
    )
    sub = parser.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    _action(sub, "list", "the stored runs, newest first", None, LIST_OPTIONS, list_command)
    _action(
        sub, "show", "a run's timeline: every event",
        "the run's id", SHOW_OPTIONS, show_command,
    )  # fmt: skip
    _action(
        sub, "follow", "watch a run live from another shell, to its end",
        "the run's id", FOLLOW_OPTIONS, follow_command,
    )  # fmt: skip
    _action(
        sub, "resume", "continue an interrupted run where it stopped", "the interrupted run's id",
        RESUME_OPTIONS, resume_command,
    )  # fmt: skip
    _action(
        sub, "replay", "re-run the loop on recorded replies; report divergence",
        "the finished run's id", REPLAY_OPTIONS, replay_command,
    )  # fmt: skip
    approve = sub.add_parser(
        "approve",
        help="approve (or --reject) a run's waiting gate, e.g. an agent's tool call",
        description="Decide a run's waiting gate, whoever executes it: a gate waiting in "
        "another process gets the decision through the store (within a second), one on "
        "Temporal workers through its workflow (--temporal HOST:PORT). GATE may be left out "
        "when one gate is waiting.",
    )
    add_decision_arguments(approve, "run")
    _action(sub, "export", "a run as one JSON document", "the run's id", (), export_command)
    register_more(sub)


def _action(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    help_text: str,
    run_id_help: str | None,
    options: Sequence[Opt],
    handler: Callable[[argparse.Namespace], int],
) -> None:
    """One `runs` action: its run id argument (if any), its options and the store's."""
    action = sub.add_parser(name, help=help_text)
    if run_id_help is not None:
        action.add_argument("run_id", help=f"{run_id_help} (a unique prefix is enough)")
    if options:
        add_options(action, options, None)
    action.set_defaults(handler=handler)
    add_store_argument(action)


def follow_command(args: argparse.Namespace) -> int:
    """Show a run's events live, to its end, whoever executes it (`Runtime.follow`); 0 when
    it completed. Ctrl-C stops watching; the run goes on."""
    store = store_from_args(args)
    try:
        record = find_run(store, whole_run_id(store, args.run_id))
        view = JsonLinesView() if args.json else LiveView(flags=reach_flags(args))

        async def follow() -> None:
            runtime = runtime_from_args(args, store)
            try:
                await show_run(runtime, record.run_id, view, after=args.after,
                               cancel_on_interrupt=False, flags=reach_flags(args))  # fmt: skip
            finally:
                runtime.close()

        try:
            asyncio.run(follow())
        finally:
            view.close()
        ended = store.get_run(record.run_id)
    finally:
        store.close()
    return 0 if ended is not None and ended.status == "completed" else 1


def resume_command(args: argparse.Namespace) -> int:
    """Go on with an interrupted run on the engine it executes on; its new events shown."""
    check_heartbeat(args)
    store = store_from_args(args)
    view = live_view(args)

    async def resume(runtime: Runtime) -> str:
        record = runtime.find(whole_run_id(store, args.run_id))
        if args.engine is not None and args.engine != record.engine:
            raise UsageError(
                f"run {record.run_id} executes on the {record.engine} engine: it resumes "
                f"there (leave out --engine {args.engine})"
            )
        if args.agent and record.engine != "embedded":
            raise UsageError(
                f"run {record.run_id} executes on the {record.engine} engine, whose workers "
                f"run their own --agent: resume it without --agent"
            )
        handle = await _resumed(runtime, record.run_id, args)
        recorded = await asyncio.to_thread(store.events, record.run_id)
        recorded = [event for event in recorded if event.seq <= record.last_seq]
        view.resumed(recorded)
        command = "task approve" if record.kind == "task" else "runs approve"
        decide = terminal_decider(args, runtime, command)
        await show_run(runtime, handle.run_id, view, decide=decide, after=record.last_seq,
                       waiting=waiting_again(recorded), flags=reach_flags(args))  # fmt: skip
        result = await handle.wait()
        return str(result.status)

    status = run_then_close(args, store, view, resume)
    return 0 if status == "completed" else 1


async def _resumed(runtime: Runtime, run_id: str, args: argparse.Namespace) -> RunHandle:
    """The run going on: from its spec, or an agent built in Python given again (--agent)."""
    if args.agent:
        return await runtime.resume_agent(load_agent(args.agent), run_id)
    return await runtime.resume(run_id, secrets=secrets_from_args(args))


def replay_command(args: argparse.Namespace) -> int:
    from loopwright.cli._replay_progress import ReplayProgress
    from loopwright.runtime import replay_run

    store = store_from_args(args)
    progress: ReplayProgress | None = None
    try:
        run_id = whole_run_id(store, args.run_id)
        progress = ReplayProgress(store, run_id)
        report = asyncio.run(replay_run(store, run_id, build=progress))
    finally:
        if progress is not None:
            progress.close()
        store.close()
    if args.json:
        data: dict[str, Any] = {"run_id": report.run_id, "events": report.events, "ok": report.ok}
        if report.divergence is not None:
            divergence = report.divergence
            data.update(
                seq=divergence.seq,
                iteration=report.iteration,
                recorded=divergence.expected,
                now=divergence.actual,
            )
        print(json.dumps(data, indent=2))
    else:
        print(visible(("✓ " if report.ok else "✗ ") + report.describe()))  # recorded text
    return 0 if report.ok else 1
