"""quick_init: the faster __init__ keeps every dataclass rule of the generated one."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass, field

import pytest

from loopwright._frozen import quick_init
from loopwright.events import EVENT_TYPES, ToolCallFinished
from loopwright.messages import Message, ModelResponse, ToolCall, Usage


@dataclass(frozen=True, slots=True)
class Point:
    x: int
    y: int = 2
    tags: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True, slots=True)
class Named:
    name: str
    size: int = 0


quick_init(Point)
quick_init(Named)


def test_positional_defaults_and_factories_as_generated() -> None:
    assert Point(1) == Point(1, 2, [])
    assert Point(1, y=5).y == 5
    first, second = Point(1), Point(1)
    assert first.tags == [] and first.tags is not second.tags  # a fresh list each time
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, 2, [], 4)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, z=3)  # type: ignore[call-arg]


def test_keyword_only_stays_keyword_only() -> None:
    assert Named(name="a").size == 0
    with pytest.raises(TypeError):
        Named("a")  # type: ignore[misc]


def test_still_frozen_replaceable_hashable_picklable() -> None:
    point = Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 3  # type: ignore[misc]
    assert dataclasses.replace(point, x=7) == Point(7)
    assert hash(Named(name="a")) == hash(Named(name="a"))
    assert pickle.loads(pickle.dumps(point)) == point


def test_engine_types_keep_their_defaults() -> None:
    for cls in EVENT_TYPES.values():
        event = cls(run_id="r", seq=1, ts=0.0)
        assert event.type  # the literal default of each event
    finished = ToolCallFinished(run_id="r", seq=1, ts=0.0)
    assert finished.arguments == {} and finished.redactions == 0
    assert Message("user").content == "" and Message("user").tool_calls == ()
    assert ModelResponse().usage == Usage() and ToolCall("c", "t").arguments == {}


def test_unsupported_classes_are_refused() -> None:
    @dataclass(frozen=True, slots=True)
    class WithPostInit:
        x: int

        def __post_init__(self) -> None:
            pass

    with pytest.raises(TypeError):
        quick_init(WithPostInit)
