"""The layers of docs/architecture.md hold: every import points down (or stays in its own
layer), and no two packages import each other."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import loopwright

SRC = Path(loopwright.__file__).parent

LAYERS: list[set[str]] = [
    {"cli", "server", "testing"},
    {"runtime", "engines"},
    {"compat", "evals"},
    {"agent", "tasks", "skills"},
    {"effects"},
    {"models", "tools", "store", "mcp", "telemetry", "run_context"},
    {"parsing", "prompts", "guards", "safety"},
    {
        "events",
        "messages",
        "errors",
        "clock",
        "config",
        "paths",
        "_net",
        "_event_schema",
        "_extras",
        "_moved",
    },
]
"""Top to bottom. A module may import its own layer or any layer below it."""

LEVEL = {name: index for index, layer in enumerate(LAYERS) for name in layer}


def unit_of(module: str) -> str | None:
    """The layer unit of a `loopwright.X...` module: its first part under loopwright."""
    parts = module.split(".")
    if parts[0] != "loopwright" or len(parts) < 2:
        return None
    return parts[1]


def imports_of(path: Path) -> set[str]:
    """The loopwright modules a file imports (at any place in the file)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("loopwright.")}


def edges() -> dict[tuple[str, str], list[str]]:
    """(from unit, to unit) -> the files that make that import."""
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC)
        if relative.parts[0] in ("__init__.py", "__main__.py"):
            continue  # the public surface re-exports from every layer
        source = relative.parts[0].removesuffix(".py")
        for module in imports_of(path):
            target = unit_of(module)
            if target is not None and target != source:
                found[(source, target)].append(str(relative))
    return found


def test_every_package_has_a_layer() -> None:
    units = {
        p.name.removesuffix(".py")
        for p in SRC.iterdir()
        if (p.is_dir() and (p / "__init__.py").exists()) or p.suffix == ".py"
    } - {"__init__", "__main__"}
    assert units - set(LEVEL) == set()


def test_imports_point_down() -> None:
    upward = [
        f"{files[0]} imports loopwright.{target} (layer {source} is below {target})"
        for (source, target), files in sorted(edges().items())
        if LEVEL[target] < LEVEL[source]
    ]
    assert upward == []


def test_no_two_packages_import_each_other() -> None:
    found = edges()
    cycles = sorted(
        f"{a} <-> {b}: {found[(a, b)][0]} / {found[(b, a)][0]}"
        for (a, b) in found
        if (b, a) in found and a < b
    )
    assert cycles == []
