"""`--agent module:attribute`: an agent built in Python, for the commands that run agents.

The reference names a module (importable from the current folder or the Python path) or a
file (`path/to/agents.py:attribute`), and an attribute of it: an `AgentExecutor`, or a
function that takes no argument and returns one (a factory). Every problem is one line
naming the reference: no such module or file, no such attribute, an import that failed, a
value that is not an agent.

Trust: naming code to import is the user's to do. The flag is theirs; a project's
`loopwright.toml` may name an agent (`agent = "..."` under `[run]`) only once the user has
trusted that file (config/_trust_rules.py), as with `module:function` tools.

With `--engine temporal` the agent runs on the workers, which load it themselves
(`loopwright worker --agent`, the same reference): the command that starts the run only
checks the reference's shape and records it in the run's spec.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

from loopwright.errors import ConfigurationError

if TYPE_CHECKING:
    from loopwright.agent import AgentExecutor


def load_agent(ref: str) -> AgentExecutor[Any, Any]:
    """The AgentExecutor `ref` names (`module:attribute` or `file.py:attribute`); a factory
    is called. A ConfigurationError of one line for anything else."""
    from loopwright.agent import AgentExecutor  # the agent loop: only when one is named

    target, _, attribute = checked_ref(ref).rpartition(":")
    module = _load_file(target, ref) if target.endswith(".py") else _import(target, ref)
    where = target if target.endswith(".py") else f"module {target!r}"
    if not hasattr(module, attribute):
        raise ConfigurationError(f"--agent {ref!r}: {where} has no attribute {attribute!r}")
    value = getattr(module, attribute)
    if not isinstance(value, AgentExecutor) and callable(value) and not isinstance(value, type):
        try:
            value = value()
        except Exception as exc:
            raise ConfigurationError(
                f"--agent {ref!r}: calling {attribute}() failed: {type(exc).__name__}: {exc}"
            ) from None
    if not isinstance(value, AgentExecutor):
        raise ConfigurationError(
            f"--agent {ref!r}: {attribute} is a {type(value).__name__}, not an AgentExecutor "
            "(or a function returning one)"
        )
    return value


def checked_ref(ref: str) -> str:
    """`ref` without surrounding blanks, if it has the shape of a reference (nothing is
    imported); else a ConfigurationError of one line."""
    target, sep, attribute = ref.strip().rpartition(":")
    if not sep or not target or not attribute.isidentifier():
        raise ConfigurationError(
            f"--agent {ref!r}: expected module:attribute or path/to/file.py:attribute"
        )
    return ref.strip()


def _import(name: str, ref: str) -> ModuleType:
    """The module, importable from the current folder too (as `python -m` would)."""
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)
    from loopwright.tools._resolve import import_named  # the tools package: when one is named

    return import_named(name, f"--agent {ref!r}")


def _load_file(file: str, ref: str) -> ModuleType:
    from loopwright.tools._resolve import load_file  # the tools package: when one is named

    return load_file(file, f"--agent {ref!r}", prefix="loopwright_user_agent_")
