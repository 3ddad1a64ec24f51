"""Two processes append to one run at once, on each store: the log stays gap-free, holds
every event once, and keeps each writer's events in the order it appended them."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest
from store_locations import Spot

from loopwright.events import IterationStartedEvent, RunStartedEvent

WRITER = Path(__file__).parent / "append_writer.py"
PER_WRITER = 150


@pytest.mark.subprocess
def test_two_processes_append_to_one_run_in_order(spot: Spot) -> None:
    spot.open().append(
        RunStartedEvent(
            run_id="r1",
            seq=1,
            ts=1.0,
            request="two writers",
            kind="agent",
            model="m",
            tools=[],
            options={},
            tenant="default",
        )
    )
    writers = [
        subprocess.Popen(
            [sys.executable, str(WRITER), spot.location, "r1", str(w), str(PER_WRITER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for w in (1, 2)
    ]
    for proc in writers:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in writers:  # both go at once
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.close()
    lost = []
    for proc in writers:
        with proc:
            assert proc.stdout is not None
            out = proc.stdout.read()
            assert proc.wait(timeout=120) == 0
        lost.append(int(out.split()[-1]))
    events = spot.open().events("r1")
    assert [e.seq for e in events] == list(range(1, 2 + 2 * PER_WRITER))
    marks = [e.iteration_number for e in events[1:] if isinstance(e, IterationStartedEvent)]
    for writer in (1, 2):
        own = [m - writer * 1000 for m in marks if m // 1000 == writer]
        assert own == list(range(PER_WRITER)), f"writer {writer}'s events out of order or lost"
    interleaved = sum(1 for a, b in itertools.pairwise(marks) if a // 1000 != b // 1000)
    print(f"{spot.kind}: {interleaved} switches between writers, {lost} appends lost a race")
    assert interleaved >= 1  # they did write at the same time
