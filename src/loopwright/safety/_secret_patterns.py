"""The secret detectors: one regular expression per kind of secret.

Each detector names its `kind` (what `[REDACTED:<kind>]` says), a pattern, the group that
holds the secret (the rest of the match, such as `password=`, is kept so the text still
reads), a `hint` (lower-case literals, one of which must occur in the text for the pattern
to be worth running: most observations hold no secret and skip most patterns), and an
optional `accept` check that turns away look-alikes (prose after "Basic", code after
"password =").

The formats follow the providers' documented token prefixes (the same ones gitleaks and
detect-secrets use). Order matters: specific formats run before the generic ones.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass

Accept = Callable[[str, re.Match[str]], bool]
"""(original text, match) -> is it really a secret? The match may be on the lowered text."""


@dataclass(frozen=True, slots=True)
class Detector:
    kind: str
    pattern: re.Pattern[str]
    group: int = 0
    hints: tuple[str, ...] = ()
    accept: Accept | None = None
    lowercase: bool = False
    """The pattern is written in lower case and runs on the ASCII-lowered text."""
    word_start: bool = True
    """The character before the match must not be a letter, digit or `_`."""
    back: int = 0
    """Characters before the match that belong to the secret (a fixed-width look-behind)."""


def _value(original: str, match: re.Match[str]) -> str:
    return original[match.start(1) : match.end(1)]


def _basic_credentials(original: str, match: re.Match[str]) -> bool:
    """`Basic <base64 of user:password>`: decode it rather than trust any long word."""
    value = _value(original, match)
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded


def _random_looking(original: str, match: re.Match[str]) -> bool:
    """A token, not a word: it mixes letters and digits, or is long."""
    value = _value(original, match)
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return (has_digit and has_alpha) or len(value) >= 32


_NOT_VALUES = frozenset(
    [
        "none",
        "null",
        "nil",
        "true",
        "false",
        "yes",
        "no",
        "str",
        "string",
        "bytes",
        "int",
        "integer",
        "bool",
        "boolean",
        "optional",
        "required",
        "undefined",
        "bearer",
        "basic",
        "password",
        "passwd",
        "secret",
        "token",
        "env",
        "environ",
        "getenv",
        "config",
        "settings",
        "self",
        "this",
        "redacted",
        "changeit",
        "example",
        "placeholder",
        "dummy",
        "masked",
        "hidden",
    ]
)
_PLACEHOLDER = re.compile(r"^(?:\$|%\(|<|\{|\*{3}|x{6}|\.\.\.)", re.IGNORECASE)
_FORMAT_FIELD = re.compile(r"\{\w*\}|%[sdr]")
_IDENTIFIER = re.compile(r"^[A-Za-z_]+$")
_TYPE_OR_CONSTANT = re.compile(
    r"^(?:_?[A-Z][A-Za-z]*[A-Z][a-z]+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|#[0-9a-fA-F]{3,8})$"
)
_VALUE_END = re.compile(r"[ \t]*(?:$|[\r\n,;&}\]#])")
_DOTTED_NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
_SNAKE_NAME = re.compile(r"^[a-z_][a-z0-9]*(?:_[a-z0-9]+)+$")


def _assigned_value(original: str, match: re.Match[str]) -> bool:
    """The right-hand side of `password=...` is a literal secret, not code or a placeholder."""
    value = _value(original, match)
    quoted = value[:1] in {'"', "'"}
    bare = value.strip("\"'")
    if len(bare) < 6 or bare.startswith("[REDACTED"):
        return False
    lowered = bare.lower()
    if lowered in _NOT_VALUES or _PLACEHOLDER.match(bare) or bare.isdigit():
        return False
    if _TYPE_OR_CONSTANT.match(bare):
        return False  # `private_key: RSAPrivateKey`, `token=FG_DEFAULT`, `Token: "#ddd0c0"`
    if lowered.startswith(("http://", "https://", "/", "./", "~/", "os.", "process.env")):
        return False
    if quoted:
        return not any(c.isspace() for c in bare) and not _FORMAT_FIELD.search(bare)
    if any(c in bare for c in "()[]") or _DOTTED_NAME.match(bare) or _SNAKE_NAME.match(bare):
        return False
    if not _VALUE_END.match(original, match.end(1)):
        return False  # a word in a sentence ("pwd: expected bytes"), not a value
    key_word = original[match.start(0) : match.start(1)]
    # `token = nextchar` is code; `PASSWORD=letmeinplease` and `password: sekrit` are not.
    return not (_IDENTIFIER.match(bare) and "=" in key_word and not key_word.isupper())


_AZURE_SECRET_PREFIX = re.compile(r"(?<![\w~.\-])[A-Za-z0-9_~.]{3}\d")


def _azure_secret_prefix(original: str, match: re.Match[str]) -> bool:
    """Azure AD client secrets look like `abc8Q~...`: three characters and a digit before `Q~`."""
    return match.start() >= 4 and bool(_AZURE_SECRET_PREFIX.match(original, match.start() - 4))


def _url_password(original: str, match: re.Match[str]) -> bool:
    """`scheme://user:PASSWORD@host`, but not the documentation's `user:password@host`."""
    value = _value(original, match)
    return not _PLACEHOLDER.match(value) and value.lower() not in _DOC_PASSWORDS


