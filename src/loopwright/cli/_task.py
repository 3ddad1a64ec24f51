"""`loopwright task validate|run|approve|rollback`: deterministic task files from the shell."""

from __future__ import annotations

import argparse
import asyncio
import difflib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from loopwright.cli._follow import show_run
from loopwright.cli._options import JSON_EVENTS, add_options, opt
from loopwright.cli._options import TASK_RUN as TASK_RUN_OPTIONS
from loopwright.cli._output import CONFIG_EPILOG, console, print_json, print_problem
from loopwright.cli._shared import (
    add_decision_arguments,
    add_store_argument,
    check_heartbeat,
    live_view,
    reach_flags,
    runtime_from_args,
    store_from_args,
    terminal_decider,
    whole_run_id,
)
from loopwright.errors import ConfigurationError, RunNotFound, TaskParseError
from loopwright.events import Event
from loopwright.safety.terminal import markup as escape  # shows control characters
from loopwright.safety.terminal import visible
from loopwright.store import RunStore
from loopwright.tasks import TaskDefinition, TaskRunState, check_task, load_task
from loopwright.tasks._loader import TASK_SUFFIXES, LoadedTask, TaskCheck
from loopwright.tasks._matching import choose_task
from loopwright.tasks._state import StateFileExporter

if TYPE_CHECKING:
    from loopwright.tasks import TaskSpec


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("task", help="validate, run and roll back task files")
    sub = parser.add_subparsers(dest="task_command", metavar="ACTION", required=True)
    validate = sub.add_parser(
        "validate",
        help="check task files: every problem, as file:line: problem",
        description="Check task files (or folders of them) without running any of their code: "
        "every problem of every file is reported in one pass, in file order. Exit status 2 "
        "when a file has a problem.",
    )
    validate.add_argument("files", nargs="+", help="task files (.yaml, .yml, .md) or folders")
    add_options(validate, [JSON_REPORT], None)
    validate.set_defaults(handler=validate_command)

    run = sub.add_parser(
        "run",
        help="run a task file (or pick one in a folder with --match)",
        epilog=CONFIG_EPILOG.format(section="task"),
    )
    run.add_argument("path", help="a task file, or a folder of task files with --match")
    add_options(run, TASK_RUN_OPTIONS, "task")
    run.set_defaults(handler=run_command)

    approve = sub.add_parser(
        "approve",
        help="approve (or --reject) a task run's pending gate (as `runs approve` does)",
        description="Decide a waiting gate of a task run, whoever executes it (as `loopwright "
        "runs approve`). GATE_ID may be left out when one gate is pending.",
    )
    add_decision_arguments(approve, "task")

    rollback = sub.add_parser("rollback", help="undo the changes of a task run")
    rollback.add_argument("run_id", help="the task run's id (a unique prefix is enough)")
    add_options(
        rollback,
        [
            opt(
                "--state-dir",
                help="folder of state files and backups",
                group="store",
                key="state_dir",
            ),
            JSON_EVENTS,
        ],
        "task",
    )
    add_store_argument(rollback, "task")
    rollback.set_defaults(handler=rollback_command)


JSON_REPORT = opt(
    "--json",
    help="print one JSON document: each file, its task and its problems",
    group="output",
    action="store_true",
)


def task_files(paths: list[str]) -> list[Path]:
    """The files named, with each folder replaced by the task files in it (sorted)."""
    files: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            files.extend(sorted(p for p in path.iterdir() if p.suffix in TASK_SUFFIXES))
        else:
            files.append(path)
    return files


def _check_record(check: TaskCheck) -> dict[str, Any]:
    task = check.definition
    return {
        "file": check.file,
        "ok": check.ok,
        "task": task.name if task is not None and check.ok else None,
        "steps": len(task.steps) if task is not None and check.ok else None,
        "hooks": sorted(task.hooks) if task is not None and check.ok else [],
        "problems": [
            {"file": p.file_path, "line": p.line, "problem": p.message, "text": str(p)}
            for p in check.problems
        ],
    }


