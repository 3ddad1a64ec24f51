"""Run the real `loopwright` command with a clean environment (no user config of the
machine, no LOOPWRIGHT_* of the caller): in this process (`loopwright`) or as a program
(`loopwright_process`); and write scripted-model files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inprocess_cli import invoke

SRC = Path(__file__).resolve().parents[2] / "src"


@dataclass(frozen=True)
class Done:
    code: int
    out: str
    err: str
    seconds: float

    @property
    def both(self) -> str:
        return self.out + self.err


def env_for(home: Path, drop: tuple[str, ...] = (), **extra: str) -> dict[str, str]:
    """The environment of a command: `extra` set, the variables named in `drop` left out."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOPWRIGHT_")}
    env.update(
        PYTHONPATH=str(SRC), HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
        LOOPWRIGHT_STORE=str(home / "runs.db"), PYTHONWARNINGS="ignore",
    )  # fmt: skip
    env.update(extra)
    return {k: v for k, v in env.items() if k not in drop}


def loopwright(
    *args: str,
    home: Path,
    cwd: Path | None = None,
    drop: tuple[str, ...] = (),
    **extra: str,
) -> Done:
    """`loopwright ARGS` in this process, its output captured as pipes would."""
    started = time.monotonic()
    done = invoke(args, env=env_for(home, drop, **extra), cwd=cwd or home)
    return Done(done.code, done.out, done.err, time.monotonic() - started)


def loopwright_process(
    *args: str,
    home: Path,
    cwd: Path | None = None,
    timeout: float = 120,
    drop: tuple[str, ...] = (),
    **extra: str,
) -> Done:
    """`loopwright ARGS` as a program (`python -m loopwright`)."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "loopwright", *args],
        cwd=cwd or home, env=env_for(home, drop, **extra), capture_output=True, text=True,
        timeout=timeout, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    return Done(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def script(path: Path, replies: list[Any]) -> str:
    """A scripted model spec whose replies are `replies` (each a JSON reply object)."""
    path.write_text(json.dumps([json.dumps(reply) for reply in replies]), encoding="utf-8")
    return f"scripted:{path}"
