"""Check the steps of a task or hook file; every problem is recorded, none stops the check."""

from __future__ import annotations

import ast
import difflib
import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, cast

from loopwright.tasks._expressions import ExpressionProblem, compile_expression, template_fields
from loopwright.tasks._line_dict import LineDict
from loopwright.tasks._models import STEP_TYPES, StepDefinition, StepType, TaskDefinition
from loopwright.tasks._problems import Problems

STEP_KEYS = {
    "name", "type", "description", "tool", "args", "args_from", "condition",
    "message_template", "timeout_s", "output_schema",
}  # fmt: skip
MAX_EXPRESSION_CHARS = 1000
MAX_EXPRESSION_DEPTH = 32


def reject_unknown(
    data: LineDict, known: set[str], where: str, what: str, problems: Problems
) -> None:
    for key in data:
        if key not in known:
            allowed = ", ".join(sorted(known))
            hint = did_you_mean(str(key), known)
            message = f"unknown {what} field {key!r} ({hint}known: {allowed})"
            problems.add(where, message, data.line_of(key))


def parse_steps(
    raw_steps: list[Any],
    where: str,
    line: int,
    problems: Problems,
    inputs: Collection[str] | None = None,
) -> tuple[StepDefinition, ...]:
    """The steps that are valid; a problem for each one that is not. `inputs`: the task's
    declared inputs, which its steps may read (None: not known here, as in a hook file)."""
    steps: list[StepDefinition] = []
    every = [s.get("name") for s in raw_steps if isinstance(s, dict)]
    earlier: list[str] = []
    for raw in raw_steps:
        if not isinstance(raw, LineDict):
            problems.add(where, "each step must be a mapping (name, type, ...)", line)
            continue
        step = _parse_step(raw, where, earlier, every, problems, inputs)
        name = raw.get("name")
        if isinstance(name, str) and name not in earlier:
            earlier.append(name)
        elif isinstance(name, str):
            problems.add(where, f"two steps are named {name!r}", raw.line_of("name"))
            continue
        if step is not None:
            steps.append(step)
    return tuple(steps)


def _parse_step(
    raw: LineDict,
    where: str,
    earlier: list[str],
    every: list[Any],
    problems: Problems,
    inputs: Collection[str] | None,
) -> StepDefinition | None:
    reject_unknown(raw, STEP_KEYS, where, "step", problems)
    before = len(problems.items)
    name, kind = _name_and_kind(raw, where, problems)
    refs = _StepRefs(where, name, earlier, every, problems, inputs)
    args, args_from = raw.get("args") or {}, raw.get("args_from") or {}
    _check_references(raw, args, args_from, refs)
    condition = raw.get("condition")
    timeout = _timeout(raw, name, where, problems)
    schema = _output_schema(raw, name, kind, where, problems)
    if len(problems.items) > before or kind not in STEP_TYPES:
        return None
    return StepDefinition(
        name=name,
        type=cast(StepType, kind),
        description=str(raw.get("description") or ""),
        tool=raw.get("tool"),
        args=dict(args),
        args_from={str(k): str(v) for k, v in args_from.items()},
        condition=None if condition is None else str(condition),
        message_template=raw.get("message_template"),
        timeout_s=timeout,
        line=raw.line,
        output_schema=schema,
    )


def _name_and_kind(raw: LineDict, where: str, problems: Problems) -> tuple[str, Any]:
    """The step's name ("?" when missing) and type, with what its type needs."""
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.add(where, "the step needs a 'name'", raw.line)
        name = "?"
    kind = raw.get("type")
    if kind not in STEP_TYPES:
        problems.add(
            where,
            f"step {name!r}: unknown step type {kind!r} (use tool, agent or gate)",
            raw.line_of("type"),
        )
    if kind == "tool" and not isinstance(raw.get("tool"), str):
        problems.add(where, f"step {name!r}: a tool step needs 'tool'", raw.line)
    if kind == "agent" and not (raw.get("description") or raw.get("message_template")):
        problems.add(where, f"step {name!r}: an agent step needs a 'description'", raw.line)
    return name, kind


def _check_references(raw: LineDict, args: Any, args_from: Any, refs: _StepRefs) -> None:
    """`args` and `args_from` are mappings; every path a step reads (its `args_from`, its
    condition, its templates' fields) names an input or an earlier step."""
    for key, value in (("args", args), ("args_from", args_from)):
        if not isinstance(value, dict):
            refs.problems.add(
                refs.where, f"step {refs.step!r}: {key!r} must be a mapping", raw.line_of(key)
            )
    if isinstance(args_from, dict):
        for arg, path in args_from.items():
            line = args_from.line_of(arg) if isinstance(args_from, LineDict) else raw.line
            refs.check(path, f"args_from {arg!r}", line, path_only=True)
    condition = raw.get("condition")
    if condition is not None:
        refs.check(condition, "condition", raw.line_of("condition"), path_only=False)
    for key in ("message_template", "description"):
        for field_text in template_fields(str(raw.get(key) or "")):
            refs.check(field_text, key, raw.line_of(key), path_only=True)


