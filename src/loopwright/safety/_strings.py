"""Which strings a value holds: what the scrubber searches before it decides to walk.

`collect` gathers every string of an event (or any JSON-like value) in one pass, and
`key_needs_a_look` says which dict keys can matter; `field_names` are a dataclass's fields.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Container, Iterable, Mapping

from loopwright.safety._secret_patterns import secret_key

_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def field_names(kind: type) -> tuple[str, ...]:
    """The init fields of a dataclass type (events), () for any other type (cached)."""
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = ()
        if dataclasses.is_dataclass(kind):
            names = tuple(f.name for f in dataclasses.fields(kind) if f.init)
        if len(_FIELD_NAMES) < 1024:
            _FIELD_NAMES[kind] = names
    return names


_LEAVES: frozenset[type] = frozenset({int, float, bool, type(None)})
"""Types with no string in them."""


_PLAIN_KEY = re.compile(r"[a-z_]{1,40}")


@functools.lru_cache(maxsize=1024)
def key_needs_a_look(key: str) -> bool:
    """Could scrubbing change something for this dict key? A secret key name (its value is
    redacted whole), or a key that is not a short lower-case word: a plain one such as
    `input_tokens` matches no detector, though it holds a hint ("token"); without this,
    every `model_response` (its usage) would be walked whole."""
    return secret_key(key) or not _PLAIN_KEY.fullmatch(key)


def collect(
    values: Iterable[object],
    known_texts: Container[str],
    known_keys: Container[str],
    texts: list[str],
    keys: list[str],
) -> None:
    """Every string in `values` not in `known_texts` into `texts`, and every string key of
    their dicts not in `known_keys` into `keys`; the fields of dataclasses are walked by
    value (their names are code, not data).

    Once per event: a dict is known by its type before the (slow) Mapping check, and a
    string the scrubber already found clean is left out where it is met (a tool call's
    arguments are in three events, its result in two)."""
    stack = list(values)
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            if item not in known_texts:
                texts.append(item)  # type: ignore[arg-type]
        elif kind in _LEAVES:
            continue
        elif kind is dict or (kind is not list and kind is not tuple and isinstance(item, Mapping)):
            for key in item:  # type: ignore[attr-defined]
                if type(key) is str and key not in known_keys:
                    keys.append(key)
            stack.extend(item.values())  # type: ignore[attr-defined]
        elif kind is list or kind is tuple or isinstance(item, (list, tuple)):
            stack.extend(item)  # type: ignore[arg-type]
        else:
            stack.extend([getattr(item, name) for name in field_names(kind)])
