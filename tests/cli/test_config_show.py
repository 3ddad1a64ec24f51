"""`config show` says what applies where nothing is set, and every mistake of every layer
is reported at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopwright.cli import main


def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of the test's own as home and working folder: no user or project file."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    monkeypatch.delenv("LOOPWRIGHT_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_defaults_in_effect_are_named_not_null(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _home(tmp_path, monkeypatch)
    assert main(["config", "show"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {row[0]: row[1:] for row in (line.split("\t") for line in lines)}
    assert rows["run.model"] == ["local", "built-in"]
    assert rows["run.store"] == ["~/.loopwright/runs.db", "built-in"]
    assert rows["run.timeout"][0].startswith("1800 (30 min) for a run with tools")
    assert rows["task.gate_timeout"] == ["300.0", "built-in"]
    assert not [key for key, (value, _) in rows.items() if value == "null"]
    assert main(["config", "show", "--json"]) == 0
    records = {
        f"{v['section']}.{v['key']}": v for v in json.loads(capsys.readouterr().out)["values"]
    }
    assert records["run.model"]["value"] is None and records["run.model"]["in_effect"] == "local"


def test_every_mistake_of_every_layer_is_reported_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _home(tmp_path, monkeypatch)
    project = tmp_path / "loopwright.toml"
    project.write_text('[run]\nmax_iteratons = 3\ntimeout = "x"\n[serve]\nport = "p"\nbogus = 1\n')
    monkeypatch.setenv("LOOPWRIGHT_PORT", "eighty")
    assert main(["config", "show"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "loopwright: error: environment variable LOOPWRIGHT_PORT: expected a whole number, "
        "got 'eighty'",
        f"{project}:2: unknown key 'run.max_iteratons' (did you mean 'max_iterations'? known "
        "in run: " + err[1].split("known in run: ")[1],
        f"{project}:3: run.timeout: expected a number, got 'x'",
        f"{project}:5: serve.port: expected a whole number, got 'p'",
        f"{project}:6: unknown key 'serve.bogus' (known in serve: " + err[4].split("serve: ")[1],
    ]


def test_the_table_writes_every_value_the_same_way_whatever_its_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _home(tmp_path, monkeypatch)
    (tmp_path / "loopwright.toml").write_text(
        'model = "ollama:qwen3:8b"\n[run]\ntools = ["add", "echo"]\nmax_iterations = 5\n'
    )
    assert main(["config", "trust"]) == 0
    capsys.readouterr()
    assert main(["config", "show", "--section", "run"]) == 0
    rows = {
        row[0]: row[1]
        for row in (line.split("\t") for line in capsys.readouterr().out.splitlines())
    }
    # a set string is written as a built-in one is (`standard`), with no quotes
    assert (rows["run.model"], rows["run.tier"]) == ("ollama:qwen3:8b", "standard")
    assert (rows["run.tools"], rows["run.max_iterations"]) == ("add,echo", "5")
    assert not [key for key, value in rows.items() if value.startswith('"')]
