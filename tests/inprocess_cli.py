"""Run the `loopwright` command line in this process, as a program would see it.

`invoke(argv)` calls `loopwright.cli.main(argv)` with the environment, working folder and
standard input the caller gives (restored afterwards), its stdout and stderr captured as a
pipe would capture them (not a terminal), `SystemExit` turned into the exit code, and an
uncaught exception printed as the interpreter would print it (a traceback, exit code 1), and
logging unconfigured (a warning goes to stderr, not to pytest's log capture). The
command imports the user's tool files anew, as a new process would (what this process had
imported of them is put back afterwards). Tests of the
process itself (exit codes on signals, the console script, pipes, a terminal, import time)
start a real process instead and carry the `subprocess` marker.
"""

from __future__ import annotations

import io
import logging
import os
import sys
import tempfile
import traceback
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: Modules a command makes from a user's file: a new process would import them anew.
_PER_RUN_MODULES = ("loopwright_user_tools_", "loopwright_eval_tools_")


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """This process's environment without LOOPWRIGHT_* variables, with `home` as HOME and its
    config folder, the run store in it, the embedded model in the process that runs it, and
    `extra` set: no user config reaches a test."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOPWRIGHT_")}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        LOOPWRIGHT_STORE=str(home / "runs.db"),
        LOOPWRIGHT_MODEL_HOST="off",  # no model host outlives the test (conftest.py)
        LOOPWRIGHT_MODEL_HOST_DIR=str(home / "model-host"),  # its turn: not the user's
    )
    env.update(extra)
    return env


@dataclass(frozen=True)
class CliRun:
    code: int
    out: str
    err: str

    @property
    def both(self) -> str:
        return self.out + self.err


class _Pipe(io.TextIOWrapper):
    """A text stream over a file, like a pipe's: no terminal, a `buffer` for raw writes, a
    file descriptor a child process can inherit (an MCP server's stderr). A module that
    kept it as a default (`errlog=sys.stderr`) keeps it open: closing is left to the GC."""

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile()  # noqa: SIM115 - kept open: see the docstring
        super().__init__(self.file, encoding="utf-8", errors="replace", write_through=True)

    def text(self) -> str:
        self.flush()
        self.file.seek(0)
        return self.file.read().decode("utf-8", "replace").replace("\r\n", "\n")

    def close(self) -> None:  # the CLI closes stderr on a broken pipe: keep what it wrote
        self.flush()

    def __del__(self) -> None:
        io.TextIOWrapper.close(self)


@contextmanager
def _as_a_process(env: Mapping[str, str] | None, cwd: Path | None, stdin: str) -> Iterator[None]:
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    earlier = {name: sys.modules.pop(name) for name in list(sys.modules) if _per_run(name)}
    root = logging.getLogger()
    saved_handlers, root.handlers = root.handlers, []  # unconfigured, as in a new process
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin = io.StringIO(stdin)
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        root.handlers = saved_handlers
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for name in [name for name in sys.modules if _per_run(name)]:
            del sys.modules[name]
        sys.modules.update(earlier)


def _per_run(name: str) -> bool:
    return name.startswith(_PER_RUN_MODULES)


def invoke(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    stdin: str = "",
) -> CliRun:
    """`loopwright ARGV` in this process: (exit code, stdout, stderr)."""
    from loopwright.cli import main

    out, err = _Pipe(), _Pipe()
    with _as_a_process(env, cwd, stdin):
        sys.stdout, sys.stderr = out, err
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = _exit_code(exc, err)
        except Exception:  # the interpreter prints it and exits with 1
            traceback.print_exc(file=err)
            code = 1
    return CliRun(code, out.text(), err.text())


def _exit_code(exc: SystemExit, err: io.TextIOBase) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=err)
    return 1
