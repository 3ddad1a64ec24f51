"""No planted secret reaches the model's input, the events, or `loopwright run --json` stdout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.cli import main
from loopwright.events import encode_event
from loopwright.testing import ScriptedModel
from loopwright.tools.builtin import read

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "secrets"
PLANTED = [json.loads(line) for line in (CORPUS / "planted.jsonl").read_text().splitlines()]
ENV_SECRET = "opaque-env-value-93kd02"
CONFIGURED = "my configured secret 7741"


def plant(workspace: Path) -> list[str]:
    """A file holding every planted secret plus an env value and a configured one."""
    texts = [case["text"] for case in PLANTED]
    texts += [f"deploy key from env: {ENV_SECRET}", f"note: {CONFIGURED}"]
    (workspace / "leaky.txt").write_text("\n\n".join(texts))
    return [case["secret"] for case in PLANTED] + [ENV_SECRET, CONFIGURED]


def leaks(secrets: list[str], text: str) -> list[str]:
    """Secrets (or any 12-character piece of one) found in `text`."""
    return [s for s in secrets if any(s[i : i + 12] in text for i in range(max(1, len(s) - 11)))]


def replies() -> list[str]:
    return [
        json.dumps({"thought": "read it", "action": "read", "action_input": {"path": "leaky.txt"}}),
        json.dumps({"thought": "done", "final_answer": "read the file"}),
    ]


async def test_no_secret_reaches_the_model_or_the_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", ENV_SECRET)
    secrets = plant(tmp_path)
    model = ScriptedModel(replies())
    agent = AgentExecutor(
        model, [read], workspace=tmp_path, options=AgentOptions(tool_mode="prompted")
    )
    agent.scrubber = agent.scrubber.with_secrets([CONFIGURED])
    events: list[Any] = []

    async def sink(event: Any) -> None:
        events.append(event)

    result = await agent.run("read leaky.txt", on_event=sink)
    assert result.success
    model_input = "\n".join(m.content for r in model.requests for m in r.messages)
    assert "[REDACTED:" in model_input  # the file did reach the model, scrubbed
    assert leaks(secrets, model_input) == []
    assert leaks(secrets, "\n".join(encode_event(e) for e in events)) == []
    assert leaks(secrets, json.dumps([s.to_dict() for s in result.steps])) == []


def test_no_secret_reaches_cli_json_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", ENV_SECRET)
    secrets = plant(tmp_path)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(replies()))
    secrets_file = tmp_path / "secrets.env"
    secrets_file.write_text(f"# named by the user\nNOTE_SECRET={CONFIGURED}\n")
    code = main(
        [
            "run", "read leaky.txt", "--model", f"scripted:{script}", "--tools", "read",
            "--workspace", str(tmp_path), "--json", "--secrets-file", str(secrets_file),
        ]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    events = [json.loads(line) for line in out.splitlines()]
    assert events[-1]["type"] == "run_finished"
    assert any(e["type"] == "tool_call" and e["redactions"] > 0 for e in events)
    assert leaks(secrets, out) == []


@pytest.mark.subprocess
def test_cli_secret_option_and_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "leaky.txt").write_text("the launch code is zebra-umbrella-42")
    script = tmp_path / "script.json"
    script.write_text(json.dumps(replies()))
    code = main(
        [
            "run", "read", "--model", f"scripted:{script}", "--tools", "read",
            "--workspace", str(tmp_path), "--json", "--secret", "zebra-umbrella-42",
            "--verify", "test -f leaky.txt",
        ]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and "zebra-umbrella-42" not in out
    assert "[REDACTED:configured]" in out
    verification = [json.loads(x) for x in out.splitlines() if '"verification"' in x]
    assert verification and verification[0]["outcome"] == "pass"


def test_live_view_shows_budget_used_and_why_a_run_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    call = json.dumps({"thought": "again", "action": "read", "action_input": {"path": "a.txt"}})
    (tmp_path / "a.txt").write_text("same")
    script = tmp_path / "script.json"
    script.write_text(json.dumps([call] * 5))
    code = main(
        [
            "run", "loop", "--model", f"scripted:{script}", "--tools", "read",
            "--workspace", str(tmp_path), "--max-tokens-total", "100000",
        ]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1
    assert "/100,000 tokens" in out
    assert "Stopped (repetition)" in out and "stopped (repetition)" in out
