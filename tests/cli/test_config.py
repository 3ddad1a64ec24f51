"""`loopwright.toml`: flag > environment > project file > user file > built-in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import cli, cli_env, cli_tty


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def values(result_out: str) -> dict[str, dict[str, Any]]:
    data = json.loads(result_out)
    return {f"{v['section']}.{v['key']}": v for v in data["values"]}


def test_each_layer_wins_over_the_ones_below(tmp_path: Path) -> None:
    project = tmp_path / "project"
    user = write(
        tmp_path / ".config" / "loopwright" / "loopwright.toml",
        'model = "ollama:qwen"\n\n[run]\ntools = ["read"]\nmax_iterations = 4\ntenant = "u"\n',
    )
    proj = write(project / "loopwright.toml", '[run]\ntools = "read,grep"\ntenant = "p"\n')
    env = cli_env(tmp_path, LOOPWRIGHT_TENANT="e")
    result = cli("config", "show", "--json", home=tmp_path, cwd=project, env=env)
    assert result.code == 0, result.err
    seen = values(result.out)
    assert seen["run.model"]["value"] == "ollama:qwen"
    assert seen["run.model"]["origin"] == f"{user}:1" and seen["run.model"]["source"] == "user file"
    assert seen["run.max_iterations"]["value"] == 4
    assert seen["run.tools"] == {"section": "run", "key": "tools", "value": "read,grep",
                                 "source": "project file", "origin": f"{proj}:2",
                                 "trusted": False, "in_effect": None}  # fmt: skip
    assert (
        seen["run.tenant"]["value"] == "e" and seen["run.tenant"]["origin"] == "LOOPWRIGHT_TENANT"
    )
    assert seen["run.tier"] == {"section": "run", "key": "tier", "value": "standard",
                                "source": "built-in", "origin": "", "trusted": None,
                                "in_effect": None}  # fmt: skip
    assert seen["serve.model"]["value"] == "ollama:qwen"  # a top-level key serves every section
    assert seen["serve.port"]["value"] == 8765

    # the values reach the commands: the project's tools, unless a flag says otherwise
    prompt = cli("prompt", "--json", home=tmp_path, cwd=project, env=env)
    assert json.loads(prompt.out)["tools"] == ["read", "grep"]
    prompt = cli("prompt", "--json", "--tools", "glob", home=tmp_path, cwd=project, env=env)
    assert json.loads(prompt.out)["tools"] == ["glob"]


def test_the_store_from_the_config_file_is_used(tmp_path: Path) -> None:
    project = tmp_path / "p"
    store = tmp_path / "elsewhere" / "runs.db"
    write(project / "loopwright.toml", f'store = "{store}"\n')
    script = write(project / "s.json", json.dumps(['{"thought": "t", "final_answer": "ok"}']))
    env = cli_env(tmp_path)
    del env["LOOPWRIGHT_STORE"]
    # a store outside the project is taken from the file once the user trusts it
    assert cli("config", "trust", home=tmp_path, cwd=project, env=env).code == 0
    run = cli("run", "hi", "--model", f"scripted:{script}", "--json", home=tmp_path, cwd=project,
              env=env)  # fmt: skip
    assert run.code == 0, run.err
    assert store.is_file()
    listed = cli("runs", "list", "--json", home=tmp_path, cwd=project, env=env)
    assert [r["request"] for r in json.loads(listed.out)] == ["hi"]


def test_bad_keys_and_values_name_the_file_the_line_and_the_key(tmp_path: Path) -> None:
    project = tmp_path / "p"
    config = write(project / "loopwright.toml", '[run]\nmodel = "local"\nmax_iteratons = 3\n')
    result = cli("prompt", home=tmp_path, cwd=project)
    assert result.code == 2
    assert (
        f"{config}:3: unknown key 'run.max_iteratons' (did you mean 'max_iterations'?" in result.err
    )
    write(config, '[run]\nmax_iterations = "ten"\n')
    result = cli("config", "show", home=tmp_path, cwd=project)
    assert result.code == 2
    assert f"{config}:2: run.max_iterations: expected a whole number, got 'ten'" in result.err
    write(config, "[serve]\nport = 8765\n[serve.extra]\n")
    assert "unknown key 'serve.extra'" in cli("config", "show", home=tmp_path, cwd=project).err
    write(config, "[run\n")
    result = cli("config", "show", home=tmp_path, cwd=project)
    assert result.code == 2 and f"{config}:1: not valid TOML" in result.err
    env = cli_env(tmp_path, LOOPWRIGHT_PORT="eighty")
    result = cli("config", "show", home=tmp_path, env=env)
    assert "environment variable LOOPWRIGHT_PORT: expected a whole number" in result.err


@pytest.mark.subprocess
def test_config_show_plain_on_a_pipe_and_a_table_on_a_terminal(tmp_path: Path) -> None:
    write(tmp_path / "loopwright.toml", "[task]\ngate_timeout = 30\n")
    piped = cli("config", "show", "--section", "task", home=tmp_path)
    rows = [line.split("\t") for line in piped.out.splitlines()]
    assert rows[0] == ["key", "value", "source"]
    source = f"project file ({tmp_path / 'loopwright.toml'}:2)"
    untrusted = f"{source}, file not trusted (this one applies: harmless)"
    assert ["task.gate_timeout", "30.0", untrusted] in rows
    shown = cli_tty("config", "show", "--section", "task", home=tmp_path, columns=200)
    assert "┃ key" in shown.out and "task.gate_timeout" in shown.out


@pytest.mark.subprocess
def test_serve_listens_where_the_config_file_says(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys

    from loopwright._ports import server_port

    port = server_port()  # drawn where no other program's port-0 bind or connection lands
    write(tmp_path / "loopwright.toml", f'[serve]\nport = {port}\nstore = ":memory:"\n')
    with subprocess.Popen(
        [sys.executable, "-m", "loopwright", "serve"],
        cwd=tmp_path, env=cli_env(tmp_path), stderr=subprocess.PIPE, text=True,
    ) as server:  # fmt: skip
        try:
            assert server.stderr is not None
            using = server.stderr.readline()  # which project file applies, and what it gives
            assert using.startswith(f"loopwright: using {tmp_path / 'loopwright.toml'} "), using
            assert "serve.port" in using and "serve.store" not in using, using  # env's store
            line = server.stderr.readline()
            assert f"on http://127.0.0.1:{port} " in line, line
            with socket.create_connection(("127.0.0.1", port), timeout=10):
                pass
        finally:
            server.terminate()
            server.wait(timeout=30)


@pytest.mark.subprocess
def test_models_on_a_terminal_is_a_block_a_backend(tmp_path: Path) -> None:
    """At 80 columns: a line of state, then the details across the width (in a table's
    narrow column they took a line per few words: 20 lines a backend)."""
    closed = "http://127.0.0.1:9"
    result = cli_tty("models", "--timeout", "0.5", "--ollama-url", closed, "--openai-url",
                     closed, "--anthropic-url", closed, home=tmp_path, columns=80)  # fmt: skip
    assert result.code == 0, result.out
    lines = result.out.strip().splitlines()
    assert "anthropic  configured no · reachable - · spec anthropic:NAME" in lines
    starts = [i for i, line in enumerate(lines) if "  configured " in line]
    assert len(starts) == 5 and len(lines) <= 5 * 4  # at most 3 lines of details each


def test_the_last_turn_is_on_unless_a_flag_or_the_config_file_turns_it_off(
    tmp_path: Path,
) -> None:
    project = tmp_path / "p"
    script = write(project / "s.json", json.dumps(['{"thought": "t", "final_answer": "ok"}']))
    env = cli_env(tmp_path)

    def recorded(*flags: str) -> object:
        run = cli("run", "hi", "--model", f"scripted:{script}", "--json", *flags,
                  home=tmp_path, cwd=project, env=env)  # fmt: skip
        assert run.code == 0, run.err
        started = json.loads(run.out.splitlines()[0])
        assert started["type"] == "run_started"
        assert started["spec"]["options"]["last_turn"] == started["options"]["last_turn"]
        return started["options"]["last_turn"]

    assert recorded() is True
    assert recorded("--no-last-turn") is False
    write(project / "loopwright.toml", "[run]\nlast_turn = false\n")
    assert recorded() is False
    assert recorded("--last-turn") is True  # a flag wins over the file
