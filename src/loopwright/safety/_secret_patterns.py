"""The secret detectors: one regular expression per kind of secret.

Each detector names its `kind` (what `[REDACTED:<kind>]` says), a pattern, the group that
holds the secret (the rest of the match, such as `password=`, is kept so the text still
reads), a `hint` (lower-case literals, one of which must occur in the text for the pattern
to be worth running: most observations hold no secret and skip most patterns), and an
optional `accept` check that turns away look-alikes (prose after "Basic", code after
"password =": safety/_secret_checks.py).

The formats follow the providers' documented token prefixes (the same ones gitleaks and
detect-secrets use). Order matters: specific formats run before the generic ones.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Callable
from dataclasses import dataclass

from loopwright.safety._secret_checks import (
    assigned_value,
    azure_secret_prefix,
    basic_credentials,
    cookie_header,
    flag_value,
    header_value,
    netrc_password,
    plausible,
    random_looking,
    url_password,
    user_password,
)

_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)

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
       "q~", accept=azure_secret_prefix, word_start=False, back=4),
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
       group=1, accept=random_looking, lowercase=True),
    _d("basic_auth", r"basic\s+([a-z0-9+/]{8,}={0,2})(?![a-z0-9+/=])", "basic",
       group=1, accept=basic_credentials, lowercase=True),
    _d("url_password", r"://[^\s:/@\"'<>]{0,128}:([^\s@/\"'<>]{1,256})@", "://",
       group=1, accept=url_password, word_start=False),
    _d("user_password", r"(?:-u|--user)[ \t]+[\"']?[^\s:\"'@`]{1,128}:([^\s\"'@`,;)]{1,256})",
       "-u ", "-u\t", "--user", group=1, accept=user_password, word_start=False),
    _d("mysql_password",
       r"(?:mysql|mariadb)[\w.\-]*(?:[ \t][^\n]{0,400}?)?[ \t]-p(\\{1,7}\"[^\"\n\\]{1,256}\\{1,7}\""
       r"|'[^'\n]{1,256}'|\"[^\"\n]{1,256}\"|(?:[^\s\"'\\]|\\(?![nrt\"]))"
       r"(?:[^\s\"'\\]|\\(?![nrt\"])){2,255})",
       "mysql", "mariadb", group=1, word_start=False),
    _d("sshpass_password",
       r"sshpass[ \t]+(?:-[a-oq-zA-Z][^\s]*[ \t]+(?:[^\s\-][^\s]*[ \t]+)?){0,8}"
       r"-p[ \t]*(\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|[^\s\"'][^\s]{0,255})",
       "sshpass", group=1, word_start=False),
    _d("netrc_password",
       r"login[ \t]+[^\s]{1,256}[ \t\r\n]+password[ \t]+([^\s]{1,256})",
       "login", group=1, accept=netrc_password),
    _d("cookie", r"set-cookie[ \t]*:[ \t]*[^=;\s]{1,256}=([^;\s\\\"']{8,4096})", "set-cookie",
       group=1, accept=random_looking, lowercase=True),
    _d("cookie", r"cookie[ \t]*:[ \t]*([\w.~%!#$*+^|\-]{1,256}=[^\r\n\\\"']{1,8192})",
       "cookie", group=1, accept=cookie_header, lowercase=True),
    _d("auth_header",
       r"x-[a-z0-9\-]{0,64}(?:key|token|secret|auth|signature|session)[a-z0-9\-]{0,32}"
       r"[ \t]*:[ \t]*([^\s,;\"']{8,4096})",
       "-key", "-token", "-secret", "-auth", "x-auth", "-signature", "-session",
       group=1, accept=header_value,
       lowercase=True),
    _d("auth_header",
       r"authorization[ \t]*:[ \t]*(?:[a-z][a-z0-9_\-]{0,30}[ \t]+)?([^\s,;\"']{8,4096})",
       "authorization", group=1, accept=header_value, lowercase=True),
)  # fmt: skip

_SECRET_WORDS = (
    r"password|passwd|passphrase|pass|pwd|secret|token|api[_\-]?key|apikey|"
    r"access[_\-]?key|auth[_\-]?key|private[_\-]?key(?:[_\-]?id)?|secret[_\-]?key|"
    r"client[_\-]?secret|credentials?|auth[_\-]?token"
)
"""A key ends in one of these; `private_key_id` names a service account's key. `pass`
counts only as a whole word (`DB_PASS`, `PASS`, not `bypass`): `assigned_value` checks
the character before it (a look-behind here would make the patterns try every position)."""


_QUOTE = r"(?:\"|'|\\{1,7}\"|\\u0022|%22)"
"""A quote, also escaped in JSON (`\\"`, `\\u0022`; JSON in a JSON string `\\\\\\"`) or in
a URL (`%22`)."""
_BARE_END = r"(?=$|[\s\"'`,;&}{<>]|%2[026]|\\u00[0-9a-f]{2}|\\[nrt\"\\])"
"""Where a bare value ends: whitespace, a quote, a separator, or an encoded one."""

# A key that ends in a secret word, an optional closing quote or bracket (JSON, dict
# subscripts), a separator (=, :, =>, :=, and their URL- and \\u-escaped forms), and a
# quoted or bare value. The key's prefix is not matched (a leading [\w-]* would make long
# identifier runs quadratic): the secret word must simply end the key, so `max_tokens=`
# and `token_url:` are not assignments. The value is group `v`; its quote, if any, is `q`.
ASSIGNMENT = _d(
    "credential",
    rf"(?:{_SECRET_WORDS})(?:{_QUOTE}|\]){{0,2}}[ \t]*"
    r"(?P<sep>=>|:=|=|:|%3d|%3a|\\u003d|\\u003a|\t|\\t)(?:[ \t]|\\{1,8}t)*"
    rf"(?P<q>{_QUOTE})?"
    r"(?P<v>(?(q)[^\n]{1,300}?|[^\s\"'`,;&}{<>]{1,300}?))"
    rf"(?(q)(?P=q)|{_BARE_END})",
    "pass",
    "pwd",
    "secret",
    "token",
    "key",
    "credential",
    group=3,
    accept=assigned_value,
    lowercase=True,
    word_start=False,
)

FLAG = _d(
    "credential",
    rf"--(?:{_SECRET_WORDS})[ \t]+(\"[^\"\n]{{1,300}}\"|'[^'\n]{{1,300}}'|[^\s\"'`;&|]{{1,300}})",
    *(f"--{word}" for word in ("pass", "pwd", "secret", "token", "api", "access", "auth")),
    *(f"--{word}" for word in ("private", "client", "credential")),
    group=1,
    accept=flag_value,
    lowercase=True,
    word_start=False,
)

_SECRET_KEY = re.compile(rf"(?:{_SECRET_WORDS.replace('|pass|', '|(?<![a-z0-9])pass|')})$")


@functools.lru_cache(maxsize=1024)
def secret_key(name: str) -> bool:
    """A mapping key that names a secret (`password`, `api_key`, `X-Auth-Token`), by the
    same rule as `key=value` text: the key ends in a secret word (`max_tokens` does not)."""
    return bool(_SECRET_KEY.search(name.translate(_ASCII_LOWER).rstrip()))


def plausible_secret(value: str) -> bool:
    """A value under a secret key that could be the secret: not a keyword or placeholder."""
    return plausible(value.strip()) and not any(c.isspace() for c in value.strip())


ALL_DETECTORS: tuple[Detector, ...] = (
    *PROVIDER_DETECTORS,
    *HEADER_DETECTORS,
    ASSIGNMENT,
    FLAG,
)
