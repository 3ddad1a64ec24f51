"""Which settings of a project's `loopwright.toml` need the user's trust, and why.

The rule: until the user trusts it, a project's file may not weaken a protection the user
has (their own value, else the built-in one) nor pick code or data a run reads, writes or
sends somewhere. A value equal to the one the user has without the file changes nothing and
always applies. Every key of every section has a rule here (a test checks that, and that
docs/security.md's table lists each key): a key added to the schema without one needs trust.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

Yours = Callable[[str], Any]
"""A key's value (same section) without the project file: the user's file's, else built-in."""

PACKAGED_LOCAL_MODELS = ("", "default", "small")
"""`local:NAME` names that are not a file: the packaged models (models/_local.py)."""
FILE_CHANGING_TOOLS = ("write_file", "edit_file")
"""Built-in tools that change files (effect `write`); `run_command` is apart."""
ITERATIONS_BY_TIER = {"trivial": 5, "standard": 10, "complex": 20}
"""As agent/_options.py's ITERATION_TIERS (a test checks they agree)."""
LONGEST_BUILT_IN_WALL_CLOCK = 1800.0
"""The longer of the built-in wall clocks (guards/_defaults.py): a run with tools."""


Rule = Callable[[Any, Path, Yours], "str | None"]
"""(value, the project's folder, yours) -> why the value needs trust, or None."""


def needs_trust(key: str, value: Any, project: Path, yours: Yours | None = None) -> str | None:
    """Why a project file's `key = value` needs the user's trust, or None. `project`: the
    file's own folder (real path); `yours`: each key's value without the project file."""
    mine: Yours = yours if yours is not None else (lambda _key: None)
    if _same(value, mine(key)):
        return None
    rule = RULES.get(key)
    if rule is None:
        return "loopwright has no rule saying it is harmless"
    return rule(value, project, mine)


def _same(value: Any, mine: Any) -> bool:
    return value == mine or (value in (None, "") and mine in (None, ""))


def _items(value: Any) -> list[str]:
    return [part.strip() for part in str(value or "").split(",") if part.strip()]


def _always(why: str) -> Rule:
    return lambda _value, _project, _yours: why


def _when_on(why: str) -> Rule:
    return lambda value, _project, _yours: why if value else None


def _harmless(_value: Any, _project: Path, _yours: Yours) -> None:
    return None


def _model(value: Any, _: Path, yours: Yours) -> str | None:
    prefix, _colon, name = str(value or "").partition(":")
    provider = prefix.partition("?")[0]
    if provider == "scripted":
        return "a script file the project names decides every tool call"
    if provider == "local" and name.partition("?")[0] not in PACKAGED_LOCAL_MODELS:
        return "it loads a model file the project names"
    mine = yours("model") or "local"
    return None if value == mine else f"it changes your model ({mine} to {value})"


def _tools(value: Any, _: Path, yours: Yours) -> str | None:
    names = _items(value)
    if any(":" in name for name in names):
        return "it imports tool code"
    if "run_command" in names:
        return "it lets the model run programs"
    mine = _items(yours("tools"))
    if any(name in FILE_CHANGING_TOOLS and name not in mine for name in names):
        return "it lets the model change files"
    return None


def _inside(value: Any, project: Path, _: Yours | None = None) -> str | None:
    text = str(value or "")
    if not text:
        return None
    if "://" in text:
        return "it names a server"
    path = Path(text).expanduser()
    resolved = (path if path.is_absolute() else project / path).resolve()
    return None if resolved.is_relative_to(project) else "it is outside the project"


def _approve(value: Any, _: Path, yours: Yours) -> str | None:
    theirs = set(_items(value))
    if "*" in theirs or set(_items(yours("approve"))) <= theirs:
        return None  # it only adds calls that wait for approval
    return "it drops calls you make wait for approval"


def _host(value: Any, _: Path, __: Yours) -> str | None:
    try:
        loopback = value in (None, "", "localhost") or ipaddress.ip_address(value).is_loopback
    except ValueError:
        loopback = False
    return None if loopback else "it serves beyond this machine"


def _rollback(value: Any, _: Path, yours: Yours) -> str | None:
    return "it turns off your rollback on failure" if yours("rollback_on_failure") else None


def _limit(key: str, *, zero_is_off: bool = False, unset: float = math.inf) -> Rule:
    """A bound (time, iterations, tokens, cost): it may tighten, never loosen or turn off."""

    def bound(value: Any) -> float:
        if value is None:
            return unset
        return math.inf if zero_is_off and value == 0 else float(value)

    def check(value: Any, _: Path, yours: Yours) -> str | None:
        mine = yours(key)
        if key == "max_iterations" and mine is None:
            mine = ITERATIONS_BY_TIER.get(str(yours("tier") or "standard"))
        if bound(value) <= bound(mine):
            return None
        if bound(value) == math.inf:
            return "it turns off a limit"
        shown = "none" if bound(mine) == math.inf else f"{bound(mine):g}"
        return f"it raises a limit (yours: {shown})"

    return check


def _tier(value: Any, _: Path, yours: Yours) -> str | None:
    mine = str(yours("tier") or "standard")
    raised = ITERATIONS_BY_TIER.get(str(value), 0) > ITERATIONS_BY_TIER.get(mine, 0)
    return f"it raises the iteration limit (yours: {mine})" if raised else None


RULES: dict[str, Rule] = {
    "model": _model,
    "base_url": _always("it sends requests to a server the file names"),
    "tools": _tools,
    "workspace": _inside,
    "tool_mode": _harmless,
    "allow_commands": _when_on("it lets the model run programs"),
    "tier": _tier,
    "max_iterations": _limit("max_iterations"),
    "timeout": _limit("timeout", zero_is_off=True, unset=LONGEST_BUILT_IN_WALL_CLOCK),
    "iteration_timeout": _limit("iteration_timeout", zero_is_off=True),
    "max_tokens_total": _limit("max_tokens_total"),
    "max_cost": _limit("max_cost"),
    "repetition_threshold": _limit("repetition_threshold"),
    "no_progress_limit": _limit("no_progress_limit"),
    "last_turn": _harmless,
    "context_window": _harmless,
    "approve": _approve,
    "mcp_trusted": _when_on(
        "it lets MCP servers' own annotations decide which calls wait for approval"
    ),
    "tenant": _always("it files your runs under another tenant"),
    "store": _always("it picks where your runs are kept and what resume re-runs"),
    "secrets_file": _always("it picks files every run reads, in place of yours"),
    "engine": _harmless,
    "temporal": _always("it sends runs to a Temporal frontend the file names"),
    "otel": _when_on("it sends the runs' traces to a collector"),
    "host": _host,
    "port": _harmless,
    "token_file": _always("it decides who may use the server"),
    "tasks": _always("it picks the task files (and their tool code) served"),
    "allow_base_url": _when_on("it lets API requests name a server"),
    "agent": _always("it imports agent code"),
    "state_dir": _always("it picks where task state and backups are read back"),
    "gate_timeout": _limit("gate_timeout"),
    "rollback_on_failure": _rollback,
    "task_queue": _always("it picks which runs this worker takes"),
    "max_cached_workflows": _harmless,
    "graceful_timeout": _limit("graceful_timeout"),
    "sticky_timeout": _limit("sticky_timeout"),
}
"""Key -> its rule. A value equal to yours applies whatever the rule says."""
