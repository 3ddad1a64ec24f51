"""The compiled core: the hot path, compiled to C with mypyc when the set-up can.

`make setup` (scripts/compile.py) compiles the modules below into C extensions beside their
sources, and records each source's digest in `_compiled.json`. Python then imports the
extension instead of the source (bench/cli_steps.py: ~117 -> ~92 µs a step from the CLI).
Without a C compiler nothing is built and everything runs from the sources, the same code.

When a compiled module's source has changed since (an edit, a `git checkout`), `activate`
(run as `import loopwright` imports this module, before anything else) makes Python import
every one of them from its source: compiled modules call each other directly, so none is
used with a changed neighbour; `make compile` builds them again. `LOOPWRIGHT_PURE=1` does
the same on demand (pure Python: a debugger steps through every line).
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mypy_extensions import mypyc_attr as mypyc_attr
else:

    def mypyc_attr(*_args: object, **_kwargs: object) -> Any:
        """mypyc's class options (read when compiling); running from sources, a no-op."""
        return lambda cls: cls


MODULES = (
    "loopwright.agent._act",
    "loopwright.agent._conversation",
    "loopwright.agent._loop",
    "loopwright.agent._replies",
    "loopwright.agent._state",
    "loopwright.agent._think",
    "loopwright.cli._view",
    "loopwright.effects._deltas",
    "loopwright.effects._live",
    "loopwright.effects._log",
    "loopwright.events._codec",
    "loopwright.guards._policies",
    "loopwright.parsing._chain",
    "loopwright.parsing._extract",
    "loopwright.parsing._layers",
    "loopwright.parsing._shapes",
    "loopwright.prompts._builder",
    "loopwright.runtime._writer",
    "loopwright.safety._strings",
    "loopwright.safety.scrub",
)
"""What a step of a run spends its time in (the loop, events and their log, encoding and
storing them, scrubbing, parsing, prompts, the `--json` view).
Not the tool executor: a subclass of a compiled class loses its own attributes in
`copy.copy` (the compat skill executor copies the one it is given, subclasses included)."""

PACKAGE_ROOT = Path(__file__).resolve().parent
MANIFEST = PACKAGE_ROOT / "_compiled.json"


def source_of(module: str) -> Path:
    """The source file of one of the package's modules."""
    return PACKAGE_ROOT.parent.joinpath(*module.split(".")).with_suffix(".py")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def changed_sources(recorded: dict[str, dict[str, Any]]) -> list[str]:
    """The modules whose source is not what was compiled. A file's size and mtime are
    compared first; only a file whose stat differs is read and hashed (a checkout that
    rewrites the same bytes keeps the compiled module)."""
    changed = []
    for module, was in recorded.items():
        path = source_of(module)
        try:
            stat = path.stat()
        except OSError:
            changed.append(module)
            continue
        if (stat.st_size, stat.st_mtime_ns) == (was["size"], was["mtime_ns"]):
            continue
        if digest(path) != was["sha256"]:
            changed.append(module)
    return changed


class _FromSources(importlib.abc.MetaPathFinder):
    """Imports the compiled modules from their `.py` sources."""

    def __init__(self, modules: Sequence[str]) -> None:
        self.modules = frozenset(modules)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.modules:
            return None
        return importlib.util.spec_from_file_location(fullname, source_of(fullname))


_class_docs: dict[str, dict[str, str]] = {}
"""Each compiled module's class docstrings (mypyc leaves a compiled class without one)."""


def activate() -> None:
    """Use the compiled modules when they match their sources; else the sources."""
    try:
        manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
        recorded = manifest["sources"]
    except (OSError, ValueError, KeyError):
        return  # never compiled here: the sources are all there is
    if os.environ.get("LOOPWRIGHT_PURE") or changed_sources(recorded):
        sys.meta_path.insert(0, _FromSources(list(recorded)))
        return
    _class_docs.update(manifest.get("class_docs", {}))


def restore_docstrings() -> None:
    """Give the classes of the compiled modules imported so far their docstrings back
    (`import loopwright` calls it once the package is imported). A compiled function has
    none at run time: `help()` shows its signature only from the sources
    (`LOOPWRIGHT_PURE=1`)."""
    for module, docs in _class_docs.items():
        loaded = sys.modules.get(module)
        if loaded is None:
            continue
        for name, doc in docs.items():
            cls = getattr(loaded, name, None)
            if isinstance(cls, type) and not cls.__doc__:
                cls.__doc__ = doc


activate()  # on `import loopwright`, before the package imports any of MODULES


def in_use() -> bool:
    """Whether this process runs the compiled modules (benchmarks report it)."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    return all(str(importlib.import_module(m).__file__).endswith(suffixes) for m in MODULES)
