"""What the subcommands share (each imports its helpers from here, never from another
subcommand): the store and the Runtime a command works with, the engine options, the one
terminal decider of waiting gates, and deciding a gate; showing a run to its end is in
_follow.py.

Every lifecycle operation goes through the Runtime, whichever engine executes the run.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import getpass
import os
import shlex
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from rich.console import Console

from loopwright.cli._follow import Decide, View
from loopwright.cli._options import TEMPORAL_OF_RUN, Opt, add_options, opt
from loopwright.cli._output import console
from loopwright.errors import ConfigurationError, StoreError, UsageError
from loopwright.events import ConfirmationRequiredEvent
from loopwright.safety.terminal import markup as escape  # shows control characters
from loopwright.safety.terminal import visible
from loopwright.store import PersistentStore, RunStore, open_store, redact_url
from loopwright.store._open import store_location
from loopwright.store._pg_errors import is_postgres_url

if TYPE_CHECKING:  # imported where a command runs or reaches runs (not `runs list`)
    from loopwright.runtime import GateDecided, RunEngine, Runtime
    from loopwright.runtime._engine import Delivery

T = TypeVar("T")

STORE_OPTION = opt(
    "--store", help="SQLite file or Postgres URL", group="store", key="store", metavar="PATH"
)


def add_store_argument(parser: argparse.ArgumentParser, section: str = "run") -> None:
    add_options(parser, [STORE_OPTION], section)


def store_from_args(args: argparse.Namespace) -> PersistentStore:
    return open_cli_store(getattr(args, "store", None))


def open_cli_store(location: str | None, *, migrate: bool = False) -> PersistentStore:
    """The store a command works with. A store that cannot be opened as it is (no schema
    yet or an older one, a newer one, not a loopwright store, no such database, a login
    refused, a server not reached) is a set-up problem, exit status 2, not a failed run:
    the message says what to do, with the store's own location in the command it names."""
    try:
        return open_store(location, migrate=migrate)
    except StoreError as exc:
        where = store_to_copy(store_location(location))
        raise ConfigurationError(str(exc).replace("--store URL`", f"--store {where}`")) from None


def store_to_copy(location: str) -> str:
    """The store as a shell word in a command printed for the user to copy, which must work
    as pasted: the location as given, but never a password. A URL with one is
    `"$LOOPWRIGHT_STORE"` when that variable holds it, else the URL without its password
    (the PostgreSQL client then reads it from PGPASSWORD or ~/.pgpass)."""
    hidden = redact_url(location)
    if hidden == location:
        return shlex.quote(location)
    if os.environ.get("LOOPWRIGHT_STORE") == location:
        return '"$LOOPWRIGHT_STORE"'
    return shlex.quote(_without_password(hidden))


def _without_password(hidden: str) -> str:
    """A URL whose password `redact_url` masked, with no password at all."""
    without = hidden.replace(":***@", "@", 1)
    try:
        parts = urlsplit(without)
    except ValueError:
        return without
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    query = urlencode([(key, value) for key, value in pairs if key.lower() != "password"])
    return urlunsplit(parts._replace(query=query))


def secrets_from_args(args: argparse.Namespace) -> list[str]:
    """The secrets the user named: scrubbed everywhere, never recorded in the run."""
    from loopwright.safety.scrub import read_secrets_file  # the scrubber: commands that run

    secrets = list(getattr(args, "secret", None) or [])
    files = getattr(args, "secrets_file", None) or []
    if isinstance(files, str):  # from loopwright.toml or LOOPWRIGHT_SECRETS_FILE: a, b
        files = [name.strip() for name in files.split(",") if name.strip()]
    for path in files:
        secrets += read_secrets_file(path)
    return secrets


CANDIDATES_SHOWN = 5
"""An ambiguous run id prefix: how many of the runs it matches are named."""


def whole_run_id(store: RunStore, given: str, *, missing_ok: bool = False) -> str:
    """The run id the user gave, or the one run whose id starts with it (a unique prefix
    is enough, as `runs list` may show an id cut with `…`). Several runs: a UsageError that
    names them; none: RunNotFound (with `missing_ok`, `given` as it is)."""
    text = given.strip().removesuffix("…").removesuffix("...")
    if not text or store.get_run(text) is not None:
        return text or given
    found = store.run_ids_starting(text, limit=CANDIDATES_SHOWN + 1)
    if len(found) == 1:
        return found[0]
    if found:
        more = ", …" if len(found) > CANDIDATES_SHOWN else ""
        named = ", ".join(found[:CANDIDATES_SHOWN]) + more
        raise UsageError(f"run id {text!r} is the start of several runs' ids: {named}; "
                         "give more of it")  # fmt: skip
    if missing_ok:
        return given
    store.find_run(given)  # RunNotFound, naming the store
    return given


