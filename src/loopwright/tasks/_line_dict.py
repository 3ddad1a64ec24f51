"""What a task file's YAML becomes: mappings that know their lines, and the loader's limits."""

from __future__ import annotations

from typing import Any


class LineDict(dict[str, Any]):
    """A YAML mapping that knows its line and the line of each key (1-based)."""

    line: int = 1
    key_lines: dict[str, int]

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.line)


MAX_DOCUMENT_BYTES = 1 << 20
MAX_DEPTH = 64
MAX_NODES = 100_000
