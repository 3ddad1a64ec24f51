"""The tools a task file names: built-ins, `file.py` (every tool in it), `file.py:function`.

A tools file may also define `SNAPSHOT_HOOKS = {"tool_name": hook}`: how to back up and
restore what a non-file write tool changes (see `loopwright.safety.operations`).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

from loopwright.errors import ConfigurationError
from loopwright.safety.operations import SnapshotHook
from loopwright.tools import Tool, ToolRegistry, resolve_tool


def _import_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise ConfigurationError(f"tool file not found: {path}")
    name = f"loopwright_task_tools_{abs(hash(str(path.resolve())))}"
    module = sys.modules.get(name)
    if module is not None:
        return module
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ConfigurationError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise ConfigurationError(f"cannot import {path}: {type(exc).__name__}: {exc}") from None
    return module


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
            module = _import_file(Path(spec))
            tools.extend(v for v in vars(module).values() if isinstance(v, Tool))
            hooks.update(_snapshot_hooks(module))
        else:
            tools.append(resolve_tool(spec))
            file = spec.rsplit(":", 1)[0]
            if file.endswith(".py"):
                hooks.update(_snapshot_hooks(_import_file(Path(file))))
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
