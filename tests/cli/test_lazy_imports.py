"""The command line starts without what only some commands need (httpx, jsonschema)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import SRC

pytestmark = pytest.mark.subprocess

HEAVY = (
    "httpx", "jsonschema", "json_repair", "llama_cpp", "temporalio", "psycopg", "mcp", "uvicorn",
)  # fmt: skip


def _imported_after(code: str) -> list[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
    )
    modules = set(json.loads(done.stdout.splitlines()[-1]))
    return [name for name in HEAVY if name in modules]


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
