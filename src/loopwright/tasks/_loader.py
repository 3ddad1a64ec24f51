"""Load and validate task files (YAML, or Markdown with YAML front matter) and their hooks.

Every problem is found in one pass: `load_task` and `parse_task` raise TaskProblems (a
TaskParseError) listing each as `file:line: problem` in file order; `check_task` returns them
and reads tool files without running them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from loopwright.errors import ConfigurationError, TaskParseError
from loopwright.safety.operations import SnapshotHook
from loopwright.tasks._line_dict import MAX_DOCUMENT_BYTES, LineDict
from loopwright.tasks._models import HOOK_NAMES, HookDefinition, StepDefinition, TaskDefinition
from loopwright.tasks._problems import Problems
from loopwright.tasks._step_checks import parse_steps, reject_unknown, validate_tools
from loopwright.tasks._toolfile import absolute_spec, build_registry, static_tools
from loopwright.tasks._yaml import load_yaml, split_front_matter
from loopwright.tools import Tool, ToolRegistry

TASK_KEYS = {
    "name", "agent", "trigger_keywords", "risk_level", "steps", "hooks", "description",
    "inputs", "tools",
}  # fmt: skip
TASK_SUFFIXES = (".yaml", ".yml", ".md")


@dataclass
class LoadedTask:
    """A valid task with the tools it uses and the snapshot hooks of its tools file."""

    definition: TaskDefinition
    registry: ToolRegistry
    snapshot_hooks: dict[str, SnapshotHook] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskCheck:
    """What `check_task` found: the task (None when it could not be read) and every problem,
    in file order. No tool file was imported to find them."""

    file: str
    definition: TaskDefinition | None
    problems: list[TaskParseError]

    @property
    def ok(self) -> bool:
        return not self.problems


def read_document(path: Path) -> tuple[LineDict, str]:
    """The YAML mapping of a task or hook file, and its Markdown body ('' for YAML)."""
    file = str(path)
    try:
        if path.is_file() and path.stat().st_size > MAX_DOCUMENT_BYTES:
            raise TaskParseError(file, f"larger than {MAX_DOCUMENT_BYTES:,} bytes")
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
    """Read, check and resolve a task file: its steps, hooks and tools (tool files are
    imported). Raises TaskProblems with every problem found, in file order."""
    problems = Problems()
    definition, tools_line = _parse(Path(path), problems)
    registry, hooks = ToolRegistry(), dict[str, SnapshotHook]()
    if definition is not None:
        try:
            registry, hooks = build_registry(definition.tools, extra_tools)
        except ConfigurationError as exc:
            problems.add(str(path), str(exc), tools_line)
        else:
            validate_tools(definition, registry.names(), problems, str(path))
    problems.raise_if_any()
    assert definition is not None
    return LoadedTask(definition, registry, hooks)


def check_task(path: str | Path) -> TaskCheck:
    """Every problem of a task file, its hooks and its tools, found without running any of
    its code: tool files are read with `ast`, never imported."""
    problems = Problems()
    where = str(path)
    definition, tools_line = _parse(Path(path), problems)
    if definition is not None:
        found = static_tools(definition.tools)
        for file, line, message in found.problems:
            if file is not None:
                problems.saw(file)
            problems.add(file or where, message, line if file else tools_line)
        validate_tools(definition, found.names, problems, where)
    return TaskCheck(where, definition, problems.ordered())


def parse_task(path: str | Path) -> TaskDefinition:
    """The task's structure, with every expression checked (tools are checked by load_task)."""
    problems = Problems()
    definition, _ = _parse(Path(path), problems)
    problems.raise_if_any()
    assert definition is not None
    return definition


