"""MCP client: tools from MCP servers over stdio and streamable HTTP (official `mcp` SDK).

A server's tools join the registry under their own names, prefixed with the server's name
when two servers offer the same name or when the name is one of loopwright's own tools (a
server cannot pass its tool off as `run_command` or `read`). A name a model could not call
(not 1-64 letters, digits, `_` or `-`) is left out, with a warning. Arguments are
validated against the server's JSON Schema before the call (the ToolExecutor does that for
every tool); a server that dies or times out becomes an error observation for the model,
not a hung run.

A server's tool annotations (`readOnlyHint`, `destructiveHint`, `idempotentHint`) are the
server's word: they decide a tool's effect and idempotence (so approvals and resume) only
for a server the user trusts (`trusted=`, `--mcp-trusted`). Any other server's tools are
`unknown` and not idempotent, as the MCP specification asks of an untrusted server.
"""

from __future__ import annotations

import asyncio
import logging
import re
import shlex
import sys
from collections import Counter
from collections.abc import Iterable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from mcp import Client, StdioServerParameters

from loopwright import telemetry
from loopwright.errors import ConfigurationError, ToolError
from loopwright.mcp._faults import ServerFault, UnreadableMessage, fails_on_fault
from loopwright.tools import Tool
from loopwright.tools._tool import Effect

DEFAULT_CONNECT_TIMEOUT_S = 30.0
DEFAULT_CALL_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class MCPServerSpec:
    """`python server.py --flag` (a command, run over stdio) or `http://host:port/mcp`."""

    target: str

    @property
    def is_http(self) -> bool:
        return self.target.startswith(("http://", "https://"))

    @property
    def key(self) -> str:
        """The target as the user names it, spacing aside (how trust is matched)."""
        return " ".join(self.target.split())

    def client_target(self) -> StdioServerParameters | str:
        if self.is_http:
            return self.target
        argv = shlex.split(self.target)
        if not argv:
            raise ConfigurationError("--mcp needs a command or an http(s) URL")
        command = sys.executable if argv[0] in {"python", "python3"} else argv[0]
        return StdioServerParameters(command=command, args=argv[1:])


@dataclass
class _Server:
    spec: MCPServerSpec
    name: str
    client: Client
    tools: list[Any]
    fault: ServerFault
    trusted: bool = False
    """The user trusts this server: its tool annotations decide effect and idempotence."""


class MCPConnections:
    """Connects to MCP servers for the lifetime of an `async with` block.

    >>> async with MCPConnections(["python examples/mcp_server.py"]) as mcp:
    ...     agent = AgentExecutor(model, [*builtins, *mcp.tools()])

    `trusted` names the servers (as in `specs`) whose tool annotations are believed; every
    other server's tools are `unknown` and not idempotent.
    """

    def __init__(
        self,
        specs: list[str],
        *,
        trusted: Iterable[str] = (),
        connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
        call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
    ) -> None:
        self.specs = [MCPServerSpec(s) for s in specs]
        self.trusted = frozenset(MCPServerSpec(t).key for t in trusted)
        self.connect_timeout_s = connect_timeout_s
        self.call_timeout_s = call_timeout_s
        self._stack = AsyncExitStack()
        self._servers: list[_Server] = []

    async def __aenter__(self) -> MCPConnections:
        try:
            for spec in self.specs:
                self._servers.append(await self._connect(spec))
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            await self._stack.aclose()
        except Exception:  # a server that already died can't be closed cleanly
            return

    async def _connect(self, spec: MCPServerSpec) -> _Server:
        fault = ServerFault()
        client = Client(
            spec.client_target(), read_timeout_seconds=self.call_timeout_s, message_handler=fault
        )
        try:
            async with fails_on_fault(fault), asyncio.timeout(self.connect_timeout_s):
                await self._stack.enter_async_context(client)
                listed = await client.list_tools()
        except UnreadableMessage as exc:
            raise ConfigurationError(
                f"MCP server {spec.target!r} sent a message that cannot be read: {exc}"
            ) from None
        except TimeoutError:
            raise ConfigurationError(
                f"MCP server {spec.target!r} did not answer within {self.connect_timeout_s:g}s"
            ) from None
        except Exception as exc:  # any failure to start is a usage error
            raise ConfigurationError(
                f"cannot connect to MCP server {spec.target!r}: {_describe(exc)}"
            ) from None
        info = client.server_info
        name = _server_name(info.name if info is not None and info.name else _fallback_name(spec))
        taken = {server.name for server in self._servers}
        unique, number = name, 2
        while unique in taken:
            unique, number = f"{name}-{number}", number + 1
        return _Server(spec, unique, client, list(listed.tools), fault, spec.key in self.trusted)

    def tools(self) -> list[Tool]:
        """Every server's tools; a name offered by two servers, or taken by one of
        loopwright's own tools, is prefixed with `server__` (a name every provider accepts
        for a native tool: 1-64 letters, digits, `_` or `-`); a name that is not one, even
        prefixed, is left out with a warning."""
        counts = Counter(t.name for server in self._servers for t in server.tools)
        reserved = _reserved_names()
        tools: list[Tool] = []
        for server in self._servers:
            for listed in server.tools:
                name = str(listed.name)
                shared = counts[name] > 1 or name in reserved
                exposed = f"{server.name}{PREFIX_SEPARATOR}{name}" if shared else name
                if not _TOOL_NAME.fullmatch(exposed):
                    log.warning(
                        "MCP server %s: tool %r left out: a tool name is 1-64 letters, "
                        "digits, '_' or '-'", server.name, exposed[:80],
                    )  # fmt: skip
                    continue
                tools.append(self._as_tool(server, listed, exposed))
        return tools

    def _as_tool(self, server: _Server, listed: Any, exposed: str) -> Tool:
        remote_name = str(listed.name)
        schema = dict(listed.input_schema or {"type": "object", "properties": {}})

        async def call(**arguments: Any) -> str:
            return await _call(server, remote_name, arguments, self.call_timeout_s)

        annotations = getattr(listed, "annotations", None) if server.trusted else None
        effect, idempotent = declaration_from_annotations(annotations)
        return Tool(
            name=exposed,
            description=str(listed.description or f"{remote_name} (from MCP server {server.name})"),
            parameters=schema,
            function=call,
            effect=effect,
            idempotent=idempotent,
            timeout=self.call_timeout_s + 5,
        )


