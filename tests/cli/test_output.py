"""Output fits where it goes: tables on a terminal, unwrapped lines on a pipe, `--json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import cli, cli_tty

LONG = (
    "Audits supplier invoices against purchase orders and flags every mismatch in amount, "
    "currency or due date, so that nobody has to read them one by one."
)


def make_skill(parent: Path, name: str, front: str, body: str = "Do it.\n") -> Path:
    folder = parent / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\n{front}---\n{body}", encoding="utf-8")
    return folder


def skills_folder(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    make_skill(root, "audit", f"name: audit\ndescription: {LONG}\n")
    make_skill(root, "broken", "name: broken\ndescription: [unclosed\n")
    long_description = "Summarises things. " * 56  # 1,063 characters: over the 1,024 limit
    make_skill(root, "long-one", f"name: long-one\ndescription: {long_description}\n")
    make_skill(root, "zeta", "name: zeta\ndescription: the last one\nallowed-tools: read grep\n")
    return root


def test_skills_list_on_a_pipe_writes_one_unwrapped_line_per_skill(tmp_path: Path) -> None:
    result = cli("skills", "list", str(skills_folder(tmp_path)), home=tmp_path)
    lines = result.out.splitlines()
    assert lines[0].split("\t") == ["name", "description", "files", "allowed tools"]
    assert [line.split("\t")[0] for line in lines[1:]] == ["audit", "long-one", "zeta"]
    [audit] = [line for line in lines if "Audits supplier invoices" in line]
    assert LONG in audit  # never cut, never wrapped
    assert lines[3].split("\t")[3] == "read grep"
    # the bad skill is reported with its file and line; the over-long one is a warning only
    broken = tmp_path / "skills" / "broken" / "SKILL.md"
    assert f"{broken}:4: front matter is not valid YAML" in result.err
    assert "long-one/SKILL.md:3: 'description' is 1063 characters long" in result.err
    assert result.code == 1


def test_skills_list_json_holds_skills_warnings_and_problems(tmp_path: Path) -> None:
    result = cli("skills", "list", str(skills_folder(tmp_path)), "--json", home=tmp_path)
    data = json.loads(result.out)
    assert [s["name"] for s in data["skills"]] == ["audit", "long-one", "zeta"]
    assert data["skills"][0]["description"] == LONG
    assert data["skills"][1]["warnings"] and not data["skills"][0]["warnings"]
    assert data["skills"][2]["allowed_tools"] == ["read", "grep"]
    [problem] = data["problems"]
    assert problem["file"].endswith("broken/SKILL.md") and problem["line"] == 4


@pytest.mark.subprocess
def test_skills_list_on_a_terminal_is_a_table(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    make_skill(root, "audit", f"name: audit\ndescription: {LONG}\n")
    result = cli_tty("skills", "list", str(root), home=tmp_path, columns=100)
    assert result.code == 0, result.out
    assert "┃ name" in result.out and "━━━" in result.out
    assert "Audits supplier" in result.out


def test_prompt_json_and_runs_json(tmp_path: Path) -> None:
    prompt = cli("prompt", "add numbers", "--tools", "read,grep", "--json", home=tmp_path)
    data = json.loads(prompt.out)
    assert data["tools"] == ["read", "grep"] and data["tool_mode"] == "prompted"
    assert "grep" in data["system_prompt"]

    script = tmp_path / "script.json"
    script.write_text(json.dumps(['{"thought": "done", "final_answer": "hello\\nworld"}']))
    run = cli("run", "say hello\non two lines", "--model", f"scripted:{script}", "--json",
              home=tmp_path)  # fmt: skip
    assert run.code == 0, run.err
    listed = cli("runs", "list", home=tmp_path)
    [header, row] = listed.out.splitlines()
    assert header.split("\t")[:2] == ["run", "status"]
    assert row.split("\t")[1] == "completed" and row.endswith("say hello on two lines")
    [record] = json.loads(cli("runs", "list", "--json", home=tmp_path).out)
    shown = cli("runs", "show", record["run_id"], "--json", home=tmp_path)
    types = [json.loads(line)["type"] for line in shown.out.splitlines()]
    assert types[0] == "run_started" and types[-1] == "run_finished"


def test_the_live_view_never_wraps_a_long_line_on_a_pipe(tmp_path: Path) -> None:
    answer = "word " * 60 + "END"
    script = tmp_path / "script.json"
    script.write_text(json.dumps([json.dumps({"thought": "done", "final_answer": answer})]))
    run = cli("run", "say a lot", "--model", f"scripted:{script}", home=tmp_path)
    assert run.code == 0, run.err
    [line] = [line for line in run.out.splitlines() if "END" in line]
    assert answer in line
