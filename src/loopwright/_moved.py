"""Names that moved: the old place still gives them for one release, with a warning."""

from __future__ import annotations

import importlib
import warnings


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
