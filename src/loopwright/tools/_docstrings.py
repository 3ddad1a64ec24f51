"""Read a tool's description and its parameters' descriptions from a docstring.

Understands the three common styles::

    Google                    Sphinx                       NumPy
    Args:                     :param path: the file        Parameters
        path (str): the file  :type path: str              ----------
            more text         :param int n: how many       path : str
        n: how many                                            the file
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

_PARAM_SECTIONS = {
    "args",
    "arguments",
    "parameters",
    "params",
    "keyword args",
    "keyword arguments",
    "kwargs",
    "other parameters",
}
_OTHER_SECTIONS = {
    "returns",
    "return",
    "yields",
    "yield",
    "raises",
    "raise",
    "example",
    "examples",
    "note",
    "notes",
    "see also",
    "attributes",
    "warning",
    "warnings",
    "references",
    "todo",
}
_GOOGLE_HEADER = re.compile(r"^([A-Za-z][A-Za-z ]*):\s*$")
_NUMPY_RULE = re.compile(r"^\s*-{3,}\s*$")
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ENTRY = re.compile(r"^\*{0,2}([\w, ]+?)\s*(?::\s*(.*))?$")
_SPHINX_FIELD = re.compile(r"^:(\w+)((?:\s+[^:]+?)?)\s*:\s*(.*)$")


@dataclass
class Docstring:
    description: str = ""
    params: dict[str, str] = field(default_factory=dict)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _section_name(lines: list[str], i: int) -> tuple[str, int] | None:
    """(section name, lines the header takes) when a section starts at line i."""
    line = lines[i].strip()
    if i + 1 < len(lines) and _NUMPY_RULE.match(lines[i + 1]) and line:
        return line.lower(), 2
    match = _GOOGLE_HEADER.match(line)
    if match and match.group(1).lower() in _PARAM_SECTIONS | _OTHER_SECTIONS:
        return match.group(1).lower(), 1
    return None


def _block(lines: list[str], start: int) -> int:
    """Index just past the indented block (or NumPy block) that begins at `start`."""
    end = start
    while end < len(lines):
        if lines[end].strip() and _section_name(lines, end) is not None:
            break
        end += 1
    return end


def _entries(lines: list[str], numpy: bool) -> dict[str, str]:
    """`name: text` entries (Google) or `name : type` entries (NumPy), with indented
    continuation lines; `a, b : int` documents both names."""
    base = min((_indent(line) for line in lines if line.strip()), default=0)
    pattern = _NUMPY_ENTRY if numpy else _GOOGLE_ENTRY
    params: dict[str, list[str]] = {}
    names: list[str] = []
    for line in lines:
        if not line.strip():
            continue
        if _indent(line) > base:
            for name in names:
                params[name].append(line.strip())
            continue
        match = pattern.match(line.strip())
        names = [n.strip() for n in match.group(1).split(",") if n.strip()] if match else []
        first = [] if numpy or match is None or not match.group(2) else [match.group(2)]
        for name in names:
            params[name] = list(first)
    return {name: " ".join(text) for name, text in params.items()}


def _sphinx_fields(lines: list[str]) -> tuple[dict[str, str], int | None]:
    """(params, index of the first field line) for `:param name: text` fields."""
    params: dict[str, str] = {}
    first: int | None = None
    current: str | None = None
    for i, line in enumerate(lines):
        match = _SPHINX_FIELD.match(line.strip())
        if match:
            first = i if first is None else first
            kind, arg, text = match.group(1), match.group(2).split(), match.group(3).strip()
            current = None
            if kind in ("param", "parameter", "arg", "argument", "key", "keyword") and arg:
                current = arg[-1]
                params[current] = text
        elif current is not None and line.strip() and _indent(line) > 0:
            params[current] = f"{params[current]} {line.strip()}".strip()
        elif not line.strip():
            current = None
    return params, first


def parse_docstring(doc: str | None) -> Docstring:
    """The prose before the first section, and the documented parameters."""
    lines = inspect.cleandoc(doc or "").splitlines()
    params, sphinx_start = _sphinx_fields(lines)
    prose_end = len(lines) if sphinx_start is None else sphinx_start
    i = 0
    while i < len(lines):
        section = _section_name(lines, i)
        if section is None:
            i += 1
            continue
        prose_end = min(prose_end, i)
        name, header = section
        end = _block(lines, i + header)
        if name in _PARAM_SECTIONS:
            params.update(_entries(lines[i + header : end], numpy=header == 2))
        i = end
    paragraphs = "\n".join(lines[:prose_end]).split("\n\n")
    description = " ".join(" ".join(p.split()) for p in paragraphs if p.strip())
    return Docstring(description=description, params=params)
