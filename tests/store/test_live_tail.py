"""The live tail across processes, on both stores: a subscriber in another process gets each
event once, in order, as it is appended; one that stops and comes back with its last seq
misses nothing and repeats nothing."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest
from store_locations import Spot

from loopwright.events import IterationStartedEvent, RunFinishedEvent, RunStartedEvent

SUBSCRIBER = Path(__file__).parent / "tail_subscriber.py"


@pytest.fixture
def processes() -> Iterator[contextlib.ExitStack]:
    """Each subscriber started is waited for and its pipes closed when the test ends."""
    with contextlib.ExitStack() as stack:
        yield stack


def subscribe(
    processes: contextlib.ExitStack, spot: Spot, run_id: str, *args: str
) -> subprocess.Popen[str]:
    proc = processes.enter_context(subprocess.Popen(
        [sys.executable, str(SUBSCRIBER), spot.location, run_id, *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ))  # fmt: skip
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    return proc


def next_seq(stdout: IO[str]) -> int:
    line = stdout.readline()
    assert line, "the subscriber ended early"
    return int(line.split()[0])


@pytest.mark.subprocess
def test_a_subscriber_in_another_process_gets_each_event_as_it_is_appended(
    spot: Spot, processes: contextlib.ExitStack
) -> None:
    writer = spot.open()
    writer.append(
        RunStartedEvent(
            run_id="r1",
            seq=1,
            ts=1.0,
            request="r",
            kind="agent",
            model="m",
            tools=[],
            options={},
            tenant="default",
        )
    )
    proc = subscribe(processes, spot, "r1")
    assert proc.stdout is not None
    assert next_seq(proc.stdout) == 1
    for seq in range(2, 12):  # the next event is appended only once the last one arrived
        writer.append(
            IterationStartedEvent(
                run_id="r1", seq=seq, ts=float(seq), iteration_number=1, max_iterations=10
            )
        )
        assert next_seq(proc.stdout) == seq
    writer.append_many(
        [
            IterationStartedEvent(
                run_id="r1", seq=12, ts=12.0, iteration_number=1, max_iterations=10
            ),
            RunFinishedEvent(
                run_id="r1",
                seq=13,
                ts=13.0,
                status="completed",
                answer=None,
                reason=None,
                usage={},
                cost=0.0,
                steps=0,
                partial=None,
            ),
        ]
    )
    assert [next_seq(proc.stdout), next_seq(proc.stdout)] == [12, 13]
    assert proc.wait(timeout=30) == 0  # it ends at run_finished
    assert proc.stdout.read() == ""


@pytest.mark.subprocess
def test_a_subscriber_that_comes_back_resumes_from_its_last_seq(
    spot: Spot, processes: contextlib.ExitStack
) -> None:
    writer = spot.open()
    writer.append_many(
        [
            RunStartedEvent(
                run_id="r1",
                seq=1,
                ts=1.0,
                request="r",
                kind="agent",
                model="m",
                tools=[],
                options={},
                tenant="default",
            )
        ]
        + [
            IterationStartedEvent(
                run_id="r1", seq=s, ts=float(s), iteration_number=1, max_iterations=10
            )
            for s in range(2, 5)
        ]
    )
    first = subscribe(processes, spot, "r1", "--stop-after", "4")
    assert first.stdout is not None
    assert [next_seq(first.stdout) for _ in range(4)] == [1, 2, 3, 4]
    assert first.wait(timeout=30) == 0
    writer.append_many(
        [
            IterationStartedEvent(
                run_id="r1", seq=s, ts=float(s), iteration_number=1, max_iterations=10
            )
            for s in range(5, 9)
        ]
    )
    again = subscribe(
        processes, spot, "r1", "--after", "4"
    )  # nobody listened while 5..8 were appended
    assert again.stdout is not None
    writer.append(
        RunFinishedEvent(
            run_id="r1",
            seq=9,
            ts=9.0,
            status="completed",
            answer=None,
            reason=None,
            usage={},
            cost=0.0,
            steps=0,
            partial=None,
        )
    )
    assert [next_seq(again.stdout) for _ in range(5)] == [5, 6, 7, 8, 9]
    assert again.wait(timeout=30) == 0
    assert again.stdout.read() == ""
