"""The one HTTP layer under the Ollama, OpenAI-compatible and Anthropic adapters.

httpx.AsyncClient with an injectable transport (tests pass httpx.MockTransport), timeouts,
and retries with exponential backoff and jitter on 429, 5xx, timeouts, dropped connections
and damaged bodies, honouring `Retry-After` (and `retry-after-ms`). Sleep, clock and jitter
are injectable so tests never really wait. Errors name the provider, the URL and what to
do; API keys are kept in a `Secret` and scrubbed from every message built here.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from loopwright import telemetry
from loopwright.errors import ConfigurationError, ModelError, ModelUnavailableError

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]
RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504, 529})
_KEY_LIKE = re.compile(r"\b(?:sk|key|api)[-_][A-Za-z0-9*._\-]{6,}", re.IGNORECASE)


class Secret:
    """An API key that never shows itself in a repr, a str or an f-string."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __bool__(self) -> bool:
        return bool(self._value)


def redact(text: str, secrets: tuple[Secret, ...] = ()) -> str:
    """`text` without the given keys, nor anything shaped like a key (`sk-...`)."""
    for secret in secrets:
        if secret:
            text = text.replace(secret.reveal(), "[redacted]")
    return _KEY_LIKE.sub("[redacted]", text)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry a failed call.

    Attempt n (from 0) waits `min(max_delay, base_delay * 2**n)`, of which the second half is
    random (jitter). A `Retry-After` the server sends is used as is, unless it is longer than
    `max_retry_after`: then the call fails at once with an error saying how long to wait.
    """

    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 20.0
    max_retry_after: float = 60.0

    def backoff(self, attempt: int, jitter: float) -> float:
        delay = min(self.max_delay, self.base_delay * 2.0**attempt)
        return delay / 2 + delay / 2 * jitter


class Transient(Exception):
    """A failure worth retrying: the reply was damaged or cut, or the server was busy."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def retry_after_seconds(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds to wait from `retry-after-ms` or `Retry-After` (seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)


def server_message(body: bytes) -> str:
    """The error text a provider put in its body (`{"error": ...}` in its several shapes)."""
    text = body.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text[:300]
    error = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(error, dict):
        error = error.get("message") or error.get("detail") or error
    if isinstance(data, dict) and "detail" in data and error is data:
        error = data["detail"]
    return str(error)[:300]


def loads(text: str | bytes, what: str) -> Any:
    """JSON from a provider, or Transient if the body was cut or damaged on the way."""
    try:
        return json.loads(text)
    except ValueError:
        shown = text[:80] if isinstance(text, str) else text[:80].decode("utf-8", "replace")
        raise Transient(f"{what} is not valid JSON (cut off or damaged?): {shown!r}") from None


async def ndjson(response: httpx.Response) -> AsyncIterator[Any]:
    """One JSON value per non-empty line (Ollama streaming)."""
    async for line in response.aiter_lines():
        if line.strip():
            yield loads(line, "a streamed line")


async def sse(response: httpx.Response) -> AsyncIterator[tuple[str, str]]:
    """Server-sent events as (event name, data); the name is "" when the server sends none."""
    event, data = "", list[str]()
    async for line in response.aiter_lines():
        if not line:
            if data:
                yield event, "\n".join(data)
            event, data = "", list[str]()
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        yield event, "\n".join(data)


Consume = Callable[[httpx.Response], Awaitable[T]]


