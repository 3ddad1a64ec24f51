"""Output that fits where it goes: a rich table on a terminal, and on a pipe plain lines that
never wrap (one record a line, fields separated by tabs), or JSON with `--json`."""

from __future__ import annotations

import json
import os
import select
import stat
import sys
from collections.abc import Mapping, Sequence
from typing import IO, Any, Literal, TextIO

from rich.cells import cell_len
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


class _Console(Console):
    """A rich console whose closed pipe is a BrokenPipeError for the command to handle
    (rich's own exits the process, and a run the command started would be left behind)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        silence(self.file)
        raise BrokenPipeError("stdout was closed")


def console(*, stderr: bool = False) -> Console:
    """A rich console that wraps only on a terminal: piped, a long line stays one line."""
    stream = sys.stderr if stderr else sys.stdout
    return _Console(stderr=stderr, highlight=False, emoji=False, soft_wrap=not is_terminal(stream))


def is_pipe(stream: IO[str]) -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(stream.fileno()).st_mode)
    except (AttributeError, ValueError, OSError):
        return False


def reader_gone(stream: IO[str]) -> bool:
    """Whether `stream` is a pipe whose reader has gone away (`| head` exited): the next
    write would fail. False for a terminal, a file, or where poll() is not offered."""
    if not is_pipe(stream) or not hasattr(select, "poll"):
        return False
    try:
        poller = select.poll()
        poller.register(stream.fileno(), select.POLLOUT)
        return any(flags & (select.POLLERR | select.POLLHUP) for _, flags in poller.poll(0))
    except (AttributeError, ValueError, OSError):
        return False


def silence(stream: IO[str]) -> None:
    """A stream whose reader went away (`| head`): what it still holds, and anything written
    to it later, goes to /dev/null (no error when Python flushes it at exit)."""
    try:
        fd = stream.fileno()
    except (AttributeError, ValueError, OSError):  # not a file (a test's capture)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def plain(value: Any) -> str:
    """One field on one line: newlines and tabs become single spaces, control characters
    visible escapes."""
    return " ".join(visible(str(value)).split())


def print_json(data: Any, out: TextIO | None = None) -> None:
    (out or sys.stdout).write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


Fit = Mapping[str, Literal["cut", "wrap"]]
"""How a table's free-text columns give way on a narrow terminal: cut with `…` (one line
a record) or wrapped. Every other column is printed whole (ids stay whole, to be pasted)."""
MIN_FREE_TEXT = 12
"""A free-text column is never made narrower than this (or its header)."""


def print_records(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    title: str | None = None,
    out: TextIO | None = None,
    fit: Fit | None = None,
) -> None:
    """A table on a terminal; tab-separated lines (a header, then one record a line) on a
    pipe, never cut or wrapped, so `grep` and `cut -f` find every word. With `fit`, only
    the columns it names give way to the terminal's width."""
    stream = out or sys.stdout
    if is_terminal(stream):
        console = Console(file=stream, highlight=False, emoji=False)
        table = Table(title=title)
        if fit is None:
            for column in columns:
                table.add_column(column)
        else:
            widths = fitted_widths(columns, rows, fit, console.width)
            console.width = max(console.width, table_width(widths))  # ids are never cut
            for column, size in zip(columns, widths, strict=True):
                how = fit.get(column)
                table.add_column(
                    column,
                    width=size,
                    no_wrap=how != "wrap",
                    overflow="ellipsis" if how == "cut" else "fold",
                )
        for row in rows:
            table.add_row(*(markup(str(cell)) for cell in row))
        console.print(table)
        return
    stream.write("\t".join(columns) + "\n")
    for row in rows:
        stream.write("\t".join(plain(cell) for cell in row) + "\n")
    stream.flush()


def table_width(widths: Sequence[int]) -> int:
    """A table's width with its borders and padding (`┃ a ┃ b ┃`)."""
    return sum(widths) + 3 * len(widths) + 1


def fitted_widths(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], fit: Fit, width: int
) -> list[int]:
    """Each column's width: its longest line, the free-text ones (`fit`) narrowed, the
    widest first, until the table fits `width` or each is at MIN_FREE_TEXT."""
    natural = [cell_len(column) for column in columns]
    for row in rows:
        for index, cell in enumerate(row):
            longest = max((cell_len(line) for line in visible(str(cell)).split("\n")), default=0)
            natural[index] = max(natural[index], longest)
    free = sorted((i for i, c in enumerate(columns) if c in fit), key=lambda i: natural[i])
    widths = list(natural)
    room = width - table_width(natural) + sum(natural[i] for i in free)
    for done, index in enumerate(free):
        floor = min(natural[index], max(MIN_FREE_TEXT, cell_len(columns[index])))
        widths[index] = max(floor, min(natural[index], room // (len(free) - done)))
        room -= widths[index]
    return widths


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
