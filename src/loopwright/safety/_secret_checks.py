"""The checks that turn away a secret detector's look-alikes (its `accept`): given the
original text and the match, is it really a secret? Prose after "Basic", code after
"password =", a placeholder or a documentation password is not."""

from __future__ import annotations

import base64
import binascii
import re


def _value_group(match: re.Match[str]) -> int | str:
    return "v" if "v" in match.re.groupindex else 1


def _value(original: str, match: re.Match[str]) -> str:
    group = _value_group(match)
    return original[match.start(group) : match.end(group)]


def basic_credentials(original: str, match: re.Match[str]) -> bool:
    """`Basic <base64 of user:password>`: decode it rather than trust any long word."""
    value = _value(original, match)
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded


def random_looking(original: str, match: re.Match[str]) -> bool:
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
_VALUE_END = re.compile(
    r"[ \t]*(?:$|[\r\n,;&})\]#\"'`]|\\(?:[nrt\"\\]|u00[0-9a-fA-F]{2})|[ \t][\w.\-]+[ \t]*[=:])"
)
"""After a `key: value`, the end of the value: the end of the line, a separator, a closing
quote, any of these escaped in a JSON string (`\\n`, `\\"`, `\\u0022`), or another
`key=`/`key:` on the same line (logfmt)."""
_DOTTED_NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
_SNAKE_NAME = re.compile(r"^[a-z_][a-z0-9]*(?:_[a-z0-9]+)+$")
_METAVAR = re.compile(r"^[A-Z][A-Z_]*$")


def plausible(bare: str) -> bool:
    """A literal that could be a secret: not a keyword, placeholder, type or number."""
    if len(bare) < 6 or bare.startswith("[REDACTED"):
        return False
    lowered = bare.lower()
    if lowered in _NOT_VALUES or _PLACEHOLDER.match(bare) or bare.isdigit():
        return False
    if _TYPE_OR_CONSTANT.match(bare):
        return False  # `private_key: RSAPrivateKey`, `token=FG_DEFAULT`, `Token: "#ddd0c0"`
    return not lowered.startswith(("http://", "https://", "/", "./", "~/", "os.", "process.env"))


def assigned_value(original: str, match: re.Match[str]) -> bool:
    """The right-hand side of `password=...` is a literal secret, not code or a placeholder.

    After `=` (also `%3D`, `\\u003d`) a bare value ends at the first space and whatever
    follows stays (`PGPASSWORD=x psql ...`, `password=x user=app`); after `:` the value must
    end the line or be followed by another key (`pwd: expected bytes` is a sentence).
    """
    value = _value(original, match)
    quoted = match.group("q") is not None
    bare = value.strip("\"'")
    if not plausible(bare) or _pass_in_a_word(original, match):
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


def flag_value(original: str, match: re.Match[str]) -> bool:
    """`--password VALUE` on a command line, not `--password PASSWORD` in a usage text."""
    bare = _value(original, match).strip("\"'")
    return plausible(bare) and not _METAVAR.match(bare) and not bare.startswith("-")


def user_password(original: str, match: re.Match[str]) -> bool:
    """`curl -u user:PASSWORD`, not `docker run -u 1000:1000`."""
    value = _value(original, match).strip("\"'")
    return not value.isdigit() and url_password(original, match)


def netrc_password(original: str, match: re.Match[str]) -> bool:
    """`machine HOST login USER password PASS` (~/.netrc), not a usage text's placeholder."""
    return plausible(_value(original, match)) and not _METAVAR.match(_value(original, match))


def cookie_header(original: str, match: re.Match[str]) -> bool:
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


def header_value(original: str, match: re.Match[str]) -> bool:
    """A header value that is a credential: long enough, not a placeholder or a keyword."""
    value = _value(original, match)
    return len(value) >= 8 and plausible(value) and not _METAVAR.match(value)


_AZURE_SECRET_PREFIX = re.compile(r"(?<![\w~.\-])[A-Za-z0-9_~.]{3}\d")


def azure_secret_prefix(original: str, match: re.Match[str]) -> bool:
    """Azure AD client secrets look like `abc8Q~...`: three characters and a digit before `Q~`."""
    return match.start() >= 4 and bool(_AZURE_SECRET_PREFIX.match(original, match.start() - 4))


def url_password(original: str, match: re.Match[str]) -> bool:
    """`scheme://user:PASSWORD@host`, but not the documentation's `user:password@host`."""
    value = _value(original, match)
    return not _PLACEHOLDER.match(value) and value.lower() not in _DOC_PASSWORDS


_DOC_PASSWORDS = frozenset({"pass", "password", "passwd", "pwd", "pw", "secret", "token"})


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
