"""examples/config/loopwright.toml is read as a project file by the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "config"


def test_the_example_config_file_sets_the_defaults(tmp_path: Path) -> None:
    shown = cli("config", "show", "--json", home=tmp_path, cwd=EXAMPLE)
    assert shown.code == 0, shown.err
    values = {f"{v['section']}.{v['key']}": v for v in json.loads(shown.out)["values"]}
    assert values["run.tools"]["value"] == "read,list_files,grep"
    assert values["run.model"]["value"] == "local"
    assert values["run.model"]["source"] == "project file"
    assert json.loads(shown.out)["ignored"] == []  # nothing in it needs trust
    assert values["serve.port"]["value"] == 8800 and values["task.gate_timeout"]["value"] == 60.0
    prompt = cli("prompt", "--json", home=tmp_path, cwd=EXAMPLE)
    assert json.loads(prompt.out)["tools"] == ["read", "list_files", "grep"]