def _hint(annotations: Any, snake: str, camel: str) -> bool | None:
    value = getattr(annotations, snake, None)
    if value is None:
        value = getattr(annotations, camel, None)
    return value if isinstance(value, bool) else None


def declaration_from_annotations(annotations: Any) -> tuple[Effect, bool]:
    """The tool declaration (effect, idempotent) an MCP tool's annotations make.

    `readOnlyHint: true` is a read (idempotent). Otherwise `destructiveHint` decides
    between "destructive" (true) and "write" (false), and `idempotentHint: true` makes it
    idempotent. A tool without annotations, or one whose hints say nothing about its
    effect, is "unknown" and not idempotent: resume never re-runs it.
    """
    if annotations is None:
        return "unknown", False
    if _hint(annotations, "read_only_hint", "readOnlyHint"):
        return "read", True
    destructive = _hint(annotations, "destructive_hint", "destructiveHint")
    effect: Effect = "unknown" if destructive is None else "destructive" if destructive else "write"
    return effect, _hint(annotations, "idempotent_hint", "idempotentHint") is True


async def _call(server: _Server, name: str, arguments: dict[str, Any], timeout_s: float) -> str:
    try:
        async with fails_on_fault(server.fault), asyncio.timeout(timeout_s):
            context = telemetry.trace_headers()  # the tool span goes on in the server
            if context:
                result = await server.client.call_tool(name, arguments, meta=context)  # type: ignore[arg-type]
            else:
                result = await server.client.call_tool(name, arguments)
    except UnreadableMessage as exc:
        raise ToolError(
            f"MCP server {server.name!r} sent a message that cannot be read: {exc}"
        ) from None
    except TimeoutError:
        raise ToolError(
            f"MCP server {server.name!r} did not answer {name!r} within {timeout_s:g}s"
        ) from None
    except Exception as exc:  # a dead or broken server is an observation
        raise ToolError(
            f"MCP server {server.name!r} failed on {name!r}: {_describe(exc)}"
        ) from None
    text = "\n".join(_block_text(block) for block in result.content or [])
    if result.is_error:
        raise ToolError(text or f"MCP tool {name!r} reported an error")
    return text


def _block_text(block: Any) -> str:
    text = getattr(block, "text", None)
    if isinstance(text, str):
        return text
    return f"[{getattr(block, 'type', 'content')} block]"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A tool name every provider accepts on the wire (OpenAI's and Anthropic's pattern)."""
PREFIX_SEPARATOR = "__"
"""Between a server's name and its tool's, when the tool's own name is taken."""
log = logging.getLogger("loopwright.mcp")


def _reserved_names() -> set[str]:
    """loopwright's own tool names: no MCP tool is exposed under one of them."""
    from loopwright.tools import BUILTIN_TOOLS, OPT_IN_TOOLS

    return {*BUILTIN_TOOLS, *OPT_IN_TOOLS, "write_file", "edit_file", "grep", "glob", "run_command"}


def _server_name(name: str) -> str:
    """A server's own name as a prefix: its letters, digits, `_` and `-` (at most 32)."""
    cleaned = re.sub(r"[^A-Za-z0-9_-]", "", name)[:32]
    return cleaned or "mcp"


def _fallback_name(spec: MCPServerSpec) -> str:
    return spec.target.rstrip("/").rsplit("/", 1)[-1].split()[0] or "mcp"
