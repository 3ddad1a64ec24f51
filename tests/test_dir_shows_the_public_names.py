"""`dir(loopwright)` (and a REPL's completion, which reads it) shows what a program builds
with: the public names and subpackages, not the package's own imports and bookkeeping."""

from __future__ import annotations

import types

import pytest

import loopwright
import loopwright.tasks

BOOKKEEPING = {"TYPE_CHECKING", "importlib", "MOVED", "moved", "public_dir"}


@pytest.mark.parametrize("package", [loopwright, loopwright.tasks], ids=lambda p: p.__name__)
def test_dir_of_a_package_is_its_public_names_and_subpackages(package: types.ModuleType) -> None:
    shown = [name for name in dir(package) if not name.startswith("__")]
    assert BOOKKEEPING.isdisjoint(shown)
    assert not [name for name in shown if name.startswith("_")]
    others = set(shown) - set(package.__all__)
    assert all(isinstance(getattr(package, name), types.ModuleType) for name in others), others
    assert set(package.__all__) <= set(shown)
    assert "__version__" in dir(loopwright)


def test_the_gate_broker_is_found_where_the_approvals_guide_says() -> None:
    assert "GateBroker" in dir(loopwright.tasks)
    from loopwright.tasks import GateBroker

    assert GateBroker.__module__.startswith("loopwright.tasks")