def _timeout(raw: LineDict, name: str, where: str, problems: Problems) -> float | None:
    timeout = raw.get("timeout_s")
    if timeout is None:
        return None
    if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
        return float(timeout)
    problems.add(
        where, f"step {name!r}: 'timeout_s' must be a positive number", raw.line_of("timeout_s")
    )
    return None


def _output_schema(
    raw: LineDict, name: str, kind: Any, where: str, problems: Problems
) -> dict[str, Any] | None:
    """An agent step's `output_schema`: a JSON Schema mapping, checked here."""
    value = raw.get("output_schema")
    if value is None:
        return None
    line = raw.line_of("output_schema")
    if kind != "agent" or not isinstance(value, dict):
        problems.add(where, f"step {name!r}: 'output_schema' is a mapping, on agent steps", line)
        return None
    from loopwright.agent._output import OutputSpec
    from loopwright.errors import ConfigurationError

    schema: dict[str, Any] = json.loads(json.dumps(value))
    try:
        OutputSpec(schema)
    except ConfigurationError as exc:
        problems.add(where, f"step {name!r}: {exc}", line)
        return None
    return schema


def _depth(tree: ast.AST) -> int:
    """The nesting depth of a syntax tree, without recursion."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _too_complex(source: str) -> str | None:
    if len(source) > MAX_EXPRESSION_CHARS:
        return f"is {len(source):,} characters long (at most {MAX_EXPRESSION_CHARS:,})"
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError:
        return None  # compile_expression names the syntax problem
    except (RecursionError, MemoryError, ValueError):
        return f"is nested too deeply (at most {MAX_EXPRESSION_DEPTH} levels)"
    if _depth(tree) > MAX_EXPRESSION_DEPTH:
        return f"is nested too deeply (at most {MAX_EXPRESSION_DEPTH} levels)"
    return None


@dataclass
class _StepRefs:
    where: str
    step: str
    earlier: list[str]
    every: list[Any]
    problems: Problems
    inputs: Collection[str] | None

    def check(self, source: Any, what: str, line: int, *, path_only: bool) -> None:
        prefix = f"step {self.step!r}:"
        if not isinstance(source, str):
            self.problems.add(self.where, f"{prefix} {what} must be text", line)
            return
        complex_problem = _too_complex(source)
        if complex_problem is not None:
            self.problems.add(self.where, f"{prefix} {what} {complex_problem}", line)
            return
        try:
            expression = compile_expression(source, path_only=path_only)
        except ExpressionProblem as exc:
            self.problems.add(self.where, f"{prefix} bad {what} {source!r}: {exc}", line)
            return
        except (RecursionError, MemoryError):
            self.problems.add(self.where, f"{prefix} {what} is nested too deeply", line)
            return
        for name in sorted(expression.steps):
            if name in self.earlier:
                continue
            if name in self.every:
                problem = f"refers to step {name!r}, which runs later"
            else:
                problem = f"refers to step {name!r}, which does not exist"
            self.problems.add(self.where, f"{prefix} {what} {problem}", line)
        declared = self.inputs
        if declared is None:
            return
        for name in sorted(expression.inputs - set(declared)):
            known = ", ".join(sorted(declared)) or "none"
            problem = f"reads input {name!r}, which the task does not declare"
            hint = did_you_mean(name, declared)
            self.problems.add(
                self.where, f"{prefix} {what} {problem} ({hint}inputs: {known})", line
            )


def did_you_mean(name: str, known: Collection[str]) -> str:
    """`did you mean 'x'? ` for a name close to one of `known`, else nothing."""
    close = difflib.get_close_matches(name, sorted(known), n=1)
    return f"did you mean {close[0]!r}? " if close else ""


def validate_tools(
    task: TaskDefinition, names: Collection[str], problems: Problems, task_where: str
) -> None:
    """Every tool step (in the task and its hooks) names a tool the task has."""
    groups = [(task_where, task.steps)]
    groups += [(hook.path, hook.steps) for hook in task.hooks.values()]
    for where, steps in groups:
        for step in steps:
            if step.type == "tool" and step.tool not in names:
                known = ", ".join(sorted(names)) or "none"
                hint = did_you_mean(str(step.tool), names)
                problems.add(
                    where,
                    f"step {step.name!r}: unknown tool {step.tool!r} ({hint}known: {known})",
                    step.line,
                )
