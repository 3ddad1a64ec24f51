"""The compiled core: the hot path runs compiled where the set-up built it, from its sources
when asked (LOOPWRIGHT_PURE=1) or when a source changed since it was compiled."""

from __future__ import annotations

import importlib
import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loopwright import _compiled

BUILT = _compiled.MANIFEST.exists()
needs_build = pytest.mark.skipif(
    not BUILT, reason="no compiled core here (make compile found no C compiler): pure Python"
)
EXTENSIONS = tuple(importlib.machinery.EXTENSION_SUFFIXES)
SCRIPT = json.dumps(
    [
        '{"thought": "add", "action": "add", "action_input": {"a": 2, "b": 3}}',
        '{"thought": "done", "final_answer": "5"}',
    ]
)


@needs_build
def test_every_hot_module_is_imported_compiled() -> None:
    if os.environ.get("LOOPWRIGHT_PURE"):
        pytest.skip("LOOPWRIGHT_PURE is set for this test run")
    loaded = {m: str(importlib.import_module(m).__file__) for m in _compiled.MODULES}
    assert all(path.endswith(EXTENSIONS) for path in loaded.values()), loaded
    assert _compiled.in_use()


def _run_in_child(tmp_path: Path, env: dict[str, str]) -> dict[str, str]:
    script = tmp_path / "script.json"
    script.write_text(SCRIPT, encoding="utf-8")
    code = (
        "import json, loopwright, loopwright.agent._think as think\n"
        "from loopwright import AgentExecutor, ScriptedModel, tool\n"
        "@tool\n"
        "def add(a: int, b: int) -> int:\n"
        "    'Add.'\n"
        "    return a + b\n"
        f"model = ScriptedModel(json.load(open({str(script)!r})))\n"
        "result = AgentExecutor(model, [add]).run_sync('2 + 3?')\n"
        "print(json.dumps({'file': think.__file__, 'answer': result.answer}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result: dict[str, str] = json.loads(done.stdout)
    return result


@needs_build
def test_loopwright_pure_runs_the_same_run_from_the_sources(tmp_path: Path) -> None:
    pure = _run_in_child(tmp_path, {"LOOPWRIGHT_PURE": "1"})
    assert pure["file"].endswith(".py") and pure["answer"] == "5"
    compiled = _run_in_child(tmp_path, {"LOOPWRIGHT_PURE": ""})
    assert compiled["file"].endswith(EXTENSIONS) and compiled["answer"] == "5"


def test_a_source_whose_bytes_changed_is_reported_and_one_only_touched_is_not() -> None:
    module = "loopwright.agent._think"
    path = _compiled.source_of(module)
    stat = path.stat()
    same = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": _compiled.digest(path)}
    touched = {**same, "mtime_ns": stat.st_mtime_ns - 1}  # a checkout rewrote the same bytes
    edited = {**touched, "sha256": "0" * 64}
    assert _compiled.changed_sources({module: same}) == []
    assert _compiled.changed_sources({module: touched}) == []
    assert _compiled.changed_sources({module: edited}) == [module]
    gone = {"loopwright.agent._no_such_module": same}
    assert _compiled.changed_sources(gone) == ["loopwright.agent._no_such_module"]


def test_modules_taken_from_their_sources_are_those_and_only_those() -> None:
    finder = _compiled._FromSources(["loopwright.agent._think"])
    spec = finder.find_spec("loopwright.agent._think", None)
    assert spec is not None and str(spec.origin).endswith(os.path.join("agent", "_think.py"))
    assert isinstance(spec.loader, importlib.machinery.SourceFileLoader)
    assert finder.find_spec("loopwright.agent._act", None) is None


@needs_build
def test_the_cli_says_which_core_runs() -> None:
    def version(pure: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "loopwright", "--version"],
            env={**os.environ, "LOOPWRIGHT_PURE": pure},
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        return done.stdout.strip()

    assert version("").startswith("loopwright ") and "(compiled core)" in version("")
    assert "(pure Python: LOOPWRIGHT_PURE is set)" in version("1")
