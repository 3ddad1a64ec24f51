"""Which code a run's steps run: a worker's build id, and a run's tool code.

A worker announces a build id (`worker_build_id`: loopwright's version and the source of
its tool modules) when it starts, in its log and to Temporal (every workflow task it
completes carries it). A run records the code of its own tools when it starts
(`tool_code`: each tool's name, description, parameters and declarations, the source file
of the module that defines it, and a task run's task file); every worker that builds the
run again checks that it loads the same, and refuses to go on with different tool code
(`ToolCodeChanged`): a renamed argument, a changed effect, an edited task file would make
the run's later steps disagree with its earlier ones.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from temporalio.exceptions import ApplicationError

from loopwright.tools import Tool

TOOL_CODE_CHANGED = "ToolCodeChanged"
"""The type of an activity's failure on a worker whose tool code differs from the run's."""
ID_CHARS = 16


def tool_code(tools: Iterable[Tool], *files: str) -> str:
    """The id of a run's tool code (and of `files`, e.g. a task file)."""
    digest = hashlib.sha256()
    for tool in sorted(tools, key=lambda t: t.name):
        shown = [tool.name, tool.description, tool.parameters, tool.effect, tool.idempotent]
        digest.update(json.dumps(shown, sort_keys=True, default=str).encode())
        digest.update(_source_of(tool.function))
    for path in files:
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()[:ID_CHARS]


def _source_of(function: Callable[..., Any]) -> bytes:
    """The source file of the module that defines `function` (its name if it has none)."""
    function = inspect.unwrap(function)
    try:
        path = inspect.getsourcefile(function)
    except TypeError:
        path = None
    if path is None:
        return f"{getattr(function, '__module__', '')}:{function!r}".encode()
    return Path(path).read_bytes()


def worker_build_id() -> str:
    """loopwright's version and the source of its tool modules (the tools every worker
    has; a run's own tool files are checked per run)."""
    import loopwright
    import loopwright.tools

    digest = hashlib.sha256(getattr(loopwright, "__version__", "").encode())
    for path in sorted(Path(loopwright.tools.__file__).parent.rglob("*.py")):
        digest.update(path.name.encode() + path.read_bytes())
    return f"loopwright-{digest.hexdigest()[:ID_CHARS]}"


def check_tool_code(run_id: str, recorded: str | None, here: str) -> None:
    """Refuse to go on with run `run_id` when this worker's tool code is not the code it
    recorded (None: a run started before tool code was recorded, not checked)."""
    if recorded is None or recorded == here:
        return
    raise ApplicationError(
        f"run {run_id} started with tool code {recorded}, and worker {worker_build_id()} "
        f"loads its tools as {here}: the run's tools (or its task file) changed. Run its "
        f"remaining steps on workers with the code it started with (deploy changed tools "
        f"on a new --task-queue and keep the old workers until their runs end), or go on "
        f"with the new code: `loopwright runs resume {run_id} --engine temporal`",
        type=TOOL_CODE_CHANGED,
        non_retryable=True,
    )
