"""The public surface: `loopwright.__all__` is curated; each package's `__all__` lists what a
user builds with (under 250 names across the subpackages), and every one of them is named in
the docs; the tests import that surface, and private modules only to test an internal."""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import inspect
import re
import warnings
from pathlib import Path

import pytest

import loopwright
import loopwright.testing

SRC = Path(loopwright.__file__).parent
ROOT = SRC.parent.parent
TESTS = ROOT / "tests"

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


def public_modules() -> list[str]:
    """Every public module below `loopwright` (no part of its name starts with `_`) that is a
    package or declares an `__all__`, by name."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if not parts or any(part.startswith("_") for part in parts):
            continue
        if path.name == "__init__.py" or re.search(r"^__all__\b", path.read_text(), re.M):
            found.append(".".join(("loopwright", *parts)))
    return found


def public_names() -> dict[str, list[str]]:
    """Each public module below `loopwright` -> its `__all__`."""
    return {
        name: list(getattr(importlib.import_module(name), "__all__", ()))
        for name in public_modules()
    }


SURFACE_LIMIT = 250
"""The public names across the subpackages stay under this many: a package publishes what a
user builds with; its internals import each other's private modules."""


def test_every_public_package_declares_its_surface() -> None:
    missing = [
        name for name in public_modules() if not hasattr(importlib.import_module(name), "__all__")
    ]
    assert missing == []


def test_the_public_names_across_the_subpackages_are_fewer_than_the_limit() -> None:
    names = public_names()
    assert "loopwright.runtime" in names and "loopwright.tasks" in names
    total = sum(len(listed) for listed in names.values())
    assert total < SURFACE_LIMIT, {module: len(listed) for module, listed in names.items()}


def test_every_public_name_exists_once_in_its_module() -> None:
    problems = []
    for module, listed in public_names().items():
        imported = importlib.import_module(module)
        problems += [f"{module}: {name} twice" for name in set(listed) if listed.count(name) > 1]
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a public name is not a deprecated one
            problems += [
                f"{module}.{name} missing" for name in listed if not hasattr(imported, name)
            ]
    assert problems == []


def code_words(markdown: str) -> set[str]:
    """The words written as code in `markdown`: in a fenced block or a `code span`."""
    code: list[str] = []
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif fenced:
            code.append(line)
        else:
            code += [span for _, span in re.findall(r"(`+)(.+?)\1", line)]
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", "\n".join(code)))


def documented_words() -> set[str]:
    """The words written as code in README.md and docs/*.md."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return code_words("\n".join(page.read_text(encoding="utf-8") for page in pages))


def test_every_public_name_is_named_in_the_docs() -> None:
    words = documented_words()
    names = {"loopwright": list(loopwright.__all__), **public_names()}
    undocumented = [f"{module}.{name}" for module, listed in names.items() for name in listed]
    undocumented = [full for full in undocumented if full.rsplit(".", 1)[1] not in words]
    assert undocumented == [], "name these in README.md or docs/*.md (as code)"


def test_a_name_counts_as_documented_only_written_as_code() -> None:
    page = "The Runtime runs. Use `open_store(path)`, `` `x` ``.\n```python\nimport tool\n```\n"
    assert code_words(page) == {"open_store", "path", "x", "import", "tool"}


def private_imports_in(folder: Path) -> list[str]:
    """`file:line` of each import of a private module below a package (`loopwright.X._y`,
    as deep as it goes) in the Python files under `folder`."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules = [node.module]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            for module in modules:
                parts = module.split(".")
                if parts[0] == "loopwright" and any(part.startswith("_") for part in parts[2:]):
                    found.append(f"{path.relative_to(folder)}:{node.lineno}")
    return found


PRIVATE_IMPORTS_IN_TESTS_CEILING = 115
"""Imports of private modules in tests/: tests of an internal, on purpose. A test imports
what a user would (`from loopwright.runtime import Runtime`); this ceiling only goes down."""


def test_private_imports_in_tests_stay_under_the_ceiling() -> None:
    found = private_imports_in(TESTS)
    assert len(found) <= PRIVATE_IMPORTS_IN_TESTS_CEILING, (
        f"{len(found)} imports of private modules in tests/ (ceiling "
        f"{PRIVATE_IMPORTS_IN_TESTS_CEILING}): import the public name instead"
    )


def test_the_private_import_count_counts_both_forms_and_only_private_modules(
    tmp_path: Path,
) -> None:
    (tmp_path / "test_a.py").write_text(
        "from loopwright.runtime._tail import tail_while\n"
        "from loopwright.runtime import Runtime\n"
        "from loopwright._moved import moved\n"
        "def f() -> None:\n"
        "    import loopwright.engines.temporal._codec\n"
    )
    assert private_imports_in(tmp_path) == ["test_a.py:1", "test_a.py:5"]
