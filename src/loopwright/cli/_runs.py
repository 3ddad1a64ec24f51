"""`loopwright runs list|show|follow|resume|replay|approve|export` (and `fork|cancel`:
_runs_more.py): the stored runs.

Every command takes `--store PATH` (default `$LOOPWRIGHT_STORE`, else ~/.loopwright/runs.db).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
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
from loopwright.cli._output import (
    Fit,
    console,
    fitted_widths,
    is_terminal,
    print_json,
    print_records,
    table_width,
)
from loopwright.cli._runs_more import export_command
from loopwright.cli._runs_more import register as register_more
from loopwright.cli._shared import (
    add_decision_arguments,
    add_store_argument,
    check_heartbeat,
    live_view,
    reach_flags,
    runtime_from_args,
    secrets_from_args,
    store_from_args,
    terminal_decider,
    whole_run_id,
)
from loopwright.cli._view import JsonLinesView, LiveView
from loopwright.cli._view_lines import call_phases, duration_text
from loopwright.errors import UsageError
from loopwright.events import (
    Event,
    ModelResponseEvent,
    RunFinishedEvent,
    RunStartedEvent,
    ToolCallEvent,
    ToolCallStartedEvent,
    event_to_dict,
)
from loopwright.events._types import child_run_id
from loopwright.safety.terminal import visible
from loopwright.store import RunRecord, RunStore
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
    if is_terminal():
        _list_table(runs)
        return 0
    columns = ["run", "status", "kind", "tenant", "started", "parent", "request"]
    rows = [
        [run.run_id, run.status, run.kind, run.tenant, _when(run.created_at),
         run.parent_run_id or "", run.request]
        for run in runs
    ]  # fmt: skip
    print_records(columns, rows)
    return 0


def _list_table(runs: Sequence[RunRecord]) -> None:
    """`runs list` on a terminal: ids whole (to be pasted), the request cut to fit; the
    tenant only when runs of several are listed; a parent run (a sub-agent's lead, a
    follow-up's stopped run) in a column of its own, or under the id when that is too wide."""
    tenants = len({run.tenant for run in runs}) > 1
    parents = any(run.parent_run_id for run in runs)
    columns = ["run", "status", "kind", *(["tenant"] if tenants else []), "started"]

    def row(run: RunRecord, parent: bool) -> list[str]:
        when = datetime.datetime.fromtimestamp(run.created_at).strftime("%Y-%m-%d %H:%M")
        tenant = [run.tenant] if tenants else []
        parent_id = [run.parent_run_id or ""] if parent else []
        return [run.run_id, run.status, run.kind, *tenant, when, *parent_id, run.request]

    fit: Fit = {"request": "cut"}
    if parents:
        wide = [row(run, True) for run in runs]
        with_parent = [*columns, "parent", "request"]
        if table_width(fitted_widths(with_parent, wide, fit, console().width)) <= console().width:
            print_records(with_parent, wide, fit=fit)
            return
    columns.append("request")
    folded = []
    for run in runs:
        cells = row(run, False)
        if run.parent_run_id:
            cells[0] += f"\n↳ {run.parent_run_id}"
        folded.append(cells)
    print_records(columns, folded, fit=fit)


def _call_cost(event: ModelResponseEvent) -> str:
    """` (2.31 s, 812 → 64 tokens)`: what a model call took, as the dashboard says it."""
    usage = event.response.get("usage") or {}
    tokens = f"{usage.get('input_tokens', 0):,} → {usage.get('output_tokens', 0):,} tokens"
    return f" ({duration_text(event.duration_ms)}, {tokens})"


def _summary(event: Event) -> str:
    """One line about an event, for the timeline."""
    if isinstance(event, RunStartedEvent):
        return f"{event.kind} run: {_short(event.request, 80)} (model {event.model})"
    if isinstance(event, ModelResponseEvent):
        took = f"{_call_cost(event)}{call_phases(event.response)}"
        if event.final_answer is not None:
            return f"final answer: {_short(event.final_answer, 80)}{took}"
        calls = ", ".join(str(a.get("tool")) for a in event.actions)
        thought = f"{_short(event.thought, 60)} → " if event.thought else ""
        return f"{thought}{calls or 'no action'}{took}"
    if isinstance(event, ToolCallStartedEvent):
        return f"{event.tool_name}({_short(json.dumps(event.arguments), 80)})"
    if isinstance(event, ToolCallEvent):
        mark = "error" if event.is_error else "ok"
        return f"{event.tool_name} {mark}: {event.result_summary}"
    if isinstance(event, RunFinishedEvent):
        answer = f": {_short(event.answer, 80)}" if event.answer else ""
        reason = f" ({event.reason})" if event.reason and event.reason != event.status else ""
        return f"{event.status}{reason}{answer}"
    data = event_to_dict(event)
    rest = {k: v for k, v in data.items() if k not in ("run_id", "seq", "ts", "type", "v")}
    return _short(json.dumps(rest, ensure_ascii=False, default=str), 100)


def show_command(args: argparse.Namespace) -> int:
    store = store_from_args(args)
    try:
        record = find_run(store, whole_run_id(store, args.run_id))
        events = store.events(record.run_id)
        children = {} if args.json else _children(store, record.run_id, events)
    finally:
        store.close()
    if args.json:
        view = JsonLinesView()
        for event in events:
            view.show(event)
        return 0
    print(visible(_header(record, events)))
    start = events[0].ts if events else record.created_at
    for event in events:
        summary = _summary(event) + children.get(event.seq, "")
        line = f"{event.seq:>5}  +{event.ts - start:8.3f}s  {event.type:<22} {summary}"
        print(visible(line))
    return 0


def _children(store: RunStore, run_id: str, events: Sequence[Event]) -> dict[int, str]:
    """The tool calls of the run that started a sub-agent's run: seq -> ` → sub-agent run
    ID` (its own timeline: `runs show ID`)."""
    notes: dict[int, str] = {}
    for event in events:
        if isinstance(event, ToolCallStartedEvent):
            child = child_run_id(run_id, event.call_id)
            if store.get_run(child) is not None:
                notes[event.seq] = f" → sub-agent run {child}"
    return notes


def _header(record: RunRecord, events: Sequence[Event]) -> str:
    parent = f" · follow-up of {record.parent_run_id}" if record.parent_run_id else ""
    started = events[0] if events else None
    if isinstance(started, RunStartedEvent) and started.parent_call_id:
        parent = f" · sub-agent of run {record.parent_run_id} (call {started.parent_call_id})"
    lines = [
        f"run {record.run_id} · {record.kind} · {record.status} · tenant {record.tenant}{parent}",
        f"  request: {_short(record.request, 100)}",
        f"  started {_when(record.created_at)} · last event {record.last_seq} · "
        f"{record.input_tokens + record.output_tokens:,} tokens",
    ]
    if record.answer:
        lines.append(f"  answer: {_short(record.answer, 100)}")
    return "\n".join(lines)


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

    async def resume() -> str:
        runtime = runtime_from_args(args, store)
        try:
            record = runtime.find(whole_run_id(store, args.run_id))
            if args.engine is not None and args.engine != record.engine:
                raise UsageError(
                    f"run {record.run_id} executes on the {record.engine} engine: it resumes "
                    f"there (leave out --engine {args.engine})"
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
        finally:
            runtime.close()

    try:
        status = asyncio.run(resume())
    finally:
        view.close()
        store.close()
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
