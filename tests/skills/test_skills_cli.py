"""`skills list` and `skills show` say what a run would: unknown tools, sizes in lines, a
skill too big for the model, a folder that is not there."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Protocol, runtime_checkable

import pytest

from loopwright.cli import main
from loopwright.cli._skills_show import EMBEDDED_CONTEXT

EXAMPLE = Path(__file__).parents[2] / "examples" / "skills" / "code-review"
UNKNOWN = "unknown tool(s) in allowed-tools: teleport"


def make_skill(root: Path, name: str, front_extra: str = "", body: str = "Do it.\n") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    front = f"---\nname: {name}\ndescription: about {name}\n{front_extra}---\n"
    (folder / "SKILL.md").write_text(front + body, encoding="utf-8")
    return folder


def big_body(kilobytes: int) -> str:
    line = "When the input has this pattern, apply that transformation and say so. \n"
    return line * (kilobytes * 1024 // len(line))


def test_list_warns_of_a_skill_too_big_for_the_embedded_model_as_run_refuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_skill(tmp_path, "big", body=big_body(84))
    make_skill(tmp_path, "small")
    assert main(["skills", "list", str(tmp_path)]) == 0  # it loads: a bigger model takes it
    listed = capsys.readouterr()
    assert "big" in listed.out and "small" in listed.out
    [warning] = [line for line in listed.err.splitlines() if "too big" in line]
    assert str(tmp_path / "big" / "SKILL.md") in warning
    assert f"the model reads at most {EMBEDDED_CONTEXT:,} tokens" in warning
    assert "skills show big --context-window N" in warning


def test_list_reports_an_unknown_allowed_tool_as_run_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = make_skill(tmp_path, "odd", "allowed-tools: read teleport\n")
    make_skill(tmp_path, "fine")
    assert main(["skills", "list", str(tmp_path)]) == 1
    listed = capsys.readouterr()
    assert "fine" in listed.out and "odd" not in listed.out
    assert main(["prompt", "--skill", str(folder), "x"]) == 2
    refused = capsys.readouterr().err
    problem = listed.err.strip()
    assert UNKNOWN in problem
    assert refused.strip() == f"loopwright: error: {problem}"  # the same words, file and line


def test_list_knows_the_users_own_tools_when_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = tmp_path / "mytools.py"
    tools.write_text(
        "from loopwright import tool\n\n@tool\ndef teleport(where: str) -> str:\n"
        '    """Go there."""\n    return where\n'
    )
    make_skill(tmp_path / "skills", "odd", "allowed-tools: read teleport\n")
    assert main(["skills", "list", str(tmp_path / "skills"), "--tools", f"{tools}:teleport"]) == 0
    assert "read teleport" in capsys.readouterr().out


def test_list_gives_file_sizes_in_lines(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["skills", "list", str(EXAMPLE.parent)]) == 0
    assert "checklist.md (7 lines), scripts/count_lines.py (6 lines)" in capsys.readouterr().out


def test_list_of_a_missing_folder_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["skills", "list"]) == 1
    out = capsys.readouterr()
    assert out.out == ""  # no header over nothing
    assert out.err.splitlines() == [
        f"{tmp_path / 'skills'}: no such folder (give the folder holding your skills, or a "
        "skill's own folder)"
    ]


def test_list_of_a_folder_without_skills_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["skills", "list", str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert out.out == ""
    assert (
        out.err.strip() == f"{tmp_path}: no skills here (a skill is a folder containing SKILL.md)"
    )


def test_show_prints_front_matter_files_tools_and_the_prompt(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["skills", "show", "code-review", str(EXAMPLE.parent)]) == 0
    out = capsys.readouterr().out
    assert "  allowed-tools: read list_files grep\n  license: Apache-2.0\n" in out
    assert '  metadata: {"version": "1.0"}' in out
    assert "  checklist.md  7 lines  Review checklist: what the team flags in every review" in out
    assert "a run offers: read\n  read: the skill's own files only" in out
    assert "not offered: list_files, grep (offer them with --tools)" in out
    assert "the skill's instructions (the body of SKILL.md, 8 lines)" in out
    assert f"the model reads {EMBEDDED_CONTEXT:,} at most" in out


def test_show_json_with_tools(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["skills", "show", str(EXAMPLE), "--tools", "read,list_files,grep", "--json"])
    record = json.loads(capsys.readouterr().out)
    assert code == 0
    assert record["offered_tools"] == ["read", "list_files", "grep"]
    assert record["own_read"] is False
    assert record["files"][0] == {
        "path": "checklist.md",
        "lines": 7,
        "description": "Review checklist: what the team flags in every review",
    }
    assert 300 < record["prompt_tokens"] < 1000 and record["too_big"] is None


def test_show_of_an_unknown_name_lists_what_there_is(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["skills", "show", "nope", str(EXAMPLE.parent)]) == 2
    err = capsys.readouterr().err
    assert "no skill named 'nope' in" in err and "(found: code-review)" in err


def test_show_of_a_skill_that_does_not_load_gives_its_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_skill(tmp_path, "odd", "allowed-tools: teleport\n")
    assert main(["skills", "show", "odd", str(tmp_path)]) == 1
    assert UNKNOWN in capsys.readouterr().err


def test_a_skill_too_big_for_the_model_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = make_skill(tmp_path, "big", body=big_body(74))
    script = tmp_path / "script.json"
    script.write_text(json.dumps([json.dumps({"thought": "t", "final_answer": "a"})]))
    code = main(
        ["run", "x", "--skill", str(folder), "--model", f"scripted:{script}",
         "--context-window", "8192", "--json"]
    )  # fmt: skip
    out = capsys.readouterr()
    assert code == 2 and out.out == ""  # no run started
    error = out.err.strip()
    assert error.startswith(f"loopwright: error: {folder / 'SKILL.md'}: the skill is too big")
    assert re.search(r"its prompt is about 19,\d{3} tokens \(74 KB of instructions\)", error)
    assert "the model reads at most 8,192 tokens" in error
    assert "move reference material into supporting files" in error

    assert main(["skills", "show", str(folder)]) == 1
    assert "too big: the skill is too big for the model" in capsys.readouterr().out


@runtime_checkable
class SaysItsContextWindow(Protocol):
    """A model that says how many tokens it sees (the engine fits the conversation to it)."""

    def context_window(self) -> int | None: ...


def test_the_embedded_model_says_its_context_window(tmp_path: Path) -> None:
    from loopwright.models import resolve_model

    pytest.importorskip("llama_cpp")
    gguf = tmp_path / "never-loaded.gguf"
    gguf.write_bytes(b"GGUF")  # resolving does not load it
    model = resolve_model(f"local:{gguf}")
    assert isinstance(model, SaysItsContextWindow)
    assert model.context_window() == EMBEDDED_CONTEXT


async def test_the_python_api_refuses_a_skill_too_big_for_its_model(tmp_path: Path) -> None:
    from loopwright.agent import AgentOptions
    from loopwright.errors import SkillError
    from loopwright.skills import AutonomousConfig, AutonomousSkillExecutor, load_skill
    from loopwright.testing import ScriptedModel
    from loopwright.tools import ToolRegistry

    skill = load_skill(make_skill(tmp_path, "big", body=big_body(40)))
    config = AutonomousConfig(options=AgentOptions(context_window=4096))
    model = ScriptedModel([])
    executor = AutonomousSkillExecutor(skill, ToolRegistry(), config=config, model=model)
    with pytest.raises(SkillError, match="too big for the model"):
        await executor.execute_sync("x")
    model.check_used(completed=False)
    assert model.requests == []


def test_a_copied_example_skill_fits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "code-review")
    assert main(["skills", "show", str(tmp_path / "code-review"), "--context-window", "2048"]) == 0