def validate_command(args: argparse.Namespace) -> int:
    checks = [check_task(file) for file in task_files(args.files)]
    if args.json:
        print_json([_check_record(check) for check in checks])
    for check in checks:
        task = check.definition
        if check.ok and task is not None and not args.json:
            hooks = ", ".join(task.hooks) or "none"
            steps = len(task.steps)
            print(visible(f"✓ {check.file}: task {task.name!r}, {steps} steps, hooks: {hooks}"))
        for problem in check.problems:
            print_problem(str(problem))
    return 2 if any(not check.ok for check in checks) else 0


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
    loaded: dict[str, LoadedTask] = {}
    for file in task_files([str(path)]):
        try:
            loaded[str(file)] = load_task(file)
        except TaskParseError as exc:  # one bad file never hides the good ones
            if path.is_file():
                raise
            for line in str(exc).splitlines():
                print_problem(f"{line} (skipped)", warning=True)
    match = choose_task(args.match, [t.definition for t in loaded.values()])
    err.print(f"[dim]{escape(match.explanation)}[/]")
    return next(t for t in loaded.values() if t.definition is match.task)


def known_inputs(task: TaskDefinition, given: dict[str, str]) -> dict[str, str]:
    """`given`, each a declared input of the task: a misspelt one is an error, not ignored
    (a task that declares no inputs takes any)."""
    declared = sorted(task.inputs)
    for name in given if declared else ():
        if name not in task.inputs:
            close = difflib.get_close_matches(name, declared, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigurationError(
                f"--input {name}: task {task.name!r} has no input {name!r} ({hint}its inputs: "
                f"{', '.join(declared) or 'none'})"
            )
    return given


def task_spec(args: argparse.Namespace, loaded: LoadedTask) -> TaskSpec:
    """The run as plain data (recorded in its run_started: `runs resume` needs nothing else)."""
    from loopwright.tasks import TaskSpec  # with the agent steps' options: not for `validate`

    return TaskSpec(
        task_file=str(Path(loaded.definition.source_path).resolve()),
        inputs=known_inputs(loaded.definition, parse_inputs(args.input)),
        request=args.request or args.match or "",
        tenant=args.client,
        model=args.model,
        base_url=args.base_url,
        workspace=str(Path(args.workspace).resolve()),
        state_root=str(Path(args.state_dir).expanduser()),
        gate_timeout_s=args.gate_timeout,
        rollback_on_failure=args.rollback_on_failure,
    )


def run_command(args: argparse.Namespace) -> int:
    """Start the task through the Runtime, on `--engine` (as `loopwright serve` does):
    stored, leased, resumable with `loopwright runs resume`; its events shown as stored, so
    `task approve` from another shell finds the gate."""
    check_heartbeat(args)
    spec = task_spec(args, pick_task(args, console(stderr=True)))
    store = store_from_args(args)
    view = live_view(args)

    async def run() -> str:
        runtime = runtime_from_args(args, store)
        try:
            handle = runtime.start_task(spec)  # its engine resolves the spec's model
            decide = terminal_decider(args, runtime, "task approve")
            await show_run(runtime, handle.run_id, view, decide=decide, flags=reach_flags(args))
            state: TaskRunState = await handle.wait()
            return state.status
        finally:
            runtime.close()

    try:
        status = asyncio.run(run())
    finally:
        view.close()
        store.close()
    return 0 if status == "completed" else 1


def stored_state(store: RunStore, exporter: StateFileExporter, run_id: str) -> TaskRunState:
    """The run's state from the store; the JSON state file for runs the store does not hold."""
    from loopwright.runtime import task_state  # `task validate` needs no runtime

    try:
        return task_state(store, run_id)
    except RunNotFound:
        return exporter.find(run_id)


def rollback_command(args: argparse.Namespace) -> int:
    from loopwright.runtime import Runtime  # `task validate` needs no runtime

    exporter = StateFileExporter(Path(args.state_dir).expanduser())
    store = store_from_args(args)
    runtime = Runtime(store)
    view = live_view(args)

    async def run() -> str:
        run_id = whole_run_id(store, args.run_id, missing_ok=True)
        state = stored_state(store, exporter, run_id)
        hooks: dict[str, Any] = {}
        if state.task_file and Path(state.task_file).is_file():
            hooks = load_task(state.task_file).snapshot_hooks

        async def show(event: Event) -> None:
            view.show(event)

        handle = runtime.rollback(state, snapshot_hooks=hooks, exporter=exporter, on_event=show)
        status: str = await handle.wait()  # the original run is stored rolled_back
        return status

    try:
        status = asyncio.run(run())
    finally:
        view.close()
        runtime.close()
        store.close()
    return 0 if status == "completed" else 1
