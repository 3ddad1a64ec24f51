"""A command that needs an extra that is not installed says which one, in one line, and
exits 2 (a usage error): the extra's module is blocked here as if it were not installed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from loopwright._extras import EXTRA_OF_MODULE, install_hint
from loopwright.cli import main

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = f"scripted:{ROOT / 'examples' / 'echo.json'}"
RUN = ["run", "Say hello", "--model", SCRIPT, "--tools", "echo", "--store", ":memory:"]
PG = "postgresql://nobody@127.0.0.1:9/none"

CASES = [
    ("server", ["uvicorn", "starlette"], ["serve", "--port", "0"]),
    ("mcp", ["mcp"], [*RUN, "--mcp", f"{sys.executable} -c pass"]),
    ("postgres", ["psycopg", "psycopg_pool"], ["runs", "list", "--store", PG]),
    ("temporal", ["temporalio"], ["worker", "--temporal", "127.0.0.1:9", "--store", PG]),
    ("otel", ["opentelemetry"], [*RUN, "--otel"]),
    ("local", ["llama_cpp"], ["run", "Say hello", "--model", "local", "--store", ":memory:"]),
]


def block(monkeypatch: pytest.MonkeyPatch, modules: list[str]) -> None:
    """Import of each module (and of ours that import it) fails as if it were absent."""
    for name in list(sys.modules):
        if name.partition(".")[0] in modules or name.startswith("loopwright.mcp"):
            monkeypatch.delitem(sys.modules, name)
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.parametrize(("extra", "modules", "argv"), CASES, ids=[c[0] for c in CASES])
def test_the_error_names_the_extra_in_one_line(
    extra: str,
    modules: list[str],
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    block(monkeypatch, modules)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1, err
    assert f"pip install 'loopwright[{extra}]'" in err


def test_every_extra_in_the_project_file_is_named_for_its_modules() -> None:
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert set(EXTRA_OF_MODULE.values()) <= set(extras)
    assert {"server", "mcp", "postgres", "temporal", "otel", "local", "all"} <= set(extras)


def test_a_module_no_extra_brings_is_not_ours_to_explain() -> None:
    assert install_hint(ModuleNotFoundError("x", name="numpy"), "`loopwright run`") is None
    hint = install_hint(ModuleNotFoundError("x", name="uvicorn.config"), "`loopwright serve`")
    assert hint == (
        "`loopwright serve` needs the server extra (uvicorn.config is not installed): "
        "pip install 'loopwright[server]'"
    )
