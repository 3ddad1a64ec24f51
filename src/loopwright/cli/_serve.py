"""`loopwright serve`: the HTTP API, live events and the dashboard on one port."""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loopwright.cli._options import SERVE as SERVE_OPTIONS
from loopwright.cli._options import add_options
from loopwright.cli._output import CONFIG_EPILOG
from loopwright.cli._shared import check_heartbeat, open_cli_store, temporal_engine
from loopwright.errors import ConfigurationError
from loopwright.store import RunStore
from loopwright.store._memory import memory_store

if TYPE_CHECKING:
    from loopwright.agent import AgentExecutor
    from loopwright.server import TaskLauncher


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "serve",
        help="serve the HTTP API and the web dashboard",
        epilog=CONFIG_EPILOG.format(section="serve"),
    )
    add_options(parser, SERVE_OPTIONS, "serve")
    parser.set_defaults(handler=serve_command)


def open_run_store(path: str | None) -> RunStore:
    """The store at `path`, a SQLite file or a postgresql:// URL (default: $LOOPWRIGHT_STORE
    or ~/.loopwright/runs.db); `:memory:` keeps runs in memory only."""
    if path == ":memory:":
        return memory_store()
    return open_cli_store(path)


def serve_command(args: argparse.Namespace) -> int:
    import uvicorn

    from loopwright._net import is_loopback
    from loopwright.server import ServerConfig, create_app, server_runtime
    from loopwright.server._config import LOOPBACK_HOSTS, check_bind, load_token_file

    if not 0 <= args.port <= 65535:
        raise ConfigurationError(f"--port {args.port}: must be between 0 and 65535")
    tokens = load_token_file(args.token_file) if args.token_file else None
    check_bind(args.host, tokens)
    workspace = Path(args.workspace).resolve()
    tasks = task_launcher(args, workspace)
    check_heartbeat(args)
    store = open_run_store(args.store)
    engine = None
    if args.engine == "temporal":  # runs are workflows; the store is the shared Postgres
        engine = temporal_engine(args, store)
    runtime = server_runtime(store, engine=engine)
    agent = served_agent(args.agent) if args.agent and engine is None else None
    workers_agent = None
    if args.agent and engine is not None:  # the workers load it (worker --agent): not here
        from loopwright.cli._agent_ref import checked_ref

        workers_agent = checked_ref(args.agent)
    config = ServerConfig(
        runtime=runtime,
        tokens=tokens,
        default_model=args.model,
        workspace=str(workspace),
        tasks=tasks,
        allowed_hosts=LOOPBACK_HOSTS if is_loopback(args.host) else None,
        allow_base_url=args.allow_base_url,
        allowed_models=frozenset(args.allow_model or ()),
        agent=agent,
        workers_agent=workers_agent,
    )
    sock = listen(args.host, args.port)
    print(serving_line(args, sock, tokens, on_temporal=engine is not None), file=sys.stderr)
    sys.stderr.flush()
    server = uvicorn.Server(
        uvicorn.Config(create_app(config), log_level="warning", ws="websockets-sansio")
    )
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        config.runtime.store.close()
    return 0


def task_launcher(args: argparse.Namespace, workspace: Path) -> TaskLauncher | None:
    """The task file reader: only for a server that offers task files (`--tasks`)."""
    if not args.tasks:
        return None
    from loopwright.server import FolderTaskLauncher
    from loopwright.tasks import TaskSettings

    settings = TaskSettings(workspace=workspace, state_root=Path("~/.loopwright").expanduser())
    return FolderTaskLauncher(args.tasks, settings=settings, default_model=args.model)


def serving_line(
    args: argparse.Namespace,
    sock: socket.socket,
    tokens: dict[str, str] | None,
    *,
    on_temporal: bool,
) -> str:
    """What the server says as it starts: where it listens, who may call it, where its
    runs run."""
    host, port = sock.getsockname()[:2]
    where = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
    auth = f"{len(tokens)} token(s)" if tokens else "no tokens, loopback only"
    runs_on = f", runs on Temporal at {args.temporal}" if on_temporal else ""
    runs_on += f", agent {args.agent}" if args.agent else ""
    return f"loopwright: serving the dashboard and the API on {where} ({auth}{runs_on})"


def served_agent(spec: str) -> AgentExecutor[Any, Any]:
    """The agent `serve --agent` names: one that runs in this process, given no deps."""
    from loopwright.cli._agent_ref import load_agent

    agent = load_agent(spec)
    try:
        agent.check_deps(None)
    except TypeError as exc:
        raise ConfigurationError(
            f"--agent {spec!r}: the server gives its runs no deps ({exc})"
        ) from None
    return agent


def listen(host: str, port: int) -> socket.socket:
    """A listening socket (port 0: any free port; the message names the real one)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ConfigurationError(f"--host {host}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise ConfigurationError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(2048)
    return sock
