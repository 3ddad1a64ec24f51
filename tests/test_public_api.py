"""The public surface: `loopwright.__all__` is curated, and every public name is documented."""

from __future__ import annotations

import importlib.machinery
import inspect
from pathlib import Path

import loopwright

SRC = Path(loopwright.__file__).parent

INTERNALS = {"RunSetup", "LoopState", "Recording", "StoreWriter", "LeaseKeeper", "run_agent"}


def test_all_names_exist_once() -> None:
    names = loopwright.__all__
    assert len(names) == len(set(names))
    missing = [name for name in names if not hasattr(loopwright, name)]
    assert missing == []


def test_the_surface_has_what_users_need_and_no_internals() -> None:
    names = set(loopwright.__all__)
    assert {"AgentExecutor", "TaskExecutor", "Runtime", "RunStore", "SqliteRunStore"} <= names
    assert {"ScriptedModel", "MockClock", "tool", "RunSpec", "TaskSpec"} <= names
    assert names & INTERNALS == set()
    assert not [name for name in names if name.startswith("_")]


def test_every_public_class_and_function_has_a_docstring() -> None:
    undocumented = []
    for name in loopwright.__all__:
        value = getattr(loopwright, name)
        documented = bool((value.__doc__ or "").strip())
        if (inspect.isclass(value) or inspect.isfunction(value)) and not documented:
            undocumented.append(name)
    assert undocumented == []


def test_public_methods_of_the_main_classes_are_documented() -> None:
    undocumented = []
    for cls in (loopwright.AgentExecutor, loopwright.Runtime, loopwright.TaskExecutor):
        for name, member in inspect.getmembers(cls, inspect.isfunction):
            if not name.startswith("_") and not (member.__doc__ or "").strip():
                undocumented.append(f"{cls.__name__}.{name}")
    assert undocumented == []


def test_the_package_is_pure_python() -> None:
    """No C extension beside the sources: Python would import one instead of its `.py`."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    assert [p for p in SRC.rglob("*") if p.name.endswith(suffixes)] == []
