"""`loopwright runs list` and `runs show`: the stored runs as a table, and one run's
timeline (registered by `runs`, cli/_runs.py)."""

from __future__ import annotations

import argparse
import datetime
import json
from collections.abc import Sequence

from loopwright.cli._output import (
    Fit,
    console,
    fitted_widths,
    is_terminal,
    print_json,
    print_records,
    table_width,
)
from loopwright.cli._shared import store_from_args, whole_run_id
from loopwright.cli._view import JsonLinesView
from loopwright.cli._view_lines import call_phases, duration_text
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
from loopwright.store._base import find_run


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
