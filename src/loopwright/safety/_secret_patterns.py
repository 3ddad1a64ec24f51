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
import functools
import re
import string
from collections.abc import Callable
from dataclasses import dataclass

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


def _value_group(match: re.Match[str]) -> int | str:
    return "v" if "v" in match.re.groupindex else 1


def _value(original: str, match: re.Match[str]) -> str:
    group = _value_group(match)
    return original[match.start(group) : match.end(group)]


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
_VALUE_END = re.compile(r"[ \t]*(?:$|[\r\n,;&})\]#\"'`]|[ \t][\w.\-]+[ \t]*[=:])")
"""After a `key: value`, the end of the value: the end of the line, a separator, a closing
quote, or another `key=`/`key:` on the same line (logfmt)."""
_DOTTED_NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
_SNAKE_NAME = re.compile(r"^[a-z_][a-z0-9]*(?:_[a-z0-9]+)+$")
_METAVAR = re.compile(r"^[A-Z][A-Z_]*$")


def _plausible(bare: str) -> bool:
    """A literal that could be a secret: not a keyword, placeholder, type or number."""
    if len(bare) < 6 or bare.startswith("[REDACTED"):
        return False
    lowered = bare.lower()
    if lowered in _NOT_VALUES or _PLACEHOLDER.match(bare) or bare.isdigit():
        return False
    if _TYPE_OR_CONSTANT.match(bare):
        return False  # `private_key: RSAPrivateKey`, `token=FG_DEFAULT`, `Token: "#ddd0c0"`
    return not lowered.startswith(("http://", "https://", "/", "./", "~/", "os.", "process.env"))


def _assigned_value(original: str, match: re.Match[str]) -> bool:
    """The right-hand side of `password=...` is a literal secret, not code or a placeholder.

    After `=` (also `%3D`, `\\u003d`) a bare value ends at the first space and whatever
    follows stays (`PGPASSWORD=x psql ...`, `password=x user=app`); after `:` the value must
    end the line or be followed by another key (`pwd: expected bytes` is a sentence).
    """
    value = _value(original, match)
    quoted = match.group("q") is not None
    bare = value.strip("\"'")
    if not _plausible(bare) or _pass_in_a_word(original, match):
        return False
    if quoted:
        if match.group("q") in value:  # `passwd="", acct=""`: an empty value, then code
            return False
        key_word = original[match.start(0) : match.start("sep")]
        return _quoted_literal(bare, _PASSWORD_KEY.search(key_word.lower()) is not None)
    if any(c in bare for c in "()[]") or _DOTTED_NAME.match(bare) or _SNAKE_NAME.match(bare):
        return False
    separator = match.group("sep").lower()
    if separator in ("\t", "\\t"):  # a tab-separated table (maybe JSON-escaped)
        return original.startswith(_FIELD_ENDS, match.end("v")) or match.end("v") == len(original)
    after_colon = "=" not in separator and "3d" not in separator
    if after_colon and not _VALUE_END.match(original, match.end("v")):
        return False  # a word in a sentence ("pwd: expected bytes"), not a value
    key_word = original[match.start(0) : match.start("v")]
    # `token = nextchar` is code; an upper-case key (`PASSWORD=...`) or `:` is not.
    return not (_IDENTIFIER.match(bare) and "=" in key_word and not key_word.isupper())


_FIELD_ENDS = ("\t", "\r", "\n", "\\t", "\\r", "\\n")
"""What ends a field of a tab-separated line, as is or JSON-escaped."""
_PROSE_END = re.compile(r"[.!?:]$")
_PASSWORD_KEY = re.compile(r"(?:password|passwd|passphrase|pass|pwd)\W*$")


def _quoted_literal(bare: str, password_key: bool) -> bool:
    """A quoted value. A password or passphrase a person chose may hold spaces (`PASSWORD=
    "correct horse battery staple"`), up to six words, not a sentence (ending in `.`, `?`,
    `!` or `:`), not holding a quote; a token or key is one word. A format string is code."""
    if _FORMAT_FIELD.search(bare):
        return False
    words = bare.split()
    if len(words) == 1:
        return True
    return (
        password_key
        and len(words) <= 6
        and not _PROSE_END.search(bare)
        and not any(quote in bare for quote in "\"'`")
    )


def _flag_value(original: str, match: re.Match[str]) -> bool:
    """`--password VALUE` on a command line, not `--password PASSWORD` in a usage text."""
    bare = _value(original, match).strip("\"'")
    return _plausible(bare) and not _METAVAR.match(bare) and not bare.startswith("-")


def _user_password(original: str, match: re.Match[str]) -> bool:
    """`curl -u user:PASSWORD`, not `docker run -u 1000:1000`."""
    value = _value(original, match).strip("\"'")
    return not value.isdigit() and _url_password(original, match)


def _netrc_password(original: str, match: re.Match[str]) -> bool:
    """`machine HOST login USER password PASS` (~/.netrc), not a usage text's placeholder."""
    return _plausible(_value(original, match)) and not _METAVAR.match(_value(original, match))


def _cookie_header(original: str, match: re.Match[str]) -> bool:
    """A `Cookie:` header (not `Set-Cookie:`) whose values include a token (its whole
    value is redacted)."""
    if original[max(0, match.start() - 4) : match.start()].lower() == "set-":
        return False
    pairs = _value(original, match).split(";")
    return any(_is_token(pair.partition("=")[2].strip()) for pair in pairs)


