"""Resolve `--tools` specs: built-in names, `module:function` and `path/to/file.py:function`."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType

from loopwright.errors import ConfigurationError
from loopwright.tools._tool import Tool
from loopwright.tools.builtin import BUILTIN_TOOLS, OPT_IN_TOOLS


def _as_tool(obj: object, spec: str) -> Tool:
    if isinstance(obj, Tool):
        return obj
    if callable(obj):
        return Tool.from_function(obj)
    raise ConfigurationError(f"tool {spec!r}: {type(obj).__name__} is not a function or a tool")


def _functions_in(module: ModuleType) -> str:
    """The public functions and tools defined in `module` (for error messages)."""
    names = []
    for name, value in vars(module).items():
        function = value.function if isinstance(value, Tool) else value
        if name.startswith("_") or not callable(function) or isinstance(function, type):
            continue
        if getattr(function, "__module__", None) == module.__name__:
            names.append(name)
    return ", ".join(sorted(names)) or "none"


def load_file(file: str | Path, who: str, prefix: str = "loopwright_user_tools_") -> ModuleType:
    """The Python file `file`, imported once per process (under `prefix` + a hash of its
    path: a task's `tools.py` and its `tools.py:f` are one module); every problem a
    one-line ConfigurationError starting with `who` (`tool 'x.py:f'`) that names the file,
    and the line where importing it failed."""
    path = Path(file)
    if not path.is_file():
        raise ConfigurationError(f"{who}: file not found: {file}")
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    name = f"{prefix}{digest}"
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise ConfigurationError(f"{who}: {file} is not a Python file that can be imported")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise ConfigurationError(f"{who}: {_import_failure(path, exc)}") from None
    return module


def _import_failure(path: Path, exc: Exception) -> str:
    """`importing FILE failed at line N: Type: message`: the line is the file's own (a
    syntax error's, else the last frame of the file in the traceback)."""
    line: int | None = None
    text = str(exc)
    if isinstance(exc, SyntaxError):
        line, text = exc.lineno, exc.msg
    else:
        frames = traceback.extract_tb(exc.__traceback__)
        own = [f for f in frames if Path(f.filename).resolve() == path.resolve()]
        line = own[-1].lineno if own else None
    at = f" at line {line}" if line else ""
    return f"importing {path} failed{at}: {type(exc).__name__}: {text}"


def import_named(target: str, who: str) -> ModuleType:
    """The module `target`; a failed import a one-line ConfigurationError starting with
    `who`."""
    try:
        return importlib.import_module(target)
    except ImportError as exc:
        raise ConfigurationError(f"{who}: cannot import module {target!r}: {exc}") from None
    except Exception as exc:
        raise ConfigurationError(
            f"{who}: importing module {target!r} failed: {type(exc).__name__}: {exc}"
        ) from None


def resolve_tool(spec: str, *, allow_commands: bool = False) -> Tool:
    """One tool from a spec: a built-in name, `module:function` or `file.py:function`.

    `run_command` runs programs, so naming it also needs `allow_commands=True`.
    """
    spec = spec.strip()
    if spec in BUILTIN_TOOLS:
        return BUILTIN_TOOLS[spec]
    if spec in OPT_IN_TOOLS:
        if not allow_commands:
            raise ConfigurationError(
                f"tool {spec!r} runs programs on this machine and is off by default; "
                "enable it explicitly with --allow-commands (or allow_commands=True)"
            )
        return OPT_IN_TOOLS[spec]
    if ":" not in spec:
        known = ", ".join(sorted([*BUILTIN_TOOLS, *OPT_IN_TOOLS]))
        raise ConfigurationError(
            f"unknown tool {spec!r}: use a built-in ({known}), module:function "
            "or path/to/file.py:function"
        )
    target, attr = spec.rsplit(":", 1)
    if not target or not attr:
        raise ConfigurationError(f"tool {spec!r}: expected module:function or file.py:function")
    who = f"tool {spec!r}"
    module = load_file(target, who) if target.endswith(".py") else import_named(target, who)
    if not hasattr(module, attr):
        where = target if target.endswith(".py") else f"module {target!r}"
        raise ConfigurationError(
            f"tool {spec!r}: {where} has no function {attr!r} (it has: {_functions_in(module)})"
        )
    return _as_tool(getattr(module, attr), spec)


def resolve_tools(specs: str | list[str], *, allow_commands: bool = False) -> list[Tool]:
    """Tools from a comma-separated string or a list of specs."""
    items = specs.split(",") if isinstance(specs, str) else specs
    return [resolve_tool(item, allow_commands=allow_commands) for item in items if item.strip()]
