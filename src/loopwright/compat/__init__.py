"""The seeds' public contracts, as the seeds wrote them: thin doors onto the one engine.

Code written against one of the five seed specs imports from here; each name below is
the seed's, with the seed's signature and return shape, and runs on loopwright's own
loop, parser chain, tool executor, scrubber and task runner (there is no second one).
The native API (`loopwright`, `loopwright.tasks`, `loopwright.skills`) stays the better
fit for new code; docs/seeds.md lists every seed name, its native name and each
difference with its reason.

- seed 000 (autonomous skill executor): AutonomousSkillExecutor, AutonomousConfig,
  ExecutionResult, TaskStatusEvent, TaskMessageEvent, TaskErrorEvent, TaskDoneEvent
- seed 001 (ReAct agent loop): AgentExecutor, MaxStepsExceeded, AgentAction, AgentFinish,
  AgentObservation, AgentStep, BaseParser, ReActJsonParser
- seed 002 (system prompt): AUTONOMOUS_SKILL_SYSTEM_PROMPT, PromptBuilder
- seed 004 (task executor): TaskExecutor, Settings, TaskDefinition, StepDefinition,
  TaskRunState, StepResult, ChangeEntry, TaskParseError
"""

from loopwright.agent import ExecutionResult
from loopwright.compat._agent import (
    AgentAction,
    AgentExecutor,
    AgentFinish,
    AgentObservation,
    AgentStep,
    BaseParser,
    ReActJsonParser,
)
from loopwright.compat._prompts import AUTONOMOUS_SKILL_SYSTEM_PROMPT, PromptBuilder
from loopwright.compat._skills import (
    AutonomousSkillExecutor,
    TaskDoneEvent,
    TaskErrorEvent,
    TaskEvent,
    TaskMessageEvent,
    TaskStatusEvent,
)
from loopwright.compat._tasks import (
    ChangeEntry,
    Settings,
    StepDefinition,
    StepResult,
    TaskDefinition,
    TaskExecutor,
    TaskParseError,
    TaskRunState,
)
from loopwright.errors import MaxStepsExceeded, ParseError
from loopwright.skills import AutonomousConfig

__all__ = [
    "AUTONOMOUS_SKILL_SYSTEM_PROMPT",
    "AgentAction",
    "AgentExecutor",
    "AgentFinish",
    "AgentObservation",
    "AgentStep",
    "AutonomousConfig",
    "AutonomousSkillExecutor",
    "BaseParser",
    "ChangeEntry",
    "ExecutionResult",
    "MaxStepsExceeded",
    "ParseError",
    "PromptBuilder",
    "ReActJsonParser",
    "Settings",
    "StepDefinition",
    "StepResult",
    "TaskDefinition",
    "TaskDoneEvent",
    "TaskErrorEvent",
    "TaskEvent",
    "TaskExecutor",
    "TaskMessageEvent",
    "TaskParseError",
    "TaskRunState",
    "TaskStatusEvent",
]
