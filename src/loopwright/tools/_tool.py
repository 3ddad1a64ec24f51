"""A tool: a typed Python function the model can call, with a JSON Schema of its arguments."""

from __future__ import annotations

import functools
import inspect
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, get_args, overload

from loopwright.errors import ToolDefinitionError, ToolError
from loopwright.messages import ToolSpec
from loopwright.tools._context import ToolContext
from loopwright.tools._schema import Convert, schema_from_function
from loopwright.tools._threads import DEFAULT_TOOL_THREADS
from loopwright.tools._validate import (
    Check,
    apply_aliases,
    check_aliases,
    compile_validator,
    with_aliases,
)

Effect = Literal["read", "write", "destructive", "unknown"]
"""What a tool does to the world: `read` changes nothing, `write` changes files or state
that can be restored, `destructive` may lose data or act outside (delete, run programs),
`unknown` is what a tool that declares nothing gets: resume never re-runs an interrupted
call of it and the task runner guards it like a write."""
EFFECTS: tuple[str, ...] = get_args(Effect)
F = TypeVar("F", bound=Callable[..., Any])
_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")

__all__ = ["EFFECTS", "Effect", "Tool", "ToolContext", "tool"]


@dataclass(frozen=True)
class Tool:
    """A callable the model can use. Build one with `@tool` or `Tool.from_function`.

    `effect` and `idempotent` are declarations the engine relies on: resume re-runs an
    interrupted call only when the tool is idempotent, and the task runner's safety layer
    asks for approval or a backup according to the effect. Undeclared, a tool's effect is
    "unknown" and it is not idempotent (the safe default: nothing is done twice).
    """

    name: str
    description: str
    parameters: dict[str, Any]
    function: Callable[..., Any]
    effect: Effect = "unknown"
    idempotent: bool = False
    timeout: float | None = None
    context_param: str | None = None
    converters: Mapping[str, Convert] = field(default_factory=dict)
    """Parameter -> converter from its JSON value (Enum and dataclass parameters)."""
    aliases: Mapping[str, str] = field(default_factory=dict)
    """Other argument name -> parameter: accepted from the model and renamed (the schema
    shows only the parameter). E.g. `{"file_path": "path"}` for models prompted with
    another runtime's argument names."""
    deps_type: Any = None
    """The dependencies its `ctx: ToolContext[X]` parameter declares (X), checked against
    the agent's `deps_type` when the agent is made; None: it reads none."""

    @functools.cached_property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.function)

    @functools.cached_property
    def check_arguments(self) -> Check:
        """The compiled argument check (built once: validating must stay cheap per call)."""
        return with_aliases(compile_validator(self.parameters), self.aliases)

    @functools.cached_property
    def usage_hint(self) -> str:
        """How to call this tool, for an observation after a call with bad arguments."""
        properties: dict[str, Any] = self.parameters.get("properties") or {}
        shapes = {name: prop.get("type", "any") for name, prop in properties.items()}
        required = [n for n in self.parameters.get("required") or () if n in properties]
        hint = f"{self.name} takes {json.dumps(shapes)}"
        return f"{hint} (required: {', '.join(required)})" if required else hint

    @property
    def takes_context(self) -> bool:
        """The tool gets the call's `ToolContext`."""
        return self.context_param is not None

    @functools.cached_property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)

    @classmethod
    def from_function(
        cls,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        effect: Effect = "unknown",
        idempotent: bool | None = None,
        timeout: float | None = None,
        aliases: Mapping[str, str] | None = None,
    ) -> Tool:
        where = getattr(function, "__qualname__", repr(function))
        if not callable(function):
            raise ToolDefinitionError(f"{where} is not callable")
        tool_name = str(name or getattr(function, "__name__", ""))
        if not _TOOL_NAME.match(tool_name):
            raise ToolDefinitionError(
                f"{where}: tool name {tool_name!r} must be 1-64 letters, digits, '_', '-' or '.'"
            )
        if effect not in EFFECTS:
            raise ToolDefinitionError(f"{where}: effect must be one of {EFFECTS}, not {effect!r}")
        if timeout is not None and timeout <= 0:
            raise ToolDefinitionError(f"{where}: timeout must be positive, not {timeout!r}")
        schema = schema_from_function(function)
        problem = check_aliases(aliases or {}, schema.parameters)
        if problem is not None:
            raise ToolDefinitionError(f"{where}: {problem}")
        return cls(
            name=tool_name,
            description=description or schema.description,
            parameters=schema.parameters,
            function=function,
            effect=effect,
            idempotent=(effect == "read") if idempotent is None else idempotent,
            timeout=timeout,
            context_param=schema.context_param,
            converters=schema.converters,
            aliases=dict(aliases or {}),
            deps_type=schema.deps_type,
        )

    def _convert(self, arguments: dict[str, Any]) -> dict[str, Any]:
        kwargs = dict(arguments)
        for name, convert in self.converters.items():
            if name in kwargs:
                try:
                    kwargs[name] = convert(kwargs[name])
                except (TypeError, ValueError) as exc:
                    raise ToolError(f"invalid argument {name!r}: {exc}") from None
        return kwargs

    def start(self, arguments: dict[str, Any], ctx: ToolContext[Any]) -> Awaitable[Any]:
        """`invoke(arguments, ctx)`, or for a plain async function its own coroutine (the
        same call, one coroutine fewer per tool call)."""
        if self.is_async and not self.converters and not self.context_param and not self.aliases:
            return self.function(**arguments)  # type: ignore[no-any-return]
        return self.invoke(arguments, ctx)

    async def invoke(self, arguments: dict[str, Any], ctx: ToolContext[Any]) -> Any:
        """Call the function (sync ones in a thread of the run's `ToolThreads` pool, not
        asyncio's shared default executor) with validated arguments."""
        if self.aliases:
            renamed = apply_aliases(arguments, self.aliases)
            if isinstance(renamed, str):
                raise ToolError(renamed)
            arguments = renamed
        kwargs = self._convert(arguments) if self.converters else dict(arguments)
        if self.context_param:
            kwargs[self.context_param] = ctx
        if self.is_async:
            return await self.function(**kwargs)
        pool = ctx.run.tool_threads if ctx.run is not None else None
        result = await (pool or DEFAULT_TOOL_THREADS).run(self.function, **kwargs)
        if inspect.isawaitable(result):
            return await result
        return result


