"""Tools for the example tasks: an API-key store kept in a JSON file, and release notes.

`keys.json` maps an environment to its keys: `{"staging": [{"id", "created", "secret"}]}`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Any

from loopwright.errors import ToolError
from loopwright.tools import ToolContext, resolve_in_workspace, tool


def _load_keys(ctx: ToolContext, path: str) -> dict[str, list[dict[str, Any]]]:
    file = resolve_in_workspace(ctx.workspace, path, must_exist=True)
    data: dict[str, list[dict[str, Any]]] = json.loads(file.read_text(encoding="utf-8"))
    return data


def _age_days(created: str, as_of: str) -> int:
    return (dt.date.fromisoformat(as_of) - dt.date.fromisoformat(created)).days


@tool(effect="read")
def check_workspace(ctx: ToolContext) -> dict[str, Any]:
    """Check that the workspace exists and is a folder; count its files."""
    if not ctx.workspace.is_dir():
        raise ToolError(f"the workspace {ctx.workspace} is not a folder")
    return {"workspace": str(ctx.workspace), "files": sum(1 for _ in ctx.workspace.iterdir())}


@tool(effect="read")
def list_keys(
    ctx: ToolContext, env: str, as_of: str, max_age_days: int = 90, path: str = "keys.json"
) -> dict[str, Any]:
    """List the API keys of an environment and which are older than `max_age_days`.

    Args:
        env: environment name (staging, production)
        as_of: the date to measure ages from (YYYY-MM-DD)
        max_age_days: keys older than this are stale
        path: the key store file
    """
    keys = _load_keys(ctx, path).get(env)
    if keys is None:
        raise ToolError(f"no environment {env!r} in {path}")
    stale = [k["id"] for k in keys if _age_days(k["created"], as_of) > max_age_days]
    return {"env": env, "count": len(keys), "stale": stale, "stale_count": len(stale)}


@tool(effect="write")
def rotate_keys(
    ctx: ToolContext, env: str, ids: list[str], as_of: str, path: str = "keys.json"
) -> dict[str, Any]:
    """Replace the secrets of the given keys and mark them created `as_of`.

    Args:
        env: environment name
        ids: ids of the keys to rotate
        as_of: the new creation date (YYYY-MM-DD)
        path: the key store file
    """
    data = _load_keys(ctx, path)
    rotated = []
    for key in data.get(env, []):
        if key["id"] in ids:
            seed = f"{env}:{key['id']}:{as_of}".encode()
            key["secret"] = "sk_" + hashlib.sha256(seed).hexdigest()[:24]
            key["created"] = as_of
            rotated.append(key["id"])
    missing = sorted(set(ids) - set(rotated))
    if missing:
        raise ToolError(f"no such key(s) in {env}: {', '.join(missing)}")
    file = resolve_in_workspace(ctx.workspace, path)
    file.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return {"rotated": rotated}


@tool(effect="read")
def verify_keys(
    ctx: ToolContext, env: str, as_of: str, max_age_days: int = 90, path: str = "keys.json"
) -> dict[str, Any]:
    """Fail if any key of the environment is still stale.

    Args:
        env: environment name
        as_of: the date to measure ages from (YYYY-MM-DD)
        max_age_days: keys older than this are stale
        path: the key store file
    """
    report = list_keys.function(ctx, env, as_of, max_age_days, path)
    if report["stale_count"]:
        raise ToolError(f"still stale in {env}: {', '.join(report['stale'])}")
    return {"env": env, "ok": True}


@tool(effect="read")
def read_commits(ctx: ToolContext, path: str = "commits.txt") -> dict[str, Any]:
    """Read the one-line commit messages since the last release.

    Args:
        path: a file with one commit message per line
    """
    file = resolve_in_workspace(ctx.workspace, path, must_exist=True)
    lines = [line.strip() for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {"count": len(lines), "commits": lines}


@tool(effect="write")
def write_file(ctx: ToolContext, path: str, content: str) -> str:
    """Write a text file in the workspace (replacing it).

    Args:
        path: file path relative to the workspace
        content: the text to write
    """
    file = resolve_in_workspace(ctx.workspace, path)
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(content, encoding="utf-8")
    return f"wrote {len(content)} characters to {path}"
