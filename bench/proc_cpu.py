"""CPU seconds used by processes and their threads, read from Linux /proc (no profiler
needed): a process with the children it has reaped (PostgreSQL's backends), and one
process's threads grouped by name (a worker's Python thread, its Rust core threads, its
database threads). For benchmarks that say which process limits a figure."""

from __future__ import annotations

import os
import re
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def _stat(path: Path) -> tuple[str, list[str]]:
    """The name and the fields after it of a /proc stat file."""
    text = path.read_text()
    name = text[text.index("(") + 1 : text.rindex(")")]
    return name, text.rsplit(")", 1)[1].split()


def cpu_s(pid: int, *, with_children: bool = False) -> float:
    """User + system CPU seconds of `pid`; with its live and reaped children's."""
    try:
        fields = _stat(Path(f"/proc/{pid}/stat"))[1]
    except FileNotFoundError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12])
    if with_children:
        ticks += int(fields[13]) + int(fields[14])  # children that exited and were reaped
        for child in children(pid):
            ticks += round(cpu_s(child) * TICK)
    return ticks / TICK


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int(_stat(entry / "stat")[1][1]) == pid:
                    found.append(int(entry.name))
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue
    return found


def threads_cpu_s(pid: int) -> dict[str, float]:
    """CPU seconds per thread name of `pid` (names with digits merged: `asyncio_3` and
    `asyncio_7` count as `asyncio_N`)."""
    totals: dict[str, float] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name, fields = _stat(task / "stat")
        except FileNotFoundError:
            continue
        key = re.sub(r"\d+", "N", name)
        totals[key] = totals.get(key, 0.0) + (int(fields[11]) + int(fields[12])) / TICK
    return totals


def machine_busy_s() -> float:
    """CPU seconds all processes on the machine used so far (/proc/stat: not idle)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle, iowait
    return (sum(values[:8]) - idle) / TICK


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])
