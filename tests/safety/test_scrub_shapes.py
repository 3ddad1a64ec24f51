"""Secret shapes the hardening review found leaking, and the deep scrub of JSON-like values.

Each shape: the secret is gone and the rest of the line (`user=app`, the command after an
environment assignment, cookie attributes) is still there.
"""

from __future__ import annotations

from typing import Any

import pytest

from loopwright.events import ToolCallStartedEvent
from loopwright.safety.scrub import Scrubber

SECRET = "Hunter2Secret"
TOKEN = "9f8e7d6c5b4a39281706"
SHAPES = [
    (f"host=db password={SECRET} user=app", SECRET, "user=app"),
    ("PGPASSWORD=S3cr3tPassw0rd psql -h db -U app", "S3cr3tPassw0rd", "psql -h db -U app"),
    ("API_TOKEN=abcdef123456 ./deploy.sh --prod", "abcdef123456", "./deploy.sh --prod"),
    (f"error: connect failed for password={SECRET}, retrying", SECRET, ", retrying"),
    (f"verify: $ mytool --password={SECRET} --verbose", SECRET, "--verbose"),
    (f"mytool --password {SECRET} --verbose", SECRET, "--verbose"),
    (f"mytool --api-key '{SECRET}' --verbose", SECRET, "--verbose"),
    (f"mysql -u root -p{SECRET} shop", SECRET, "shop"),
    (f"curl -u admin:{SECRET} https://api.example.com", SECRET, "https://api.example.com"),
    (f"redis://:{SECRET}@cache:6379/0", SECRET, "@cache:6379/0"),
    (f"Cookie: session={TOKEN}; theme=dark", TOKEN, "Cookie: "),
    (f"Set-Cookie: sid={TOKEN}; Path=/; HttpOnly", TOKEN, "; Path=/; HttpOnly"),
    (f"X-Api-Key: {TOKEN}", TOKEN, "X-Api-Key: "),
    ("x-auth-token: abcdefabcdefabcdefab trailing", "abcdefabcdefabcdefab", " trailing"),
    (f"Authorization: Token {TOKEN}", TOKEN, "Authorization: Token "),
    (f'{{"env": ["DB_PASSWORD={SECRET}", "USER=app"]}}', SECRET, '"USER=app"'),
    (f"/login?user=app&password={SECRET}%21x&next=%2Fhome", SECRET, "&next=%2Fhome"),
    (f"q=user%3Dapp%26password%3D{SECRET}%26next%3Dhome", SECRET, "%26next%3Dhome"),
    (f'{{"cmd": "password\\u003d{SECRET} user\\u003dapp"}}', SECRET, "user\\u003dapp"),
    (f"\\u0022password\\u0022: \\u0022{SECRET}\\u0022, \\u0022user", SECRET, "\\u0022user"),
    (f'{{\\"password\\": \\"{SECRET}\\", \\"user\\": \\"app\\"}}', SECRET, '\\"user\\"'),
    # `key: value` then a JSON-escaped line end, tab or quote (a model's raw JSON reply)
    (f'{{"answer": "password: {SECRET}\\nnext line"}}', SECRET, "\\nnext line"),
    (f'{{"answer": "password: {SECRET}\\r\\nnext"}}', SECRET, "\\r\\nnext"),
    (f'{{"answer": "password: {SECRET}\\tnext"}}', SECRET, "\\tnext"),
    (f'{{"answer": "password:\\t{SECRET}\\nnext"}}', SECRET, "\\nnext"),
    (f'{{"answer": "api_key: {SECRET}\\u000anext"}}', SECRET, "next"),
    (f'{{"answer": "token: {SECRET}\\"}}', SECRET, '\\"}'),
    (f'"{{\\"answer\\": \\"password: {SECRET}\\\\nnext\\"}}"', SECRET, "next"),
    (f'"{{\\"a\\": \\"password: \\\\\\"{SECRET}\\\\\\"\\"}}"', SECRET, '\\"}"'),
    # mysql's -p right after the command, quoted, JSON-escaped; --password= and --password
    (f"mysql -p{SECRET} shop", SECRET, "shop"),
    (f"mysql -p{SECRET}", SECRET, "mysql -p"),
    (f"mysqldump -p{SECRET} shop > shop.sql", SECRET, "shop > shop.sql"),
    (f"mariadb -p{SECRET}", SECRET, "mariadb -p"),
    (f"mysql -h db -p'{SECRET}' shop", SECRET, "shop"),
    (f"mysql -p'{SECRET} and more' shop", SECRET, "shop"),
    (f'mysql -p"{SECRET}" shop', SECRET, "shop"),
    (f'{{"command": "mysql -p{SECRET}\\nexit"}}', SECRET, "\\nexit"),
    (f'{{"command": "mysql -p\\"{SECRET}\\" shop"}}', SECRET, "shop"),
    (f"mysql --password={SECRET} shop", SECRET, "shop"),
    (f"mysql --password='{SECRET}' shop", SECRET, "shop"),
    (f"mysql --password {SECRET} shop", SECRET, "shop"),
    (f'{{"command": "mysql --password=\\"{SECRET}\\" shop"}}', SECRET, "shop"),
]


