"""`loopwright task validate|run|approve|rollback`: deterministic task files from the shell."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from loopwright.cli._approve import register_approve, waiting_line
from loopwright.cli._runs import add_store_argument, store_from_args
from loopwright.cli._view import JsonLinesView, LiveView
from loopwright.errors import ConfigurationError, RunNotFound, TaskParseError
from loopwright.events import (
    ConfirmationRequired,
    Event,
    GateDecided,
    RunFinished,
    StepComplete,
    StreamChunk,
)
from loopwright.runtime import Runtime, task_state
from loopwright.store import RunStore
from loopwright.tasks import (
    GateBroker,
    LoadedTask,
    StateFileExporter,
    StoreDecisions,
    TaskExecutor,
    TaskRunState,
    TaskSettings,
    choose_task,
    load_task,
    rollback_task_run,
)
from loopwright.tasks._loader import TASK_SUFFIXES

DEFAULT_STATE_DIR = "~/.loopwright"


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("task", help="validate, run and roll back task files")
    sub = parser.add_subparsers(dest="task_command", metavar="ACTION", required=True)
    validate = sub.add_parser("validate", help="check task files; errors name file and line")
    validate.add_argument("files", nargs="+", help="task files (.yaml, .yml, .md)")
    validate.set_defaults(handler=validate_command)

    run = sub.add_parser("run", help="run a task file (or pick one in a folder with --match)")
    run.add_argument("path", help="a task file, or a folder of task files with --match")
    run.add_argument("--match", default=None, metavar="TEXT", help="choose the task by keywords")
    run.add_argument("--request", default=None, help="the user's request (default: --match)")
    run.add_argument("--input", action="append", default=[], metavar="K=V", help="an input")
    run.add_argument("--client", default="default", help="client (tenant) name")
    run.add_argument("--yes", action="store_true", help="approve every gate")
    run.add_argument("--json", action="store_true", help="print one JSON event per line")
    run.add_argument("--model", default=None, help="model spec for agent steps")
    run.add_argument("--base-url", default=None)
    run.add_argument("--workspace", default=".", help="root for file tools (default: .)")
    run.add_argument("--state-dir", default=DEFAULT_STATE_DIR, help="state files and backups")
    run.add_argument("--gate-timeout", type=float, default=300.0, help="seconds (default 300)")
    run.add_argument(
        "--rollback-on-failure", action="store_true", help="undo the changes if a step fails"
    )
    add_store_argument(run)
    run.set_defaults(handler=run_command)

    register_approve(sub)

    rollback = sub.add_parser("rollback", help="undo the changes of a task run")
    rollback.add_argument("run_id")
    rollback.add_argument("--state-dir", default=DEFAULT_STATE_DIR)
    rollback.add_argument("--json", action="store_true")
    add_store_argument(rollback)
    rollback.set_defaults(handler=rollback_command)


def validate_command(args: argparse.Namespace) -> int:
    failures = 0
    for file in args.files:
        try:
            loaded = load_task(file)
        except TaskParseError as exc:
            print(f"✗ {exc}", file=sys.stderr)
            failures += 1
            continue
        task = loaded.definition
        hooks = ", ".join(task.hooks) or "none"
        print(f"✓ {file}: task {task.name!r}, {len(task.steps)} steps, hooks: {hooks}")
    return 2 if failures else 0


def parse_inputs(pairs: list[str]) -> dict[str, str]:
    inputs = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ConfigurationError(f"--input {pair!r}: expected name=value")
        inputs[name.strip()] = value
    return inputs


def pick_task(args: argparse.Namespace, err: Console) -> LoadedTask:
    path = Path(args.path)
    if args.match is None:
        if path.is_dir():
            raise ConfigurationError(f"{path} is a folder: pass --match TEXT to choose a task")
        return load_task(path)
    files = (
        [path] if path.is_file() else sorted(p for p in path.iterdir() if p.suffix in TASK_SUFFIXES)
    )
    loaded = {str(f): load_task(f) for f in files}
    match = choose_task(args.match, [t.definition for t in loaded.values()])
    err.print(f"[dim]{escape(match.explanation)}[/]")
    return next(t for t in loaded.values() if t.definition is match.task)


class TaskView:
    """LiveView plus the task-only events: gates, decisions, streamed text, skipped steps."""

    def __init__(self, json_lines: bool) -> None:
        self.base: JsonLinesView | LiveView = JsonLinesView() if json_lines else LiveView()
        self.console = None if json_lines else Console(highlight=False)

    def show(self, event: Event) -> None:
        self.base.show(event)
        if self.console is None:
            return
        if isinstance(event, ConfirmationRequired):
            self.console.print(f"[bold yellow]? {escape(event.message)}[/]")
        elif isinstance(event, GateDecided):
            verdict = "approved" if event.approved else "rejected"
            self.console.print(f"  [dim]{verdict} by {escape(event.decided_by)}[/]")
        elif isinstance(event, StreamChunk):
            self.console.print(f"  [italic]{escape(event.chunk)}[/]")
        elif isinstance(event, StepComplete) and event.status != "completed":
            why = event.error or event.result or ""
            self.console.print(f"  [yellow]{event.status}[/] {escape(str(why))}")

    def close(self) -> None:
        self.base.close()


async def decide_gate(
    args: argparse.Namespace,
    gates: GateBroker,
    event: Event,
    err: Console,
    decisions: StoreDecisions,
) -> None:
    """--yes approves; a terminal asks; otherwise the gate waits for a decision another
    process leaves in the store (`loopwright serve`, `loopwright task approve`)."""
    if not isinstance(event, ConfirmationRequired):
        return
    if args.yes:
        gates.decide(event.request_id, True, "--yes")
    elif sys.stdin.isatty():
        answer = await asyncio.to_thread(input, f"{event.message} [y/N] ")
        gates.decide(event.request_id, answer.strip().lower() in {"y", "yes"}, "terminal")
    else:
        decisions.watch(event.run_id, event.request_id)
        err.print(escape(waiting_line(event)), style="dim", soft_wrap=True)


def run_command(args: argparse.Namespace) -> int:
    err = Console(stderr=True, highlight=False)
    loaded = pick_task(args, err)
    model: Any = None
    if args.model:
        from loopwright.models import resolve_model

        model = resolve_model(args.model, base_url=args.base_url)
    settings = TaskSettings(
        workspace=Path(args.workspace).resolve(),
        state_root=Path(args.state_dir).expanduser(),
        gate_timeout_s=args.gate_timeout,
        rollback_on_failure=args.rollback_on_failure,
    )
    view = TaskView(args.json)
    store = store_from_args(args)
    runtime = Runtime(store)
    gates = GateBroker()
    executor = TaskExecutor.for_task(
        loaded, model, settings=settings, sink=runtime.publish, gates=gates
    )
    request = args.request or args.match or ""

    async def run() -> str:
        status = "failed"
        decisions = StoreDecisions(store, gates)
        stream = executor.execute(loaded.definition, request, parse_inputs(args.input), args.client)
        try:
            async for event in stream:
                view.show(event)
                await decide_gate(args, gates, event, err, decisions)
                if isinstance(event, RunFinished):
                    status = event.status
        finally:
            await decisions.close()
        return status

    try:
        status = asyncio.run(run())
    finally:
        view.close()
        runtime.leases.close()
        store.close()
    return 0 if status == "completed" else 1


def stored_state(store: RunStore, exporter: StateFileExporter, run_id: str) -> TaskRunState:
    """The run's state from the store; the JSON state file for runs the store does not hold."""
    try:
        return task_state(store, run_id)
    except RunNotFound:
        return exporter.find(run_id)


def rollback_command(args: argparse.Namespace) -> int:
    exporter = StateFileExporter(Path(args.state_dir).expanduser())
    store = store_from_args(args)
    runtime = Runtime(store)
    view = TaskView(args.json)

    async def run() -> str:
        state = stored_state(store, exporter, args.run_id)
        hooks: dict[str, Any] = {}
        if state.task_file and Path(state.task_file).is_file():
            hooks = load_task(state.task_file).snapshot_hooks
        status = "failed"
        rollback = rollback_task_run(
            state, sink=runtime.publish, snapshot_hooks=hooks, exporter=exporter
        )
        async for event in rollback:
            view.show(event)
            if isinstance(event, RunFinished):
                status = event.status
        if status == "completed" and store.get_run(args.run_id) is not None:
            store.set_status(args.run_id, "rolled_back")
        return status

    try:
        status = asyncio.run(run())
    finally:
        view.close()
        runtime.leases.close()
        store.close()
    return 0 if status == "completed" else 1
