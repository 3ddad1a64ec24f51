"""The deterministic task runner: task files, steps, gates, hooks, state and rollback.

Each name is imported on its first use (`__getattr__`): a program or command that uses one
part (the gate broker of every run, the task file reader) does not load the runner.
"""

import importlib
from typing import TYPE_CHECKING

from loopwright._moved import public_dir

if TYPE_CHECKING:  # imported on first use (see __getattr__), for type checkers now
    from loopwright.effects import EventSink
    from loopwright.safety.operations import ChangeEntry
    from loopwright.tasks._context import Journal, StepContext
    from loopwright.tasks._executor import TaskExecutor
    from loopwright.tasks._expressions import Expression, compile_expression, render_template
    from loopwright.tasks._gates import (
        GateBroker,
        PendingGate,
        gate_was_asked,
        join_decider,
        pending_gates,
        split_decider,
    )
    from loopwright.tasks._invocations import AgentInvocation, BackupInvocation, UndoInvocation
    from loopwright.tasks._loader import (
        TASK_SUFFIXES,
        LoadedTask,
        TaskCheck,
        check_task,
        load_hook,
        load_task,
        parse_task,
    )
    from loopwright.tasks._matching import TaskMatch, choose_task
    from loopwright.tasks._models import (
        HookDefinition,
        StepDefinition,
        StepResult,
        TaskDefinition,
        TaskRunState,
    )
    from loopwright.tasks._progress import StepOutcome, TaskProgress
    from loopwright.tasks._resume import recorded_task_spec, resume_effects, resume_task
    from loopwright.tasks._rollback import rollback_task_run
    from loopwright.tasks._run import run_task, step_context, task_run_context
    from loopwright.tasks._spec import (
        TaskPlan,
        TaskSettings,
        TaskSpec,
        prepare_task,
        resolve_inputs,
    )
    from loopwright.tasks._state import StateFileExporter, StateWriter, apply_event, rebuild_state
    from loopwright.tasks._toolfile import static_tools
    from loopwright.tasks._yaml import load_yaml

__all__ = [
    "TASK_SUFFIXES",
    "AgentInvocation",
    "BackupInvocation",
    "ChangeEntry",
    "EventSink",
    "Expression",
    "GateBroker",
    "HookDefinition",
    "Journal",
    "LoadedTask",
    "PendingGate",
    "StateFileExporter",
    "StateWriter",
    "StepContext",
    "StepDefinition",
    "StepOutcome",
    "StepResult",
    "TaskCheck",
    "TaskDefinition",
    "TaskExecutor",
    "TaskMatch",
    "TaskPlan",
    "TaskProgress",
    "TaskRunState",
    "TaskSettings",
    "TaskSpec",
    "UndoInvocation",
    "apply_event",
    "check_task",
    "choose_task",
    "compile_expression",
    "gate_was_asked",
    "join_decider",
    "load_hook",
    "load_task",
    "load_yaml",
    "parse_task",
    "pending_gates",
    "prepare_task",
    "rebuild_state",
    "recorded_task_spec",
    "render_template",
    "resolve_inputs",
    "resume_effects",
    "resume_task",
    "rollback_task_run",
    "run_task",
    "split_decider",
    "static_tools",
    "step_context",
    "task_run_context",
]

_HOMES = {
    "loopwright.effects": ("EventSink",),
    "loopwright.safety.operations": ("ChangeEntry",),
    "loopwright.tasks._context": ("Journal", "StepContext"),
    "loopwright.tasks._executor": ("TaskExecutor",),
    "loopwright.tasks._expressions": ("Expression", "compile_expression", "render_template"),
    "loopwright.tasks._gates": (
        "GateBroker",
        "PendingGate",
        "gate_was_asked",
        "join_decider",
        "pending_gates",
        "split_decider",
    ),
    "loopwright.tasks._invocations": ("AgentInvocation", "BackupInvocation", "UndoInvocation"),
    "loopwright.tasks._loader": (
        "TASK_SUFFIXES",
        "LoadedTask",
        "TaskCheck",
        "check_task",
        "load_hook",
        "load_task",
        "parse_task",
    ),
    "loopwright.tasks._matching": ("TaskMatch", "choose_task"),
    "loopwright.tasks._models": (
        "HookDefinition",
        "StepDefinition",
        "StepResult",
        "TaskDefinition",
        "TaskRunState",
    ),
    "loopwright.tasks._progress": ("StepOutcome", "TaskProgress"),
    "loopwright.tasks._resume": ("recorded_task_spec", "resume_effects", "resume_task"),
    "loopwright.tasks._rollback": ("rollback_task_run",),
    "loopwright.tasks._run": ("run_task", "step_context", "task_run_context"),
    "loopwright.tasks._spec": (
        "TaskPlan",
        "TaskSettings",
        "TaskSpec",
        "prepare_task",
        "resolve_inputs",
    ),
    "loopwright.tasks._state": (
        "StateFileExporter",
        "StateWriter",
        "apply_event",
        "rebuild_state",
    ),
    "loopwright.tasks._toolfile": ("static_tools",),
    "loopwright.tasks._yaml": ("load_yaml",),
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
