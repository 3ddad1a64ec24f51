"""Names that moved: the old place still gives them for one release, with a warning; and
what `dir()` of a package shows (its public names, not its imports and bookkeeping)."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Iterable, Mapping
from types import ModuleType


def moved(old_module: str, name: str, new_module: str) -> object:
    """`new_module.name`, after a DeprecationWarning that tells the caller where it lives
    now (called from an old module's `__getattr__`: the warning points at the import)."""
    warnings.warn(
        f"{old_module}.{name} moved: import it from {new_module} "
        f"(`from {new_module} import {name}`); the old place goes in the next release",
        DeprecationWarning,
        stacklevel=3,
    )
    return getattr(importlib.import_module(new_module), name)


def public_dir(namespace: Mapping[str, object], public: Iterable[str]) -> list[str]:
    """A package's `dir()`: its `__all__`, its subpackages and modules already imported
    (`loopwright.errors`) and the module's own dunders (`__version__`, `__doc__`); not the
    names it imports for itself (`TYPE_CHECKING`, `importlib`) or keeps for its lookups."""
    package = str(namespace.get("__name__", ""))
    shown = set(public)
    for name, value in namespace.items():
        dunder = name.startswith("__") and name.endswith("__")
        own_module = isinstance(value, ModuleType) and value.__name__ == f"{package}.{name}"
        if dunder or (own_module and not name.startswith("_")):
            shown.add(name)
    return sorted(shown)
