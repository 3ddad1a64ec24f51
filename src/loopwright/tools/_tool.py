"""A tool: a typed Python function the model can call, with a JSON Schema of its arguments."""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar, overload

from loopwright.messages import ToolSpec
from loopwright.tools._schema import schema_from_function
from loopwright.tools._validate import Check, compile_validator

Effect = Literal["read", "write", "destructive"]
F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class ToolContext:
    """What a running tool may know about its run. Declare a parameter `ctx: ToolContext`."""

    run_id: str = ""
    workspace: Path = field(default_factory=Path.cwd)
    modified_files: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    """Path (relative to the workspace) -> (sha256 before the run, sha256 now)."""
    readable_roots: list[Path] = field(default_factory=list)
    """Folders outside the workspace that read-only tools may read (e.g. a skill's folder)."""

    def record_write(self, rel_path: str, before: str | None, after: str | None) -> None:
        first_before = self.modified_files.get(rel_path, (before, None))[0]
        self.modified_files[rel_path] = (first_before, after)


@dataclass(frozen=True)
class Tool:
    """A callable the model can use. Build one with `@tool` or `Tool.from_function`."""

    name: str
    description: str
    parameters: dict[str, Any]
    function: Callable[..., Any]
    effect: Effect = "read"
    idempotent: bool = True
    timeout: float | None = None
    context_param: str | None = None

    @functools.cached_property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.function)

    @functools.cached_property
    def check_arguments(self) -> Check:
        """The compiled argument check (built once: validating must stay cheap per call)."""
        return compile_validator(self.parameters)

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)

    @classmethod
    def from_function(
        cls,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        effect: Effect = "read",
        idempotent: bool | None = None,
        timeout: float | None = None,
    ) -> Tool:
        schema, doc, context_param = schema_from_function(function)
        return cls(
            name=name or function.__name__,
            description=description or doc,
            parameters=schema,
            function=function,
            effect=effect,
            idempotent=(effect == "read") if idempotent is None else idempotent,
            timeout=timeout,
            context_param=context_param,
        )

    async def invoke(self, arguments: dict[str, Any], ctx: ToolContext) -> Any:
        """Call the function (sync ones in a worker thread) with validated arguments."""
        kwargs = dict(arguments)
        if self.context_param:
            kwargs[self.context_param] = ctx
        if self.is_async:
            return await self.function(**kwargs)
        result = await asyncio.to_thread(self.function, **kwargs)
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
    effect: Effect = "read",
    idempotent: bool | None = None,
    timeout: float | None = None,
) -> Callable[[F], Tool]: ...


def tool(
    function: F | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    effect: Effect = "read",
    idempotent: bool | None = None,
    timeout: float | None = None,
) -> Tool | Callable[[F], Tool]:
    """Turn a typed function (sync or async) into a `Tool`.

    The schema comes from the signature, the descriptions from the docstring
    (first paragraph for the tool, `name: text` lines under Args: for parameters).
    """

    def wrap(fn: F) -> Tool:
        return Tool.from_function(
            fn,
            name=name,
            description=description,
            effect=effect,
            idempotent=idempotent,
            timeout=timeout,
        )

    if function is not None:
        return wrap(function)
    return wrap


ToolFunction = Callable[..., Any] | Callable[..., Awaitable[Any]]
