"""`quick_init`: a faster `__init__` for frozen, slotted dataclasses built on the hot path.

A frozen dataclass's generated `__init__` sets every field through
`object.__setattr__(self, name, value)` — a generic attribute lookup per field — which makes
it about twice as slow as an unfrozen one. The agent loop builds several events and
messages per step, so this shows. `quick_init` replaces the generated `__init__` with one
that stores each field through its slot descriptor directly: same signature, defaults,
default factories and keyword-only rules; the class stays a frozen dataclass (assignment
still raises `FrozenInstanceError`; `fields`, `replace`, equality and hashing unchanged).
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

C = TypeVar("C", bound=type)


def _slot(cls: type, name: str) -> Any:
    for klass in cls.__mro__:
        if name in vars(klass):
            return vars(klass)[name]
    raise TypeError(f"{cls.__name__}.{name} has no slot")


def quick_init(cls: C) -> C:
    """Give the frozen slotted dataclass `cls` a faster, equivalent `__init__`."""
    fields = dataclasses.fields(cls)
    if not all(f.init for f in fields) or hasattr(cls, "__post_init__"):
        raise TypeError(f"quick_init supports plain fields only, not {cls.__name__}'s")
    names: dict[str, Any] = {"MISSING": dataclasses.MISSING}
    params: list[str] = []
    body: list[str] = []
    for f in fields:
        value = f.name
        if f.default is not dataclasses.MISSING:
            names[f"default_{f.name}"] = f.default
            params.append(f"{f.name}=default_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            names[f"factory_{f.name}"] = f.default_factory
            params.append(f"{f.name}=MISSING")
            value = f"factory_{f.name}() if {f.name} is MISSING else {f.name}"
        else:
            params.append(f.name)
        names[f"set_{f.name}"] = _slot(cls, f.name).__set__
        body.append(f"        set_{f.name}(self, {value})")
    if len({f.kw_only for f in fields}) > 1:
        raise TypeError(f"quick_init: {cls.__name__} mixes keyword-only and positional fields")
    keyword_only = "*, " if fields and fields[0].kw_only else ""
    source = (
        f"def build({', '.join(names)}):\n"
        f"    def __init__(self, {keyword_only}{', '.join(params)}):\n"
        + ("\n".join(body) or "        pass")
        + "\n    return __init__\n"
    )
    scope: dict[str, Any] = {}
    exec(source, scope)  # generated from the dataclass's own field names
    init = scope["build"](**names)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init  # type: ignore[misc]
    return cls
