"""Skills: loading SKILL.md folders, clear errors for bad ones, preprocessing, prompt."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.errors import SkillError
from loopwright.safety.scrub import Scrubber
from loopwright.skills import (
    ContextLoader,
    DynamicInjector,
    StringSubstitutor,
    discover_skills,
    load_skill,
)

EXAMPLE = Path(__file__).parents[2] / "examples" / "skills" / "code-review"


def make_skill(root: Path, name: str, front: str, body: str = "Do it.\n") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"{front}{body}", encoding="utf-8")
    return folder


def test_example_skill_loads_with_metadata() -> None:
    skill = load_skill(EXAMPLE)
    assert skill.name == "code-review"
    assert skill.metadata.allowed_tools == ("read", "list_files", "grep")
    assert skill.metadata.license == "Apache-2.0"
    assert skill.metadata.metadata == {"version": "1.0"}
    assert skill.content.startswith("# Code review")


@pytest.mark.parametrize(
    "front, problem",
    [
        ("name: x\n", "missing YAML front matter"),
        ("---\ndescription: d\n---\n", "missing the required 'name'"),
        ("---\nname: bad-skill\n---\n", "missing the required 'description'"),
        ("---\nname: other\ndescription: d\n---\n", "does not match the folder name 'bad-skill'"),
        (
            "---\nname: bad-skill\ndescription: d\nallowed-tools: read teleport\n---\n",
            "unknown tool(s) in allowed-tools: teleport",
        ),
        ("---\nname: bad-skill\ndescription: [unclosed\n---\n", "not valid YAML"),
        ("---\nname: Bad_Skill\ndescription: d\n---\n", "lowercase letters"),
        ("---\nname: bad-skill\ndescription: d\n", "not closed"),
    ],
)
def test_bad_skills_fail_early_and_clearly(tmp_path: Path, front: str, problem: str) -> None:
    folder = make_skill(tmp_path, "bad-skill", front)
    with pytest.raises(SkillError) as caught:
        load_skill(folder, known_tools=["read", "grep"])
    assert problem in str(caught.value)
    assert str(folder) in str(caught.value)


def test_folder_without_skill_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SkillError, match=r"no SKILL\.md"):
        load_skill(tmp_path)


def test_other_runtimes_tool_names_are_understood(tmp_path: Path) -> None:
    front = "---\nname: porter\ndescription: d\nallowed-tools: Read, Grep, Bash(git:*)\n---\n"
    skill = load_skill(
        make_skill(tmp_path, "porter", front), known_tools=["read", "grep", "run_command"]
    )
    assert skill.metadata.allowed_tools == ("read", "grep", "run_command")


def test_context_loader_lists_files_with_descriptions_and_line_counts() -> None:
    files = ContextLoader().load(load_skill(EXAMPLE)).available_files
    assert set(files) == {"checklist.md", "scripts/count_lines.py"}
    assert files["checklist.md"].description.startswith("Review checklist")
    assert files["checklist.md"].estimated_lines == 7
    assert files["scripts/count_lines.py"].description.startswith("Count the lines")


def test_front_matter_file_map_overrides_descriptions(tmp_path: Path) -> None:
    front = (
        "---\nname: mapped\ndescription: d\nmetadata:\n  files:\n    data.csv: customer list\n---\n"
    )
    folder = make_skill(tmp_path, "mapped", front)
    (folder / "data.csv").write_text("a,b\n1,2\n")
    files = ContextLoader().load(load_skill(folder)).available_files
    assert files["data.csv"].description == "customer list"
    assert files["data.csv"].estimated_lines == 2


def test_string_substitutor_replaces_known_variables_only() -> None:
    text = "$ARGUMENTS | $1 $2 $7 | ${SKILL_DIR} ${SESSION_ID} ${TASK_ID} | $HOME ${OTHER}"
    out = StringSubstitutor().substitute(
        text, arguments="fix app.py", skill_dir="/s", session_id="sess", task_id="t1"
    )
    assert out == "fix app.py | fix app.py $7 | /s sess t1 | $HOME ${OTHER}"


async def test_dynamic_injection_is_off_unless_allowed(tmp_path: Path) -> None:
    content = "Before\n!`echo injected`\nAfter"
    assert await DynamicInjector().inject(content, tmp_path) == content


@pytest.mark.subprocess
async def test_dynamic_injection_runs_in_skill_folder_and_is_scrubbed(tmp_path: Path) -> None:
    (tmp_path / "marker.txt").write_text("sk-live-TOPSECRET-123456")
    injector = DynamicInjector(enabled=True, scrubber=Scrubber(["sk-live-TOPSECRET-123456"]))
    out = await injector.inject("Files:\n!`ls`\nSecret:\n!`cat marker.txt`\nEnd", tmp_path)
    assert "marker.txt" in out
    assert "TOPSECRET" not in out and "[REDACTED:" in out
    assert out.endswith("End")


@pytest.mark.subprocess
async def test_dynamic_injection_times_out(tmp_path: Path) -> None:
    injector = DynamicInjector(enabled=True, timeout_s=0.2)
    out = await injector.inject(f"!`{sys.executable} -c 'import time; time.sleep(5)'`", tmp_path)
    assert "timed out after 0.2s" in out


@pytest.mark.subprocess
def test_sync_injection_matches_async(tmp_path: Path) -> None:
    out = DynamicInjector(enabled=True).inject_sync("x\n!`echo hi`\ny", tmp_path)
    assert out == "x\nhi\ny"


def test_discover_skills_in_a_parent_folder(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "code-review")
    make_skill(tmp_path, "second", "---\nname: second\ndescription: another\n---\n")
    assert [s.name for s in discover_skills([tmp_path])] == ["code-review", "second"]


def test_prompt_command_shows_files_section_with_line_counts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["prompt", "--skill", str(EXAMPLE), "--tools", "read,list_files", "review app.py"])
    out = capsys.readouterr().out
    assert code == 0
    assert "You are executing the 'code-review' skill autonomously." in out
    assert "- checklist.md: Review checklist: what the team flags in every review (7 lines)" in out
    assert "You review the code the user names: review app.py" in out
    assert f"Skill directory: {EXAMPLE}" in out
    assert "- read(path: string" in out and "- list_files(" in out  # as signatures


def test_skills_list_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["skills", "list", str(EXAMPLE.parent)]) == 0
    out = capsys.readouterr().out
    assert "code-review" in out and "checklist.md (7 lines)" in out


def test_prompt_with_unknown_allowed_tool_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    front = "---\nname: odd\ndescription: d\nallowed-tools: teleport\n---\n"
    folder = make_skill(tmp_path, "odd", front)
    assert main(["prompt", "--skill", str(folder)]) == 2
    assert "unknown tool(s) in allowed-tools: teleport" in capsys.readouterr().err


def test_every_problem_of_a_skill_is_reported_in_one_pass(tmp_path: Path) -> None:
    front = "---\nname: Bad_Skill\nallowed-tools: read teleport\nmetadata: 3\n---\nbody\n"
    folder = make_skill(tmp_path, "bad-skill", front)
    with pytest.raises(SkillError) as caught:
        load_skill(folder, known_tools=["read", "grep"])
    lines = str(caught.value).splitlines()
    where = folder.resolve() / "SKILL.md"
    assert lines == [
        f"{where}:1: front matter is missing the required 'description'",
        f"{where}:2: name 'Bad_Skill' must be lowercase letters, digits and hyphens",
        f"{where}:2: name 'Bad_Skill' does not match the folder name 'bad-skill'",
        f"{where}:3: unknown tool(s) in allowed-tools: teleport (available: grep, read)",
        f"{where}:4: 'metadata' must be a mapping",
    ]


def test_an_alias_bomb_in_front_matter_is_refused_not_expanded(tmp_path: Path) -> None:
    levels = ['a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    front = (
        "---\nname: bomb\ndescription: d\nmetadata:\n"
        + "".join(f"  {line}\n" for line in levels)
        + "---\nbody\n"
    )
    folder = make_skill(tmp_path, "bomb", front)
    with pytest.raises(SkillError) as caught:
        load_skill(folder)
    assert caught.value.line == 10  # where the expansion passes the limit (h: 9 copies of g)
    assert "holds more than 100,000 values once its aliases are expanded" in str(caught.value)


def test_a_collection_with_grouped_skills_is_scanned_below_the_top(tmp_path: Path) -> None:
    make_skill(tmp_path / "document-skills", "pdf", "---\nname: pdf\ndescription: PDFs\n---\n")
    make_skill(tmp_path, "top", "---\nname: top\ndescription: t\n---\n")
    make_skill(tmp_path / ".hidden", "secret", "---\nname: secret\ndescription: s\n---\n")
    nested = make_skill(tmp_path / "top", "inner", "---\nname: inner\ndescription: i\n---\n")
    found = discover_skills([tmp_path])  # raises the first problem it finds
    assert [s.name for s in found] == ["pdf", "top"]
    assert nested.is_dir()  # a skill's own subfolders are its files, not more skills