# --- the engine and the Runtime ------------------------------------------------------------


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


def temporal_engine(args: argparse.Namespace, store: RunStore) -> RunEngine:
    """The Temporal engine of `--temporal HOST:PORT` (its notices go to stderr)."""
    from loopwright.engines.temporal import EngineSettings, TemporalEngine

    address, _ = needs_temporal(args)
    heartbeat = getattr(args, "heartbeat_timeout", None)
    settings = EngineSettings(heartbeat_timeout_s=heartbeat) if heartbeat else None
    err = console(stderr=True)

    def notice(text: str) -> None:
        err.print(text, style="yellow", soft_wrap=True, markup=False)

    queue = getattr(args, "task_queue", None)  # None: `loopwright`; a resumed run: its own
    engine = TemporalEngine(address, store, task_queue=queue, settings=settings, notice=notice)
    wait = getattr(args, "worker_wait", None)
    if wait is not None:
        if wait <= 0:
            raise ConfigurationError(f"--worker-wait {wait:g}: must be more than 0")
        engine.approve_wait_s = wait
    return engine


def runtime_from_args(args: argparse.Namespace, store: RunStore) -> Runtime:
    """The Runtime of a command: new runs start on `--engine` (embedded by default: a
    Temporal address from loopwright.toml alone does not send them there); a command on
    recorded runs (no --engine of its own) reaches one on Temporal with `--temporal`."""
    from loopwright.runtime import Runtime  # the agent loop and the task runner

    named = getattr(args, "engine", None)
    engine = None
    if named == "temporal" or (named is None and getattr(args, "temporal", None)):
        engine = temporal_engine(args, store)
    return Runtime(store, engine=engine, mcp_trusted=mcp_trusted_from_args(args))


def run_then_close(
    args: argparse.Namespace,
    store: RunStore,
    view: View,
    command: Callable[[Runtime], Awaitable[T]],
) -> T:
    """What `command` returns, run with the command's Runtime over `store`; then the
    Runtime, the view and the store are closed, whatever happened (a command that runs a
    stored run on: `runs resume`, `runs fork`)."""

    async def run() -> T:
        runtime = runtime_from_args(args, store)
        try:
            return await command(runtime)
        finally:
            runtime.close()

    try:
        return asyncio.run(run())
    finally:
        view.close()
        store.close()


def mcp_trusted_from_args(args: argparse.Namespace) -> list[str]:
    """The MCP servers the user trusts (`--mcp-trusted`, the user's `mcp_trusted`)."""
    named = getattr(args, "mcp_trusted", None) or []
    if isinstance(named, str):  # from loopwright.toml or LOOPWRIGHT_MCP_TRUSTED: a, b
        named = [server.strip() for server in named.split(",") if server.strip()]
    return list(named)


def check_heartbeat(args: argparse.Namespace) -> None:
    heartbeat = getattr(args, "heartbeat_timeout", None)
    if heartbeat is not None and heartbeat <= 0:
        raise ConfigurationError(f"--heartbeat-timeout {heartbeat:g}: must be more than 0")


# --- showing a run, deciding its gates --------------------------------------------------------


def reach_flags(args: argparse.Namespace) -> str:
    """The options another command needs to reach this command's runs, as they were given
    (a flag, LOOPWRIGHT_STORE, loopwright.toml): ` --store PATH` unless it is the default,
    ` --temporal HOST:PORT` for a run on Temporal. A store URL's password is never shown
    (`store_to_copy`)."""
    flags = ""
    store = getattr(args, "store", None)
    if store:
        flags += f" --store {store_to_copy(str(store))}"
    temporal = getattr(args, "temporal", None)
    if temporal:
        flags += f" --temporal {shlex.quote(str(temporal))}"
    return flags


def asks_at_terminal(args: argparse.Namespace) -> bool:
    """Whether `terminal_decider` asks a person each gate's question (the prompt shows it)."""
    return not getattr(args, "yes", False) and sys.stdin.isatty()


def live_view(args: argparse.Namespace, console: Console | None = None) -> View:
    """The view of a command's run: `--json` lines, else the live view."""
    from loopwright.cli._view import JsonLinesView, LiveView

    if getattr(args, "json", False):
        return JsonLinesView()
    return LiveView(console, asks=asks_at_terminal(args), flags=reach_flags(args))


