"""The bounded PyYAML loader behind `load_yaml` (_yaml.py), in its own module so that PyYAML
is imported when a first YAML document is read, not with loopwright.tasks."""

from __future__ import annotations

from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import Resolver
from yaml.scanner import Scanner

from loopwright.errors import TaskParseError
from loopwright.tasks._line_dict import MAX_DEPTH, MAX_NODES, LineDict


class _Limit(Exception):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


class _PythonParser(Reader, Scanner, Parser):
    """PyYAML's own parser, for a PyYAML built without libyaml."""

    def __init__(self, stream: str) -> None:
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)


try:  # libyaml's parser when PyYAML has it: the same events, ~2.5x faster
    from yaml._yaml import CParser as _EventParser
except ImportError:  # pragma: no cover
    _EventParser = _PythonParser  # type: ignore[assignment,misc]


class _LineLoader(Composer, SafeConstructor, Resolver, _EventParser):
    """Composes with the limits: depth, and the values the document stands for (each alias
    counts as every value it repeats), checked as it goes, so a document is refused as soon
    as it passes a limit (not after parsing the rest). An alias to a value that contains it
    (`a: &s {b: *s}`) is refused where it is met: expanding it never ends. The composer is
    PyYAML's Python one over the parser's events, so these checks run at every node."""

    depth = 0

    def __init__(self, stream: str) -> None:
        _EventParser.__init__(self, stream)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self.values = 0
        """Values composed so far, each alias counted as the values it stands for."""
        self.aliased = False
        self.sizes: dict[int, int] = {}
        """id(node) -> the values it stands for, once composed (capped past MAX_NODES)."""

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self.depth += 1
        try:
            event: Any = self.peek_event()
            if self.depth > MAX_DEPTH:
                raise _Limit(f"nested more than {MAX_DEPTH} levels deep", event.start_mark.line + 1)
            if isinstance(event, yaml.AliasEvent):
                return self._alias(event, parent, index)
            node = super().compose_node(parent, index)
            if node is not None:
                size = 1 + sum(self.sizes.get(id(child), 1) for child in _children(node))
                self.sizes[id(node)] = min(size, MAX_NODES + 1)
                self.values += 1
                self._check(event)
            return node
        finally:
            self.depth -= 1

    def _alias(self, event: Any, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        target = self.anchors.get(event.anchor)
        if target is not None and id(target) not in self.sizes:
            raise _Limit(
                f"the alias *{event.anchor} refers to a value that contains it (a recursive "
                f"alias, which never ends when expanded)",
                event.start_mark.line + 1,
            )
        node = super().compose_node(parent, index)
        if node is not None:
            self.values += self.sizes[id(node)]
            self.aliased = True
            self._check(event)
        return node

    def _check(self, event: Any) -> None:
        if self.values > MAX_NODES:
            expanded = " once its aliases are expanded" if self.aliased else ""
            line = event.start_mark.line + 1
            raise _Limit(f"holds more than {MAX_NODES:,} values{expanded}", line)


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


# the stubs allow only PyYAML's own loader classes here
_LineLoader.add_constructor(  # type: ignore[type-var]
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping
)


def compose(text: str, encoded: bytes, file_path: str, line_offset: int) -> Any:
    """The document `text` (`encoded`: its UTF-8), or a TaskParseError naming the line."""
    loader = _LineLoader(text)
    try:
        node = loader.get_single_node()
        data = None if node is None else loader.construct_document(node)
    except _Limit as exc:
        raise TaskParseError(file_path, str(exc), exc.line + line_offset) from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow
        raise _refused_character(exc, text, encoded, file_path, line_offset) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + line_offset if mark is not None else None
        problem = f"not valid YAML: {exc.problem or exc}"
        if "maximum nesting depth" in problem:  # libyaml >= 0.2.6 scans ahead, with a limit
            problem = f"nested more than {MAX_DEPTH} levels deep"
        raise TaskParseError(file_path, problem, line) from None
    except yaml.YAMLError as exc:
        raise TaskParseError(file_path, f"not valid YAML: {exc}") from None
    finally:
        loader.dispose()
    return data


def _refused_character(
    exc: yaml.reader.ReaderError, text: str, encoded: bytes, file_path: str, offset: int
) -> TaskParseError:
    """libyaml gives the code point and a byte offset; PyYAML's own reader the character
    and a character offset."""
    if isinstance(exc.character, int):
        code, line = exc.character, encoded.count(b"\n", 0, exc.position) + 1
    else:
        code, line = ord(exc.character), text.count("\n", 0, exc.position) + 1
    message = f"not valid YAML: the character U+{code:04X} is not allowed"
    return TaskParseError(file_path, message, line + offset)
