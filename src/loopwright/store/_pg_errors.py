"""The Postgres store's URL as messages show it (never with its password), and what a
psycopg failure means for the user: a StoreError naming the store and what to do. A
failure that can pass (the server unreachable, a dropped connection, a serialization
conflict) is a StoreUnavailableError: a worker retries it within a bounded time."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from loopwright.errors import StoreError, StoreUnavailableError

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
RESUME = "then continue the interrupted run with `loopwright runs resume RUN_ID`"


def is_postgres_url(location: str) -> bool:
    return location.startswith(POSTGRES_SCHEMES)


_USERINFO_PASSWORD = re.compile(r"^([A-Za-z][\w+.\-]*:/*[^/?#@:]*):([^/?#]*)@")
"""The password of `scheme://user:PASSWORD@...`, read without parsing the rest (a URL that
urlsplit refuses, such as an unclosed IPv6 bracket, still has one): up to the last `@`
before the path."""


def redact_url(url: str) -> str:
    """`url` with its password (in the user part or a `password=` parameter) as `***`."""
    try:
        parts = urlsplit(url)
    except ValueError:
        parts = None
    if parts is None or not parts.netloc:  # unreadable, or `scheme:/user:password@host`
        masked = _USERINFO_PASSWORD.sub(r"\1:***@", url)
        return re.sub(r"(?i)(password=)[^&#]*", r"\1***", masked)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            netloc = f"{userinfo.split(':', 1)[0]}:***@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, "***" if k.lower() == "password" else v) for k, v in pairs])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_secrets(url: str) -> list[str]:
    """The password of `url` as written and decoded, to be cut from any message."""
    found: list[str] = []
    written = _USERINFO_PASSWORD.match(url)
    if written:
        found += [written.group(2), unquote(written.group(2))]
    found += re.findall(r"(?i)password=([^&#]+)", url)
    try:
        parts = urlsplit(url)
        if parts.password:
            found += [parts.password, unquote(parts.password)]
        found += [v for k, v in parse_qsl(parts.query) if k.lower() == "password"]
    except ValueError:
        pass
    return sorted({s for s in found if s}, key=len, reverse=True)


class Redactor:
    """Cuts the store's password out of text (a libpq message could quote it)."""

    def __init__(self, url: str) -> None:
        self.where = redact_url(url)
        self._secrets = url_secrets(url)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def failure(self, exc: BaseException, *, connecting: bool = False) -> StoreError:
        """The StoreError for a psycopg or pool failure."""
        import psycopg
        from psycopg import errors
        from psycopg_pool import PoolTimeout

        detail = self(" ".join(str(exc).split()) or type(exc).__name__)
        where = self.where
        if isinstance(exc, errors.UniqueViolation):
            return StoreError(f"run store {where}: already stored ({detail})")
        if isinstance(exc, errors.DiskFull):
            return StoreError(
                f"run store {where}: the database server's disk is full ({detail}); nothing "
                f"was half-written: free some space, {RESUME}"
            )
        if isinstance(exc, errors.ReadOnlySqlTransaction | errors.InsufficientPrivilege):
            return StoreError(
                f"run store {where} cannot be written by this user or server ({detail}): its "
                f"runs can be listed, shown and exported; to run or resume, use a role that "
                f"may write (INSERT, UPDATE, DELETE on the loopwright schema) on a primary"
            )
        if isinstance(exc, errors.InvalidPassword) or "password authentication failed" in detail:
            return StoreError(
                f"cannot log in to the run store {where}: wrong user or password ({detail}); "
                f"check the URL, PGPASSWORD or ~/.pgpass"
            )
        if isinstance(exc, errors.InvalidCatalogName) or (
            'database "' in detail and "does not exist" in detail
        ):
            return StoreError(
                f"run store {where}: the database does not exist ({detail}); create it "
                f"(createdb), then `loopwright store migrate --store URL`"
            )
        if isinstance(exc, PoolTimeout) or (
            connecting and isinstance(exc, psycopg.OperationalError)
        ):
            return StoreUnavailableError(
                f"cannot reach the run store {where} ({detail}): check that the server is "
                f"running and that the host, port and database in the URL are right"
            )
        if isinstance(exc, errors.ProgramLimitExceeded):  # the same write fails again
            return StoreError(f"run store {where}: {detail}")
        if isinstance(exc, psycopg.OperationalError):  # lost, shut down, conflict: can pass
            return StoreUnavailableError(
                f"run store {where}: the database connection failed ({detail}); nothing was "
                f"half-written: once the server is back, {RESUME}"
            )
        return StoreError(f"run store {where}: {detail}")
