"""The workflow sandbox the workers run loopwright's workflows in.

Temporal's sandbox runs each workflow run with fresh copies of the modules it imports and
refuses, at run time, what would make a replay differ: the clock, randomness, files,
the network, threads, the environment. The workflow side of this engine (the workflows,
their effects, their gates, how a continued run goes on, how a run is built: the modules
of `SANDBOXED`) runs in it, so what it does is checked on every workflow task. Every
other module is passed through (imported once, shared with the worker): the third-party
packages, loopwright's other packages (the loop, the events, the store: the loop is held
deterministic by the replay tests, its effects being the workflow's) and the engine's
activity and client side.
"""

from __future__ import annotations

import dataclasses
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import CodeType, ModuleType
from typing import ClassVar

from temporalio.worker import Replayer
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from loopwright.engines.temporal._codec import data_converter

TEMPORAL = "loopwright.engines.temporal"
SANDBOXED = frozenset(
    f"{TEMPORAL}.{name}"
    for name in (
        "_workflow",
        "_task_workflow",
        "_effects",
        "_continue",
        "_approvals",
        "_build",
    )
)
"""The engine's workflow-side modules: imported afresh for each workflow run, checked.
(The payload dataclasses, data only, are passed through: making their classes is most of
what importing them costs.)"""
PARENTS = frozenset({"loopwright", "loopwright.engines", TEMPORAL})
"""Their packages (a passed-through package would pass its modules through)."""


class AllModulesBut(set[str]):
    """The sandbox's pass-through set: every module but the workflow side (and its
    packages). The standard library's modules stay restricted where the workflow side
    uses them: the sandbox wraps a restricted module whether or not it passes it."""

    def __contains__(self, name: object) -> bool:
        return name not in SANDBOXED and name not in PARENTS


class CompiledOnce(importlib.machinery.SourceFileLoader):
    """Loads a workflow-side module with the code compiled the first time: the sandbox
    imports these modules afresh for each workflow run, and where no bytecode file is
    written (PYTHONDONTWRITEBYTECODE, a read-only tree) each import compiled the source
    again. The module itself is still made anew each time."""

    codes: ClassVar[dict[str, CodeType]] = {}

    def get_code(self, fullname: str) -> CodeType | None:
        code = self.codes.get(self.path)
        if code is None:
            code = super().get_code(fullname)
            if code is not None:
                self.codes[self.path] = code
        return code


class WorkflowSideSources(importlib.abc.MetaPathFinder):
    """Finds the workflow side's modules (and their packages) where Python would, once,
    and loads them with `CompiledOnce`."""

    def __init__(self) -> None:
        self._found: dict[str, tuple[str, list[str] | None]] = {}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in SANDBOXED and fullname not in PARENTS:
            return None
        found = self._found.get(fullname)
        if found is None:
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is None or type(spec.loader) is not importlib.machinery.SourceFileLoader:
                return None  # not a source file on the path: found and loaded as usual
            assert spec.origin is not None
            found = self._found[fullname] = (spec.origin, spec.submodule_search_locations)
        origin, packages = found
        return importlib.util.spec_from_file_location(
            fullname, origin, loader=CompiledOnce(fullname, origin),
            submodule_search_locations=None if packages is None else list(packages),
        )  # fmt: skip


def _find_workflow_side_once() -> None:
    if not any(isinstance(finder, WorkflowSideSources) for finder in sys.meta_path):
        sys.meta_path.insert(0, WorkflowSideSources())


def workflow_runner() -> SandboxedWorkflowRunner:
    """The sandbox of a worker (and of a Replayer that checks a history)."""
    _find_workflow_side_once()
    restrictions = dataclasses.replace(
        SandboxRestrictions.default, passthrough_modules=AllModulesBut()
    )
    return SandboxedWorkflowRunner(restrictions=restrictions)


def replayer(*workflows: type) -> Replayer:
    """A Replayer that checks histories as a worker runs them: sandboxed, payloads
    decrypted with this process's key (engines/temporal/_codec.py)."""
    runner, converter = workflow_runner(), data_converter()
    return Replayer(workflows=list(workflows), workflow_runner=runner, data_converter=converter)