def _is_token(value: str) -> bool:
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return len(value) >= 8 and ((has_digit and has_alpha) or len(value) >= 32)


def _header_value(original: str, match: re.Match[str]) -> bool:
    """A header value that is a credential: long enough, not a placeholder or a keyword."""
    value = _value(original, match)
    return len(value) >= 8 and _plausible(value) and not _METAVAR.match(value)


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
    _d("url_password", r"://[^\s:/@\"'<>]{0,128}:([^\s@/\"'<>]{1,256})@", "://",
       group=1, accept=_url_password, word_start=False),
    _d("user_password", r"(?:-u|--user)[ \t]+[\"']?[^\s:\"'@`]{1,128}:([^\s\"'@`,;)]{1,256})",
       "-u ", "-u\t", "--user", group=1, accept=_user_password, word_start=False),
    _d("mysql_password",
       r"(?:mysql|mariadb)[\w.\-]*[ \t][^\n]{0,400}?[ \t]-p([^\s\"']{3,256}|'[^'\n]{1,256}'"
       r"|\"[^\"\n]{1,256}\")", "mysql", "mariadb", group=1, word_start=False),
    _d("sshpass_password",
       r"sshpass[ \t]+(?:-[a-oq-zA-Z][^\s]*[ \t]+(?:[^\s\-][^\s]*[ \t]+)?){0,8}"
       r"-p[ \t]*(\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|[^\s\"'][^\s]{0,255})",
       "sshpass", group=1, word_start=False),
    _d("netrc_password",
       r"login[ \t]+[^\s]{1,256}[ \t\r\n]+password[ \t]+([^\s]{1,256})",
       "login", group=1, accept=_netrc_password),
    _d("cookie", r"set-cookie[ \t]*:[ \t]*[^=;\s]{1,256}=([^;\s\\\"']{8,4096})", "set-cookie",
       group=1, accept=_random_looking, lowercase=True),
    _d("cookie", r"cookie[ \t]*:[ \t]*([\w.~%!#$*+^|\-]{1,256}=[^\r\n\\\"']{1,8192})",
       "cookie", group=1, accept=_cookie_header, lowercase=True),
    _d("auth_header",
       r"x-[a-z0-9\-]{0,64}(?:key|token|secret|auth|signature|session)[a-z0-9\-]{0,32}"
       r"[ \t]*:[ \t]*([^\s,;\"']{8,4096})",
       "-key", "-token", "-secret", "-auth", "x-auth", "-signature", "-session",
       group=1, accept=_header_value,
       lowercase=True),
    _d("auth_header",
       r"authorization[ \t]*:[ \t]*(?:[a-z][a-z0-9_\-]{0,30}[ \t]+)?([^\s,;\"']{8,4096})",
       "authorization", group=1, accept=_header_value, lowercase=True),
)  # fmt: skip

_SECRET_WORDS = (
    r"password|passwd|passphrase|pass|pwd|secret|token|api[_\-]?key|apikey|"
    r"access[_\-]?key|auth[_\-]?key|private[_\-]?key(?:[_\-]?id)?|secret[_\-]?key|"
    r"client[_\-]?secret|credentials?|auth[_\-]?token"
)
"""A key ends in one of these; `private_key_id` names a service account's key. `pass`
counts only as a whole word (`DB_PASS`, `PASS`, not `bypass`): `_pass_in_a_word` checks
the character before it (a look-behind here would make the patterns try every position)."""


def _pass_in_a_word(original: str, match: re.Match[str]) -> bool:
    """The key of the match is `pass` ending a longer word (`bypass=`, `compass:`)."""
    start = match.start(0)
    word = original[start : start + 10].lower()
    if not word.startswith("pass") or word.startswith(("password", "passwd", "passphrase")):
        return False
    if start == 0 or not original[start - 1].isalnum():
        return False
    return not _ESCAPE_BEFORE.search(original, max(0, start - 6), start)  # `\\nPASS=` in JSON


_ESCAPE_BEFORE = re.compile(r"\\(?:[nrt]|u[0-9a-fA-F]{4})$")

_QUOTE = r"(?:\"|'|\\\"|\\u0022|%22)"
"""A quote, also escaped in JSON (`\\"`, `\\u0022`) or in a URL (`%22`)."""
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
    r"(?P<sep>=>|:=|=|:|%3d|%3a|\\u003d|\\u003a|\t|\\t)[ \t]*"
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
    accept=_assigned_value,
    lowercase=True,
    word_start=False,
)

FLAG = _d(
    "credential",
    rf"--(?:{_SECRET_WORDS})[ \t]+(\"[^\"\n]{{1,300}}\"|'[^'\n]{{1,300}}'|[^\s\"'`;&|]{{1,300}})",
    *(f"--{word}" for word in ("pass", "pwd", "secret", "token", "api", "access", "auth")),
    *(f"--{word}" for word in ("private", "client", "credential")),
    group=1,
    accept=_flag_value,
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
    return _plausible(value.strip()) and not any(c.isspace() for c in value.strip())


ALL_DETECTORS: tuple[Detector, ...] = (
    *PROVIDER_DETECTORS,
    *HEADER_DETECTORS,
    ASSIGNMENT,
    FLAG,
)
