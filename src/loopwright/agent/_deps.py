"""Typed dependencies: what a run's tools need from its caller (a database handle, an API
client, the user's id), given to each run and read by tools as `ctx.deps`.

`AgentExecutor(..., deps_type=MyDeps)` makes the agent an `AgentExecutor[MyDeps, ...]`:
`agent.run(request, deps=MyDeps(...))` is checked by mypy, and at run time (a TypeError
naming the expected type, before anything runs). A tool declares `ctx: ToolContext[MyDeps]`
and gets `ctx.deps` typed; a tool (or a sub-agent) that reads deps of another type than
the agent's is a ConfigurationError when the agent is made. Deps are never recorded: each
process of a run (a resume) gets them from its caller. A sub-agent gets its lead's.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, Union, get_args, get_origin, is_typeddict

from loopwright.agent._subagent import SubagentTool
from loopwright.errors import ConfigurationError
from loopwright.tools import ToolRegistry


def type_name(kind: Any) -> str:
    """How a message names a type: `MyDeps`, `dict[str, int]`."""
    if isinstance(kind, type) and get_origin(kind) is None:
        return kind.__qualname__
    return repr(kind).removeprefix("typing.")


def check_deps_type(deps_type: Any) -> Any:
    """`deps_type` if it is a type (a class or a typing form); ConfigurationError if it is
    a value (`deps_type=MyDeps()` for `deps_type=MyDeps`)."""
    if deps_type is None or isinstance(deps_type, type) or get_origin(deps_type) is not None:
        return deps_type
    if deps_type is Any or type(deps_type).__module__ in ("typing", "typing_extensions"):
        return deps_type
    raise ConfigurationError(
        f"deps_type must be a type (the class of the deps a run is given), not the value "
        f"{deps_type!r}"
    )


def matches(value: Any, kind: Any) -> bool:
    """Is `value` of the type `kind`, as far as run time can tell (a form it cannot check,
    such as a Protocol that is not runtime_checkable, accepts any value)?"""
    origin = get_origin(kind)
    if kind is Any or kind is object:
        return True
    if kind is None or kind is type(None):
        return value is None
    if origin is typing.Annotated:
        return matches(value, get_args(kind)[0])
    if origin in (Union, types.UnionType):
        return any(matches(value, member) for member in get_args(kind))
    if origin is Literal:
        return value in get_args(kind)
    if is_typeddict(kind):
        return isinstance(value, dict)
    checked = origin if isinstance(origin, type) else kind
    if not isinstance(checked, type):
        return True
    try:
        return isinstance(value, checked)
    except TypeError:  # e.g. a Protocol that is not runtime_checkable
        return True


def check_deps(deps_type: Any, deps: Any) -> None:
    """A TypeError naming the expected type when `deps` is not a `deps_type` (an agent
    without a deps_type takes any deps, None included)."""
    if deps_type is None or matches(deps, deps_type):
        return
    expected = type_name(deps_type)
    given = "no deps (None)" if deps is None else f"a {type(deps).__qualname__}"
    raise TypeError(
        f"deps: this agent's deps_type is {expected}; give deps={expected}(...), not {given}"
    )


def _compatible(given: Any, wanted: Any) -> bool:
    """Can deps of type `given` be read as `wanted`? (Unknown for typing forms: yes.)"""
    if given == wanted or wanted is Any:
        return True
    if isinstance(given, type) and isinstance(wanted, type):
        try:
            return issubclass(given, wanted)
        except TypeError:
            return True
    return True


def check_tool_deps(tools: ToolRegistry, deps_type: Any) -> None:
    """ConfigurationError when a tool reads deps (`ctx: ToolContext[X]`), or a sub-agent
    takes them (its `deps_type`), that the agent's runs are not given."""
    for tool in tools:
        if isinstance(tool, SubagentTool):
            wanted, what = tool.agent.deps_type, f"sub-agent tool {tool.name!r} (deps_type="
        else:
            wanted, what = tool.deps_type, f"tool {tool.name!r} (ctx: ToolContext["
        if wanted is None or wanted is Any:
            continue
        close = ")" if isinstance(tool, SubagentTool) else "])"
        reads = f"{what}{type_name(wanted)}{close}"
        if deps_type is None:
            raise ConfigurationError(
                f"{reads} reads deps, and this agent has no deps_type: give it "
                f"deps_type={type_name(wanted)} (and each run deps=...)"
            )
        if not _compatible(deps_type, wanted):
            raise ConfigurationError(
                f"{reads} reads deps of another type than this agent's deps_type "
                f"{type_name(deps_type)} (a sub-agent gets its lead's deps)"
            )
