"""Load and validate task files (YAML, or Markdown with YAML front matter) and their hooks.

Every problem is a TaskParseError naming the file, the line and what is wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loopwright.errors import ConfigurationError, TaskParseError
from loopwright.safety.operations import SnapshotHook
from loopwright.tasks._expressions import ExpressionProblem, compile_expression, template_fields
from loopwright.tasks._models import (
    HOOK_NAMES,
    STEP_TYPES,
    HookDefinition,
    StepDefinition,
    TaskDefinition,
)
from loopwright.tasks._toolfile import absolute_spec, build_registry
from loopwright.tasks._yaml import LineDict, load_yaml, split_front_matter
from loopwright.tools import Tool, ToolRegistry

TASK_KEYS = {
    "name", "agent", "trigger_keywords", "risk_level", "steps", "hooks", "description",
    "inputs", "tools",
}  # fmt: skip
STEP_KEYS = {
    "name", "type", "description", "tool", "args", "args_from", "condition",
    "message_template", "timeout_s",
}  # fmt: skip
TASK_SUFFIXES = (".yaml", ".yml", ".md")


@dataclass
class LoadedTask:
    """A valid task with the tools it uses and the snapshot hooks of its tools file."""

    definition: TaskDefinition
    registry: ToolRegistry
    snapshot_hooks: dict[str, SnapshotHook] = field(default_factory=dict)


def read_document(path: Path) -> tuple[LineDict, str]:
    """The YAML mapping of a task or hook file, and its Markdown body ('' for YAML)."""
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TaskParseError(file, "file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskParseError(file, f"cannot read the file: {exc}") from None
    body, offset = "", 0
    if path.suffix == ".md":
        text, body, offset = split_front_matter(text, file)
    data = load_yaml(text, file, line_offset=offset)
    if data is None and path.suffix == ".md":
        data = LineDict()
        data.key_lines = {}
    if not isinstance(data, LineDict):
        raise TaskParseError(file, "expected a mapping of task fields (name, steps, ...)", 1)
    return data, body


def load_task(path: str | Path, extra_tools: Sequence[Tool] = ()) -> LoadedTask:
    """Read, check and resolve a task file: its steps, hooks and tools."""
    definition = parse_task(path)
    data, _ = read_document(Path(path))
    try:
        registry, hooks = build_registry(definition.tools, extra_tools)
    except ConfigurationError as exc:
        raise TaskParseError(str(path), str(exc), data.line_of("tools")) from None
    validate_tools(definition, registry)
    return LoadedTask(definition, registry, hooks)


def parse_task(path: str | Path) -> TaskDefinition:
    """The task's structure, with every expression checked (tools are checked by load_task)."""
    file = Path(path)
    data, body = read_document(file)
    where = str(file)
    _reject_unknown(data, TASK_KEYS, where, "task")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise TaskParseError(where, "the task needs a 'name'", data.line_of("name"))
    raw_steps = data.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        raise TaskParseError(where, "'steps' must be a non-empty list", data.line_of("steps"))
    inputs = data.get("inputs") or {}
    if not isinstance(inputs, dict):
        raise TaskParseError(where, "'inputs' must map names to defaults", data.line_of("inputs"))
    return TaskDefinition(
        name=name.strip(),
        agent=str(data.get("agent") or ""),
        trigger_keywords=_string_list(data, "trigger_keywords", where),
        risk_level=str(data.get("risk_level") or "low"),
        steps=parse_steps(raw_steps, where, data.line_of("steps")),
        hooks=_load_hooks(data, file),
        description=str(data.get("description") or body.strip()),
        inputs=dict(inputs),
        tools=tuple(absolute_spec(s, file.parent) for s in _string_list(data, "tools", where)),
        source_path=str(file.resolve()),
    )


def validate_tools(task: TaskDefinition, registry: ToolRegistry) -> None:
    """Every tool step (in the task and its hooks) names a tool the registry has."""
    groups = [(task.source_path, task.steps)]
    groups += [(hook.path, hook.steps) for hook in task.hooks.values()]
    for where, steps in groups:
        for step in steps:
            if step.type == "tool" and step.tool not in registry:
                known = ", ".join(registry.names()) or "none"
                raise TaskParseError(
                    where,
                    f"step {step.name!r}: unknown tool {step.tool!r} (known: {known})",
                    step.line,
                )


def parse_steps(raw_steps: list[Any], where: str, line: int) -> tuple[StepDefinition, ...]:
    steps: list[StepDefinition] = []
    all_names = [s.get("name") for s in raw_steps if isinstance(s, dict)]
    for raw in raw_steps:
        if not isinstance(raw, LineDict):
            raise TaskParseError(where, "each step must be a mapping (name, type, ...)", line)
        steps.append(_parse_step(raw, where, [s.name for s in steps], all_names))
    return tuple(steps)


