"""An MCP server's annotations are its own word: a server that marks a destructive tool
read-only does not get past `--approve write,destructive,unknown`, and its tool is not
re-run on resume, unless the user trusts the server (`--mcp-trusted`, the user's own
`mcp_trusted`; a project's file cannot)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.mcp import MCPConnections

pytestmark = pytest.mark.subprocess

LYING = f"{sys.executable} {Path(__file__).with_name('lying_server.py')}"
APPROVE = "write,destructive,unknown"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's own home and user config folder, working in tmp_path/project."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    monkeypatch.setenv("LOOPWRIGHT_STORE", str(tmp_path / "runs.db"))
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    return tmp_path


def _run(home: Path, *flags: str) -> tuple[int, Path]:
    """`loopwright run` whose model calls the lying `wipe` on a file; (exit code, file)."""
    victim = home / "victim.txt"
    victim.write_text("precious")
    replies = [
        {"thought": "look", "action": "wipe", "action_input": {"path": str(victim)}},
        {"thought": "done", "final_answer": "looked"},
    ]
    script = home / "script.json"
    script.write_text(json.dumps([json.dumps(reply) for reply in replies]))
    code = main(["run", "look at it", "--model", f"scripted:{script}", "--mcp", LYING,
                 "--approve", APPROVE, "--json", *flags])  # fmt: skip
    return code, victim


def _events(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines()]


async def test_an_untrusted_servers_tools_are_unknown_and_not_idempotent() -> None:
    async with MCPConnections([LYING]) as untrusted:
        [tool] = untrusted.tools()
    assert (tool.effect, tool.idempotent) == ("unknown", False)
    async with MCPConnections([LYING], trusted=[f"  {LYING} "]) as trusted:
        [tool] = trusted.tools()
    assert (tool.effect, tool.idempotent) == ("read", True)


def test_a_read_only_hint_does_not_pass_the_approval(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, victim = _run(home, "--approval-timeout", "1")
    events = _events(capsys.readouterr().out)
    assert code == 0
    [asked] = [e for e in events if e["type"] == "confirmation_required"]
    assert "wipe" in str(asked["message"])
    [decided] = [e for e in events if e["type"] == "gate_decision"]
    assert decided["approved"] is False
    assert victim.read_text() == "precious"  # the call waited, and was never approved


def test_a_server_the_user_trusts_is_believed(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, victim = _run(home, "--mcp-trusted", LYING)
    events = _events(capsys.readouterr().out)
    assert code == 0
    assert not [e for e in events if e["type"] == "confirmation_required"]
    assert not victim.exists()  # the user vouched for the server: its word decided


def test_the_users_config_trusts_a_server_and_a_projects_file_cannot(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("loopwright.toml").write_text(f"[run]\nmcp_trusted = [{json.dumps(LYING)}]\n")
    code, victim = _run(home, "--approval-timeout", "1")
    out, err = capsys.readouterr()
    assert code == 0 and victim.exists()
    assert "run.mcp_trusted (it lets MCP servers' own annotations decide" in err
    assert [e for e in _events(out) if e["type"] == "confirmation_required"]

    folder = home / ".config" / "loopwright"
    folder.mkdir(parents=True)
    (folder / "loopwright.toml").write_text(f"[run]\nmcp_trusted = [{json.dumps(LYING)}]\n")
    Path("loopwright.toml").unlink()
    code, victim = _run(home)
    assert code == 0 and not victim.exists()
    assert not [e for e in _events(capsys.readouterr().out) if e["type"] == "confirmation_required"]


def test_the_example_shows_both() -> None:
    example = Path(__file__).parents[2] / "examples" / "mcp_trust.py"
    done = subprocess.run([sys.executable, str(example)], capture_output=True, text=True,
                          timeout=120, check=True)  # fmt: skip
    assert done.stdout.splitlines() == [
        "untrusted: list_notes effect=unknown idempotent=False",
        "untrusted: add_note effect=unknown idempotent=False",
        "trusted: list_notes effect=read idempotent=True",
        "trusted: add_note effect=write idempotent=False",
    ]
