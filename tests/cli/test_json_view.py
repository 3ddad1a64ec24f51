"""`--json` lines: what the run makes in one event-loop turn goes out in one write (a write
per line is a system call each when stdout is unbuffered, as PYTHONUNBUFFERED makes it),
and nothing is held back once the turn ends or outside an event loop."""

from __future__ import annotations

import asyncio
import io

from loopwright.cli._view import JsonLinesView
from loopwright.events import Event, IterationStartedEvent, decode_event, encode_event


class CountingStream(io.StringIO):
    """stdout as a program sees it, counting the writes that reach it."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        return super().write(text)


def events(count: int) -> list[Event]:
    return [
        IterationStartedEvent(run_id="run_v", seq=n, ts=float(n), iteration_number=n,
                              max_iterations=99)
        for n in range(1, count + 1)
    ]  # fmt: skip


def test_one_turn_is_one_write_and_every_line_is_out_when_the_turn_ends() -> None:
    out = CountingStream()
    view = JsonLinesView(out)
    shown = events(5)

    async def main() -> tuple[str, int]:
        for event in shown:
            view.show(event)
        held = out.getvalue()
        await asyncio.sleep(0)  # the turn ends: the view's flush runs
        return held, out.writes

    held, writes = asyncio.run(main())
    assert held == "" and writes == 1
    lines = out.getvalue().splitlines()
    assert lines == [encode_event(e) for e in shown]
    assert [decode_event(line).seq for line in lines] == [1, 2, 3, 4, 5]


def test_outside_an_event_loop_and_at_close_nothing_waits() -> None:
    out = CountingStream()
    view = JsonLinesView(out)
    first, second = events(2)
    view.show(first)  # no loop running: written at once
    assert out.getvalue() == encode_event(first) + "\n"

    async def main() -> None:
        view.show(second)
        view.close()  # closed in the same turn: flushed now
        assert out.getvalue().splitlines() == [encode_event(first), encode_event(second)]

    asyncio.run(main())
    assert out.writes == 2
