"""The Scrubber: every kind of planted fake secret is redacted; ordinary text is not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loopwright.errors import ConfigurationError
from loopwright.safety.scrub import Scrubber, looks_secret, read_secrets_file, secret_env_values

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "secrets"
PLANTED: list[dict[str, Any]] = [
    json.loads(line) for line in (CORPUS / "planted.jsonl").read_text().splitlines()
]


def leaked(secret: str, text: str) -> bool:
    """The secret, or any 12-character piece of it, is still in the text."""
    return any(secret[i : i + 12] in text for i in range(max(1, len(secret) - 11)))


@pytest.mark.parametrize("case", PLANTED, ids=[f"{c['kind']}-{i}" for i, c in enumerate(PLANTED)])
def test_every_planted_secret_is_redacted(case: dict[str, Any]) -> None:
    result = Scrubber().scrub(case["text"])
    assert not leaked(case["secret"], result.text), result.text
    assert result.redactions >= 1
    assert "[REDACTED:" in result.text


def test_corpus_covers_every_kind_the_issue_names() -> None:
    kinds = {c["kind"] for c in PLANTED}
    expected = {
        "aws_access_key", "aws_secret_key", "gcp_api_key", "gcp_service_account", "gcp_oauth",
        "azure_storage_key", "azure_client_secret", "github_token", "gitlab_token",
        "slack_token", "stripe_key", "openai_key", "anthropic_key", "huggingface_token",
        "npm_token", "pypi_token", "private_key", "jwt", "bearer", "basic_auth",
        "url_password", "connection_string", "assignment",
    }  # fmt: skip
    assert expected <= kinds


def test_ordinary_code_and_prose_is_left_alone() -> None:
    text = (CORPUS / "ordinary.txt").read_text()
    result = Scrubber().scrub(text)
    assert result.redactions == 0
    assert result.text == text


def test_project_sources_have_no_false_positives() -> None:
    root = Path(__file__).resolve().parents[2] / "src" / "loopwright"
    scrubber = Scrubber()
    hits = {str(path): scrubber.scrub(path.read_text()).redactions for path in root.rglob("*.py")}
    assert sum(hits.values()) == 0, {p: n for p, n in hits.items() if n}


def test_context_is_kept_and_kind_is_named() -> None:
    scrubber = Scrubber()
    assert scrubber.scrub('password = "Zq8!vT2#pLm9"').text == 'password = "[REDACTED:credential]"'
    assert scrubber.scrub("DB_PASSWORD=Zq8vT2pLm9xx").text == "DB_PASSWORD=[REDACTED:credential]"
    url = scrubber.scrub("postgres://app:Zq8vT2pLm9@db:5432/app").text
    assert url == "postgres://app:[REDACTED:url_password]@db:5432/app"
    header = scrubber.scrub("Authorization: Bearer abcDEF123456ghiJKL789").text
    assert header == "Authorization: Bearer [REDACTED:bearer_token]"
    key = "ghp_" + "a1B2" * 9
    assert scrubber.scrub(f"token {key}.").text == "token [REDACTED:github_token]."


def test_code_that_names_secrets_is_not_redacted() -> None:
    scrubber = Scrubber()
    for line in (
        "token = nextchar",
        "password=password",
        "self.token = ''",
        'raise TypeError("pwd: expected bytes")',
        "private_key: RSAPrivateKey",
        "Basic configuration is described below",
        "max_tokens=4096",
    ):
        assert scrubber.scrub(line).redactions == 0, line


def test_configured_secrets_are_redacted_exactly() -> None:
    scrubber = Scrubber(["plain-words-nobody-would-guess"], detectors=())
    result = scrubber.scrub(
        "value: plain-words-nobody-would-guess and again plain-words-nobody-would-guess"
    )
    assert result.text == "value: [REDACTED:configured] and again [REDACTED:configured]"
    assert result.redactions == 2
    assert Scrubber(["short"]).scrub("short").redactions == 0  # too short to be a secret


def test_secret_looking_environment_values_are_redacted() -> None:
    environ = {
        "MY_SERVICE_TOKEN": "opaque-value-7f3a9c",
        "INTERNAL_API_KEY": "k9Zt0pQw33Lm",
        "HOME": "/home/someone",
        "PWD": "/work/project",
        "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock",
    }
    assert set(secret_env_values(environ)) == {"MY_SERVICE_TOKEN", "INTERNAL_API_KEY"}
    scrubber = Scrubber.default(environ=environ)
    text = scrubber.scrub("got opaque-value-7f3a9c from /home/someone").text
    assert text == "got [REDACTED:env:MY_SERVICE_TOKEN] from /home/someone"


@pytest.mark.parametrize(
    ("name", "secret"),
    [("GITHUB_TOKEN", True), ("DB_PASSWORD", True), ("OPENAI_API_KEY", True),
     ("AWS_SECRET_ACCESS_KEY", True), ("PATH", False), ("TOKENIZERS_PARALLELISM", False),
     ("KEYTIMEOUT", False), ("PWD", False)],
)  # fmt: skip
def test_secret_names(name: str, secret: bool) -> None:
    assert looks_secret(name) is secret


def test_secrets_file_accepts_plain_lines_and_dotenv(tmp_path: Path) -> None:
    file = tmp_path / "secrets"
    file.write_text(
        "# comment\nfirst-secret-value\n\nexport NAME='second-secret-value'\nX=third-value\n"
    )
    assert read_secrets_file(file) == ["first-secret-value", "second-secret-value", "third-value"]
    with pytest.raises(ConfigurationError):
        read_secrets_file(tmp_path / "missing")


def test_with_secrets_keeps_detectors() -> None:
    scrubber = Scrubber().with_secrets(["my-own-configured-value"])
    text = scrubber.scrub("my-own-configured-value AKIAABCDEFGHIJKLMNOP").text
    assert text == "[REDACTED:configured] [REDACTED:aws_access_key]"


def test_many_begin_lines_stay_linear() -> None:
    """A pathological input must not make scrubbing quadratic (bounded by a generous size)."""
    text = "-----BEGIN PRIVATE KEY-----" * 2000 + "; done."
    result = Scrubber().scrub(text)
    assert result.redactions == 2000
    assert result.text.endswith("; done.")
