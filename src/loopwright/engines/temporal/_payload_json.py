"""The JSON of the engine's payload dataclasses (engines/temporal/_payloads.py), made and
read without Temporal's general paths: the same JSON, byte for byte, as its default
converter writes (sorted keys, no spaces), read back by the same rules (unknown fields
ignored, missing ones from their defaults, a value of the wrong JSON type refused).

Temporal's converter writes a dataclass with `dataclasses.asdict`, which deep-copies every
value (a run's spec, its messages, its events) before `json` walks them again, and reads
one by evaluating its type hints on every payload and walking every value of a
`dict[str, Any]` one by one: most of the CPU a run's worker spent converting payloads.
Here a dataclass is written as a dict of its fields (`json` walks the values once) and
read by a reader made once per class from its hints, which takes JSON values as they are
where its hint allows any JSON value.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from typing import Any, Literal

from temporalio.converter import (
    AdvancedJSONEncoder,
    JSONPlainPayloadConverter,
    JSONTypeConverter,
    value_to_type,
)

PAYLOADS_MODULE = "loopwright.engines.temporal._payloads"
Reader = Callable[[Any], Any]


class FieldsEncoder(AdvancedJSONEncoder):
    """A dataclass as the dict of its fields (`json` goes on into their values): the
    JSON `dataclasses.asdict` gives, without copying every value first."""

    def default(self, o: Any) -> Any:
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            return {f.name: getattr(o, f.name) for f in dataclasses.fields(o)}
        return super().default(o)


class PayloadTypes(JSONTypeConverter):
    """Reads the engine's payload dataclasses by a reader made once per class."""

    def __init__(self) -> None:
        self._readers: dict[type, Reader] = {}

    def to_typed_value(self, hint: type, value: Any) -> Any:
        if not _is_payload_class(hint):
            return JSONTypeConverter.Unhandled
        reader = self._readers.get(hint)
        if reader is None:
            reader = self._readers[hint] = self._dataclass_reader(hint)
        return reader(value)

    def _dataclass_reader(self, cls: type) -> Reader:
        hints = typing.get_type_hints(cls)
        fields = [(f.name, f.init, self._reader(hints[f.name])) for f in dataclasses.fields(cls)]

        def read(value: Any) -> Any:
            if not isinstance(value, dict):
                raise TypeError(f"Cannot convert to dataclass {cls}, value is {type(value)}")
            given: dict[str, Any] = {}
            later: dict[str, Any] = {}
            for name, init, field_reader in fields:
                if name in value:
                    try:
                        (given if init else later)[name] = field_reader(value[name])
                    except Exception as exc:
                        raise TypeError(f"Failed converting field {name} on {cls}") from exc
            made = cls(**given)
            for name, field_value in later.items():
                object.__setattr__(made, name, field_value)
            return made

        return read

    def _reader(self, hint: Any) -> Reader:
        """A reader for one field's hint: the JSON value as it is where the hint allows any
        JSON value of its kind, Temporal's own conversion for every other hint."""
        if hint is Any:
            return _as_is
        if hint in (str, bool):
            return _checked(hint)
        if hint in (int, float):
            return _number(hint)
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if origin in (types.UnionType, typing.Union) and type(None) in args:
            rest = [a for a in args if a is not type(None)]
            if len(rest) == 1:
                inner = self._reader(rest[0])
                return lambda v: None if v is None else inner(v)
        if origin is dict and args and args[0] is str and args[1] is Any:
            return _checked(dict)
        if origin is list and args:
            inner = self._reader(args[0])
            return lambda v: [inner(item) for item in _checked(list)(v)]
        if origin is Literal:
            return _one_of(args)
        if _is_payload_class(hint):
            return lambda v: self.to_typed_value(hint, v)
        return lambda v: value_to_type(hint, v, [self])


def _is_payload_class(hint: Any) -> bool:
    return (
        isinstance(hint, type)
        and hint.__module__ == PAYLOADS_MODULE
        and dataclasses.is_dataclass(hint)
    )


def _as_is(value: Any) -> Any:
    return value


def _checked(kind: type) -> Reader:
    def read(value: Any) -> Any:
        if not isinstance(value, kind):
            raise TypeError(f"Expected value to be {kind.__name__}, was {type(value)}")
        return value

    return read


def _number(kind: type) -> Reader:
    def read(value: Any) -> Any:
        if not isinstance(value, int | float):
            raise TypeError(f"Expected value to be int|float, was {type(value)}")
        return kind(value)

    return read


def _one_of(allowed: tuple[Any, ...]) -> Reader:
    def read(value: Any) -> Any:
        if value not in allowed:
            raise TypeError(f"Value {value!r} not in literal values {allowed}")
        return value

    return read


class PayloadJSON(JSONPlainPayloadConverter):
    """Temporal's `json/plain` converter with the engine's payload dataclasses written and
    read as above (every other value as Temporal's converter does)."""

    def __init__(self) -> None:
        super().__init__(encoder=FieldsEncoder, custom_type_converters=[PayloadTypes()])