def _parse(file: Path, problems: Problems) -> tuple[TaskDefinition | None, int]:
    where = str(file)
    problems.saw(where)
    try:
        data, body = read_document(file)
    except TaskParseError as exc:
        problems.extend(exc)
        return None, 1
    reject_unknown(data, TASK_KEYS, where, "task", problems)
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.add(where, "the task needs a 'name'", data.line_of("name"))
        name = "?"
    raw_steps = data.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        problems.add(where, "'steps' must be a non-empty list", data.line_of("steps"))
        raw_steps = []
    inputs = data.get("inputs") or {}
    if not isinstance(inputs, dict):
        problems.add(where, "'inputs' must map names to defaults", data.line_of("inputs"))
        inputs = {}
    # a task that declares its inputs reads only those; one that declares none takes any
    declared = list(inputs) if data.get("inputs") is not None else None
    steps = parse_steps(raw_steps, where, data.line_of("steps"), problems, inputs=declared)
    definition = TaskDefinition(
        name=name.strip(),
        agent=str(data.get("agent") or ""),
        trigger_keywords=_string_list(data, "trigger_keywords", where, problems),
        risk_level=str(data.get("risk_level") or "low"),
        steps=steps,
        hooks=_load_hooks(data, file, problems),
        description=str(data.get("description") or body.strip()),
        inputs=dict(inputs),
        tools=tuple(
            absolute_spec(s, file.parent) for s in _string_list(data, "tools", where, problems)
        ),
        source_path=str(file.resolve()),
    )
    return definition, data.line_of("tools")


def _string_list(data: LineDict, key: str, where: str, problems: Problems) -> tuple[str, ...]:
    value = data.get(key) or []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.add(where, f"{key!r} must be a list of text", data.line_of(key))
        return ()
    return tuple(value)


def _inside(folder: Path, target: Path) -> bool:
    return target.resolve().is_relative_to(folder.resolve())


def _load_hooks(data: LineDict, task_file: Path, problems: Problems) -> dict[str, HookDefinition]:
    """Hooks named in the task (`hooks: {pre-task: path}`), else hooks/pre-task.md etc.;
    a hook file must be inside the task's folder."""
    hooks: dict[str, HookDefinition] = {}
    where = str(task_file)
    declared = data.get("hooks")
    if declared is not None and not isinstance(declared, LineDict):
        problems.add(where, "'hooks' must map pre-task/post-task to files", data.line_of("hooks"))
        declared = None
    candidates: list[tuple[str, Path, int]] = []
    for kind, names in HOOK_NAMES.items():
        if declared is not None:
            if kind in declared:
                value = declared[kind]
                candidates.append((kind, task_file.parent / str(value), declared.line_of(kind)))
            continue
        for file_name in names:
            candidate = task_file.parent / "hooks" / file_name
            if candidate.is_file():
                candidates.append((kind, candidate, 1))
                break
    for kind, path, line in candidates:
        if not _inside(task_file.parent, path):
            problems.add(where, f"hook {kind!r}: {path.name} is outside the task's folder", line)
            continue
        hook = load_hook(kind, path, problems)
        if hook is not None:
            hooks[kind] = hook
    if declared is not None:
        reject_unknown(declared, set(HOOK_NAMES), where, "hook", problems)
    return hooks


def load_hook(kind: str, path: Path, problems: Problems | None = None) -> HookDefinition | None:
    """A Markdown hook: front-matter `steps` (tool or agent), or the body as an agent step.
    Without `problems`, the first problem is raised."""
    own = problems is None
    found = Problems() if problems is None else problems
    hook = _load_hook(kind, path, found)
    if own:
        found.raise_if_any()
    return hook


def _load_hook(kind: str, path: Path, problems: Problems) -> HookDefinition | None:
    where = str(path)
    problems.saw(where)
    try:
        data, body = read_document(path)
    except TaskParseError as exc:
        problems.extend(exc)
        return None
    reject_unknown(data, {"steps", "description"}, where, "hook", problems)
    raw_steps = data.get("steps")
    if raw_steps is None:
        if not body.strip():
            problems.add(where, "a hook needs front-matter 'steps' or instructions", 1)
            return None
        step = StepDefinition(name=f"{kind}-agent", type="agent", description=body.strip(), line=1)
        return HookDefinition(kind, where, (step,))
    if not isinstance(raw_steps, list) or not raw_steps:
        problems.add(where, "'steps' must be a non-empty list", data.line_of("steps"))
        return None
    steps = parse_steps(raw_steps, where, data.line_of("steps"), problems)
    for step in steps:
        if step.type == "gate":
            problems.add(where, f"step {step.name!r}: hooks cannot have gate steps", step.line)
    return HookDefinition(kind, where, steps)
