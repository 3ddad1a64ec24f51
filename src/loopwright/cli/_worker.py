"""`loopwright worker`: execute the runs started with `--engine temporal`.

    loopwright worker --temporal HOST:7233 --store postgresql://...     # on any number of hosts
    loopwright worker ... --allow-tools ./tools.py --allow-commands     # what its runs may do
    loopwright worker ... --agent my_agents:support    # the runs of `run --agent my_agents:support`

What a worker lets its runs do is its own flags' (engines/temporal/_allows.py), never the
spec a client sends: by default nothing that runs a program or loads code a spec names.
`--agent` loads an agent built in Python when the worker starts (cli/_agent_ref.py): the
runs whose spec names that same reference run it (engines/temporal/_worker_agent.py).
The flags have no config key: what a worker allows is said where it is started.

Starting, following and deciding those runs is the Runtime's (its TemporalEngine), from any
command given `--engine temporal` or `--temporal HOST:PORT`. The worker says on stdout, one
line each, which runs it takes and how they end, and when it stops, which in-flight calls
finished and which it handed back to other workers.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from typing import TYPE_CHECKING, Any

from loopwright.cli._options import SECRET, SECRETS_FILE, TEMPORAL, Opt, add_options, opt
from loopwright.cli._output import CONFIG_EPILOG
from loopwright.cli._shared import needs_temporal, secrets_from_args
from loopwright.errors import ConfigurationError

if TYPE_CHECKING:
    from loopwright.agent import AgentExecutor
    from loopwright.engines.temporal import WorkerAllows

WORKER_OPTIONS = (
    Opt(
        TEMPORAL.flags,
        "Temporal frontend HOST:PORT to poll",
        TEMPORAL.group,
        TEMPORAL.key,
        kwargs=TEMPORAL.kwargs,
    ),
    opt("--task-queue", help="Temporal task queue to poll", group="engine", key="task_queue"),
    opt(
        "--store",
        help="the run store shared with the commands that start runs: a postgresql:// URL",
        group="store",
        key="store",
        metavar="URL",
    ),
    SECRET,
    SECRETS_FILE,
    opt(
        "--max-cached-workflows",
        help="workflows kept in memory between their tasks; 0: replay each from its history "
        "every time, a determinism check",
        group="engine",
        key="max_cached_workflows",
        type=int,
        metavar="N",
    ),
    opt(
        "--graceful-timeout",
        help="on SIGTERM or Ctrl-C, how long in-flight model and tool calls may take to "
        "finish before they are handed back to other workers",
        group="engine",
        key="graceful_timeout",
        type=float,
        metavar="S",
    ),
    opt(
        "--allow-commands",
        help="let runs use run_command and a skill's commands (programs on this host, as the "
        "worker's user)",
        group="tools",
        action="store_true",
        default=False,
        default_text="off",
    ),
    opt(
        "--allow-verify",
        help="let runs name a verify command (a shell command run on this host at the end)",
        group="tools",
        action="store_true",
        default=False,
        default_text="off",
    ),
    opt(
        "--allow-tools",
        help="code runs may load: a tool file, task file or skill folder (a file, or a folder "
        "and everything under it), or a Python module name and its submodules (for "
        "module:function tools); repeatable, or comma-separated. Built-in tools need none",
        group="tools",
        action="append",
        default=[],
        default_text="none",
        metavar="PATH",
    ),
    opt(
        "--allow-mcp",
        help="an MCP server runs may open: its command or URL exactly as runs name it; repeatable",
        group="tools",
        action="append",
        default=[],
        default_text="none",
        metavar="SERVER",
    ),
    opt(
        "--agent",
        help="an agent built in Python, module:attribute or path/to/file.py:attribute (an "
        "AgentExecutor, or a function returning one), loaded when the worker starts: the runs "
        "started with this same --agent (run --agent SPEC --engine temporal) run it, with its "
        "model, tools and options",
        group="tools",
        default_text="none",
        metavar="SPEC",
    ),
    opt(
        "--sticky-timeout",
        help="how long a run's next step waits for this worker (which holds the run in "
        "memory) before any worker of the queue takes it: how long its runs wait if it dies",
        group="engine",
        key="sticky_timeout",
        type=float,
        metavar="S",
    ),
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "worker",
        help="run agent and task runs as a Temporal worker",
        description="Execute the agent and task runs started with --engine temporal (until "
        "SIGTERM or Ctrl-C). Start one on every host that should share the work; they all use one "
        "Temporal server and one Postgres store.",
        epilog=CONFIG_EPILOG.format(section="worker"),
    )
    add_options(parser, WORKER_OPTIONS, "worker")
    parser.set_defaults(handler=worker_command)


def worker_command(args: argparse.Namespace) -> int:
    from loopwright.engines.temporal import WorkerAllows

    address, url = needs_temporal(args)
    secrets = secrets_from_args(args)  # the worker's own: scrubbed from what it stores/returns
    if args.graceful_timeout < 0:
        raise ConfigurationError("--graceful-timeout must be 0 or more seconds")
    if args.sticky_timeout <= 0:
        raise ConfigurationError("--sticky-timeout must be more than 0 seconds")
    allows = WorkerAllows.of(
        commands=args.allow_commands, verify=args.allow_verify,
        tools=args.allow_tools, mcp=args.allow_mcp, agent=args.agent,
    )  # fmt: skip
    agent = None
    if allows.agent is not None:  # loaded before anything else: a bad reference is one line
        from loopwright.cli._agent_ref import load_agent
        from loopwright.engines.temporal._worker_agent import hold_worker_agent

        agent = load_agent(allows.agent)
        hold_worker_agent(allows.agent, agent)  # one it cannot run (it needs deps): refused
    asyncio.run(
        _work(address, url, args.task_queue, secrets, args.max_cached_workflows,
              args.graceful_timeout, args.sticky_timeout, allows, agent)
    )  # fmt: skip
    return 0


async def _work(
    address: str,
    url: str,
    task_queue: str,
    secrets: list[str],
    cached: int | None,
    graceful_s: float,
    sticky_s: float,
    allows: WorkerAllows,
    agent: AgentExecutor[Any, Any] | None,
) -> None:
    from loopwright.engines.temporal import connect, run_worker
    from loopwright.engines.temporal._report import WorkerReport
    from loopwright.engines.temporal._versions import worker_build_id

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    client = await connect(address)
    key = getattr(client.data_converter.payload_codec, "key_id", None)
    say(f"polling {task_queue!r} on {address}, build {worker_build_id()}, payloads encrypted "
        f"with key {key}; runs may use: {allows.describe()}")  # fmt: skip
    await run_worker(
        client, url, task_queue=task_queue, stop=stop, secrets=secrets,
        max_cached_workflows=cached, graceful_timeout_s=graceful_s, report=WorkerReport(say),
        sticky_timeout_s=sticky_s, allows=allows, agent=agent,
    )  # fmt: skip


def say(line: str) -> None:
    """One line of what the worker does, on stdout (the runs it takes and ends, what it did
    with its in-flight calls when it stopped); warnings go to stderr."""
    print(f"loopwright worker: {line}", flush=True)
