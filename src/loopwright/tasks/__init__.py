"""The deterministic task runner: task files, steps, gates, hooks, state and rollback."""

from loopwright.safety.operations import ChangeEntry
from loopwright.tasks._emitter import EventSink
from loopwright.tasks._executor import TaskExecutor, resolve_inputs
from loopwright.tasks._expressions import Expression, compile_expression, render_template
from loopwright.tasks._gates import GateBroker, PendingGate, StoreDecisions
from loopwright.tasks._loader import (
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
from loopwright.tasks._rollback import rollback_task_run
from loopwright.tasks._run import TaskSettings
from loopwright.tasks._state import StateFileExporter, apply_event, rebuild_state

__all__ = [
    "ChangeEntry",
    "EventSink",
    "Expression",
    "GateBroker",
    "HookDefinition",
    "LoadedTask",
    "PendingGate",
    "StateFileExporter",
    "StepDefinition",
    "StepResult",
    "StoreDecisions",
    "TaskCheck",
    "TaskDefinition",
    "TaskExecutor",
    "TaskMatch",
    "TaskRunState",
    "TaskSettings",
    "apply_event",
    "check_task",
    "choose_task",
    "compile_expression",
    "load_hook",
    "load_task",
    "parse_task",
    "rebuild_state",
    "render_template",
    "resolve_inputs",
    "rollback_task_run",
]
