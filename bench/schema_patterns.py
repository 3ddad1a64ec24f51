"""JSON Schema validation of untrusted schemas: what a catastrophic pattern costs, and what
a typical output schema costs, with `jsonschema` (Python's backtracking `re`) and with the
validator loopwright uses (tools/_jsonschema.py: jsonschema-rs, linear-time regex).

    python bench/schema_patterns.py

Prints one line per measure; the ratios are what matters (the machine is shared).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import jsonschema.validators

from loopwright.tools._jsonschema import SchemaValidator

TYPICAL = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "pattern": "^[A-Z][a-z]+$"},
        "age": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}
TYPICAL_VALUE = {"name": "Alice", "age": 30, "tags": ["a", "b", "c"]}
CATASTROPHIC = {"type": "string", "pattern": "^(a+)+$"}


def seconds(call: Callable[[], object], repeats: int) -> float:
    """The median of `repeats` timings of `call`, in seconds."""
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def catastrophic(length: int) -> str:
    """One line: the catastrophic pattern on `length` a and a '!', both validators."""
    value = "a" * length + "!"
    python = jsonschema.validators.validator_for(CATASTROPHIC)(CATASTROPHIC)
    ours = SchemaValidator(CATASTROPHIC)
    slow = seconds(lambda: list(python.iter_errors(value)), 1)
    fast = seconds(lambda: ours.errors(value), 101)
    return f"^(a+)+$ on {length} a + '!': jsonschema {slow * 1e3:.1f} ms, ours {fast * 1e6:.1f} µs"


def main() -> None:
    for length in (18, 20, 22, 24):
        print(catastrophic(length))
    ours = SchemaValidator(CATASTROPHIC)
    long = "a" * 100_000 + "!"
    print(f"^(a+)+$ on 100,000 a + '!': ours {seconds(lambda: ours.errors(long), 11) * 1e3:.2f} ms")
    typical: Any = jsonschema.validators.validator_for(TYPICAL)(TYPICAL)
    mine = SchemaValidator(TYPICAL)
    old = seconds(lambda: list(typical.iter_errors(TYPICAL_VALUE)), 2001)
    new = seconds(lambda: mine.errors(TYPICAL_VALUE), 2001)
    print(
        f"typical output schema, valid answer: jsonschema {old * 1e6:.1f}, ours {new * 1e6:.2f} µs"
    )
    build_old = seconds(lambda: jsonschema.validators.validator_for(TYPICAL)(TYPICAL), 201)
    build_new = seconds(lambda: SchemaValidator(TYPICAL), 201)
    print(f"compiling it: jsonschema {build_old * 1e6:.1f} µs, ours {build_new * 1e6:.1f} µs")


if __name__ == "__main__":
    main()
