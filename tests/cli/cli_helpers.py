"""Drive the real `loopwright` command: in this process with its output piped (`cli`), as a
program with its output piped (`cli_process`), or on a pseudo-terminal (`cli_tty`)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass
from pathlib import Path

from inprocess_cli import invoke

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
SRC = Path(__file__).resolve().parents[2] / "src"


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str
    seconds: float


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """A clean environment: no user config, no LOOPWRIGHT_* from the caller, store in `home`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOPWRIGHT_")}
    env.update(
        PYTHONPATH=str(SRC),
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        LOOPWRIGHT_STORE=str(home / "runs.db"),
        PYTHONWARNINGS="ignore",
    )
    env.update(extra)
    return env


def cli(
    *args: str,
    home: Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    stdin: str = "",
) -> Result:
    """`loopwright ARGS` in this process, stdout and stderr captured as pipes would."""
    started = time.monotonic()
    done = invoke(args, env=env or cli_env(home), cwd=cwd or home, stdin=stdin)
    return Result(done.code, done.out, done.err, time.monotonic() - started)


def cli_process(
    *args: str,
    home: Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    stdin: str | None = None,
) -> Result:
    """`loopwright ARGS` as a program (`python -m loopwright`), stdout and stderr on pipes;
    `stdin`: what it reads (by default nothing: /dev/null)."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "loopwright", *args],
        cwd=cwd or home,
        env=env or cli_env(home),
        capture_output=True,
        text=True,
        timeout=timeout,
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
    )
    return Result(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def cli_tty(
    *args: str,
    home: Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    columns: int = 100,
    timeout: float = 120,
) -> Result:
    """`loopwright ARGS` on a pseudo-terminal (stdout and stderr both), `columns` wide."""
    argv = [sys.executable, "-m", "loopwright", *args]
    return cli_tty_command(
        argv, env=env or cli_env(home), cwd=cwd or home, columns=columns, timeout=timeout
    )


def cli_tty_command(
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: Path | None = None,
    columns: int = 100,
    timeout: float = 120,
) -> Result:
    """Any command on a pseudo-terminal; its output with colours and cursor moves removed."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    environment = dict(env)
    environment.update(TERM="xterm-256color", COLUMNS=str(columns))
    environment.pop("NO_COLOR", None)
    started = time.monotonic()
    process = subprocess.Popen(
        argv, cwd=cwd, env=environment, stdin=slave, stdout=slave, stderr=slave, close_fds=True
    )
    os.close(slave)
    chunks: list[bytes] = []
    try:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        code = process.wait(timeout=timeout)
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
            process.wait()
    raw = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    text = ANSI.sub("", raw)  # colours and cursor moves; the words stay
    return Result(code, text, "", time.monotonic() - started)
