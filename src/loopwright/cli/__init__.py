"""The `loopwright` command line. Each subcommand lives in its own module with `register`."""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import signal
import sys
from collections.abc import Sequence
from typing import NoReturn

from loopwright._extras import install_hint
from loopwright.cli._examples import add_examples
from loopwright.cli._options import apply_config
from loopwright.cli._output import silence
from loopwright.cli._progress import watch_model_unpacking
from loopwright.cli._toolcheck import check_tool_specs
from loopwright.errors import RunError, UsageError
from loopwright.safety.terminal import visible

__all__ = ["main"]

SUBCOMMANDS = {
    "run": "loopwright.cli._run",
    "chat": "loopwright.cli._chat",
    "parse": "loopwright.cli._parse",
    "skills": "loopwright.cli._skills",
    "prompt": "loopwright.cli._skills",
    "eval": "loopwright.cli._eval",
    "task": "loopwright.cli._task",
    "runs": "loopwright.cli._runs",
    "serve": "loopwright.cli._serve",
    "models": "loopwright.cli._models",
    "model-host": "loopwright.cli._model_host",
    "config": "loopwright.cli._config",
    "store": "loopwright.cli._store",
    "worker": "loopwright.cli._worker",
    "dev": "loopwright.cli._dev",
}
"""Command -> the module that registers it (`register`), in the order of `--help`."""
SUBCOMMAND_MODULES = list(dict.fromkeys(SUBCOMMANDS.values()))


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; given a known `command`, only that command's module is
    imported and registered (what its process needs), the parse is the same."""
    parser = argparse.ArgumentParser(
        prog="loopwright",
        description="Run LLM agents and deterministic tasks, and watch every tool call.",
        epilog="Defaults can come from loopwright.toml (see `loopwright config show`).",
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = [SUBCOMMANDS[command]] if command in SUBCOMMANDS else SUBCOMMAND_MODULES
    for name in modules:
        importlib.import_module(name).register(commands)
    add_examples(parser)
    return parser


def command_of(argv: Sequence[str]) -> str | None:
    """The command `argv` names: its first word, unless that is an option (the top-level
    ones, --help and --version, show every command)."""
    return argv[0] if argv and not argv[0].startswith("-") else None


class _Version(argparse.Action):
    """`--version`: read from the installed package's metadata only when asked."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(version_line())
        parser.exit()


def version_line() -> str:
    """`loopwright 0.1.0, Python 3.11.7`."""
    from importlib.metadata import version
    from platform import python_version

    return f"loopwright {version('loopwright')}, Python {python_version()}"


def start_telemetry(args: argparse.Namespace) -> None:
    """`--otel`, or OTEL_EXPORTER_OTLP_ENDPOINT in the environment: trace to OTLP."""
    from loopwright import telemetry

    if not telemetry.wanted(bool(getattr(args, "otel", False))):
        return
    try:
        telemetry.configure_otlp(warn=_warn)
    except ImportError:
        raise UsageError(
            "OpenTelemetry tracing (--otel or OTEL_EXPORTER_OTLP_ENDPOINT) needs the otel "
            "extra: pip install 'loopwright[otel]'"
        ) from None


def _warn(message: str) -> None:
    print(f"loopwright: warning: {message}", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; with no `argv`, this process's own (the program's entry point)."""
    if argv is None:
        take_ctrl_c()
    code = _main(argv)
    if argv is None and "temporalio.bridge.runtime" in sys.modules:
        _exit_without_teardown(code)
    return code


def take_ctrl_c() -> None:
    """Ctrl-C (SIGINT) interrupts the command even when the process was started with SIGINT
    ignored, as a shell without job control starts a background command (`loopwright run
    ... &` in a script, a CI runner's shell): Python then installs no handler of its own
    and asyncio none either, so SIGINT did nothing and the run went on. `worker` and `dev`
    set their own handlers; this gives every other command Python's (KeyboardInterrupt:
    the run is cancelled on its engine, its end shown, exit 130)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _exit_without_teardown(code: int) -> NoReturn:
    """Exit once everything is done and flushed, skipping the interpreter's teardown: a
    Temporal client's Rust threads can crash it (SIGSEGV after the work was done,
    temporalio/sdk-python#300)."""
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser(command_of(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        apply_config(args)
        check_tool_specs(args)
        watch_model_unpacking()
        start_telemetry(args)
        code: int = args.handler(args)
    except UsageError as exc:
        print(f"loopwright: error: {visible(str(exc))}", file=sys.stderr)
        return 2
    except RunError as exc:
        print(f"loopwright: run failed: {visible(str(exc))}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # stdout's reader went away (`| head`): the output ends there
        silence(sys.stdout)
        return 1
    except ModuleNotFoundError as exc:  # an optional extra the command needs
        hint = install_hint(exc, f"`loopwright {args.command}`")
        if hint is None:
            raise
        print(f"loopwright: error: {hint}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("loopwright: interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
