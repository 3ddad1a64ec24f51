"""`loopwright worker`, and `loopwright run --engine temporal`: runs on Temporal workers.

    loopwright worker --temporal HOST:7233 --store postgresql://...     # on any number of hosts
    loopwright run "..." --engine temporal --temporal HOST:7233 --store postgresql://...

The run executes on a worker; this process starts its workflow, then shows its events as
the workers store them in Postgres (the store's live tail), and exits like an embedded run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from loopwright.cli._options import (
    SECRET,
    SECRETS_FILE,
    STORE,
    TASK_QUEUE,
    TEMPORAL,
    add_options,
)
from loopwright.cli._view import JsonLinesView, LiveView
from loopwright.errors import ConfigurationError, RunError
from loopwright.events import Event, RunFinishedEvent
from loopwright.runtime import RunSpec
from loopwright.safety.scrub import read_secrets_file
from loopwright.store import PersistentStore, open_store
from loopwright.store._open import store_location
from loopwright.store._pg_errors import is_postgres_url

TAIL_WAIT_S = 1.0
CANCEL_WAIT_S = 30.0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "worker",
        help="run agent and task runs as a Temporal worker",
        description="Execute the agent and task runs started with --engine temporal (until "
        "SIGTERM or Ctrl-C). Start one on every host that should share the work; they all use one "
        "Temporal server and one Postgres store.",
    )
    add_options(parser, [TEMPORAL, TASK_QUEUE, STORE, SECRET, SECRETS_FILE], "run")
    parser.add_argument(
        "--max-cached-workflows",
        type=int,
        default=None,
        metavar="N",
        help="workflows kept in memory between their tasks; 0: replay each from its history "
        "every time, a determinism check (default: Temporal's own, 1000)",
    )
    parser.add_argument(
        "--graceful-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="on SIGTERM or Ctrl-C, how long in-flight model and tool calls may take to "
        "finish before they are handed back to other workers (default: 30)",
    )
    parser.set_defaults(handler=worker_command)


def needs_temporal(args: argparse.Namespace) -> tuple[str, str]:
    """The Temporal address and the Postgres URL; a clear error when one is missing."""
    if not getattr(args, "temporal", None):
        raise ConfigurationError("the Temporal engine needs --temporal HOST:PORT")
    url = store_location(getattr(args, "store", None))
    if not is_postgres_url(url):
        raise ConfigurationError(
            "the Temporal engine needs a shared store: --store postgresql://... "
            "(workers on other hosts cannot reach a SQLite file)"
        )
    try:
        import temporalio  # noqa: F401
    except ImportError:
        raise ConfigurationError(
            "the Temporal engine needs the temporal extra: pip install 'loopwright[temporal]'"
        ) from None
    return str(args.temporal), url


_needs = needs_temporal  # the name cli/_task_temporal.py imports


def worker_command(args: argparse.Namespace) -> int:
    address, url = needs_temporal(args)
    secrets = list(args.secret)  # the worker's own: scrubbed from what it stores and returns
    for path in args.secrets_file:
        secrets += read_secrets_file(path)
    if args.graceful_timeout < 0:
        raise ConfigurationError("--graceful-timeout must be 0 or more seconds")
    asyncio.run(
        _work(address, url, args.task_queue, secrets, args.max_cached_workflows,
              args.graceful_timeout)
    )  # fmt: skip
    return 0


async def _work(
    address: str,
    url: str,
    task_queue: str,
    secrets: list[str],
    cached: int | None,
    graceful_s: float,
) -> None:
    from loopwright.engines.temporal import connect, run_worker

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def stopping() -> None:
        if not stop.is_set():
            print(f"loopwright worker: stopping: in-flight calls have {graceful_s:g}s to "
                  "finish, then go back to other workers", file=sys.stderr, flush=True)  # fmt: skip
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping)
    client = await connect(address)
    from loopwright.engines.temporal._versions import worker_build_id

    key = getattr(client.data_converter.payload_codec, "key_id", None)
    print(f"loopwright worker: polling {task_queue!r} on {address}, build {worker_build_id()}, "
          f"payloads encrypted with key {key}", file=sys.stderr, flush=True)  # fmt: skip
    await run_worker(
        client, url, task_queue=task_queue, stop=stop, secrets=secrets,
        max_cached_workflows=cached, graceful_timeout_s=graceful_s,
    )  # fmt: skip
    print("loopwright worker: stopped", file=sys.stderr, flush=True)


def run_on_temporal(
    args: argparse.Namespace, make_spec: Callable[[argparse.Namespace], RunSpec]
) -> int:
    """`loopwright run --engine temporal`: start the workflow, show its events, exit 0/1."""
    from loopwright.cli._task_temporal import gate_decider

    address, url = needs_temporal(args)
    if args.secret or args.secrets_file:
        raise ConfigurationError(
            "--secret/--secrets-file are not taken with --engine temporal (they would travel "
            "through Temporal): give them to the workers: loopwright worker --secrets-file PATH"
        )
    store = open_store(url)
    view: JsonLinesView | LiveView | None = None
    try:
        if args.continue_run:  # a follow-up of a stopped run, as on the embedded engine
            from loopwright.cli._run import follow_up_spec

            spec = follow_up_spec(args, store)
        else:
            spec = make_spec(args)
        view = JsonLinesView() if args.json else LiveView()
        outcome = asyncio.run(
            _run(address, args.task_queue, spec, store, view, parent_run_id=args.continue_run,
                 decide=gate_decider(args, address))
        )  # fmt: skip
    finally:
        if view is not None:
            view.close()
        store.close()
    return 0 if outcome.get("status") == "completed" else 1


async def _run(
    address: str,
    task_queue: str,
    spec: RunSpec,
    store: PersistentStore,
    view: JsonLinesView | LiveView,
    *,
    parent_run_id: str | None = None,
    decide: Callable[[Event], Awaitable[None]] | None = None,
) -> dict[str, Any]:
    """Start the run and follow it."""
    from loopwright.engines.temporal import connect, start_agent_run

    client = await connect(address)
    handle = await start_agent_run(client, spec, task_queue=task_queue, parent_run_id=parent_run_id)
    return await follow_run(handle, store, view, decide=decide)


async def follow_run(
    handle: Any,
    store: PersistentStore,
    view: JsonLinesView | LiveView,
    *,
    after: int = 0,
    decide: Callable[[Event], Awaitable[None]] | None = None,
) -> dict[str, Any]:
    """Show the run's events (after `after`) until its run_finished; Ctrl-C cancels the
    run (as on the embedded engine) and shows it ending. `decide` sees each event (a
    waiting gate: --yes or the terminal decide it)."""
    from temporalio.client import WorkflowFailureError

    result = asyncio.ensure_future(handle.result())
    tail = _Tail(handle.id, store, view, seq=after, decide=decide)
    try:
        return await tail.to_end(result)
    except asyncio.CancelledError:  # Ctrl-C: the run is cancelled on its worker too
        await handle.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(tail.to_end(result), CANCEL_WAIT_S)
        raise
    except WorkflowFailureError as exc:
        raise RunError(f"run {handle.id} failed on Temporal: {exc.cause or exc}") from None
    finally:
        if not result.done():
            result.cancel()
            with contextlib.suppress(BaseException):
                await result


@dataclass
class _Tail:
    """Shows a run's stored events, each once, from where it left off."""

    run_id: str
    store: PersistentStore
    view: JsonLinesView | LiveView
    seq: int = 0
    decide: Callable[[Event], Awaitable[None]] | None = None

    async def to_end(self, result: asyncio.Future[Any]) -> dict[str, Any]:
        """Until the run's run_finished (or its workflow's end)."""
        while True:
            for event in await asyncio.to_thread(self.store.events, self.run_id, after=self.seq):
                self.view.show(event)
                self.seq = event.seq
                if self.decide is not None:
                    await self.decide(event)
                if isinstance(event, RunFinishedEvent):
                    return {"status": event.status, "answer": event.answer}
            more = await asyncio.to_thread(self.store.events, self.run_id, after=self.seq)
            if result.done() and not more:
                outcome: dict[str, Any] = result.result()  # raises when the workflow failed
                return outcome
            await self.store.wait_for_events(self.run_id, after=self.seq, timeout=TAIL_WAIT_S)
