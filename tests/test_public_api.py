"""The public surface: `loopwright.__all__` is curated, and every public name is documented."""

from __future__ import annotations

import importlib
import importlib.machinery
import inspect
import warnings
from pathlib import Path

import pytest

import loopwright
import loopwright.testing

SRC = Path(loopwright.__file__).parent

INTERNALS = {"RunSetup", "LoopState", "Recording", "StoreWriter", "LeaseKeeper", "run_agent"}


def test_all_names_exist_once() -> None:
    names = loopwright.__all__
    assert len(names) == len(set(names))
    missing = [name for name in names if not hasattr(loopwright, name)]
    assert missing == []


def test_the_surface_has_what_users_build_with_and_no_internals_or_doubles() -> None:
    names = set(loopwright.__all__)
    assert 25 <= len(names) <= 30
    assert {"AgentExecutor", "TaskExecutor", "Runtime", "RunStore", "SqliteRunStore"} <= names
    assert {"tool", "Model", "ModelResponse", "Event", "RunSpec", "TaskSpec"} <= names
    assert {"LoopwrightError", "UsageError", "RunError", "ToolError"} <= names
    assert names & INTERNALS == set()
    assert names & set(loopwright.testing.__all__) == set()
    assert not [name for name in names if name.startswith("_")]


def test_the_test_doubles_come_from_loopwright_testing_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from loopwright.testing import InMemoryRunStore, MockClock, ScriptedModel
    assert ScriptedModel([]).name and MockClock().time() > 0
    assert InMemoryRunStore().__class__.__name__ == "InMemoryRunStore"


OLD_PLACES = [
    ("loopwright", "ScriptedModel", "loopwright.testing"),
    ("loopwright", "MockClock", "loopwright.testing"),
    ("loopwright", "InMemoryRunStore", "loopwright.testing"),
    ("loopwright.models", "ScriptedModel", "loopwright.testing"),
    ("loopwright.store", "InMemoryRunStore", "loopwright.testing"),
    *(("loopwright", name, home) for name, home in loopwright.MOVED.items()),
]


@pytest.mark.parametrize(("old", "name", "home"), OLD_PLACES, ids=lambda v: str(v))
def test_a_moved_name_still_imports_from_its_old_place_with_a_warning(
    old: str, name: str, home: str
) -> None:
    with pytest.warns(DeprecationWarning, match=rf"{old}\.{name} moved: .*from {home} import"):
        value = getattr(importlib.import_module(old), name)
    assert value is getattr(importlib.import_module(home), name)


def test_the_warning_points_at_the_line_that_imports() -> None:
    with pytest.warns(DeprecationWarning) as caught:
        from loopwright import ScriptedModel  # noqa: F401
    assert caught[0].filename == __file__


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        loopwright.no_such_name  # noqa: B018


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