@pytest.mark.parametrize(("text", "secret", "kept"), SHAPES)
def test_every_shape_is_redacted_and_the_line_kept(text: str, secret: str, kept: str) -> None:
    scrubbed = Scrubber.default(environ={}).scrub(text)
    assert secret[:6] not in scrubbed.text
    assert kept in scrubbed.text
    assert "[REDACTED:" in scrubbed.text and scrubbed.redactions >= 1


@pytest.mark.parametrize(
    "text",
    [
        "docker run -u 1000:1000 image",
        "mytool --password PASSWORD",
        "gcc -pthread main.c",
        "Set-Cookie: theme=dark; Path=/",
        "if cookie: cookies.append(cookie)",
        "pwd: expected bytes, got str",
        "token = nextchar",
        "X-Request-Id: 9f8e7d6c5b4a39281706",
        "Authorization: <token>",
        "mysql -p shop",
        "mysql --help",
        '{"answer": "the reset page asks: password: then submit\\nok"}',
    ],
)
def test_look_alikes_are_left_alone(text: str) -> None:
    assert Scrubber.default(environ={}).scrub(text).text == text


def test_scrub_value_walks_json_and_redacts_values_under_secret_keys() -> None:
    scrubber = Scrubber.default(["myConfiguredSecret1"], environ={})
    value: dict[str, Any] = {
        "args": {"password": "plainword", "max_tokens": 5, "token": "none", "path": "a.txt"},
        "cmd": [f"PGPASSWORD={SECRET} psql", ("say myConfiguredSecret1", 3, None, 1.5, True)],
    }
    assert scrubber.scrub_value(value) == {
        "args": {
            "password": "[REDACTED:credential]",
            "max_tokens": 5,
            "token": "none",
            "path": "a.txt",
        },
        "cmd": [
            "PGPASSWORD=[REDACTED:credential] psql",
            ("say [REDACTED:configured]", 3, None, 1.5, True),
        ],
    }
    assert value["args"]["password"] == "plainword"  # the input is not changed


def test_scrub_value_returns_the_same_object_when_clean() -> None:
    clean = {"a": ["some ordinary text", {"b": 1}], "c": "more text here"}
    assert Scrubber.default(environ={}).scrub_value(clean) is clean


def test_scrub_value_scrubs_an_event_and_keeps_its_type() -> None:
    event = ToolCallStartedEvent(
        run_id="run_1",
        seq=3,
        ts=1.0,
        iteration_number=1,
        call_id="c1",
        tool_name="run_command",
        arguments={"command": f"mysql -u root -p{SECRET} shop", "api_key": "k3yValue99"},
    )
    scrubbed = Scrubber.default(environ={}).scrub_value(event)
    assert type(scrubbed) is ToolCallStartedEvent and scrubbed.seq == 3
    assert scrubbed.arguments == {
        "command": "mysql -u root -p[REDACTED:mysql_password] shop",
        "api_key": "[REDACTED:credential]",
    }


def test_scrub_value_with_exact_values_only_keeps_secret_keys_alone() -> None:
    scrubber = Scrubber(["myConfiguredSecret1"], detectors=())
    value = {"password": "plainword", "note": "myConfiguredSecret1"}
    assert scrubber.scrub_value(value) == {"password": "plainword", "note": "[REDACTED:configured]"}
