"""Output that fits where it goes: a rich table on a terminal, and on a pipe plain lines that
never wrap (one record a line, fields separated by tabs), or JSON with `--json`."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table

from loopwright.safety.terminal import markup, visible

CONFIG_EPILOG = (
    "Options marked 'config: KEY' may also be set in loopwright.toml ([{section}] section, in "
    "this project or the user config folder) or as LOOPWRIGHT_<KEY>; a flag wins. See "
    "`loopwright config show`."
)


def is_terminal(stream: TextIO | None = None) -> bool:
    stream = stream or sys.stdout
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def console(*, stderr: bool = False) -> Console:
    """A rich console that wraps only on a terminal: piped, a long line stays one line."""
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, highlight=False, emoji=False, soft_wrap=not is_terminal(stream))


def plain(value: Any) -> str:
    """One field on one line: newlines and tabs become single spaces, control characters
    visible escapes."""
    return " ".join(visible(str(value)).split())


def print_json(data: Any, out: TextIO | None = None) -> None:
    (out or sys.stdout).write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def print_records(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    title: str | None = None,
    out: TextIO | None = None,
) -> None:
    """A table on a terminal; tab-separated lines (a header, then one record a line) on a
    pipe, never cut or wrapped, so `grep` and `cut -f` find every word."""
    stream = out or sys.stdout
    if is_terminal(stream):
        table = Table(*columns, title=title)
        for row in rows:
            table.add_row(*(markup(str(cell)) for cell in row))
        Console(file=stream, highlight=False, emoji=False).print(table)
        return
    stream.write("\t".join(columns) + "\n")
    for row in rows:
        stream.write("\t".join(plain(cell) for cell in row) + "\n")
    stream.flush()


def print_problem(line: str, *, warning: bool = False, out: TextIO | None = None) -> None:
    """A `file:line: problem` line on stderr, as is (coloured on a terminal)."""
    stream = out or sys.stderr
    if is_terminal(stream):
        style = "yellow" if warning else "red"
        Console(file=stream, highlight=False, emoji=False, soft_wrap=True).print(
            f"[{style}]{markup(line)}[/]"
        )
    else:
        stream.write(plain(line) + "\n")
        stream.flush()
