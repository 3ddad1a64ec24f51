"""`--agent module:attribute`: an agent built in Python, for a command to run.

The attribute is an `AgentExecutor`, or a factory (a function or class called with no
arguments) that returns one. `module` is a module importable from the current folder or the
environment, or a `path/to/file.py`. Importing it runs its code: a project's loopwright.toml
may name it only once the user trusts the file (config/_trust_rules.py), as for tool code.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from loopwright.agent import AgentExecutor
from loopwright.errors import ConfigurationError


def load_agent(spec: str, *, flag: str = "--agent") -> AgentExecutor[Any, Any]:
    """The agent `spec` (`module:attribute` or `file.py:attribute`) names; a
    ConfigurationError naming `flag` and what is wrong: a missing module or attribute, an
    import that fails, a value that is not an agent."""
    target, colon, attribute = spec.strip().rpartition(":")
    if not colon or not target or not attribute:
        raise ConfigurationError(
            f"{flag} {spec!r}: expected module:attribute or path/to/file.py:attribute"
        )
    module = _from_file(target, spec, flag) if target.endswith(".py") else _import(target, flag)
    if not hasattr(module, attribute):
        raise ConfigurationError(f"{flag} {spec!r}: {target} has no attribute {attribute!r}")
    value = getattr(module, attribute)
    if inspect.isroutine(value) or isinstance(value, type):  # a factory
        try:
            value = value()
        except Exception as exc:
            raise ConfigurationError(
                f"{flag} {spec!r}: calling {attribute}() failed: {type(exc).__name__}: {exc}"
            ) from None
    if not isinstance(value, AgentExecutor):
        raise ConfigurationError(
            f"{flag} {spec!r}: {attribute} is a {type(value).__name__}, not an AgentExecutor "
            "(nor a factory returning one)"
        )
    return value


def _import(name: str, flag: str) -> ModuleType:
    here = os.getcwd()
    if here not in sys.path:  # as `python -m` does: the current folder's modules
        sys.path.insert(0, here)
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ConfigurationError(f"{flag}: cannot import module {name!r}: {exc}") from None
    except Exception as exc:
        raise ConfigurationError(
            f"{flag}: importing module {name!r} failed: {type(exc).__name__}: {exc}"
        ) from None


def _from_file(file: str, spec: str, flag: str) -> ModuleType:
    path = Path(file).expanduser()
    if not path.is_file():
        raise ConfigurationError(f"{flag} {spec!r}: file not found: {file}")
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    name = f"loopwright_user_agent_{digest}"
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise ConfigurationError(f"{flag} {spec!r}: cannot import {file}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise ConfigurationError(
            f"{flag} {spec!r}: importing {file} failed: {type(exc).__name__}: {exc}"
        ) from None
    return module
