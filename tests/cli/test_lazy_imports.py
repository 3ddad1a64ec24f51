"""The command line starts without what only some commands need (httpx, jsonschema, the
other commands' modules), each command without the parts it does not use (the agent loop,
the runtime, the task runner), and `import loopwright` without the parts a program has not
named."""

from __future__ import annotations

import contextlib
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


def _command(argv: Sequence[str], code: int = 0) -> str:
    """A probe that runs `loopwright ARGV` in the probing process (exit status `code`)."""
    return f"import loopwright.cli; assert loopwright.cli.main({list(argv)!r}) == {code}"


def _scripted_run(tmp_path: Path) -> list[str]:
    """`run` of a scripted agent that calls the built-in `echo`, stored in tmp_path."""
    script = tmp_path / "script.json"
    replies = [{"action": "echo", "action_input": {"text": "hi"}}, {"final_answer": "done"}]
    script.write_text(json.dumps([json.dumps(reply) for reply in replies]), encoding="utf-8")
    return [
        "run", "say hi", "--model", f"scripted:{script}", "--tools", "echo", "--json",
        "--store", str(tmp_path / "runs.db"),
    ]  # fmt: skip


def test_starting_the_command_line_imports_no_backend_library() -> None:
    assert _imported_after("import loopwright.cli; loopwright.cli.build_parser()") == []


def test_a_scripted_run_with_a_built_in_tool_imports_no_backend_library(tmp_path: Path) -> None:
    assert _imported_after(_command(_scripted_run(tmp_path))) == []


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


AGENT_LOOP = ("loopwright.agent._executor", "loopwright.agent._loop")
RUNTIME = ("loopwright.runtime", "loopwright.runtime._engine", "loopwright.runtime._embedded")
TASK_RUNNER = ("loopwright.tasks._run", "loopwright.tasks._steps", "loopwright.tasks._executor")
TASK_FILES = ("loopwright.tasks._loader", "yaml")
LOOK_TASK = SRC.parent / "examples" / "look_task.yaml"  # one tool step
MODELS_AND_SCRUBBER = ("loopwright.models", "loopwright.parsing", "loopwright.safety.scrub")
"""What runs, not a command that reads stored runs or the configuration."""


def test_listing_and_showing_stored_runs_loads_no_agent_loop_runtime_or_task_runner(
    tmp_path: Path,
) -> None:
    store = str(tmp_path / "runs.db")
    subprocess.run(
        [sys.executable, "-m", "loopwright", *_scripted_run(tmp_path)],
        capture_output=True,
        check=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    unused = [*AGENT_LOOP, *RUNTIME, *TASK_RUNNER, *TASK_FILES, *MODELS_AND_SCRUBBER]
    assert _imported_after(_command(["runs", "list", "--store", store]), unused) == []
    from loopwright.store import open_store

    with contextlib.closing(open_store(store)) as opened:
        (run,) = opened.list_runs()
    shown = _command(["runs", "show", run.run_id, "--store", store])
    assert _imported_after(shown, unused) == []


def test_an_agent_run_loads_no_task_runner(tmp_path: Path) -> None:
    run = _command(_scripted_run(tmp_path))
    assert _imported_after(run, [*TASK_RUNNER, *TASK_FILES]) == []


def test_the_store_config_and_models_commands_load_no_agent_loop_or_runtime(
    tmp_path: Path,
) -> None:
    unused = [*AGENT_LOOP, *RUNTIME, *TASK_RUNNER, *MODELS_AND_SCRUBBER]
    migrate = ["store", "migrate", "--store", str(tmp_path / "runs.db")]
    assert _imported_after(_command(migrate), unused) == []
    assert _imported_after(_command(["config", "show"]), unused) == []
    models_help = "import loopwright.cli, contextlib\nwith contextlib.suppress(SystemExit):\n"
    models_help += "    loopwright.cli.main(['models', '--help'])"
    assert _imported_after(models_help, unused) == []


def test_a_task_file_is_checked_without_the_runtime_or_the_task_runner(
    tmp_path: Path,
) -> None:
    validate = _command(["task", "validate", str(LOOK_TASK)])
    assert _imported_after(validate, [*AGENT_LOOP, *RUNTIME, *TASK_RUNNER]) == []


def test_a_server_without_task_files_loads_no_task_reader_or_runner() -> None:
    serve = "import loopwright.cli\nloopwright.cli.build_parser('serve')\n"
    serve += "from loopwright.server import ServerConfig, create_app, server_runtime\n"
    serve += "from loopwright.store._memory import memory_store\n"
    serve += "create_app(ServerConfig(runtime=server_runtime(memory_store())))"
    assert _imported_after(serve, [*TASK_RUNNER, *TASK_FILES]) == []


def test_the_task_package_loads_a_part_on_the_first_use_of_its_name() -> None:
    assert _imported_after("import loopwright.tasks", [*TASK_RUNNER, *TASK_FILES]) == []
    gates = "from loopwright.tasks import GateBroker, pending_gates"
    assert _imported_after(gates, [*TASK_RUNNER, *TASK_FILES, *AGENT_LOOP]) == []
    runner = "from loopwright.tasks import run_task"
    assert _imported_after(runner, TASK_RUNNER[:2]) == list(TASK_RUNNER[:2])


def test_every_name_of_the_task_package_is_there_and_listed() -> None:
    import loopwright.tasks as tasks

    missing = [name for name in tasks.__all__ if getattr(tasks, name, None) is None]
    assert missing == []
    assert set(tasks.__all__) <= set(dir(tasks))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = tasks.nothing
