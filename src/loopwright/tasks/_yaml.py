"""YAML with line numbers: every mapping remembers the line of each of its keys.

Task files may come from others, so the loader is bounded: a document of at most
`MAX_DOCUMENT_BYTES`, nested at most `MAX_DEPTH` levels, and at most `MAX_NODES` values once
every alias is expanded (an "alias bomb" of a few lines would otherwise stand for billions).
"""

from __future__ import annotations

from typing import Any

from loopwright.errors import TaskParseError
from loopwright.tasks._line_dict import MAX_DOCUMENT_BYTES, LineDict


def load_yaml(text: str, file_path: str, *, line_offset: int = 0) -> Any:
    """Parse YAML; a syntax error or a limit names the file and the line."""
    encoded = text.encode("utf-8", "surrogatepass")
    if len(encoded) > MAX_DOCUMENT_BYTES:
        raise TaskParseError(file_path, f"larger than {MAX_DOCUMENT_BYTES:,} bytes")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        at = text.count("\n", 0, exc.start) + 1 + line_offset
        raise TaskParseError(file_path, "not valid text: a lone surrogate", at) from None
    from loopwright.tasks._yaml_loader import compose  # PyYAML: imported for a first file

    data = compose(text, encoded, file_path, line_offset)
    if line_offset:
        _shift(data, line_offset)
    return data


def _shift(data: Any, offset: int) -> None:
    if isinstance(data, LineDict):
        data.line += offset
        data.key_lines = {k: v + offset for k, v in data.key_lines.items()}
        for value in data.values():
            _shift(value, offset)
    elif isinstance(data, list):
        for item in data:
            _shift(item, offset)


def split_front_matter(text: str, file_path: str) -> tuple[str, str, int]:
    """(front matter YAML, body, line offset of the YAML) of a Markdown file."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise TaskParseError(file_path, "a Markdown task file starts with '---' front matter", 1)
    for index in range(1, len(lines)):
        if lines[index].strip() in {"---", "..."}:
            return "".join(lines[1:index]), "".join(lines[index + 1 :]), 1
    raise TaskParseError(file_path, "the front matter has no closing '---'", 1)
