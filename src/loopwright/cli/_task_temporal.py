"""`loopwright task run FILE --engine temporal`: a task run on Temporal workers.

This process starts the run's workflow and shows its events as the workers store them
(the Postgres live tail), like an embedded task run; it exits 0 when the run completes and
1 otherwise. A gate is decided as on the embedded engine: `--yes` approves, a terminal
asks, otherwise it waits for `loopwright task approve` (or the dashboard); each decision is
the workflow's Update `approve`. Ctrl-C cancels the run on its worker (exit 130).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from rich.console import Console
from rich.markup import escape

from loopwright.cli._approve import waiting_line
from loopwright.cli._worker import CANCEL_WAIT_S, TAIL_WAIT_S, needs_temporal
from loopwright.errors import RunError
from loopwright.events import ConfirmationRequiredEvent, Event, RunFinishedEvent
from loopwright.store import PersistentStore, open_store
from loopwright.tasks import TaskSpec


def run_task_on_temporal(args: argparse.Namespace, spec: TaskSpec, view: Any, err: Console) -> int:
    """Start the task's workflow, show its events to its end; 0 when it completed."""
    address, url = needs_temporal(args)
    store = open_store(url)
    try:
        status = asyncio.run(_run(args, address, url, spec, store, view, err))
    finally:
        store.close()
    return 0 if status == "completed" else 1


async def _run(
    args: argparse.Namespace,
    address: str,
    url: str,
    spec: TaskSpec,
    store: PersistentStore,
    view: Any,
    err: Console,
) -> str:
    from temporalio.client import WorkflowFailureError

    from loopwright.engines.temporal import connect, start_task_run

    client = await connect(address)
    handle = await start_task_run(client, spec, task_queue=args.task_queue)
    result = asyncio.ensure_future(handle.result())
    decide = gate_decider(args, address, err)
    shown = 0

    async def to_end() -> str:
        nonlocal shown
        while True:
            for event in await asyncio.to_thread(store.events, handle.id, after=shown):
                view.show(event)
                shown = event.seq
                if decide is not None:
                    await decide(event)
                if isinstance(event, RunFinishedEvent):
                    return event.status
            more = await asyncio.to_thread(store.events, handle.id, after=shown)
            if result.done() and not more:
                outcome: dict[str, Any] = result.result()  # raises when the workflow failed
                return str(outcome["status"])
            await store.wait_for_events(handle.id, after=shown, timeout=TAIL_WAIT_S)

    try:
        return await to_end()
    except asyncio.CancelledError:  # Ctrl-C: the run is cancelled on its worker too
        await handle.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(to_end(), CANCEL_WAIT_S)
        raise
    except WorkflowFailureError as exc:
        raise RunError(f"task run {handle.id} failed on Temporal: {exc.cause or exc}") from None
    finally:
        if not result.done():
            result.cancel()
            with contextlib.suppress(BaseException):
                await result


def gate_decider(
    args: argparse.Namespace, address: str, err: Console | None = None
) -> Callable[[Event], Awaitable[None]] | None:
    """What decides a run's waiting gates from this command: --yes approves each, a
    terminal asks; otherwise they wait for another process (`runs approve`, the dashboard),
    which `err` (if given) is told. None when nothing here decides or tells."""
    if not args.yes and not sys.stdin.isatty() and err is None:
        return None

    async def decide(event: Event) -> None:
        from loopwright.engines.temporal import send_decision

        if not isinstance(event, ConfirmationRequiredEvent):
            return
        if args.yes:
            await send_decision(address, event.run_id, event.request_id, True, "--yes")
        elif sys.stdin.isatty():
            answer = await asyncio.to_thread(input, f"{event.message} [y/N] ")
            approved = answer.strip().lower() in {"y", "yes"}
            await send_decision(address, event.run_id, event.request_id, approved, "terminal")
        elif err is not None:
            err.print(escape(waiting_line(event)), style="dim", soft_wrap=True)

    return decide
