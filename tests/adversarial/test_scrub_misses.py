"""Secret shapes the scrubber missed: a quoted passphrase with spaces, `*_PASS=` and
`PASS=`, `sshpass -p`, a service account's `private_key_id`, a tab-separated
`password<TAB>value`, a `~/.netrc` line. Each is redacted in a tool's output before it is
stored; the look-alikes next to them are left alone."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from cli_run import loopwright, script

from loopwright.safety.scrub import Scrubber

MISSED = [
    ('PASSWORD="correct horse battery staple"', "correct horse battery staple"),
    ("password: 'my long pass phrase'", "my long pass phrase"),
    ("export DB_PASS=Wq8zLmP2rT", "Wq8zLmP2rT"),
    ("SMTP_PASS='Vb7nQx3kLs'", "Vb7nQx3kLs"),
    ("PASS=Hk4jTz9wQe ./deploy.sh", "Hk4jTz9wQe"),
    ("sshpass -p 'Rt5yUi8oPa' ssh deploy@10.0.0.5", "Rt5yUi8oPa"),
    ("sshpass -pZx2cVb6nMq scp a b:", "Zx2cVb6nMq"),
    ('"private_key_id": "3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a",', "3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f"),
    ("password\tJk3mNb7vCx\tadmin", "Jk3mNb7vCx"),
    ("machine db.internal login app password Gh6tYu2iOp", "Gh6tYu2iOp"),
]  # fmt: skip

LOOK_ALIKES = [
    "bypass=sidewalkcafe",
    'def login(self, user="", passwd="", acct=""):',
    "raise InvalidToken(\"Invalid Token: 'Invalid token'\")",
    'help = "the password to use, if any."',
    "login USER password PASSWORD",
    "compass: northwest",
]


@pytest.mark.parametrize(("text", "secret"), MISSED)
def test_each_missed_shape_is_redacted(text: str, secret: str) -> None:
    scrubbed = Scrubber().scrub(text).text
    assert secret not in scrubbed and "[REDACTED:" in scrubbed
    assert secret[:8] not in scrubbed


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_the_look_alikes_stay(text: str) -> None:
    assert Scrubber().scrub(text).text == text


def test_a_tool_output_with_them_is_stored_scrubbed(tmp_path: Path) -> None:
    output = "\n".join(text for text, _ in MISSED)
    model = script(
        tmp_path / "s.json",
        [
            {"thought": "show", "action": "echo", "action_input": {"text": output}},
            {"thought": "done", "final_answer": "shown"},
        ],
    )
    done = loopwright("run", "show the config", "--model", model, "--tools", "echo", "--json",
                      home=tmp_path)  # fmt: skip
    assert done.code == 0, done.both
    with sqlite3.connect(tmp_path / "runs.db") as db:
        stored = "\n".join(str(row) for row in db.execute("SELECT * FROM events"))
    assert "REDACTED" in stored
    for _, secret in MISSED:
        assert secret not in stored and secret not in done.out


RAW_REPLY_SECRETS = ["Pq7rSt3uVw", "Kd9fGh2jLz", "Mn4bVc8xZa", "Yt6rEw1qUi"]


def test_secrets_in_a_raw_json_reply_are_scrubbed_in_the_store_and_json_output(
    tmp_path: Path,
) -> None:
    """A model's reply is JSON: a line end after `password: X` in it is the two characters
    `\\n`, and a `mysql -pX` in a command is the whole command. Neither reaches the run
    store (whose events the dashboard shows) or `--json`."""
    first, second, third, fourth = RAW_REPLY_SECRETS
    model = script(
        tmp_path / "s.json",
        [
            {
                "thought": f"log in with mysql -p{first} first",
                "action": "echo",
                "action_input": {"text": f"password: {second}\nthen connect"},
            },
            {"thought": "done", "final_answer": f"db password: {third}\nrun mysql -p'{fourth}'"},
        ],
    )
    done = loopwright("run", "connect", "--model", model, "--tools", "echo", "--json",
                      home=tmp_path)  # fmt: skip
    assert done.code == 0, done.both
    assert "\\\\n" in (tmp_path / "s.json").read_text()  # the replies hold escaped line ends
    with sqlite3.connect(tmp_path / "runs.db") as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        rows = [row for table in tables for row in db.execute(f"SELECT * FROM {table}")]
    stored = "\n".join(map(str, rows))
    assert "[REDACTED:" in stored and "[REDACTED:" in done.out
    for secret in RAW_REPLY_SECRETS:
        assert secret not in stored, secret
        assert secret not in done.out, secret
