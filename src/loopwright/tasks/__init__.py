"""The deterministic task runner: task files, steps, gates, hooks, state and rollback.

Each name is imported on its first use (`__getattr__`): a program or command that uses one
part (the gate broker of every run, the task file reader) does not load the runner.
"""

import importlib
from typing import TYPE_CHECKING

from loopwright._moved import public_dir

if TYPE_CHECKING:  # imported on first use (see __getattr__), for type checkers now
    from loopwright.safety.operations import ChangeEntry
    from loopwright.tasks._executor import TaskExecutor
    from loopwright.tasks._gates import GateBroker, pending_gates
    from loopwright.tasks._loader import check_task, load_task, parse_task
    from loopwright.tasks._models import StepDefinition, StepResult, TaskDefinition, TaskRunState
    from loopwright.tasks._progress import StepOutcome, TaskProgress
    from loopwright.tasks._resume import recorded_task_spec, resume_effects, resume_task
    from loopwright.tasks._run import run_task
    from loopwright.tasks._spec import TaskPlan, TaskSettings, TaskSpec, prepare_task
    from loopwright.tasks._state import StateWriter, rebuild_state

__all__ = [
    "ChangeEntry",
    "GateBroker",
    "StateWriter",
    "StepDefinition",
    "StepOutcome",
    "StepResult",
    "TaskDefinition",
    "TaskExecutor",
    "TaskPlan",
    "TaskProgress",
    "TaskRunState",
    "TaskSettings",
    "TaskSpec",
    "check_task",
    "load_task",
    "parse_task",
    "pending_gates",
    "prepare_task",
    "rebuild_state",
    "recorded_task_spec",
    "resume_effects",
    "resume_task",
    "run_task",
]

_HOMES = {
    "loopwright.safety.operations": ("ChangeEntry",),
    "loopwright.tasks._executor": ("TaskExecutor",),
    "loopwright.tasks._gates": ("GateBroker", "pending_gates"),
    "loopwright.tasks._loader": ("check_task", "load_task", "parse_task"),
    "loopwright.tasks._models": ("StepDefinition", "StepResult", "TaskDefinition", "TaskRunState"),
    "loopwright.tasks._progress": ("StepOutcome", "TaskProgress"),
    "loopwright.tasks._resume": ("recorded_task_spec", "resume_effects", "resume_task"),
    "loopwright.tasks._run": ("run_task",),
    "loopwright.tasks._spec": ("TaskPlan", "TaskSettings", "TaskSpec", "prepare_task"),
    "loopwright.tasks._state": ("StateWriter", "rebuild_state"),
}
_HOME_OF = {name: home for home, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> object:
    home = _HOME_OF.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # once: later lookups find it without this function
    return value


def __dir__() -> list[str]:
    return public_dir(globals(), __all__)
