"""EventLog.append takes the event its producer built and sends a new one: numbered,
stamped with the run and the time, scrubbed; the producer's event is left as it was."""

from __future__ import annotations

import dataclasses

import pytest

from loopwright.effects import EventLog
from loopwright.errors import ReplayDivergence
from loopwright.events import Event, RunErrorEvent, WarningEvent
from loopwright.events._types import EVENT_CLASSES
from loopwright.safety.scrub import Scrubber
from loopwright.testing import MockClock


async def test_a_built_event_goes_out_numbered_stamped_and_scrubbed() -> None:
    sent: list[Event] = []
    log = EventLog("run_a", clock=MockClock(start=1000.0), scrubber=Scrubber(["hunter22"]),
                   sink=sent.append)  # fmt: skip
    draft = WarningEvent(message="the password is hunter22")
    first = await log.append(draft)
    second = await log.append(RunErrorEvent(error_type="X", message="no secret here"))
    assert first is not None and second is not None
    assert (first.run_id, first.seq, first.ts) == ("run_a", 1, 1000.0)
    assert (second.run_id, second.seq) == ("run_a", 2)
    assert "hunter22" not in first.message and "[REDACTED" in first.message
    assert sent == [first, second]
    assert (draft.run_id, draft.seq, draft.message) == ("", 0, "the password is hunter22")


async def test_stamps_a_producer_gives_are_the_logs_to_replace() -> None:
    log = EventLog("run_b", sink=lambda event: None)
    event = await log.append(WarningEvent(run_id="elsewhere", seq=40, ts=1.0, message="m"))
    assert event is not None and (event.run_id, event.seq) == ("run_b", 1)


async def test_nobody_listening_sends_nothing() -> None:
    log = EventLog("run_c")
    assert await log.append(WarningEvent(message="m")) is None
    assert log.seq == 0


async def test_a_recorded_prefix_is_checked_against_the_built_events() -> None:
    recorded = [WarningEvent(run_id="run_d", seq=n, ts=0.0, message="m") for n in (1, 2)]
    log = EventLog("run_d", recorded=recorded)
    again = await log.append(WarningEvent(message="m"))
    assert again is not None and again.seq == 1
    with pytest.raises(ReplayDivergence):
        await log.append(RunErrorEvent(error_type="X", message="other"))


@pytest.mark.parametrize("cls", EVENT_CLASSES, ids=lambda cls: cls.__name__)
def test_an_event_class_slots_are_its_fields_but_the_stamps(cls: type[Event]) -> None:
    """What the log copies from a draft (and scrubs) is read from the class's __slots__."""
    names = {field.name for field in dataclasses.fields(cls)}
    assert set(cls.__slots__) == names - {"run_id", "seq", "ts"}