def _parse_step(raw: LineDict, where: str, earlier: list[str], every: list[Any]) -> StepDefinition:
    _reject_unknown(raw, STEP_KEYS, where, "step")
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise TaskParseError(where, "the step needs a 'name'", raw.line)
    if name in earlier:
        raise TaskParseError(where, f"two steps are named {name!r}", raw.line_of("name"))
    kind = raw.get("type")
    if kind not in STEP_TYPES:
        raise TaskParseError(
            where,
            f"step {name!r}: unknown step type {kind!r} (use tool, agent or gate)",
            raw.line_of("type"),
        )
    if kind == "tool" and not isinstance(raw.get("tool"), str):
        raise TaskParseError(where, f"step {name!r}: a tool step needs 'tool'", raw.line)
    if kind == "agent" and not (raw.get("description") or raw.get("message_template")):
        raise TaskParseError(where, f"step {name!r}: an agent step needs a 'description'", raw.line)
    refs = _StepRefs(where, name, earlier, every)
    args = raw.get("args") or {}
    args_from = raw.get("args_from") or {}
    for key, value in (("args", args), ("args_from", args_from)):
        if not isinstance(value, dict):
            raise TaskParseError(
                where, f"step {name!r}: {key!r} must be a mapping", raw.line_of(key)
            )
    for arg, path in args_from.items():
        line = args_from.line_of(arg) if isinstance(args_from, LineDict) else raw.line
        refs.check(path, f"args_from {arg!r}", line, path_only=True)
    condition = raw.get("condition")
    if condition is not None:
        refs.check(condition, "condition", raw.line_of("condition"), path_only=False)
    for key in ("message_template", "description"):
        for field_text in template_fields(str(raw.get(key) or "")):
            refs.check(field_text, key, raw.line_of(key), path_only=True)
    timeout = raw.get("timeout_s")
    if timeout is not None and not (isinstance(timeout, int | float) and timeout > 0):
        raise TaskParseError(
            where, f"step {name!r}: 'timeout_s' must be a positive number", raw.line_of("timeout_s")
        )
    return StepDefinition(
        name=name,
        type=kind,
        description=str(raw.get("description") or ""),
        tool=raw.get("tool"),
        args=dict(args),
        args_from={str(k): str(v) for k, v in args_from.items()},
        condition=None if condition is None else str(condition),
        message_template=raw.get("message_template"),
        timeout_s=None if timeout is None else float(timeout),
        line=raw.line,
    )


@dataclass
class _StepRefs:
    where: str
    step: str
    earlier: list[str]
    every: list[Any]

    def check(self, source: Any, what: str, line: int, *, path_only: bool) -> None:
        if not isinstance(source, str):
            raise TaskParseError(self.where, f"step {self.step!r}: {what} must be text", line)
        try:
            expression = compile_expression(source, path_only=path_only)
        except ExpressionProblem as exc:
            raise TaskParseError(
                self.where, f"step {self.step!r}: bad {what} {source!r}: {exc}", line
            ) from None
        for name in sorted(expression.steps):
            if name in self.earlier:
                continue
            if name in self.every:
                problem = f"refers to step {name!r}, which runs later"
            else:
                problem = f"refers to step {name!r}, which does not exist"
            raise TaskParseError(self.where, f"step {self.step!r}: {what} {problem}", line)


def _reject_unknown(data: LineDict, known: set[str], where: str, what: str) -> None:
    for key in data:
        if key not in known:
            allowed = ", ".join(sorted(known))
            raise TaskParseError(
                where, f"unknown {what} field {key!r} (known: {allowed})", data.line_of(key)
            )


def _string_list(data: LineDict, key: str, where: str) -> tuple[str, ...]:
    value = data.get(key) or []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TaskParseError(where, f"{key!r} must be a list of text", data.line_of(key))
    return tuple(value)


def _load_hooks(data: LineDict, task_file: Path) -> dict[str, HookDefinition]:
    """Hooks named in the task (`hooks: {pre-task: path}`), else hooks/pre-task.md etc."""
    hooks: dict[str, HookDefinition] = {}
    declared = data.get("hooks")
    if declared is not None and not isinstance(declared, LineDict):
        raise TaskParseError(
            str(task_file), "'hooks' must map pre-task/post-task to files", data.line_of("hooks")
        )
    for kind, names in HOOK_NAMES.items():
        if declared is not None:
            if kind in declared:
                hooks[kind] = load_hook(kind, task_file.parent / str(declared[kind]))
            continue
        for file_name in names:
            candidate = task_file.parent / "hooks" / file_name
            if candidate.is_file():
                hooks[kind] = load_hook(kind, candidate)
                break
    if declared is not None:
        _reject_unknown(declared, set(HOOK_NAMES), str(task_file), "hook")
    return hooks


def load_hook(kind: str, path: Path) -> HookDefinition:
    """A Markdown hook: front-matter `steps` (tool or agent), or the body as an agent step."""
    data, body = read_document(path)
    where = str(path)
    _reject_unknown(data, {"steps", "description"}, where, "hook")
    raw_steps = data.get("steps")
    if raw_steps is None:
        if not body.strip():
            raise TaskParseError(where, "a hook needs front-matter 'steps' or instructions", 1)
        step = StepDefinition(name=f"{kind}-agent", type="agent", description=body.strip(), line=1)
        return HookDefinition(kind, where, (step,))
    if not isinstance(raw_steps, list) or not raw_steps:
        raise TaskParseError(where, "'steps' must be a non-empty list", data.line_of("steps"))
    steps = parse_steps(raw_steps, where, data.line_of("steps"))
    for step in steps:
        if step.type == "gate":
            raise TaskParseError(
                where, f"step {step.name!r}: hooks cannot have gate steps", step.line
            )
    return HookDefinition(kind, where, steps)