def waiting_line(
    event: ConfirmationRequiredEvent, command: str = "runs approve", flags: str = ""
) -> str:
    """A gate waits for a decision from another process, until when; `flags` reach the
    run's store and engine from another shell."""
    until = datetime.datetime.fromtimestamp(event.ts + event.timeout_s).astimezone()
    return (
        f"gate {event.request_id} ({event.step}) waits for approval from `loopwright serve` "
        f"(the dashboard or POST /api/runs/{event.run_id}/gates/{event.request_id}) or "
        f"`loopwright {command} {event.run_id} {event.request_id}{flags} "
        f"[--reject --reason ...]`, until {until.isoformat(timespec='seconds')} "
        f"({event.timeout_s:g}s)"
    )


def terminal_decider(
    args: argparse.Namespace, runtime: Runtime, command: str = "runs approve"
) -> Decide:
    """The one decider of a command's waiting gates: `--yes` approves each; a terminal asks
    `[y/N/reason to refuse]` (anything else than y, n or nothing refuses, with that reason);
    otherwise stderr says how to decide from elsewhere, and the gate waits."""
    err = console(stderr=True)

    async def decide(event: ConfirmationRequiredEvent) -> None:
        if getattr(args, "yes", False):
            await runtime.approve(event.run_id, event.request_id, True, "--yes")
        elif asks_at_terminal(args):
            prompt = visible(f"? {event.message} [y/N/reason to refuse] ")  # a model's arguments
            answer = await asyncio.to_thread(input, prompt)
            word = answer.strip()
            approved = word.lower() in {"y", "yes"}
            reason = "" if approved or word.lower() in {"", "n", "no"} else word
            await runtime.approve(event.run_id, event.request_id, approved, "terminal", reason)
        else:
            line = waiting_line(event, command, reach_flags(args))
            err.print(escape(line), style="dim", soft_wrap=True)

    return decide


# --- deciding a gate: `runs approve`, `task approve` ------------------------------------------

DECISION_OPTIONS: list[Opt] = [
    opt("--reject", help="reject instead of approving", group="decision", action="store_true"),
    opt("--reason", help="why (the agent sees it when rejected)", group="decision"),
    opt("--by", help="who decides", group="decision", default_text="cli:<user name>"),
    TEMPORAL_OF_RUN,
    opt(
        "--worker-wait",
        help="a run on Temporal: how long the decision waits for a worker that polled its task "
        "queue lately to take it, before it is stored for the next worker",
        group="engine",
        type=float,
        metavar="S",
        default_text="30",
    ),
]
WHERE: dict[Delivery, str] = {
    "process": "taken by its run",
    "store": "left in the store for its process",
    "engine": "sent to its workflow on Temporal",
    "queued": "stored; it waits for a worker",
}


def add_decision_arguments(approve: argparse.ArgumentParser, kind: str) -> None:
    """RUN_ID [GATE] --reject --reason --by --temporal and the store."""
    whose = f"the {kind} run's id" if kind != "run" else "the run's id"
    approve.add_argument("run_id", help=f"{whose} (a unique prefix is enough)")
    approve.add_argument(
        "gate_id", nargs="?", default=None, help="the gate's request id (default: the one waiting)"
    )
    add_options(approve, DECISION_OPTIONS, None)
    add_store_argument(approve, kind)
    approve.set_defaults(handler=approve_command)


def user_name() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


def approve_command(args: argparse.Namespace) -> int:
    """Decide a run's gate through the Runtime (whoever executes it; it checks the gate)."""
    from loopwright.run_context import MAX_REASON_CHARS

    store = store_from_args(args)
    approved, by, why = not args.reject, args.by or user_name(), args.reason or ""
    if len(why) > MAX_REASON_CHARS:
        raise ConfigurationError(f"--reason: at most {MAX_REASON_CHARS:,} characters")

    async def decide(run_id: str) -> GateDecided:
        runtime = runtime_from_args(args, store)
        try:
            return await runtime.approve(run_id, args.gate_id, approved, by, why)
        finally:
            runtime.close()

    try:
        run_id = whole_run_id(store, args.run_id)
        decided = asyncio.run(decide(run_id))
    finally:
        store.close()
    verdict = "approved" if approved else "rejected"
    reason = f": {why}" if why else ""
    where = WHERE[decided.delivered]
    print(visible(f"{verdict} gate {decided.gate_id} of run {run_id} by {by}{reason} ({where})"))
    return 0