@overload
def tool(function: F, /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    effect: Effect = "unknown",
    idempotent: bool | None = None,
    timeout: float | None = None,
    aliases: Mapping[str, str] | None = None,
) -> Callable[[F], Tool]: ...


def tool(
    function: F | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    effect: Effect = "unknown",
    idempotent: bool | None = None,
    timeout: float | None = None,
    aliases: Mapping[str, str] | None = None,
) -> Tool | Callable[[F], Tool]:
    """Turn a typed function (sync or async) into a `Tool`.

    The schema comes from the signature, the descriptions from the docstring (its prose
    for the tool; Google, Sphinx or NumPy parameter docs for the parameters). Sync
    functions run in a worker thread. A parameter annotated `ToolContext` receives the
    run's context and is not part of the schema.

    `effect` ("read", "write", "destructive"; default "unknown") and `idempotent`
    (default: True only for a declared "read") tell resume and the safety layer what a
    call does. A tool that declares nothing is never re-run on resume: an interrupted call
    gets the "interrupted, effect unknown" observation. `timeout` (seconds) overrides the
    executor's per-call timeout. `aliases` maps other argument names a model may use to
    parameters (`{"file_path": "path"}`); an alias given with its parameter is an error.
    """

    def wrap(fn: F) -> Tool:
        return Tool.from_function(
            fn,
            name=name,
            description=description,
            effect=effect,
            idempotent=idempotent,
            timeout=timeout,
            aliases=aliases,
        )

    if function is not None:
        return wrap(function)
    return wrap


ToolFunction = Callable[..., Any] | Callable[..., Awaitable[Any]]
