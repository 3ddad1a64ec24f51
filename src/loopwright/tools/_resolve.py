"""Resolve `--tools` specs: built-in names, `module:function` and `path/to/file.py:function`."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

from loopwright.errors import ConfigurationError
from loopwright.tools._tool import Tool
from loopwright.tools.builtin import BUILTIN_TOOLS


def _as_tool(obj: object, where: str) -> Tool:
    if isinstance(obj, Tool):
        return obj
    if callable(obj):
        return Tool.from_function(obj)
    raise ConfigurationError(f"{where} is not a function or a tool")


def _load_from_file(file: str, attr: str) -> object:
    path = Path(file)
    if not path.is_file():
        raise ConfigurationError(f"tool file not found: {file}")
    name = f"loopwright_user_tools_{abs(hash(path.resolve()))}"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ConfigurationError(f"cannot import {file}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    if not hasattr(module, attr):
        raise ConfigurationError(f"{file} has no function {attr!r}")
    return getattr(module, attr)


def resolve_tool(spec: str) -> Tool:
    spec = spec.strip()
    if spec in BUILTIN_TOOLS:
        return BUILTIN_TOOLS[spec]
    if ":" not in spec:
        known = ", ".join(sorted(BUILTIN_TOOLS))
        raise ConfigurationError(
            f"unknown tool {spec!r}: use a built-in ({known}), module:function "
            "or path/to/file.py:function"
        )
    target, attr = spec.rsplit(":", 1)
    if target.endswith(".py"):
        return _as_tool(_load_from_file(target, attr), spec)
    try:
        module = importlib.import_module(target)
    except ImportError as exc:
        raise ConfigurationError(f"cannot import {target!r} for tool {spec!r}: {exc}") from None
    if not hasattr(module, attr):
        raise ConfigurationError(f"module {target!r} has no function {attr!r}")
    return _as_tool(getattr(module, attr), spec)


def resolve_tools(specs: str | list[str]) -> list[Tool]:
    """Tools from a comma-separated string or a list of specs."""
    items = specs.split(",") if isinstance(specs, str) else specs
    return [resolve_tool(item) for item in items if item.strip()]