class LoopClient:
    """An httpx client closed on the event loop that made it: when the loop shuts down
    (`asyncio.run` and `asyncio.Runner` close the async generators it started) or, while it
    runs, once the client is let go of (the loop closes an abandoned async generator). Its
    connections are never left to the garbage collector, a socket at a time."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client
        self._holder = _open_until_closed(client)

    async def start(self) -> None:
        """On the running loop, which from now on closes it."""
        await anext(self._holder)

    async def aclose(self) -> None:
        await self._holder.aclose()


async def _open_until_closed(client: httpx.AsyncClient) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await client.aclose()


class HttpClient:
    """POSTs JSON to one provider and retries what is worth retrying.

    `consume` reads the response body (whole, or as a stream); if it raises `Transient` or
    the connection drops while it reads, the whole call is made again. One httpx client is
    kept per event loop, so connections are reused within a loop; each is closed on its own
    loop (`LoopClient`).
    """

    def __init__(
        self,
        provider: str,
        base_url: str,
        *,
        headers: Mapping[str, str] | None = None,
        secrets: tuple[Secret, ...] = (),
        hint: str = "",
        auth_hint: str = "",
        status_hints: Mapping[int, str] | None = None,
        timeout: float = 120.0,
        connect_timeout: float = 10.0,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Sleep | None = None,
        now: Callable[[], float] = time.time,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.provider = provider
        self.base_url = base_url.rstrip("/")
        self._headers = dict(headers or {})
        self._secrets = secrets
        self.hint = hint
        self.auth_hint = auth_hint
        self.status_hints = dict(status_hints or {})
        self.timeout = httpx.Timeout(timeout, connect=connect_timeout)
        self.retry = retry or RetryPolicy()
        self._transport = transport
        self._sleep = sleep or asyncio.sleep
        self._now = now
        self._jitter = jitter
        self._clients: dict[asyncio.AbstractEventLoop, LoopClient] = {}
        self.waits: list[float] = []
        """Every wait before a retry, in seconds (for tests and diagnostics)."""

    def __repr__(self) -> str:
        return f"HttpClient({self.provider!r}, {self.base_url!r})"

    @property
    def headers(self) -> dict[str, str]:
        """The headers each request carries (the key among them: never print them)."""
        return dict(self._headers)

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    async def _client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        held = self._clients.get(loop)
        if held is None or held.client.is_closed:
            for other, ended in list(self._clients.items()):  # a copy: other threads' loops
                if other.is_closed() or ended.client.is_closed:
                    self._clients.pop(other, None)  # closed: nothing of it is kept
            held = LoopClient(httpx.AsyncClient(transport=self._transport, timeout=self.timeout))
            self._clients[loop] = held
            await held.start()
        return held.client

    async def aclose(self) -> None:
        """Close this loop's connections now (a later call opens new ones)."""
        held = self._clients.pop(asyncio.get_running_loop(), None)
        if held is not None:
            await held.aclose()

    def redact(self, text: str) -> str:
        return redact(text, self._secrets)

    async def post(self, path: str, body: dict[str, Any], consume: Consume[T]) -> T:
        """POST `body` as JSON and return what `consume` makes of the response."""
        url = self.url(path)
        attempt = 0
        while True:
            try:
                return await self._attempt(url, body, consume)
            except Transient as problem:
                wait = self._wait_before_retry(url, attempt, problem)
            except httpx.TimeoutException as exc:
                wait = self._wait_or_fail(url, attempt, self._timeout_error(url, exc))
            except httpx.TransportError as exc:
                wait = self._wait_or_fail(url, attempt, self._unreachable(url, exc))
            self.waits.append(wait)
            await self._sleep(wait)
            attempt += 1

    async def _attempt(self, url: str, body: dict[str, Any], consume: Consume[T]) -> T:
        headers = self._headers
        if telemetry.active() is not None:  # the model call's span goes on at the server
            headers = {**headers, **telemetry.trace_headers()}
        client = await self._client()
        async with client.stream("POST", url, json=body, headers=headers) as reply:
            if reply.status_code >= 400:
                raw = await reply.aread()
                raise self._status_error(url, reply, raw)
            return await consume(reply)

    def _status_error(self, url: str, reply: httpx.Response, raw: bytes) -> Exception:
        status = reply.status_code
        if status in RETRY_STATUSES:
            after = retry_after_seconds(reply.headers, self._now())
            return Transient(f"HTTP {status}: {self.redact(server_message(raw))}", after)
        if status in (401, 403):  # the body may quote part of the key: leave it out
            return ModelError(
                f"{self.provider} at {url} refused the request (HTTP {status}): "
                f"{self.auth_hint or 'check the API key'}",
                provider=self.provider,
                url=url,
            )
        detail = self.redact(server_message(raw))
        hint = f" ({self.status_hints[status]})" if status in self.status_hints else ""
        return ModelError(
            f"{self.provider} at {url} rejected the request (HTTP {status}): {detail}{hint}",
            provider=self.provider,
            url=url,
        )

    def _wait_before_retry(self, url: str, attempt: int, problem: Transient) -> float:
        after = problem.retry_after
        if after is not None and after > self.retry.max_retry_after:
            raise ModelError(
                f"{self.provider} at {url} is rate limiting ({problem}); it asks to wait "
                f"{after:.0f} s, longer than the {self.retry.max_retry_after:.0f} s we wait",
                provider=self.provider,
                url=url,
            )
        failure = ModelError(
            f"{self.provider} at {url} failed after {attempt + 1} attempts: {problem}",
            provider=self.provider,
            url=url,
        )
        wait = self._wait_or_fail(url, attempt, failure)
        return after if after is not None else wait

    def _wait_or_fail(self, url: str, attempt: int, failure: ModelError) -> float:
        if attempt >= self.retry.max_retries:
            raise failure
        return self.retry.backoff(attempt, self._jitter())

    def _timeout_error(self, url: str, exc: httpx.TimeoutException) -> ModelError:
        kind = "connect" if isinstance(exc, httpx.ConnectTimeout) else "answer"
        return ModelError(
            f"{self.provider} at {url} did not {kind} in time "
            f"({self.timeout.read if kind == 'answer' else self.timeout.connect} s, "
            f"{self.retry.max_retries + 1} attempts): {self.hint}",
            provider=self.provider,
            url=url,
        )

    def _unreachable(self, url: str, exc: httpx.TransportError) -> ModelError:
        reason = self.redact(str(exc) or type(exc).__name__)
        if isinstance(exc, httpx.ConnectError):
            return ModelUnavailableError(
                f"{self.provider} at {url} could not be reached ({reason}): {self.hint}",
                provider=self.provider,
                url=url,
            )
        return ModelError(  # connected, then lost the connection during the reply
            f"{self.provider} at {url} dropped the connection during the reply "
            f"({reason}; {self.retry.max_retries + 1} attempts)",
            provider=self.provider,
            url=url,
        )

    async def get_json(self, path: str, *, timeout: float = 3.0) -> Any:
        """One GET without retries (for `loopwright models`); raises ModelError."""
        url = self.url(path)
        try:
            client = await self._client()
            reply = await client.get(url, headers=self._headers, timeout=timeout)
        except httpx.TimeoutException:
            raise ModelUnavailableError(
                f"{self.provider} at {url} did not answer within {timeout} s: {self.hint}",
                provider=self.provider,
                url=url,
            ) from None
        except httpx.TransportError as exc:
            raise self._unreachable(url, exc) from None
        if reply.status_code >= 400:
            error = self._status_error(url, reply, reply.content)
            if isinstance(error, Transient):
                error = ModelError(
                    f"{self.provider} at {url}: {error}", provider=self.provider, url=url
                )
            raise error from None
        try:
            return reply.json()
        except ValueError:
            return None


def require_key(value: str | None, env: str, provider: str) -> Secret:
    if not value:
        raise ConfigurationError(f"{provider} needs an API key: set {env}")
    return Secret(value)
