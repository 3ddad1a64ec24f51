"""The tools a task file names: built-ins, `file.py` (every tool in it), `file.py:function`.

`static_tools` reads the same specs without running any code (`task validate` uses it: a
task file from someone else must not run its tool files just by being checked).

A tools file may also define `SNAPSHOT_HOOKS = {"tool_name": hook}`: how to back up and
restore what a non-file write tool changes (see `loopwright.safety.operations`).
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from loopwright.errors import ConfigurationError
from loopwright.safety.operations import SnapshotHook
from loopwright.tools import BUILTIN_TOOLS, OPT_IN_TOOLS, Tool, ToolRegistry
from loopwright.tools._resolve import load_file, resolve_tool


def absolute_spec(spec: str, base: Path) -> str:
    """A tool spec with a relative `.py` path made absolute against the task's folder."""
    target, sep, attr = spec.partition(":")
    if target.endswith(".py") and not Path(target).is_absolute():
        target = str((base / target).resolve())
    return f"{target}{sep}{attr}"


def tools_from_specs(specs: Iterable[str]) -> tuple[list[Tool], dict[str, SnapshotHook]]:
    tools: list[Tool] = []
    hooks: dict[str, SnapshotHook] = {}
    for spec in specs:
        if spec.endswith(".py"):
            module = load_file(spec, f"tools {spec!r}")
            tools.extend(v for v in vars(module).values() if isinstance(v, Tool))
            hooks.update(_snapshot_hooks(module))
        else:
            tools.append(resolve_tool(spec))
            file = spec.rsplit(":", 1)[0]
            if file.endswith(".py"):
                hooks.update(_snapshot_hooks(load_file(file, f"tool {spec!r}")))
    return tools, hooks


def _snapshot_hooks(module: ModuleType) -> dict[str, SnapshotHook]:
    found: Any = getattr(module, "SNAPSHOT_HOOKS", {})
    if not isinstance(found, dict):
        raise ConfigurationError(f"{module.__file__}: SNAPSHOT_HOOKS must be a dict")
    return dict(found)


def build_registry(
    specs: Iterable[str], extra: Iterable[Tool] = ()
) -> tuple[ToolRegistry, dict[str, SnapshotHook]]:
    """A registry of the task's tools plus `extra` (a later tool of the same name wins)."""
    tools, hooks = tools_from_specs(specs)
    registry = ToolRegistry()
    for item in [*tools, *extra]:
        registry.register(item, replace=True)
    return registry, hooks


# ---- reading tool files without running them (for `task validate`) ------------------------

MAX_TOOL_FILE_BYTES = 2 << 20


@dataclass(frozen=True)
class StaticTools:
    """Tool names the specs give, found by reading the files (no code runs), and problems
    as (file, line, message); `line` None means the task's `tools` line."""

    names: set[str]
    problems: list[tuple[str | None, int | None, str]]


def _is_tool_decorator(node: ast.expr) -> tuple[bool, str | None]:
    """(is it `@tool` / `@tool(...)` / `@x.tool(...)`, the `name=` it gives)."""
    target = node.func if isinstance(node, ast.Call) else node
    named = (isinstance(target, ast.Name) and target.id == "tool") or (
        isinstance(target, ast.Attribute) and target.attr == "tool"
    )
    if not named:
        return False, None
    if isinstance(node, ast.Call):
        for keyword in node.keywords:
            if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                return True, str(keyword.value.value)
    return True, None


def _read_python(path: Path) -> ast.Module:
    """The parsed file; raises ValueError(line, message) for what cannot be read."""
    if not path.is_file():
        raise ValueError(None, f"tool file not found: {path}")
    if path.stat().st_size > MAX_TOOL_FILE_BYTES:
        raise ValueError(None, f"tool file {path} is larger than {MAX_TOOL_FILE_BYTES} bytes")
    try:
        return ast.parse(path.read_bytes(), filename=str(path))
    except SyntaxError as exc:
        raise ValueError(exc.lineno, f"not valid Python: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ValueError(None, f"cannot read {path} as Python: {type(exc).__name__}") from None


def _unknown_builtin(spec: str) -> str:
    known = sorted([*BUILTIN_TOOLS, *OPT_IN_TOOLS])
    close = difflib.get_close_matches(spec, known, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return (
        f"unknown tool {spec!r} ({hint}built-in tools: {', '.join(known)}; or "
        "module:function, path/to/file.py:function)"
    )


@dataclass
class _FileNames:
    """A tool file's top-level names, read without running it."""

    tools: dict[str, str]
    """attribute -> tool name, for each `@tool`."""
    names: set[str] | None
    """Every top-level name, imports included (None when the file can make names no reading
    finds: `import *`, `globals()`)."""
    functions: set[str]
    """The functions the file itself defines, and its tools (not what it imports)."""


def _top_level(module: ast.Module) -> _FileNames:
    tools: dict[str, str] = {}
    names: set[str] = set()
    imported: set[str] = set()
    dynamic = any(
        (isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names))
        or (isinstance(node, ast.Name) and node.id in {"globals", "setattr", "exec"})
        for node in ast.walk(module)
    )
    for node in module.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            for decorator in getattr(node, "decorator_list", []):
                is_tool, given = _is_tool_decorator(decorator)
                if is_tool:
                    tools[node.name] = given or node.name
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names.add(target.id)
                    if isinstance(node.value, ast.Call) and _is_tool_decorator(node.value)[0]:
                        tools[target.id] = _is_tool_decorator(node.value)[1] or target.id
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom | ast.Import):
            imported.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    functions = {
        node.name
        for node in module.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    return _FileNames(tools, None if dynamic else names | imported, functions | set(tools))


def static_tools(specs: Iterable[str], *, allow_commands: bool = False) -> StaticTools:
    """What `tools_from_specs` would give, read with `ast`: no tool file is imported."""
    found = StaticTools(set(), [])
    for spec in specs:
        target, sep, attr = spec.rpartition(":") if ":" in spec else (spec, "", "")
        if not sep and (spec in BUILTIN_TOOLS or (allow_commands and spec in OPT_IN_TOOLS)):
            found.names.add(spec)
        elif not sep and spec in OPT_IN_TOOLS:
            found.problems.append((None, None, f"tool {spec!r} runs programs and is off here"))
        elif not sep and not spec.endswith(".py"):
            found.problems.append((None, None, _unknown_builtin(spec)))
        elif spec.endswith(".py") or target.endswith(".py"):
            _static_file(Path(target if sep else spec), attr if sep else None, found)
        else:
            found.names.add(attr)  # an installed module: its name is taken on trust, not run
    return found


def _static_file(path: Path, attr: str | None, found: StaticTools) -> None:
    try:
        read = _top_level(_read_python(path))
    except ValueError as exc:
        line, message = exc.args
        found.problems.append((str(path) if line else None, line, message))
        return
    tools = read.tools
    if attr is None:
        found.names.update(tools.values())
    elif attr in tools:
        found.names.add(tools[attr])
    elif read.names is None or attr in read.names:
        found.names.add(attr)
    else:
        own = sorted(n for n in read.functions if not n.startswith("_"))
        close = difflib.get_close_matches(attr, own, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        listed = ", ".join(own) or "none"
        found.problems.append(
            (None, None, f"{path} has no function {attr!r} ({hint}it has: {listed})")
        )
