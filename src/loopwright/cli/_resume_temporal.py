"""`loopwright runs resume RUN_ID --engine temporal`: go on with a Temporal run whose
workflow failed or was terminated, on the workers.

A new workflow (the same id) replays the run's recorded events (nothing recorded is done
again: a tool call that started without a recorded result is not run again unless its tool
is idempotent) and goes on live where the record ends; this process shows the events the
workers store from there, and exits like `runs resume` on the embedded engine.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from loopwright.cli._options import TASK_QUEUE, TEMPORAL, opt
from loopwright.cli._view import JsonLinesView, LiveView
from loopwright.errors import ConfigurationError
from loopwright.store import PersistentStore, open_store

RESUME_ENGINE = opt(
    "--engine",
    help="where the run goes on: embedded (this process) or temporal (a worker)",
    group="engine",
    choices=("embedded", "temporal"),
    default="embedded",
)
RESUME_OPTIONS = [RESUME_ENGINE, TEMPORAL, TASK_QUEUE]


def resume_on_temporal(args: argparse.Namespace) -> int:
    from loopwright.cli._worker import needs_temporal

    address, url = needs_temporal(args)
    if args.secret or args.secrets_file:
        raise ConfigurationError(
            "--secret/--secrets-file are not supported with --engine temporal "
            "(the workers scrub with their own secrets)"
        )
    store = open_store(url)
    view = JsonLinesView() if args.json else LiveView()
    try:
        outcome = asyncio.run(_resume(address, args.task_queue, args.run_id, store, view))
    finally:
        view.close()
        store.close()
    return 0 if outcome.get("status") == "completed" else 1


async def _resume(
    address: str,
    task_queue: str,
    run_id: str,
    store: PersistentStore,
    view: JsonLinesView | LiveView,
) -> dict[str, Any]:
    from loopwright.cli._worker import follow_run
    from loopwright.engines.temporal import connect
    from loopwright.engines.temporal._resume import resume_stored_run

    client = await connect(address)
    handle, after = await resume_stored_run(client, store, run_id, task_queue=task_queue)
    return await follow_run(handle, store, view, after=after)
