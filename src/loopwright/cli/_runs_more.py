"""`loopwright runs fork|cancel|export`: a new run from a stored run's first steps, ending a
run for good, a run as one JSON document. Registered by `runs` (cli/_runs.py)."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import TYPE_CHECKING, Any

from loopwright.cli._follow import show_run
from loopwright.cli._options import (
    BASE_URL,
    JSON_EVENTS,
    SECRET,
    SECRETS_FILE,
    TEMPORAL_OF_RUN,
    add_options,
    opt,
)
from loopwright.cli._shared import (
    add_store_argument,
    live_view,
    reach_flags,
    run_then_close,
    runtime_from_args,
    secrets_from_args,
    store_from_args,
    terminal_decider,
    whole_run_id,
)

if TYPE_CHECKING:
    from loopwright.runtime import Runtime

FORK_OPTIONS = (
    opt(
        "--at",
        help="the step to fork at: the new run takes the run's first N steps (iterations, "
        "as `runs show` numbers them) from its log, then runs live; 0 keeps none",
        group="task",
        type=int,
        required=True,
        metavar="N",
    ),
    opt("--model", help="the model of the live steps", group="model", default_text="the run's"),
    BASE_URL,
    opt(
        "--request",
        help="another request, from the first message on",
        group="task",
        default_text="the run's",
    ),
    opt(
        "--yes",
        help="approve every call that waits for approval",
        group="task",
        action="store_true",
    ),
    SECRET,
    SECRETS_FILE,
    JSON_EVENTS,
)
CANCEL_OPTIONS = (TEMPORAL_OF_RUN,)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    fork = sub.add_parser(
        "fork",
        help="a new run from a run's first steps, with another model or request",
        description="Start a new run whose first N steps are the stored run's, served from "
        "its log (no model or tool call made again), then live: with --model, another model; "
        "with --request, another request. The new run is shown live.",
    )
    fork.add_argument("run_id", help="the run to fork (a unique prefix is enough)")
    add_options(fork, FORK_OPTIONS, None)
    add_store_argument(fork)
    fork.set_defaults(handler=fork_command)
    cancel = sub.add_parser(
        "cancel",
        help="cancel a run for good: running, interrupted or waiting",
        description="End a run as cancelled, with its partial work: one this command reaches "
        "(on Temporal: --temporal HOST:PORT), or one that is interrupted or waiting for a "
        "decision (it can no longer be resumed). A run that executes in another process is "
        "stopped there (Ctrl-C), then cancelled here.",
    )
    cancel.add_argument("run_id", help="the run to cancel (a unique prefix is enough)")
    add_options(cancel, CANCEL_OPTIONS, None)
    add_store_argument(cancel)
    cancel.set_defaults(handler=cancel_command)


def fork_command(args: argparse.Namespace) -> int:
    """Fork a stored run at `--at`; the new run shown live; 0 when it completes."""
    from loopwright.cli._turns import absolute_model  # runs the agent: not for `runs list`

    store = store_from_args(args)
    view = live_view(args)
    model = absolute_model(args.model) if args.model else None

    async def fork(runtime: Runtime) -> Any:
        run_id = whole_run_id(store, args.run_id)
        handle = runtime.fork(
            run_id, args.at, request=args.request, model=model, base_url=args.base_url,
            secrets=secrets_from_args(args),
        )  # fmt: skip
        await show_run(runtime, handle.run_id, view, decide=terminal_decider(args, runtime),
                       flags=reach_flags(args))  # fmt: skip
        return await handle.wait()

    result = run_then_close(args, store, view, fork)
    return 0 if result.success else 1


def cancel_command(args: argparse.Namespace) -> int:
    """Cancel a run (`Runtime.cancel`): one line says what became of it."""
    store = store_from_args(args)

    async def cancel(run_id: str) -> str:
        runtime = runtime_from_args(args, store)
        try:
            before = runtime.find(run_id).status
            await runtime.cancel(run_id)
            return before
        finally:
            runtime.close()

    try:
        run_id = whole_run_id(store, args.run_id)
        before = asyncio.run(cancel(run_id))
    finally:
        store.close()
    print(f"cancelled run {run_id} (it was {before})")
    return 0


def export_command(args: argparse.Namespace) -> int:
    from loopwright.runtime._export import export_run  # a task run's state: the task runner's

    store = store_from_args(args)
    try:
        document = export_run(store, whole_run_id(store, args.run_id))
    finally:
        store.close()
    print(json.dumps(document, indent=2, ensure_ascii=False, default=str))
    return 0
