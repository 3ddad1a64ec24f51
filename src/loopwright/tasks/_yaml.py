"""YAML with line numbers: every mapping remembers the line of each of its keys.

Task files may come from others, so the loader is bounded: a document of at most
`MAX_DOCUMENT_BYTES`, nested at most `MAX_DEPTH` levels, and at most `MAX_NODES` values once
every alias is expanded (an "alias bomb" of a few lines would otherwise stand for billions).
"""

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


MAX_DOCUMENT_BYTES = 1 << 20
MAX_DEPTH = 64
MAX_NODES = 100_000


class _Limit(Exception):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


class _LineLoader(yaml.SafeLoader):
    """Composes with a depth limit; `expanded_size` bounds what aliases stand for."""

    depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                event: Any = self.peek_event()  # type: ignore[no-untyped-call]
                raise _Limit(f"nested more than {MAX_DEPTH} levels deep", event.start_mark.line + 1)
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def expanded_size(root: yaml.Node) -> int:
    """How many values the document holds with every alias expanded (stops past MAX_NODES).
    Each node is counted once per reference, computed bottom-up without recursion."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        children = _children(node)
        if children_done or not children:
            total = 1 + sum(sizes[id(child)] for child in children)
            sizes[id(node)] = min(total, MAX_NODES + 1)
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [item for pair in node.value for item in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


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
    """Parse YAML; a syntax error or a limit names the file and the line."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_DOCUMENT_BYTES:
        raise TaskParseError(file_path, f"larger than {MAX_DOCUMENT_BYTES:,} bytes")
    loader = _LineLoader(text)
    try:
        node = loader.get_single_node()
        data = None
        if node is not None:
            if expanded_size(node) > MAX_NODES:
                raise _Limit(
                    f"holds more than {MAX_NODES:,} values once its aliases are expanded",
                    node.start_mark.line + 1,
                )
            data = loader.construct_document(node)
    except _Limit as exc:
        raise TaskParseError(file_path, str(exc), exc.line + line_offset) from None
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
