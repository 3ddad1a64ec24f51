"""The layers of docs/architecture.md hold: every import points down (or stays in its own
layer), no two packages import each other, no module is in an import circle (inside a
package too, counting imports made inside functions and under TYPE_CHECKING), and no
`loopwright` subcommand imports another (they share helpers through cli/_shared.py).

Code of loopwright imports what it needs from the module that defines it, private or not
(`from loopwright.runtime._tail import tail_while`): a package's `__all__` is for users
(tests/test_public_api.py), not the way its neighbours reach its internals."""

from __future__ import annotations

import ast
import functools
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
        "_ports",
        "_event_schema",
        "_extras",
        "_moved",
        "_assembly",
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


def module_of(path: Path) -> str:
    """`loopwright.cli._run` for src/loopwright/cli/_run.py (a package: its __init__)."""
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_of(path): path for path in SRC.rglob("*.py")}


@functools.cache
def module_imports() -> dict[str, set[str]]:
    """Each loopwright module -> the loopwright modules it imports anywhere in its file.
    `from P import name` imports P.name when that is a module, else P (its __init__)."""
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    inner = f"{node.module}.{alias.name}"
                    targets.add(inner if inner in MODULES else node.module)
            elif isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
        graph[module] = {t for t in targets if t in MODULES and t != module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_no_module_is_in_an_import_circle() -> None:
    graph = module_imports()
    described = [
        " <-> ".join(group)
        + ": "
        + "; ".join(f"{a} -> {b}" for a in group for b in sorted(graph[a] & set(group)))
        for group in circles(graph)
    ]
    assert described == []


def test_the_circle_finder_finds_a_circle_inside_a_package() -> None:
    graph = {"p._a": {"p._b"}, "p._b": {"p._c"}, "p._c": {"p._a"}, "p._d": {"p._a"}}
    assert circles(graph) == [["p._a", "p._b", "p._c"]]


def test_no_subcommand_imports_another() -> None:
    from loopwright.cli import SUBCOMMAND_MODULES

    graph = module_imports()
    crossing = sorted(
        (module, target)
        for module in SUBCOMMAND_MODULES
        for target in graph[module]
        if target in SUBCOMMAND_MODULES
    )
    assert crossing == []
