"""Safe expressions for task files: conditions, `args_from` paths and message templates.

Nothing is passed to `eval`. An expression is parsed with `ast` and only these are allowed:
comparisons (`==`, `!=`, `<`, `<=`, `>`, `>=`, `in`, `not in`, `is`, `is not`), `and`, `or`,
`not`, unary minus, literals (strings, numbers, `true`/`false`/`null`, lists), and paths that
start at one of the roots and go down by `.key` or `[key]` / `[index]`:

- `inputs`: the run's inputs (`inputs.env`);
- `results`: the results of earlier steps (`results.list_keys.count`, `results.scan[0]`);
- `request`: the user's message.

In a condition a missing key is `null`; in `args_from` it is an error.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from loopwright.errors import TaskRunError, UsageError

ROOTS = ("inputs", "results", "request")
LITERAL_NAMES: dict[str, Any] = {
    "true": True,
    "false": False,
    "null": None,
    "True": True,
    "False": False,
    "None": None,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}
_MISSING = object()
TEMPLATE_FIELD = re.compile(r"\{([^{}]+)\}")


class ExpressionProblem(UsageError):
    """Why an expression is not allowed. The loader turns it into a TaskParseError."""


@dataclass(frozen=True)
class Expression:
    source: str
    tree: ast.expr
    steps: frozenset[str]
    """Names of the steps whose results it reads."""
    inputs: frozenset[str] = frozenset()
    """Names of the inputs it reads."""

    def evaluate(self, scope: Mapping[str, Any], *, strict: bool = False) -> Any:
        """The value in `scope` (keys: inputs, results, request). Raises TaskRunError."""
        try:
            return _Evaluator(scope, strict, self.source).value(self.tree)
        except TaskRunError:
            raise
        except Exception as exc:
            raise TaskRunError(f"cannot evaluate {self.source!r}: {exc}") from None


def compile_expression(source: str, *, path_only: bool = False) -> Expression:
    """Parse and check an expression; raises ExpressionProblem with a readable reason."""
    text = source.strip()
    if not text:
        raise ExpressionProblem("the expression is empty")
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        raise ExpressionProblem(f"not a valid expression ({exc.msg})") from None
    if path_only and not isinstance(tree, ast.Name | ast.Attribute | ast.Subscript):
        raise ExpressionProblem("expected a path such as inputs.env or results.step.key")
    steps: set[str] = set()
    inputs: set[str] = set()
    _check(tree, steps, path_only, inputs)
    return Expression(text, tree, frozenset(steps), frozenset(inputs))


def _check(node: ast.AST, steps: set[str], path_only: bool, inputs: set[str]) -> None:
    if isinstance(node, ast.Name | ast.Attribute | ast.Subscript):
        _check_path(node, steps, inputs)
        return
    if path_only:
        raise ExpressionProblem("expected a path such as inputs.env or results.step.key")
    if isinstance(node, ast.BoolOp | ast.Compare | ast.List | ast.Tuple):
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.boolop | ast.cmpop | ast.expr_context):
                _check(child, steps, path_only, inputs)
        return
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub):
        _check(node.operand, steps, path_only, inputs)
        return
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int | float | bool):
        return
    if isinstance(node, ast.Constant) and node.value is None:
        return
    raise ExpressionProblem(
        f"{_describe(node)} is not allowed; use comparisons, and/or/not, literals "
        "and paths under inputs, results or request"
    )


def _describe(node: ast.AST) -> str:
    names = {
        ast.Call: "a function call",
        ast.BinOp: "arithmetic",
        ast.Lambda: "a lambda",
        ast.IfExp: "an if-expression",
        ast.Dict: "a dict literal",
    }
    for kind, text in names.items():
        if isinstance(node, kind):
            return text
    if isinstance(node, ast.comprehension | ast.ListComp | ast.GeneratorExp):
        return "a comprehension"
    return f"'{type(node).__name__}'"


def _path_parts(node: ast.expr) -> tuple[str, list[ast.expr | str]]:
    """The root name and the keys below it (str for `.key`, an expression for `[...]`)."""
    keys: list[ast.expr | str] = []
    while True:
        if isinstance(node, ast.Attribute):
            keys.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript):
            keys.append(node.slice)
            node = node.value
        elif isinstance(node, ast.Name):
            keys.reverse()
            return node.id, keys
        else:
            raise ExpressionProblem("a path must start at inputs, results or request")


def _check_path(node: ast.expr, steps: set[str], inputs: set[str]) -> None:
    root, keys = _path_parts(node)
    if root in LITERAL_NAMES and not keys:
        return
    if root not in ROOTS:
        raise ExpressionProblem(
            f"unknown name {root!r}: a path starts at inputs, results or request"
        )
    for key in keys:
        if not isinstance(key, str) and not (
            isinstance(key, ast.Constant) and isinstance(key.value, str | int)
        ):
            raise ExpressionProblem("[...] must hold a literal key or index")
    first = (
        str(keys[0] if isinstance(keys[0], str) else getattr(keys[0], "value", "")) if keys else ""
    )
    if root == "results":
        if not keys:
            raise ExpressionProblem("name a step: results.<step>")
        steps.add(first)
    elif root == "inputs" and keys:
        inputs.add(first)


class _Evaluator:
    def __init__(self, scope: Mapping[str, Any], strict: bool, source: str) -> None:
        self.scope = scope
        self.strict = strict
        self.source = source

    def value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name | ast.Attribute | ast.Subscript):
            return self.path(node)
        if isinstance(node, ast.BoolOp):
            if isinstance(node.op, ast.And):
                return all(self.value(v) for v in node.values)
            return any(self.value(v) for v in node.values)
        if isinstance(node, ast.UnaryOp):
            operand = self.value(node.operand)
            return (not operand) if isinstance(node.op, ast.Not) else -operand
        if isinstance(node, ast.List | ast.Tuple):
            return [self.value(item) for item in node.elts]
        if isinstance(node, ast.Compare):
            left = self.value(node.left)
            for op, right_node in zip(node.ops, node.comparators, strict=True):
                right = self.value(right_node)
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        raise TaskRunError(f"{self.source!r}: unsupported expression")

    def path(self, node: ast.expr) -> Any:
        root, keys = _path_parts(node)
        if root in LITERAL_NAMES and not keys:
            return LITERAL_NAMES[root]
        current: Any = self.scope.get(root)
        walked = root
        for key in keys:
            name = key if isinstance(key, str) else getattr(key, "value", None)
            current = _lookup(current, name)
            walked += f".{name}" if isinstance(key, str) else f"[{name!r}]"
            if current is _MISSING:
                if self.strict:
                    raise TaskRunError(f"{self.source!r}: {walked} does not exist")
                return None
        return current


def _lookup(container: Any, key: Any) -> Any:
    if isinstance(container, Mapping):
        return container.get(key, _MISSING)
    if isinstance(container, list | tuple) and isinstance(key, int):
        return container[key] if -len(container) <= key < len(container) else _MISSING
    return _MISSING


def template_fields(template: str) -> list[str]:
    """The `{path}` fields of a message template."""
    return [m.group(1).strip() for m in TEMPLATE_FIELD.finditer(template)]


def render_template(template: str, scope: Mapping[str, Any]) -> str:
    """Fill `{path}` fields from the scope; a missing value shows as `?`."""

    def fill(match: re.Match[str]) -> str:
        try:
            value = compile_expression(match.group(1), path_only=True).evaluate(scope)
        except (ExpressionProblem, TaskRunError):
            return match.group(0)
        return "?" if value is None else str(value)

    return TEMPLATE_FIELD.sub(fill, template)
