"""The command line starts without what only some commands need (httpx, jsonschema, the
other commands' modules), and `import loopwright` without the parts a program has not named."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from cli_helpers import SRC

pytestmark = pytest.mark.subprocess

HEAVY = (
    "httpx", "jsonschema", "json_repair", "llama_cpp", "temporalio", "psycopg", "mcp", "uvicorn",
)  # fmt: skip


def _imported_after(code: str, names: Sequence[str] = HEAVY) -> list[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
    )
    modules = set(json.loads(done.stdout.splitlines()[-1]))
    return [name for name in names if name in modules]


def test_starting_the_command_line_imports_no_backend_library() -> None:
    assert _imported_after("import loopwright.cli; loopwright.cli.build_parser()") == []


def test_a_scripted_run_with_a_built_in_tool_imports_no_backend_library(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    replies = [{"action": "echo", "action_input": {"text": "hi"}}, {"final_answer": "done"}]
    script.write_text(json.dumps([json.dumps(reply) for reply in replies]), encoding="utf-8")
    argv = [
        "run", "say hi", "--model", f"scripted:{script}", "--tools", "echo", "--json",
        "--store", str(tmp_path / "runs.db"),
    ]  # fmt: skip
    run = f"import loopwright.cli; assert loopwright.cli.main({argv!r}) == 0"
    assert _imported_after(run) == []


def test_an_http_adapter_brings_httpx_when_it_is_named() -> None:
    assert _imported_after("from loopwright.models import OpenAIModel") == ["httpx"]


DEFERRED = ("yaml", "asyncio", "ssl", "socket", "sqlite3", "rich", "tomllib")
"""What `import loopwright` leaves to the first use of the part that needs it."""
PARTS = tuple(
    f"loopwright.{part}"
    for part in ("agent", "runtime", "store", "events", "messages", "models", "tasks", "tools")
)


def test_importing_loopwright_loads_no_part_until_a_name_of_it_is_used() -> None:
    assert _imported_after("import loopwright", HEAVY + DEFERRED + PARTS) == []
    used = "import loopwright; loopwright.Runtime"
    assert _imported_after(used, ("loopwright.runtime", "loopwright.agent")) == [
        "loopwright.runtime",
        "loopwright.agent",
    ]


def test_a_command_imports_only_its_own_module() -> None:
    from loopwright.cli import SUBCOMMAND_MODULES

    runs_help = "import loopwright.cli, contextlib\nwith contextlib.suppress(SystemExit):\n"
    runs_help += "    loopwright.cli.main(['runs', '--help'])"
    others = [module for module in SUBCOMMAND_MODULES if module != "loopwright.cli._runs"]
    assert _imported_after(runs_help, [*others, "yaml", "loopwright.evals"]) == []


def test_the_worker_command_imports_no_http_client_or_other_command() -> None:
    pytest.importorskip("temporalio")
    worker = "import loopwright.cli\nloopwright.cli.build_parser('worker')\n"
    worker += "import loopwright.engines.temporal"
    assert _imported_after(worker, ["httpx", "yaml", "loopwright.cli._run"]) == []