_DOC_PASSWORDS = frozenset({"pass", "password", "passwd", "pwd", "pw", "secret", "token"})


def _d(
    kind: str,
    pattern: str,
    *hints: str,
    group: int = 0,
    accept: Accept | None = None,
    lowercase: bool = False,
    word_start: bool = True,
    back: int = 0,
) -> Detector:
    return Detector(
        kind, re.compile(pattern), group, hints or (pattern[:4].lower(),), accept,
        lowercase, word_start, back,
    )  # fmt: skip


# Every pattern starts with a literal where it can: the regex engine then jumps from one
# occurrence of the literal to the next instead of trying every position (a `\b` or a
# look-behind in front costs 30x; `word_start` checks the character before in Python).
PRIVATE_KEY = _d(
    "private_key",
    # The body (base64, real or escaped newlines, PEM headers) up to an END line if
    # there is one: a block cut short by truncation is still redacted. Possessive, so
    # many BEGIN lines in a row stay linear.
    r"-----BEGIN[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----"
    r"(?:Proc-Type:[^\n]*|DEK-Info:[^\n]*|Comment:[^\n]*|[A-Za-z0-9+/=\s\\])*+"
    r"(?:-----END[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----)?",
    "private key",
    word_start=False,
)

PROVIDER_DETECTORS: tuple[Detector, ...] = (
    PRIVATE_KEY,
    _d("aws_access_key", r"A(?:KIA|SIA|BIA|CCA|GPA|IDA|ROA|IPA|NPA|NVA|PKA)[A-Z0-9]{16}\b",
       "akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "aipa", "anpa", "anva", "apka"),
    _d("aws_secret_key",
       r"aws_?secret_?(?:access_?)?key[\"']?\s*[:=]>?\s*[\"']?([a-z0-9/+]{40})(?![a-z0-9/+])",
       "aws", group=1, lowercase=True, word_start=False),
    _d("gcp_api_key", r"AIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"),
    _d("gcp_oauth", r"GOCSPX-[A-Za-z0-9_\-]{28}"),
    _d("gcp_oauth", r"ya29\.[0-9A-Za-z_\-]{30,}"),
    _d("azure_storage_key", r"accountkey\s*=\s*([a-z0-9+/]{40,}={0,2})",
       group=1, lowercase=True, word_start=False),
    _d("azure_storage_key", r"sharedaccesskey\s*=\s*([a-z0-9+/]{40,}={0,2})",
       group=1, lowercase=True, word_start=False),
    _d("azure_client_secret", r"Q~[A-Za-z0-9_~.\-]{31,34}(?![\w~.\-])",
       "q~", accept=_azure_secret_prefix, word_start=False, back=4),
    _d("azure_sas_signature", r"sig=([A-Za-z0-9%+/]{30,}={0,2})", "sig=", group=1),
    _d("github_token", r"gh[pousr]_[A-Za-z0-9]{36,255}\b",
       "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    _d("github_token", r"github_pat_[A-Za-z0-9_]{50,255}\b", "github_pat_"),
    _d("gitlab_token", r"gl(?:pat|dt|rt|ptt|cbt|imt|oas|ft|soat)-[A-Za-z0-9_\-]{20,}",
       "glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glimt-", "gloas-", "glft-", "glsoat-"),
    _d("gitlab_token", r"GR1348941[A-Za-z0-9_\-]{20,}", "gr1348941"),
    _d("slack_token", r"xox[abposer]-[A-Za-z0-9\-]{10,}", "xox"),
    _d("slack_token", r"xapp-\d-[A-Za-z0-9\-]{10,}", "xapp-"),
    _d("slack_webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[\w/\-]{20,}",
       "hooks.slack.com", word_start=False),
    _d("stripe_key", r"sk_(?:live|test)_[A-Za-z0-9]{16,}", "sk_live_", "sk_test_"),
    _d("stripe_key", r"rk_(?:live|test)_[A-Za-z0-9]{16,}", "rk_live_", "rk_test_"),
    _d("stripe_key", r"whsec_[A-Za-z0-9]{24,}"),
    _d("anthropic_key", r"sk-ant-(?:api|admin|sid)\d{2}-[A-Za-z0-9_\-]{40,}", "sk-ant-"),
    _d("openai_key", r"sk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{32,}", "sk-"),
    _d("huggingface_token", r"hf_[A-Za-z0-9]{34,}\b", "hf_"),
    _d("huggingface_token", r"api_org_[A-Za-z0-9]{34,}\b", "api_org_"),
    _d("npm_token", r"npm_[A-Za-z0-9]{36}\b", "npm_"),
    _d("pypi_token", r"pypi-AgE[A-Za-z0-9_\-]{50,}", "pypi-age"),
    _d("jwt", r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{10,}", "eyj"),
)  # fmt: skip

HEADER_DETECTORS: tuple[Detector, ...] = (
    _d("bearer_token", r"bearer\s+([a-z0-9\-._~+/]{16,}=*)", "bearer",
       group=1, accept=_random_looking, lowercase=True),
    _d("basic_auth", r"basic\s+([a-z0-9+/]{8,}={0,2})(?![a-z0-9+/=])", "basic",
       group=1, accept=_basic_credentials, lowercase=True),
    _d("url_password", r"://[^\s:/@\"'<>]{1,128}:([^\s@/\"'<>]{1,256})@", "://",
       group=1, accept=_url_password, word_start=False),
)  # fmt: skip

_SECRET_WORDS = (
    r"password|passwd|passphrase|pwd|secret|token|api[_\-]?key|apikey|access[_\-]?key|"
    r"auth[_\-]?key|private[_\-]?key|secret[_\-]?key|client[_\-]?secret|credentials?|auth[_\-]?token"
)

# A key that ends in a secret word, an optional closing quote or bracket (JSON, dict
# subscripts), a separator (=, :, =>, :=), and a quoted or bare value. The key's prefix is
# not matched (a leading [\w-]* would make long identifier runs quadratic): the secret word
# must simply end the key, so `max_tokens=` and `token_url:` are not assignments.
ASSIGNMENT = _d(
    "credential",
    rf"(?:{_SECRET_WORDS})[\"']?\]?[ \t]*(?:=>|:=|=|:)[ \t]*"
    r"(\"[^\"\n]{1,300}\"|'[^'\n]{1,300}'|[^\s\"'`,;&}{]{1,300})",
    "pass",
    "pwd",
    "secret",
    "token",
    "key",
    "credential",
    group=1,
    accept=_assigned_value,
    lowercase=True,
    word_start=False,
)

ALL_DETECTORS: tuple[Detector, ...] = (*PROVIDER_DETECTORS, *HEADER_DETECTORS, ASSIGNMENT)
