"""YAML with line numbers: every mapping remembers the line of each of its keys."""

from __future__ import annotations

from typing import Any

import yaml

from loopwright.errors import TaskParseError


class LineDict(dict[str, Any]):
    """A YAML mapping that knows its line and the line of each key (1-based)."""

    line: int = 1
    key_lines: dict[str, int]

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.line)


class _LineLoader(yaml.SafeLoader):
    pass


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    result = LineDict()
    result.line = node.start_mark.line + 1
    result.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        result[str(key)] = loader.construct_object(value_node, deep=True)
        result.key_lines[str(key)] = key_node.start_mark.line + 1
    return result


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml(text: str, file_path: str, *, line_offset: int = 0) -> Any:
    """Parse YAML; a syntax error names the file and the line."""
    loader = _LineLoader(text)
    try:
        data = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + line_offset if mark is not None else None
        raise TaskParseError(file_path, f"not valid YAML: {exc.problem or exc}", line) from None
    except yaml.YAMLError as exc:
        raise TaskParseError(file_path, f"not valid YAML: {exc}") from None
    finally:
        loader.dispose()
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
