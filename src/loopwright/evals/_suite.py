"""The evaluation suite format: tasks with tools, setup files and a checker of the outcome."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from loopwright.agent import ExecutionResult
from loopwright.errors import ConfigurationError
from loopwright.tasks._yaml import load_yaml
from loopwright.tools import BUILTIN_TOOLS, Tool

TASKS_FILE = "tasks.yaml"
TOOLS_FILE = "tools.py"


@dataclass(frozen=True)
class Expectation:
    answer_contains: tuple[str, ...] = ()
    answer_excludes: tuple[str, ...] = ()
    """Phrases a right answer never holds (e.g. a wrong comparison naming the right thing)."""
    calls: tuple[str, ...] = ()
    no_calls: bool = False
    files: dict[str, dict[str, Any]] = field(default_factory=dict)

    def failures(self, result: ExecutionResult, workspace: Path) -> list[str]:
        """What the run got wrong; empty when it passed."""
        problems: list[str] = []
        if not result.success:
            problems.append(f"run {result.status}: {result.reason or result.message}")
        answer = (result.answer or "").lower()
        problems += [f"answer lacks {s!r}" for s in self.answer_contains if s.lower() not in answer]
        problems += [f"answer has {s!r}" for s in self.answer_excludes if s.lower() in answer]
        made = [step.tool_name for step in result.steps]
        if self.no_calls and made:
            problems.append(f"expected no tool calls, made {made}")
        if not _is_subsequence(self.calls, made):
            problems.append(f"expected calls {list(self.calls)} in order, made {made}")
        for path, check in self.files.items():
            problems += _file_failures(workspace / path, path, check)
        return problems


EXPECT_KEYS = frozenset(f.name for f in fields(Expectation))
"""The keys a task's `expect` may hold: Expectation's fields."""


@dataclass(frozen=True)
class EvalTask:
    id: str
    level: int
    request: str
    tools: tuple[str, ...]
    expect: Expectation
    files: dict[str, str] = field(default_factory=dict)
    max_iterations: int = 8


@dataclass(frozen=True)
class EvalSuite:
    folder: Path
    levels: dict[int, str]
    tasks: tuple[EvalTask, ...]
    tools: dict[str, Tool]

    def tools_for(self, task: EvalTask) -> list[Tool]:
        return [self.tools[name] for name in task.tools]


def _is_subsequence(wanted: tuple[str, ...], made: list[str]) -> bool:
    remaining = iter(made)
    return all(any(name == call for call in remaining) for name in wanted)


def _file_failures(file: Path, name: str, check: dict[str, Any]) -> list[str]:
    if not file.is_file():
        return [f"file {name} was not written"]
    text = file.read_text(encoding="utf-8")
    if "equals" in check and text != check["equals"]:
        return [f"file {name} is {text!r}, expected {check['equals']!r}"]
    return [f"file {name} lacks {s!r}" for s in check.get("contains", []) if s not in text]


def _load_tools(folder: Path) -> dict[str, Tool]:
    from loopwright.tools._resolve import load_file, resolve_tool

    tools: dict[str, Tool] = dict(BUILTIN_TOOLS)
    for name in ("write_file", "edit_file", "grep", "glob"):
        try:
            tools[name] = resolve_tool(name)
        except ConfigurationError:
            continue
    path = folder / TOOLS_FILE
    if path.is_file():
        module = load_file(path, f"eval tools {str(path)!r}", prefix="loopwright_eval_tools_")
        tools.update({v.name: v for v in vars(module).values() if isinstance(v, Tool)})
    return tools


def _task(raw: dict[str, Any], index: int, tools: dict[str, Tool], where: Path) -> EvalTask:
    for key in ("id", "level", "request", "tools"):
        if key not in raw:
            raise ConfigurationError(f"{where}: task {index + 1} has no {key!r}")
    unknown = [t for t in raw["tools"] if t not in tools]
    if unknown:
        raise ConfigurationError(f"{where}: task {raw['id']!r} uses unknown tools {unknown}")
    expect = dict(raw.get("expect") or {})
    if unknown_keys := sorted(set(expect) - EXPECT_KEYS):
        known = ", ".join(sorted(EXPECT_KEYS))
        raise ConfigurationError(
            f"{where}: task {raw['id']!r}: unknown expect keys {unknown_keys} (known: {known})"
        )
    return EvalTask(
        id=str(raw["id"]),
        level=int(raw["level"]),
        request=str(raw["request"]),
        tools=tuple(raw["tools"]),
        files={str(k): str(v) for k, v in (raw.get("files") or {}).items()},
        max_iterations=int(raw.get("max_iterations", 8)),
        expect=Expectation(
            answer_contains=tuple(str(s) for s in expect.get("answer_contains", [])),
            answer_excludes=tuple(str(s) for s in expect.get("answer_excludes", [])),
            calls=tuple(expect.get("calls", [])),
            no_calls=bool(expect.get("no_calls", False)),
            files=dict(expect.get("files") or {}),
        ),
    )


def load_suite(folder: str | Path) -> EvalSuite:
    """The suite in `folder` (tasks.yaml + optional tools.py); clear errors for bad input."""
    root = Path(folder)
    tasks_file = root / TASKS_FILE
    if not tasks_file.is_file():
        raise ConfigurationError(f"{root}: no {TASKS_FILE} (an eval folder holds tasks.yaml)")
    try:
        text = tasks_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"{tasks_file}: cannot read it: {exc}") from None
    data = load_yaml(text, str(tasks_file)) or {}  # bounded: size, depth, aliases
    if not isinstance(data, dict):
        raise ConfigurationError(f"{tasks_file}: expected a mapping with 'tasks'")
    tools = _load_tools(root)
    raw_tasks = data.get("tasks") or []
    tasks = tuple(_task(raw, i, tools, tasks_file) for i, raw in enumerate(raw_tasks))
    ids = [t.id for t in tasks]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ConfigurationError(f"{tasks_file}: duplicate task ids {duplicates}")
    levels = {int(k): str(v) for k, v in (data.get("levels") or {}).items()}
    return EvalSuite(root, levels, tasks, tools)
