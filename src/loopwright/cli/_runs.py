"""`loopwright runs list|show|resume|replay|approve|export`: the stored runs.

Every command takes `--store PATH` (default `$LOOPWRIGHT_STORE`, else ~/.loopwright/runs.db).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
from collections.abc import Callable, Sequence
from typing import Any

from loopwright.agent import ExecutionResult
from loopwright.cli._options import JSON_EVENTS, SECRET, SECRETS_FILE, Opt, add_options, opt
from loopwright.cli._output import print_json, print_records
from loopwright.cli._view import JsonLinesView, LiveView
from loopwright.events import (
    Event,
    ModelResponseEvent,
    RunFinishedEvent,
    RunStartedEvent,
    ToolCallEvent,
    ToolCallStartedEvent,
    event_to_dict,
)
from loopwright.runtime import (
    Runtime,
    export_run,
    find_run,
    replay_run,
)
from loopwright.safety.scrub import read_secrets_file
from loopwright.safety.terminal import visible
from loopwright.store import PersistentStore, RunRecord, open_store

STATUSES = ("running", "interrupted", "completed", "stopped", "failed", "cancelled", "rolled_back")


STORE_OPTION = opt(
    "--store",
    help="SQLite file or Postgres URL",
    group="store",
    key="store",
    metavar="PATH",
)


def add_store_argument(parser: argparse.ArgumentParser, section: str = "run") -> None:
    add_options(parser, [STORE_OPTION], section)


def store_from_args(args: argparse.Namespace) -> PersistentStore:
    return open_store(getattr(args, "store", None))


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
REPLAY_OPTIONS = (
    opt("--json", help="print the report as one JSON object", group="output", action="store_true"),
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from loopwright.cli._resume_temporal import RESUME_OPTIONS
    from loopwright.cli._runs_approve import register_runs_approve

    parser = commands.add_parser(
        "runs", help="list, show, resume, replay, approve and export stored runs"
    )
    sub = parser.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    _action(sub, "list", "the stored runs, newest first", None, LIST_OPTIONS, list_command)
    _action(
        sub, "show", "a run's timeline: every event",
        "the run's id (a unique prefix is enough)", SHOW_OPTIONS, show_command,
    )  # fmt: skip
    _action(
        sub, "resume", "continue an interrupted run where it stopped", "the interrupted run's id",
        (JSON_EVENTS, SECRET, SECRETS_FILE, *RESUME_OPTIONS), resume_command,
    )  # fmt: skip
    _action(
        sub, "replay", "re-run the loop on recorded replies; report divergence",
        "the finished run's id", REPLAY_OPTIONS, replay_command,
    )  # fmt: skip
    register_runs_approve(sub)
    _action(sub, "export", "a run as one JSON document", "the run's id", (), export_command)


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
        action.add_argument("run_id", help=run_id_help)
    if options:
        add_options(action, options, None)
    action.set_defaults(handler=handler)
    add_store_argument(action)


def _when(ts: float) -> str:
    return datetime.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")


def _short(text: str, limit: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def list_command(args: argparse.Namespace) -> int:
    store = store_from_args(args)
    try:
        runs = store.list_runs(tenant=args.tenant, status=args.status, limit=args.limit)
    finally:
        store.close()
    if args.json:
        print_json([r.to_dict() for r in runs])
        return 0
    if not runs:
        print("no runs")
        return 0
    rows = [
        [run.run_id, run.status, run.kind, run.tenant, _when(run.created_at), run.request]
        for run in runs
    ]
    print_records(["run", "status", "kind", "tenant", "started", "request"], rows)
    return 0


def _summary(event: Event) -> str:
    """One line about an event, for the timeline."""
    if isinstance(event, RunStartedEvent):
        return f"{event.kind} run: {_short(event.request, 80)} (model {event.model})"
    if isinstance(event, ModelResponseEvent):
        if event.final_answer is not None:
            return f"final answer: {_short(event.final_answer, 80)}"
        calls = ", ".join(str(a.get("tool")) for a in event.actions)
        thought = f"{_short(event.thought, 60)} → " if event.thought else ""
        return f"{thought}{calls or 'no action'}"
    if isinstance(event, ToolCallStartedEvent):
        return f"{event.tool_name}({_short(json.dumps(event.arguments), 80)})"
    if isinstance(event, ToolCallEvent):
        mark = "error" if event.is_error else "ok"
        return f"{event.tool_name} {mark}: {event.result_summary}"
    if isinstance(event, RunFinishedEvent):
        answer = f": {_short(event.answer, 80)}" if event.answer else ""
        reason = f" ({event.reason})" if event.reason else ""
        return f"{event.status}{reason}{answer}"
    data = event_to_dict(event)
    rest = {k: v for k, v in data.items() if k not in ("run_id", "seq", "ts", "type", "v")}
    return _short(json.dumps(rest, ensure_ascii=False, default=str), 100)


def show_command(args: argparse.Namespace) -> int:
    store = store_from_args(args)
    try:
        record = find_run(store, args.run_id)
        events = store.events(record.run_id)
    finally:
        store.close()
    if args.json:
        view = JsonLinesView()
        for event in events:
            view.show(event)
        return 0
    print(visible(_header(record)))
    start = events[0].ts if events else record.created_at
    for event in events:
        line = f"{event.seq:>5}  +{event.ts - start:8.3f}s  {event.type:<22} {_summary(event)}"
        print(visible(line))
    return 0


def _header(record: RunRecord) -> str:
    parent = f" · follow-up of {record.parent_run_id}" if record.parent_run_id else ""
    lines = [
        f"run {record.run_id} · {record.kind} · {record.status} · tenant {record.tenant}{parent}",
        f"  request: {_short(record.request, 100)}",
        f"  started {_when(record.created_at)} · last event {record.last_seq} · "
        f"{record.input_tokens + record.output_tokens:,} tokens",
    ]
    if record.answer:
        lines.append(f"  answer: {_short(record.answer, 100)}")
    return "\n".join(lines)


def resume_command(args: argparse.Namespace) -> int:
    if getattr(args, "engine", "embedded") == "temporal":
        from loopwright.cli._resume_temporal import resume_on_temporal

        return resume_on_temporal(args)
    store = store_from_args(args)
    view = JsonLinesView() if args.json else LiveView()
    secrets = list(args.secret)
    for path in args.secrets_file:
        secrets += read_secrets_file(path)

    async def show(event: Event) -> None:
        view.show(event)

    async def resume() -> ExecutionResult:
        runtime = Runtime(store)
        try:
            handle = await runtime.resume(args.run_id, secrets=secrets, on_event=show)
            result: ExecutionResult = await handle.wait()
            return result
        finally:
            runtime.close()

    try:
        result = asyncio.run(resume())
    finally:
        view.close()
        store.close()
    return 0 if result.success else 1


def replay_command(args: argparse.Namespace) -> int:
    from loopwright.cli._replay_progress import ReplayProgress

    store = store_from_args(args)
    progress = ReplayProgress(store, args.run_id)
    try:
        report = asyncio.run(replay_run(store, args.run_id, build=progress))
    finally:
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
        print(("✓ " if report.ok else "✗ ") + report.describe())
    return 0 if report.ok else 1


def export_command(args: argparse.Namespace) -> int:
    store = store_from_args(args)
    try:
        document = export_run(store, args.run_id)
    finally:
        store.close()
    print(json.dumps(document, indent=2, ensure_ascii=False, default=str))
    return 0
