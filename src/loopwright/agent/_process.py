"""What a run takes from the process it runs in: a new run id and the working directory."""

from __future__ import annotations

import os
from pathlib import Path


def working_directory() -> Path:
    """The current directory, resolved. POSIX's getcwd() gives it absolute and without `.`,
    `..` or a symbolic link in it: what `Path.resolve()` would make of it, so it is not
    resolved again there (elsewhere it is)."""
    cwd = Path(os.getcwd())
    return cwd if os.name == "posix" else cwd.resolve()


def new_run_id() -> str:
    """`run_` and 16 random hex digits (64 bits from the OS, as uuid4 takes them)."""
    return f"run_{os.urandom(8).hex()}"
