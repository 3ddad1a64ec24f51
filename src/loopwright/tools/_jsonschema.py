"""JSON Schema validation with bounded time, for schemas nobody vouches for.

A run's output schema (`--output-schema`, an API client's `output_schema`) and an MCP
server's `inputSchema` are not trusted, and neither are the values checked against them
(a model's answer or tool arguments). Python's `re` backtracks: `{"pattern": "^(a+)+$"}`
against 32 `a` and a `!` held the interpreter (and the server's event loop) for minutes.
So schemas are compiled by jsonschema-rs with its linear-time regex engine (Rust's
`regex`: no backtracking, so no pattern can take more than time linear in its input), never
fetch a `$ref` from the network or the disk, and are refused when nested deeper than
`MAX_SCHEMA_DEPTH`. A pattern that needs backtracking (a lookaround `(?=...)`, a
backreference `\\1`) is refused with a message that says so.

Measured (bench/schema_patterns.py, load ~10): `^(a+)+$` on 24 `a` and `!` takes 3-4.5 s
with `jsonschema` and ~4 µs here (100,000 characters: ~0.9 ms); a typical output schema
validates in ~0.5 µs against ~41 µs (compiling it: ~31 µs against ~6, once).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

MAX_SCHEMA_DEPTH = 64
"""How deeply a schema may nest (objects and arrays); a real one needs a handful."""
MAX_ERRORS = 8


class SchemaProblem(ValueError):
    """The schema cannot be used: not a valid JSON Schema, too deep, a pattern that needs
    backtracking, or a reference outside the document. The message says which."""


@dataclass(frozen=True)
class SchemaError:
    """One way a value fails its schema: where (a path of keys and indexes) and why."""

    path: tuple[str | int, ...]
    message: str
    keyword: str
    details: dict[str, Any]


class SchemaValidator:
    """A compiled schema; `errors(value)` lists at most `limit` errors, in schema order."""

    def __init__(self, schema: Any) -> None:
        import jsonschema_rs

        if _depth(schema) > MAX_SCHEMA_DEPTH:
            raise SchemaProblem(f"it is nested more than {MAX_SCHEMA_DEPTH} levels deep")
        try:
            self._validator = jsonschema_rs.validator_for(
                schema,
                pattern_options=jsonschema_rs.RegexOptions(),
                validate_formats=False,
                offline=True,
            )
        except jsonschema_rs.ValidationError as exc:
            raise SchemaProblem(_schema_message(exc)) from None
        except (ValueError, TypeError) as exc:  # recursion limit, a value JSON has no form for
            raise SchemaProblem(str(exc).splitlines()[0]) from None

    def errors(self, value: Any, limit: int = MAX_ERRORS) -> list[SchemaError]:
        if self._validator.is_valid(value):
            return []
        return [_error(e) for e in itertools.islice(self._validator.iter_errors(value), limit)]


def _error(error: Any) -> SchemaError:
    kind = error.kind
    details = kind.as_dict() if hasattr(kind, "as_dict") else {}
    keyword = str(getattr(kind, "name", "") or type(kind).__name__)
    return SchemaError(tuple(error.instance_path), str(error.message), keyword, details)


def _schema_message(error: Any) -> str:
    """Why a schema is refused, in one line."""
    first = str(error.message).splitlines()[0]
    where = "/".join(str(part) for part in error.instance_path)
    if first.endswith('is not a "regex"'):
        return (
            f"the pattern at {where or 'the root'} is not a regular expression loopwright "
            f"runs ({first}): patterns run on a linear-time engine, without lookarounds "
            f"(?=...) or backreferences \\1"
        )
    return f"not a valid JSON Schema (at {where or 'the root'}): {first}"


def _depth(value: Any) -> int:
    """How deeply `value` nests (dicts and lists), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_SCHEMA_DEPTH:
            break
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
    return deepest
